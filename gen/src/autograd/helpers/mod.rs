//! Hand-written helpers for the formulas of `derivatives.yaml`, plus the plumbing the generated
//! nodes and kernels call.
//!
//! Every formula helper is built from operators called through the dispatcher (their typed
//! entry points `ops::<op>::call`), never from raw data access, so a gradient computed with
//! `create_graph` records its own history and can be differentiated again.

use oxten_runtime::autograd::{Geometry, Node, NodeBase, SavedVariable};
use oxten_runtime::dispatch::{pop_returns, ExcludeGuard, FromIValue, KeySet, Op, Resolved, Stack};
use oxten_runtime::{ops, wrap_dim, DType, Device, Error, Result, Scalar, Tensor};
use std::sync::OnceLock;

// Formula helpers of the operator families, one file each (`mod <family>; pub use <family>::*;`).
mod nn;
pub use nn::*;
mod index;
pub use index::*;
mod norm;
pub use norm::*;
mod linalg;
pub use linalg::*;
mod factorizations;
pub use factorizations::*;
mod spectral;
pub use spectral::*;
mod matrix_functions;
pub use matrix_functions::*;
mod conv;
pub use conv::*;
mod reduce;
pub use reduce::*;
mod random;
pub use random::*;
mod forward;
pub use forward::*;
mod recurrent;
pub use recurrent::*;
mod pointwise;
pub use pointwise::*;

// ---------------------------------------------------------------------------------------------
// Plumbing for the generated code.
// ---------------------------------------------------------------------------------------------

/// The gradients a node received, with a zero tensor (shaped like the forward output, from the
/// node's input metadata) for each missing one; `None` when none arrived at all (then every
/// input's gradient is zero too).
pub fn materialize_grads(grads: Vec<Option<Tensor>>, base: &NodeBase) -> Result<Option<Vec<Tensor>>> {
    if grads.iter().all(Option::is_none) {
        return Ok(None);
    }
    grads
        .into_iter()
        .enumerate()
        .map(|(i, g)| match g {
            Some(g) => Ok(g),
            None => {
                let md = base.input_metadata(i).ok_or_else(|| {
                    Error::runtime(format!("no metadata recorded for output {i}: cannot materialize its zero gradient"))
                })?;
                zeros(&md.sizes, md.dtype, md.device)
            }
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// Unpacks a saved output (outputs are saved after their history is set, hence the `OnceLock`).
pub fn unpack_output(saved: &OnceLock<SavedVariable>, node: &dyn Node) -> Result<Tensor> {
    match saved.get() {
        Some(v) => v.unpack(node),
        None => Err(Error::runtime(format!("{}: a saved output was not recorded", node.name()))),
    }
}

/// Calls `op`'s kernel below autograd: the redispatch of the in-place and out= autograd kernels.
///
/// Their typed entry point (`ops::add_::call`) bumps the version counter of the written tensor
/// after the autograd kernel returns, so the kernel below must be reached without going through
/// the entry point again (which would bump a second time).
pub fn redispatch<F: Copy, R: FromIValue>(
    op: &'static Op<F>,
    keys: KeySet,
    unboxed: impl FnOnce(F) -> Result<R>,
    boxed: impl FnOnce() -> Stack,
    nret: usize,
) -> Result<R> {
    let _below_autograd = ExcludeGuard::new(KeySet::AUTOGRAD);
    match op.resolve(keys)? {
        Resolved::Unboxed(kernel) => unboxed(kernel),
        Resolved::Boxed(kernel, _) => {
            let mut stack = boxed();
            kernel.call(op, &mut stack)?;
            pop_returns(&mut stack, nret)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Small building blocks.
// ---------------------------------------------------------------------------------------------

/// Zeros with the given metadata.
pub fn zeros(sizes: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
    ops::zeros::call(sizes, Some(dtype), None, Some(device), None)
}

/// Zeros shaped like `t` (not differentiable: no gradient flows to `t`).
pub fn zeros_like(t: &Tensor) -> Result<Tensor> {
    ops::zeros_like::call(t, None, None, None, None, None)
}

/// `where(condition, a, b)`.
pub fn where_(condition: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::where_self::call(condition, a, b)
}

/// `t.to(dtype)`; `t` itself when the dtype already matches.
pub fn cast_to(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    ops::to_dtype::call(t, dtype, false, false, None)
}

/// The gradient of `_to_copy`: `grad` back in the input's dtype and on its device (a copy
/// between devices sends the gradient back the way it came).
pub fn to_copy_backward(grad: &Tensor, dtype: DType, device: Device) -> Result<Tensor> {
    let g = if grad.device() != device { grad.try_to_device(device)? } else { grad.clone() };
    cast_to(&g, dtype)
}

/// `grad * s`, or `grad` itself when `s` is 1.
pub fn maybe_multiply(grad: &Tensor, s: Scalar) -> Result<Tensor> {
    if s.to_f64() == 1.0 && !s.is_bool() {
        Ok(grad.clone())
    } else {
        ops::mul_scalar::call(grad, s)
    }
}

/// Sums `grad` down to `sizes` (the inverse of broadcasting `sizes` up to `grad`'s shape):
/// leading dims are summed away and dims where `sizes` has 1 are summed with keepdim. (The
/// engine's own reduction of gradients to their input's shape, reused.)
pub use oxten_runtime::autograd::sum_to;

// ---------------------------------------------------------------------------------------------
// Pointwise.
// ---------------------------------------------------------------------------------------------

/// The gradient of one operand of `maximum` / `minimum`: `grad` where it won, half of it at a
/// tie, nothing where it `lost` — and, as in PyTorch, all of it where either operand is NaN
/// (NaN neither ties nor loses).
pub fn tie_split_backward(grad: &Tensor, lost: &Tensor, tie: &Tensor) -> Result<Tensor> {
    let half = ops::div_scalar::call(grad, Scalar::Int(2))?;
    let zero = zeros_like(grad)?;
    where_(tie, &half, &where_(lost, &zero, grad)?)
}

/// `grad * exponent * self^(exponent - 1)`, and 0 for exponent 0.
pub fn pow_backward(grad: &Tensor, x: &Tensor, exponent: Scalar) -> Result<Tensor> {
    if exponent.to_f64() == 0.0 {
        return zeros_like(x);
    }
    let minus_one = match exponent {
        Scalar::Int(e) => Scalar::Int(e - 1),
        Scalar::Bool(b) => Scalar::Int(b as i64 - 1),
        Scalar::Float(e) => Scalar::Float(e - 1.0),
    };
    let d = ops::mul_scalar::call(&ops::pow_tensor_scalar::call(x, minus_one)?, exponent)?;
    ops::mul::call(grad, &d)
}

/// `grad` where `min < x < max` strictly, else 0: PyTorch 2.15 passes no gradient at a bound,
/// at a NaN element, or past a NaN bound (every comparison with NaN is false).
pub fn clamp_backward(grad: &Tensor, x: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    let zero = zeros_like(grad)?;
    let mut g = grad.clone();
    if let Some(lo) = min {
        g = where_(&ops::gt_scalar::call(x, lo)?, &g, &zero)?;
    }
    if let Some(hi) = max {
        g = where_(&ops::lt_scalar::call(x, hi)?, &g, &zero)?;
    }
    Ok(g)
}

/// The gradient of `clamp(x, min, max)` with tensor bounds for input `which` (0 `x`, 1 `min`,
/// 2 `max`), routed as PyTorch routes it: to whichever of the three the output equals, split in
/// halves where `x` ties a bound of a non-empty interval, all to `x` where `x == min == max`, and
/// all to `max` where `min > max` (the output is `max` there).
pub fn clamp_tensor_backward(
    grad: &Tensor,
    x: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    which: usize,
) -> Result<Tensor> {
    let dtype = grad.dtype();
    let w = |mask: Result<Tensor>| mask?.try_to_dtype(dtype);
    let half = |mask: Result<Tensor>| w(mask)?.try_mul_scalar(0.5);
    let weight = match (min, max) {
        (Some(lo), Some(hi)) => {
            let ordered = w(lo.try_le(hi))?;
            let open = w(lo.try_lt(hi))?;
            match which {
                0 => {
                    let inside = w(x.try_gt(lo))?.try_mul(&w(x.try_lt(hi))?)?;
                    inside.try_add(&half(x.try_eq(lo))?)?.try_add(&half(x.try_eq(hi))?)?.try_mul(&ordered)?
                }
                1 => w(x.try_lt(lo))?.try_add(&half(x.try_eq(lo))?.try_mul(&open)?)?.try_mul(&ordered)?,
                _ => {
                    let above = w(x.try_gt(hi))?.try_add(&half(x.try_eq(hi))?.try_mul(&open)?)?.try_mul(&ordered)?;
                    above.try_add(&w(lo.try_gt(hi))?)?
                }
            }
        }
        // One bound: `maximum` / `minimum`, ties split.
        (Some(lo), None) if which == 0 => w(x.try_gt(lo))?.try_add(&half(x.try_eq(lo))?)?,
        (Some(lo), None) => w(x.try_lt(lo))?.try_add(&half(x.try_eq(lo))?)?,
        (None, Some(hi)) if which == 0 => w(x.try_lt(hi))?.try_add(&half(x.try_eq(hi))?)?,
        (None, Some(hi)) => w(x.try_gt(hi))?.try_add(&half(x.try_eq(hi))?)?,
        (None, None) => return Ok(grad.clone()),
    };
    grad.try_mul(&weight)
}

/// `grad * silu'(x)`, with `silu'(x) = s * (1 + x * (1 - s))` and `s = sigmoid(x)`.
pub fn silu_backward(grad: &Tensor, x: &Tensor) -> Result<Tensor> {
    let s = ops::sigmoid::call(x)?;
    let one_minus_s = ops::add_scalar::call(&ops::neg::call(&s)?, Scalar::Int(1), Scalar::Int(1))?;
    let inner = ops::add_scalar::call(&ops::mul::call(x, &one_minus_s)?, Scalar::Int(1), Scalar::Int(1))?;
    ops::mul::call(grad, &ops::mul::call(&s, &inner)?)
}

/// `grad * gelu'(x)` for both approximations, from differentiable operators.
///
/// - `none`: `gelu'(x) = Φ(x) + x φ(x)` with `φ(x) = exp(-x²/2) / √(2π)`; there is no `erf`
///   operator, so `Φ(x) = gelu(x) / x` (and ½ at 0, where a safe divisor keeps the unused branch
///   finite so that no NaN leaks into double backward).
/// - `tanh`: with `u = √(2/π) (x + 0.044715 x³)` and `t = tanh(u)`,
///   `gelu'(x) = ½ (1 + t) + ½ x (1 - t²) √(2/π) (1 + 3 · 0.044715 x²)`.
pub fn gelu_backward(grad: &Tensor, x: &Tensor, approximate: &str) -> Result<Tensor> {
    let one = Scalar::Int(1);
    let d = match approximate {
        "none" => {
            let is_zero = ops::eq_scalar::call(x, Scalar::Int(0))?;
            let ones = ops::ones_like::call(x, None, None, None, None, None)?;
            let safe_x = where_(&is_zero, &ones, x)?;
            let cdf = ops::div::call(&ops::gelu::call(x, "none")?, &safe_x)?;
            let half = ops::full_like::call(x, Scalar::Float(0.5), None, None, None, None, None)?;
            let cdf = where_(&is_zero, &half, &cdf)?;
            let x2 = ops::mul::call(x, x)?;
            let pdf = ops::mul_scalar::call(
                &ops::exp::call(&ops::mul_scalar::call(&x2, Scalar::Float(-0.5))?)?,
                Scalar::Float(1.0 / (2.0 * std::f64::consts::PI).sqrt()),
            )?;
            ops::add::call(&cdf, &ops::mul::call(x, &pdf)?, one)?
        }
        "tanh" => {
            let k = (2.0 / std::f64::consts::PI).sqrt();
            let c = 0.044715;
            let x2 = ops::mul::call(x, x)?;
            let x3 = ops::mul::call(&x2, x)?;
            let u = ops::mul_scalar::call(
                &ops::add::call(x, &ops::mul_scalar::call(&x3, Scalar::Float(c))?, one)?,
                Scalar::Float(k),
            )?;
            let t = ops::tanh::call(&u)?;
            let left = ops::mul_scalar::call(&ops::add_scalar::call(&t, one, one)?, Scalar::Float(0.5))?;
            let one_minus_t2 = ops::add_scalar::call(&ops::neg::call(&ops::mul::call(&t, &t)?)?, one, one)?;
            let du = ops::mul_scalar::call(
                &ops::add_scalar::call(&ops::mul_scalar::call(&x2, Scalar::Float(3.0 * c))?, one, one)?,
                Scalar::Float(k),
            )?;
            let right =
                ops::mul_scalar::call(&ops::mul::call(&ops::mul::call(x, &one_minus_t2)?, &du)?, Scalar::Float(0.5))?;
            ops::add::call(&left, &right, one)?
        }
        other => {
            return Err(Error::value(format!("gelu: approximate must be 'none' or 'tanh', got '{other}'")));
        }
    };
    ops::mul::call(grad, &d)
}

// ---------------------------------------------------------------------------------------------
// Reductions.
// ---------------------------------------------------------------------------------------------

/// The reduced dims of a reduction over `dims` of an `ndim`-dim tensor, wrapped and sorted
/// (`None` or empty means every dim).
fn reduced_dims(dims: Option<&[i64]>, ndim: usize) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = match dims {
        Some(ds) if !ds.is_empty() => ds.iter().map(|&d| wrap_dim(d, ndim)).collect::<Result<_>>()?,
        _ => (0..ndim).collect(),
    };
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Puts back the dims a reduction without `keepdim` removed, as size 1.
pub fn restore_reduced_dims(grad: &Tensor, dims: Option<&[i64]>, keepdim: bool, ndim: usize) -> Result<Tensor> {
    if keepdim || ndim == 0 {
        return Ok(grad.clone());
    }
    let mut g = grad.clone();
    for d in reduced_dims(dims, ndim)? {
        g = ops::unsqueeze::call(&g, d as i64)?;
    }
    Ok(g)
}

/// The gradient of a sum over `dims` of a tensor of size `sizes`: `grad` broadcast back.
pub fn sum_backward(grad: &Tensor, sizes: &[i64], dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let g = restore_reduced_dims(grad, dims, keepdim, sizes.len())?;
    ops::expand::call(&g, sizes, false)
}

/// The gradient of a mean over `dims`: the sum's gradient divided by the number of elements
/// averaged.
pub fn mean_backward(grad: &Tensor, sizes: &[i64], dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let count: i64 =
        if sizes.is_empty() { 1 } else { reduced_dims(dims, sizes.len())?.iter().map(|&d| sizes[d]).product() };
    ops::div_scalar::call(&sum_backward(grad, sizes, dims, keepdim)?, Scalar::Float(count as f64))
}

/// `(grad / mask.sum(dims, keepdim=true)) * mask`: a gradient shared evenly between the elements
/// `mask` selects.
pub fn scale_grad_by_count(grad: &Tensor, mask: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let all: Vec<i64>;
    let dims = if dims.is_empty() {
        all = (0..mask.dim() as i64).collect();
        &all[..]
    } else {
        dims
    };
    let count = if dims.is_empty() { mask.clone() } else { ops::sum_dim_intlist::call(mask, Some(dims), true, None)? };
    ops::mul::call(&ops::div::call(grad, &count)?, mask)
}

/// The gradient of `amax`/`amin` over `dims`: shared evenly between the elements equal to the
/// extremum.
pub fn amax_amin_backward(grad: &Tensor, x: &Tensor, result: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    let ndim = x.dim();
    let g = restore_reduced_dims(grad, Some(dims), keepdim, ndim)?;
    let r = restore_reduced_dims(result, Some(dims), keepdim, ndim)?;
    let mask = cast_to(&ops::eq::call(x, &r)?, g.dtype())?;
    scale_grad_by_count(&g, &mask, dims)
}

/// The gradient of a reduction that selects one element along `dim` (`max.dim`): `grad` put
/// where `indices` point, zeros elsewhere. Built as `grad * (arange == indices)`: with one index
/// per row, a broadcast product is cheaper than a scatter.
pub fn value_selecting_reduction_backward(
    grad: &Tensor,
    dim: i64,
    indices: &Tensor,
    sizes: &[i64],
    keepdim: bool,
) -> Result<Tensor> {
    let ndim = sizes.len();
    if ndim == 0 {
        return Ok(grad.clone());
    }
    let d = wrap_dim(dim, ndim)?;
    let (g, idx) = if keepdim {
        (grad.clone(), indices.clone())
    } else {
        (ops::unsqueeze::call(grad, d as i64)?, ops::unsqueeze::call(indices, d as i64)?)
    };
    let mut shape = vec![1i64; ndim];
    shape[d] = sizes[d];
    let positions = ops::arange::call(Scalar::Int(sizes[d]), Some(DType::I64), None, Some(grad.device()), None)?;
    let positions = ops::view::call(&positions, &shape)?;
    let mask = cast_to(&ops::eq::call(&positions, &idx)?, g.dtype())?;
    ops::mul::call(&g, &mask)
}

/// The gradient of `unfold(dim, size, step)`: window `w`'s element `k` adds to position
/// `w·step + k` along `dim` (windows may overlap), with one `scatter_add`.
pub fn unfold_backward(grad: &Tensor, input_sizes: &[i64], dim: i64, size: i64, step: i64) -> Result<Tensor> {
    let nd = input_sizes.len();
    if nd == 0 {
        return ops::view::call(grad, &[]);
    }
    let d = wrap_dim(dim, nd)?;
    if grad.numel() == 0 {
        // Nothing to scatter, and the window positions (windows · size of them) need not fit in
        // memory when another dimension is empty.
        return ops::zeros::call(input_sizes, Some(grad.dtype()), None, Some(grad.device()), None);
    }
    let windows = grad.sizes()[d];
    // [.., windows (d), .., size (last)] → [.., windows, size, ..] → [.., windows·size, ..]
    let mut perm: Vec<i64> = (0..=d as i64).collect();
    perm.push(nd as i64);
    perm.extend(d as i64 + 1..nd as i64);
    let g = ops::permute::call(grad, &perm)?;
    let mut merged = g.sizes().to_vec();
    merged[d] = windows * size;
    merged.remove(d + 1);
    let g = ops::reshape::call(&g, &merged)?;
    let positions: Vec<i64> = (0..windows).flat_map(|w| (0..size).map(move |k| w * step + k)).collect();
    let mut index_shape = vec![1i64; nd];
    index_shape[d] = windows * size;
    let index = Tensor::from_vec(positions, &index_shape)?.try_to_device(grad.device())?.try_expand(&merged)?;
    let zeros = ops::zeros::call(input_sizes, Some(grad.dtype()), None, Some(grad.device()), None)?;
    ops::scatter_add::call(&zeros, d as i64, &index, &g)
}

/// The gradient of an op that selects several elements along `dim` (`sort`, `topk`): `grad`
/// scattered to where `indices` point in a zero tensor of `self`'s `sizes`.
pub fn index_selecting_backward(grad: &Tensor, dim: i64, indices: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    if sizes.is_empty() {
        return Ok(grad.clone());
    }
    let zeros = ops::zeros::call(sizes, Some(grad.dtype()), None, Some(grad.device()), None)?;
    ops::scatter_src::call(&zeros, dim, indices, grad)
}

/// The gradient of `cummax`/`cummin`: each output's gradient added at the input element it
/// came from (`indices`), since a running extreme repeats one element.
pub fn cummaxmin_backward(grad: &Tensor, self_: &Tensor, indices: &Tensor, dim: i64) -> Result<Tensor> {
    if self_.dim() == 0 || self_.numel() == 0 {
        return Ok(grad.clone());
    }
    let zeros = ops::zeros::call(&self_.sizes(), Some(grad.dtype()), None, Some(grad.device()), None)?;
    ops::scatter_add::call(&zeros, dim, indices, grad)
}

// ---------------------------------------------------------------------------------------------
// Matrix products.
// ---------------------------------------------------------------------------------------------

/// Whether a matrix of `sizes` with `strides` is column-major (the transpose of a contiguous
/// matrix), as `x.t()` is.
fn is_column_major(sizes: &[i64], strides: &[i64]) -> bool {
    strides.len() == 2 && strides[0] == 1 && strides[1] == sizes[0]
}

/// The gradient of `mm`'s first operand (`self`, of `sizes` and `strides`): `grad @ mat2.t()`.
/// As in PyTorch, a column-major `self` gets a column-major gradient, computed as
/// `(mat2 @ grad.t()).t()`, so that accumulating it needs no transposing copy.
pub fn mm_mat1_backward(grad: &Tensor, mat2: &Tensor, sizes: &[i64], strides: &[i64]) -> Result<Tensor> {
    if is_column_major(sizes, strides) {
        return ops::t::call(&ops::mm::call(mat2, &ops::t::call(grad)?)?);
    }
    ops::mm::call(grad, &ops::t::call(mat2)?)
}

/// The gradient of `mm`'s second operand (`mat2`, of `sizes` and `strides`): `self.t() @ grad`,
/// computed as `(grad.t() @ self).t()` for a column-major `mat2` (a transposed weight, as in
/// `x.mm(w.t())`), which makes the gradient of `w` itself contiguous.
pub fn mm_mat2_backward(grad: &Tensor, mat1: &Tensor, sizes: &[i64], strides: &[i64]) -> Result<Tensor> {
    if is_column_major(sizes, strides) {
        return ops::t::call(&ops::mm::call(&ops::t::call(grad)?, mat1)?);
    }
    ops::mm::call(&ops::t::call(mat1)?, grad)
}

// ---------------------------------------------------------------------------------------------
// Views.
// ---------------------------------------------------------------------------------------------

/// The gradient of `permute(dims)`: `grad` permuted by the inverse permutation.
pub fn permute_backwards(grad: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let n = dims.len();
    let mut inverse = vec![0i64; n];
    for (i, &d) in dims.iter().enumerate() {
        inverse[wrap_dim(d, n)?] = i as i64;
    }
    ops::permute::call(grad, &inverse)
}

/// The gradient of `squeeze(dim)` of a tensor of size `sizes`: `grad` with `dim` put back if it
/// was squeezed (size 1).
pub fn unsqueeze_to(grad: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
    if sizes.is_empty() {
        return Ok(grad.clone());
    }
    let d = wrap_dim(dim, sizes.len())?;
    if sizes[d] == 1 {
        ops::unsqueeze::call(grad, d as i64)
    } else {
        Ok(grad.clone())
    }
}

/// The gradient of `slice(dim, start, end, step)` of a tensor of size `sizes`: zeros with `grad`
/// written into the slice.
pub fn slice_backward(
    grad: &Tensor,
    sizes: &[i64],
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    let out = zeros(sizes, grad.dtype(), grad.device())?;
    ops::copy_::call(&ops::slice::call(&out, dim, start, end, step)?, grad, false)?;
    Ok(out)
}

/// The gradient of `select(dim, index)` of a tensor of size `sizes`: zeros with `grad` written
/// into the selected sub-tensor.
pub fn select_backward(grad: &Tensor, sizes: &[i64], dim: i64, index: i64) -> Result<Tensor> {
    let out = zeros(sizes, grad.dtype(), grad.device())?;
    ops::copy_::call(&ops::select::call(&out, dim, index)?, grad, false)?;
    Ok(out)
}

/// The gradient of `as_strided(size, stride, storage_offset)` of an input with geometry
/// `(in_sizes, in_strides, in_offset)`, both in the same storage: the gradient is written into a
/// zero buffer covering both geometries through the output's geometry and read back through the
/// input's (the engine's `as_strided_backward`, which also regenerates the `grad_fn` of views).
/// Dims of the output with stride 0 are summed first; other self-overlapping geometries are not
/// supported.
pub fn as_strided_backward(
    grad: &Tensor,
    in_sizes: &[i64],
    in_strides: &[i64],
    in_offset: i64,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    let input = Geometry { sizes: in_sizes.to_vec(), strides: in_strides.to_vec(), offset: in_offset };
    let output =
        Geometry { sizes: size.to_vec(), strides: stride.to_vec(), offset: storage_offset.unwrap_or(in_offset) };
    oxten_runtime::autograd::as_strided_backward(grad, &input, &output)
}
