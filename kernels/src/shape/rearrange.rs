//! Rearranging and splitting: `rot90`, `tensor_split` and `hsplit`/`vsplit`/`dsplit`,
//! `unsafe_chunk`/`unsafe_split`, `tile`, `take`, `take_along_dim`, `msort` and `sum_to_size`.
//! CompositeImplicitAutograd with PyTorch's checks: the splits are `narrow` views, the rest
//! `flip`/`transpose`, `repeat`, `index`, `gather`, `sort` and `sum`, whose gradients apply.

use crate::generated::decls::{
    DsplitArrayCompositeImplicit, DsplitIntCompositeImplicit, HsplitArrayCompositeImplicit, HsplitIntCompositeImplicit,
    MsortCompositeImplicit, Rot90CompositeImplicit, SumToSizeCompositeImplicit, TakeAlongDimCompositeImplicit,
    TakeCompositeImplicit, TensorSplitIndicesCompositeImplicit, TensorSplitSectionsCompositeImplicit,
    TensorSplitTensorCompositeImplicit, TileCompositeImplicit, UnsafeChunkCompositeImplicit,
    UnsafeSplitCompositeImplicit, VsplitArrayCompositeImplicit, VsplitIntCompositeImplicit,
};
use crate::iter::infer_size;
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Tensor};

impl Rot90CompositeImplicit for Composite {
    fn rot90(self_: &Tensor, k: i64, dims: &[i64]) -> Result<Tensor> {
        if dims.len() != 2 {
            return Err(Error::runtime(format!("expected total rotation dims == 2, but got dims = {}", dims.len())));
        }
        let nd = self_.dim();
        if nd < 2 {
            return Err(Error::runtime(format!("expected total dims >= 2, but got total dims = {nd}")));
        }
        let (a, b) = (wrap_dim(dims[0], nd)?, wrap_dim(dims[1], nd)?);
        if a == b {
            return Err(Error::runtime(format!(
                "expected rotation dims to be different, but got dim0 = {} and dim1 = {}",
                dims[0], dims[1]
            )));
        }
        let (a, b) = (a as i64, b as i64);
        match k.rem_euclid(4) {
            1 => ops::transpose::call(&ops::flip::call(self_, &[b])?, a, b),
            2 => ops::flip::call(self_, &[a, b]),
            3 => ops::flip::call(&ops::transpose::call(self_, a, b)?, &[b]),
            _ => ops::deep_clone::call(self_, None),
        }
    }
}

/// The pieces of `self` along `dim` between consecutive boundaries (clamped to the size).
fn split_at(self_: &Tensor, bounds: &[i64], dim: usize) -> Result<Vec<Tensor>> {
    let n = self_.sizes()[dim];
    let mut start = 0;
    let mut out = Vec::with_capacity(bounds.len() + 1);
    for &b in bounds.iter().chain(std::iter::once(&n)) {
        let s = start.clamp(0, n);
        let e = b.clamp(s, n);
        out.push(ops::narrow::call(self_, dim as i64, s, e - s)?);
        start = b;
    }
    Ok(out)
}

fn tensor_split_dim(self_: &Tensor, dim: i64) -> Result<usize> {
    if self_.dim() == 0 {
        return Err(Error::runtime(format!(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with {} dims",
            self_.dim()
        )));
    }
    wrap_dim(dim, self_.dim())
}

fn sections_bounds(n: i64, sections: i64) -> Result<Vec<i64>> {
    if sections <= 0 {
        return Err(Error::runtime(format!("number of sections must be larger than 0, got {sections}")));
    }
    let (base, extra) = (n / sections, n % sections);
    let mut bounds = oxten_runtime::error::try_vec_with_capacity(sections as usize - 1)?;
    let mut at = 0;
    for i in 0..sections - 1 {
        at += base + i64::from(i < extra);
        bounds.push(at);
    }
    Ok(bounds)
}

impl TensorSplitSectionsCompositeImplicit for Composite {
    fn tensor_split_sections(self_: &Tensor, sections: i64, dim: i64) -> Result<Vec<Tensor>> {
        let d = tensor_split_dim(self_, dim)?;
        split_at(self_, &sections_bounds(self_.sizes()[d], sections)?, d)
    }
}

impl TensorSplitIndicesCompositeImplicit for Composite {
    fn tensor_split_indices(self_: &Tensor, indices: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        let d = tensor_split_dim(self_, dim)?;
        split_at(self_, indices, d)
    }
}

impl TensorSplitTensorCompositeImplicit for Composite {
    fn tensor_split_tensor(self_: &Tensor, tensor_indices_or_sections: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
        let t = tensor_indices_or_sections;
        if t.device() != oxten_runtime::Device::Cpu {
            return Err(Error::runtime(format!(
                "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {}",
                t.device()
            )));
        }
        if t.dtype() != DType::I64 {
            return Err(Error::runtime(format!(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got {}",
                crate::iter::scalar_type_name(t.dtype())
            )));
        }
        if t.dim() > 1 {
            return Err(Error::runtime(format!(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with {} dims",
                t.dim()
            )));
        }
        let values = t.to_vec::<i64>()?;
        if t.dim() == 0 {
            Self::tensor_split_sections(self_, values[0], dim)
        } else {
            Self::tensor_split_indices(self_, &values, dim)
        }
    }
}

/// `hsplit`/`vsplit`/`dsplit` with a section count: it must divide the size.
fn split_even(self_: &Tensor, op: &str, min_dims: usize, dim: usize, sections: i64) -> Result<Vec<Tensor>> {
    if self_.dim() < min_dims {
        return Err(Error::runtime(format!(
            "torch.{op} requires a tensor with at least {min_dims} dimension, but got a tensor with {} dimensions!",
            self_.dim()
        )));
    }
    let n = self_.sizes()[dim];
    if sections == 0 || n % sections != 0 {
        return Err(Error::runtime(format!(
            "torch.{op} attempted to split along dimension {dim}, but the size of the dimension {n} is not divisible by the split_size {sections}!"
        )));
    }
    split_at(self_, &sections_bounds(n, sections)?, dim)
}

fn split_indices(self_: &Tensor, op: &str, min_dims: usize, dim: usize, indices: &[i64]) -> Result<Vec<Tensor>> {
    if self_.dim() < min_dims {
        return Err(Error::runtime(format!(
            "torch.{op} requires a tensor with at least {min_dims} dimension, but got a tensor with {} dimensions!",
            self_.dim()
        )));
    }
    split_at(self_, indices, dim)
}

fn hsplit_dim(self_: &Tensor) -> usize {
    usize::from(self_.dim() != 1)
}

impl HsplitIntCompositeImplicit for Composite {
    fn hsplit_int(self_: &Tensor, sections: i64) -> Result<Vec<Tensor>> {
        split_even(self_, "hsplit", 1, hsplit_dim(self_), sections)
    }
}

impl HsplitArrayCompositeImplicit for Composite {
    fn hsplit_array(self_: &Tensor, indices: &[i64]) -> Result<Vec<Tensor>> {
        split_indices(self_, "hsplit", 1, hsplit_dim(self_), indices)
    }
}

impl VsplitIntCompositeImplicit for Composite {
    fn vsplit_int(self_: &Tensor, sections: i64) -> Result<Vec<Tensor>> {
        split_even(self_, "vsplit", 2, 0, sections)
    }
}

impl VsplitArrayCompositeImplicit for Composite {
    fn vsplit_array(self_: &Tensor, indices: &[i64]) -> Result<Vec<Tensor>> {
        split_indices(self_, "vsplit", 2, 0, indices)
    }
}

impl DsplitIntCompositeImplicit for Composite {
    fn dsplit_int(self_: &Tensor, sections: i64) -> Result<Vec<Tensor>> {
        split_even(self_, "dsplit", 3, 2, sections)
    }
}

impl DsplitArrayCompositeImplicit for Composite {
    fn dsplit_array(self_: &Tensor, indices: &[i64]) -> Result<Vec<Tensor>> {
        split_indices(self_, "dsplit", 3, 2, indices)
    }
}

impl UnsafeChunkCompositeImplicit for Composite {
    fn unsafe_chunk(self_: &Tensor, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        ops::chunk::call(self_, chunks, dim)
    }
}

impl UnsafeSplitCompositeImplicit for Composite {
    fn unsafe_split(self_: &Tensor, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
        ops::split::call(self_, split_size, dim)
    }
}

impl TileCompositeImplicit for Composite {
    fn tile(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
        // `repeat` needs at least as many repeats as dims: pad `dims` with leading ones.
        let nd = self_.dim();
        let mut reps = vec![1; nd.saturating_sub(dims.len())];
        reps.extend_from_slice(dims);
        ops::repeat::call(self_, &reps)
    }
}

impl TakeCompositeImplicit for Composite {
    fn take(self_: &Tensor, index: &Tensor) -> Result<Tensor> {
        if index.dtype() != DType::I64 {
            return Err(Error::runtime(format!(
                "take(): Expected a long tensor for index, but got {}",
                crate::iter::scalar_type_name(index.dtype())
            )));
        }
        let n = self_.numel();
        if n == 0 && index.numel() > 0 {
            return Err(Error::index("take(): tried to take from an empty tensor"));
        }
        let flat = ops::reshape::call(self_, &[-1])?;
        if index.dim() == 0 {
            return ops::index::call(&flat, &[Some(ops::reshape::call(index, &[1])?)])?.try_reshape(&[]);
        }
        ops::index::call(&flat, &[Some(index.clone())])
    }
}

impl TakeAlongDimCompositeImplicit for Composite {
    fn take_along_dim(self_: &Tensor, indices: &Tensor, dim: Option<i64>) -> Result<Tensor> {
        if !matches!(indices.dtype(), DType::I64) {
            return Err(Error::index(format!(
                "torch.take_along_dim(): dtype of indices should be Long but got {}",
                crate::iter::scalar_type_name(indices.dtype())
            )));
        }
        let Some(dim) = dim else {
            let flat = ops::reshape::call(self_, &[-1])?;
            let idx = wrap_negative(&ops::reshape::call(indices, &[-1])?, self_.numel())?;
            return ops::gather::call(&flat, 0, &idx, false);
        };
        if self_.dim() != indices.dim() {
            return Err(Error::runtime(format!(
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} dimensions for input, and {} dimensions for indices",
                self_.dim(),
                indices.dim()
            )));
        }
        if self_.dim() == 0 {
            return ops::gather::call(self_, dim, indices, false);
        }
        let d = wrap_dim(dim, self_.dim())?;
        // Broadcast every dim but `d`; along `d` each keeps its own size.
        let (mut s, mut i) = (self_.sizes().to_vec(), indices.sizes().to_vec());
        if !s.is_empty() {
            s[d] = 1;
            i[d] = 1;
        }
        let shape = infer_size(&s, &i)?;
        let (mut s_shape, mut i_shape) = (shape.clone(), shape);
        if !s_shape.is_empty() {
            s_shape[d] = self_.sizes()[d];
            i_shape[d] = indices.sizes()[d];
        }
        let src = ops::expand::call(self_, &s_shape, false)?;
        let idx = ops::expand::call(&wrap_negative(indices, self_.sizes()[d])?, &i_shape, false)?;
        ops::gather::call(&src, d as i64, &idx, false)
    }
}

/// Negative indices counted from the end of a dim of size `n`, as `take_along_dim` reads them.
fn wrap_negative(indices: &Tensor, n: i64) -> Result<Tensor> {
    let negative = ops::lt_scalar::call(indices, oxten_runtime::Scalar::Int(0))?;
    ops::where_self::call(&negative, &indices.try_add_scalar(n)?, indices)
}

impl MsortCompositeImplicit for Composite {
    fn msort(self_: &Tensor) -> Result<Tensor> {
        Ok(ops::sort::call(self_, 0, false)?.0)
    }
}

impl SumToSizeCompositeImplicit for Composite {
    fn sum_to_size(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
        if size.is_empty() {
            // PyTorch's `sum_to` sums everything for an empty shape (integers to int64).
            return ops::sum::call(self_, None);
        }
        let sizes = self_.sizes();
        let expandable = size.len() <= sizes.len()
            && size.iter().rev().zip(sizes.iter().rev()).all(|(&want, &have)| want == have || want == 1);
        if !expandable {
            return Err(Error::runtime(format!("size {{{size:?}}} is not expandable to size {{{:?}}}.", &sizes[..])));
        }
        let lead = sizes.len() - size.len();
        let mut dims: Vec<i64> = (0..lead as i64).collect();
        dims.extend((lead..sizes.len()).filter(|&d| size[d - lead] == 1 && sizes[d] != 1).map(|d| d as i64));
        let mut r =
            if dims.is_empty() { self_.clone() } else { ops::sum_dim_intlist::call(self_, Some(&dims), true, None)? };
        if lead > 0 {
            r = ops::view::call(&r, size).or_else(|_| ops::reshape::call(&r, size))?;
        }
        Ok(r)
    }
}
