//! Sub-ranges along one dim: `slice.Tensor`, `select.int`, `narrow`.

use super::strided_view;
use crate::generated::decls::{NarrowCompositeImplicit, SelectCompositeExplicit, SliceCompositeExplicit};
use oxten_runtime::{ops, wrap_dim, Error, Result, Tensor};

impl SliceCompositeExplicit for crate::Composite {
    /// Python's `self[start:end:step]` along `dim`: missing bounds mean the whole dim, negative
    /// bounds count from the end, out-of-range bounds are clamped (so the result may be empty),
    /// and `step` must be positive.
    fn slice(self_: &Tensor, dim: i64, start: Option<i64>, end: Option<i64>, step: i64) -> Result<Tensor> {
        let l = self_.layout();
        if l.dim() == 0 {
            return Err(Error::index("slice() cannot be applied to a 0-dim tensor."));
        }
        let d = wrap_dim(dim, l.dim())?;
        if step <= 0 {
            return Err(Error::value("slice step must be positive"));
        }
        let n = l.sizes[d];
        let mut start = start.unwrap_or(0);
        let mut end = end.unwrap_or(i64::MAX);
        if start < 0 {
            start += n;
        }
        if end < 0 {
            end += n;
        }
        start = start.clamp(0, n);
        end = end.clamp(start, n);
        let mut sizes = l.sizes.clone();
        let mut strides = l.strides.clone();
        let offset = l.offset + start * strides[d];
        // Rounded-up division, written so that a huge `step` cannot overflow.
        let len = end - start;
        sizes[d] = if len == 0 { 0 } else { (len - 1) / step + 1 };
        strides[d] *= step;
        strided_view(self_, &sizes, &strides, offset)
    }
}

impl SelectCompositeExplicit for crate::Composite {
    /// `self[..., index, ...]` at `dim`: removes the dim (negative `index` counts from the end).
    fn select(self_: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
        let l = self_.layout();
        if l.dim() == 0 {
            return Err(Error::index("select() cannot be applied to a 0-dim tensor."));
        }
        let d = wrap_dim(dim, l.dim())?;
        let n = l.sizes[d];
        if index < -n || index >= n {
            return Err(Error::index(format!(
                "select(): index {index} out of range for tensor of size {:?} at dimension {d}",
                &l.sizes[..]
            )));
        }
        let index = if index < 0 { index + n } else { index };
        let mut sizes = l.sizes.clone();
        let mut strides = l.strides.clone();
        let offset = l.offset + index * strides[d];
        sizes.remove(d);
        strides.remove(d);
        strided_view(self_, &sizes, &strides, offset)
    }
}

impl NarrowCompositeImplicit for crate::Composite {
    /// `length` elements of `dim` from `start` (negative `start` counts from the end). Unlike
    /// `slice`, a range that does not fit is an error, not clamped. Implemented as a `slice`
    /// call so that autograd sees a slice.
    fn narrow(self_: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        if self_.dim() == 0 {
            return Err(Error::index("narrow() cannot be applied to a 0-dim tensor."));
        }
        if length < 0 {
            return Err(Error::value("narrow(): length must be non-negative."));
        }
        let cur = self_.size(dim)?;
        if start < -cur || start > cur {
            return Err(Error::index(format!(
                "start out of range (expected to be in range of [{}, {cur}], but got {start})",
                -cur
            )));
        }
        let start = if start < 0 { start + cur } else { start };
        if start > cur - length {
            return Err(Error::value(format!("start ({start}) + length ({length}) exceeds dimension size ({cur}).")));
        }
        ops::slice::call(self_, dim, Some(start), Some(start + length), 1)
    }
}

impl crate::generated::decls::NarrowTensorCompositeImplicit for crate::Composite {
    /// `narrow` with `start` read from a 0-dim integer tensor.
    fn narrow_tensor(self_: &Tensor, dim: i64, start: &Tensor, length: i64) -> Result<Tensor> {
        if start.dim() != 0 || !start.dtype().is_integral(false) {
            return Err(Error::value(format!(
                "narrow(): start must be a 0-dim integral Tensor, got a {}-D {} tensor",
                start.dim(),
                start.dtype()
            )));
        }
        let start = start.try_to_dtype(oxten_runtime::DType::I64)?.to_vec::<i64>()?;
        let start = *start.first().ok_or_else(|| Error::runtime("narrow(): start holds no element"))?;
        ops::narrow::call(self_, dim, start, length)
    }
}

impl crate::generated::decls::NarrowCopyCompositeImplicit for crate::Composite {
    /// `narrow` then a copy of the view (always a new tensor, unlike `narrow`).
    fn narrow_copy(self_: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        self_.try_narrow(dim, start, length)?.try_deep_clone()
    }
}
