//! `masked_fill` with a scalar or a 0-dim tensor value, in place (the kernels) and functional
//! (a contiguous clone of `self` broadcast against the mask, then filled in place).

use super::common::assert_no_partial_overlap;
use crate::generated::decls::{
    MaskedFillInplaceScalarCpu, MaskedFillInplaceScalarMeta, MaskedFillInplaceTensorCpu, MaskedFillInplaceTensorMeta,
    MaskedFillScalarCompositeExplicit, MaskedFillTensorCompositeExplicit,
};
use crate::iter::{infer_size, TensorIterator, TensorIteratorConfig};
use crate::logical::promote::FromScalar;
use crate::support::type_meta_name;
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{match_dtype, ops, DType, Error, MemoryFormat, Result, Scalar, Tensor};

pub(crate) use crate::support::item_scalar;

/// `masked_fill_impl_cpu`: a bool mask broadcastable to `self` (which is not resized), no
/// partial overlap between them, then `value` (converted to `self`'s dtype with overflow
/// checks) written where the mask is true. Writing into an expanded `self` is allowed (PyTorch
/// only warns).
pub(crate) fn masked_fill_(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<()> {
    let iter = masked_fill_iter(self_, mask)?;
    match_dtype!(self_.dtype(), T => {
        let v = <T as FromScalar>::from_scalar(value)?;
        iter.for_each(
            |ptrs, s, n0, n1| {
                let nt = ptrs.len();
                for j in 0..n1 {
                    let o = ptrs[0].wrapping_offset(j as isize * s[nt]);
                    let m = ptrs[1].wrapping_offset(j as isize * s[nt + 1]);
                    for i in 0..n0 as isize {
                        // SAFETY: the iterator's pointers and byte strides address `n0` valid
                        // elements of `self` (dtype T) and of the bool mask on every row.
                        unsafe {
                            if *(m.offset(i * s[1]) as *const bool) {
                                *(o.offset(i * s[0]) as *mut T) = v;
                            }
                        }
                    }
                }
            },
            crate::iter::GRAIN_SIZE,
        );
    });
    Ok(())
}

/// The checks of `masked_fill_` and its iterator over `self` and the mask (all the Meta kernels
/// do).
pub(super) fn masked_fill_iter(self_: &Tensor, mask: &Tensor) -> Result<TensorIterator> {
    if mask.dtype() != DType::Bool {
        return Err(Error::dtype(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            type_meta_name(mask.dtype())
        )));
    }
    assert_no_partial_overlap(self_, mask)?;
    TensorIteratorConfig::new()
        .check_mem_overlap(false)
        .check_all_same_dtype(false)
        .resize_outputs(false)
        .add_output(self_)
        .add_input(mask)
        .build()
}

/// `masked_fill_.Tensor`'s value must be a 0-dim tensor (read only on the CPU).
pub(super) fn check_tensor_value(value: &Tensor) -> Result<()> {
    if value.dim() != 0 {
        return Err(Error::value(format!(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
            value.dim()
        )));
    }
    Ok(())
}

impl MaskedFillInplaceScalarCpu for Cpu {
    fn masked_fill_inplace_scalar(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
        masked_fill_(self_, mask, value)?;
        Ok(self_.clone())
    }
}

impl MaskedFillInplaceScalarMeta for Meta {
    fn masked_fill_inplace_scalar(self_: &Tensor, mask: &Tensor, _value: Scalar) -> Result<Tensor> {
        masked_fill_iter(self_, mask)?;
        Ok(self_.clone())
    }
}

impl MaskedFillInplaceTensorCpu for Cpu {
    fn masked_fill_inplace_tensor(self_: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        check_tensor_value(value)?;
        masked_fill_(self_, mask, item_scalar(value)?)?;
        Ok(self_.clone())
    }
}

impl MaskedFillInplaceTensorMeta for Meta {
    fn masked_fill_inplace_tensor(self_: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        check_tensor_value(value)?;
        masked_fill_iter(self_, mask)?;
        Ok(self_.clone())
    }
}

/// The functional form: `self` broadcast against `mask`, cloned contiguous.
fn broadcast_clone(self_: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let shape = infer_size(&mask.sizes(), &self_.sizes())?;
    let expanded = if self_.sizes() == shape[..] { self_.clone() } else { ops::expand::call(self_, &shape, false)? };
    ops::deep_clone::call(&expanded, Some(MemoryFormat::Contiguous))
}

impl MaskedFillScalarCompositeExplicit for Composite {
    fn masked_fill_scalar(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
        let result = broadcast_clone(self_, mask)?;
        ops::masked_fill_scalar_::call(&result, mask, value)
    }
}

impl MaskedFillTensorCompositeExplicit for Composite {
    fn masked_fill_tensor(self_: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        if value.dim() != 0 {
            return Err(Error::value(format!(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                value.dim()
            )));
        }
        let result = broadcast_clone(self_, mask)?;
        ops::masked_fill_::call(&result, mask, value)
    }
}
