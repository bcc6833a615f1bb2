//! Gradient helpers built from operators (so they are differentiable under `create_graph`).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::scalar::Scalar;
use crate::tensor::Tensor;
use crate::MemoryFormat;

/// Whether `shape` can be broadcast (expanded) to `desired`.
pub fn is_expandable_to(shape: &[i64], desired: &[i64]) -> bool {
    if shape.len() > desired.len() {
        return false;
    }
    let off = desired.len() - shape.len();
    shape.iter().enumerate().all(|(i, &s)| s == desired[off + i] || s == 1)
}

/// Sums `t` down to `shape` (the reverse of broadcasting `shape` to `t`'s shape): leading dims
/// are summed away, dims where `shape` has 1 are summed with keepdim.
pub fn sum_to(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let sizes = t.sizes();
    if sizes[..] == *shape {
        return Ok(t.clone());
    }
    if !is_expandable_to(shape, &sizes) {
        return Err(Error::shape(format!("sum_to: size {shape:?} is not expandable to size {:?}", &sizes[..])));
    }
    let lead = sizes.len() - shape.len();
    let mut dims: Vec<i64> = (0..lead as i64).collect();
    for (i, &s) in shape.iter().enumerate() {
        if s == 1 && sizes[lead + i] != 1 {
            dims.push((lead + i) as i64);
        }
    }
    // Only leading dims reduced (a broadcast bias): dropping them gives `shape` directly.
    let keepdim = dims.len() != lead;
    let mut r = t.clone();
    if !dims.is_empty() {
        r = ops::sum_dim_intlist::call(&r, Some(&dims), keepdim, None)?;
    }
    if r.sizes()[..] != *shape {
        r = ops::reshape::call(&r, shape)?;
    }
    Ok(r)
}

/// `t.to(dtype)` (no copy when the dtype already matches).
pub fn cast_to(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    ops::to_dtype::call(t, dtype, false, false, None)
}

/// `a + b` (out of place).
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::add::call(a, b, Scalar::Int(1))
}

/// `a += b` (in place).
pub fn add_(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::add_::call(a, b, Scalar::Int(1))
}

/// A contiguous copy of `t`.
pub fn clone_contiguous(t: &Tensor) -> Result<Tensor> {
    ops::deep_clone::call(t, Some(MemoryFormat::Contiguous))
}

/// A copy of `t` laid out like `like` when `like` is dense (the gradient layout contract:
/// `.grad` has its variable's strides), otherwise contiguous.
pub fn clone_like(t: &Tensor, like: &Tensor) -> Result<Tensor> {
    if like.is_non_overlapping_and_dense() && t.sizes() == like.sizes() {
        let out =
            ops::empty_strided::call(&like.sizes(), &like.strides(), Some(t.dtype()), None, Some(t.device()), None)?;
        ops::copy_::call(&out, t, false)?;
        Ok(out)
    } else {
        clone_contiguous(t)
    }
}

/// Zeros with the given metadata.
pub fn zeros(sizes: &[i64], dtype: DType, device: crate::Device) -> Result<Tensor> {
    ops::zeros::call(sizes, Some(dtype), None, Some(device), None)
}

/// Whether `t` holds a NaN (CPU floating tensors; other tensors report `false`).
pub fn has_nan(t: &Tensor) -> bool {
    if !t.dtype().is_floating_point() || t.device() != crate::Device::Cpu {
        return false;
    }
    t.to_f64_vec().map(|v| v.iter().any(|x| x.is_nan())).unwrap_or(false)
}
