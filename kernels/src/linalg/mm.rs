//! `mm` and `addmm`: the meta functions (PyTorch's checks, in PyTorch's order) and the CPU
//! impls, both through [`super::product_into`].

use super::{check_matrix, not_implemented, product_into};
use crate::generated::decls::{AddmmOutCpuCpu, AddmmOutMetaFn, MmOutCpuCpu, MmOutMetaFn};
use crate::iter::{scalar_type_name, OutputMode, StructuredOutputs};
use crate::support::type_meta_name;
use crate::{Cpu, Meta};
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

/// `mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)` unless the inner sizes agree.
fn check_inner(a: &[i64], b: &[i64]) -> Result<()> {
    if a[1] != b[0] {
        return Err(Error::runtime(format!(
            "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
            a[0], a[1], b[0], b[1]
        )));
    }
    Ok(())
}

/// `mm`'s meta function: both operands 2-D, inner sizes equal, dtypes equal; the output is a
/// contiguous `[m, n]` matrix of that dtype.
impl MmOutMetaFn for Meta {
    fn mm_out(outs: &mut StructuredOutputs, self_: &Tensor, mat2: &Tensor) -> Result<()> {
        check_matrix("self", self_)?;
        check_matrix("mat2", mat2)?;
        let (a, b) = (self_.sizes(), mat2.sizes());
        check_inner(&a, &b)?;
        if self_.dtype() != mat2.dtype() {
            return Err(Error::runtime(format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                type_meta_name(self_.dtype()),
                type_meta_name(mat2.dtype())
            )));
        }
        outs.set_output(0, &[a[0], b[1]], None, self_.dtype(), self_.device())
    }
}

impl MmOutCpuCpu for Cpu {
    fn mm_out_cpu(self_: &Tensor, mat2: &Tensor, out: &Tensor) -> Result<()> {
        if out.dtype() == DType::Bool {
            return Err(not_implemented("addmm_impl_cpu_", DType::Bool));
        }
        product_into(out, self_, mat2, None, Scalar::Int(1))
    }
}

/// `addmm`'s meta function, with PyTorch's checks in PyTorch's order: `self` and `mat1` have
/// `mat2`'s dtype, both operands are matrices with matching inner sizes; the output is a
/// contiguous `[m, n]` matrix (for `addmm_`, `self` must already have that size), and `self`
/// must broadcast to it. Errors name `addmm` for every variant, as PyTorch's do.
impl AddmmOutMetaFn for Meta {
    fn addmm_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        mat1: &Tensor,
        mat2: &Tensor,
        _beta: Scalar,
        _alpha: Scalar,
    ) -> Result<()> {
        addmm_meta(outs, self_, mat1, mat2).map_err(|e| e.in_op("addmm"))
    }
}

fn addmm_meta(outs: &mut StructuredOutputs, self_: &Tensor, mat1: &Tensor, mat2: &Tensor) -> Result<()> {
    let same_dtype = |a: &str, x: &Tensor| {
        if x.dtype() != mat2.dtype() {
            return Err(Error::runtime(format!(
                "{a} and mat2 must have the same dtype, but got {} and {}",
                scalar_type_name(x.dtype()),
                scalar_type_name(mat2.dtype())
            )));
        }
        Ok(())
    };
    same_dtype("self", self_)?;
    same_dtype("mat1", mat1)?;
    // PyTorch names the first operand `self` in this message, as `mm` does.
    check_matrix("self", mat1)?;
    check_matrix("mat2", mat2)?;
    let (a, b) = (mat1.sizes(), mat2.sizes());
    check_inner(&a, &b)?;
    let sizes = [a[0], b[1]];
    if outs.mode() == OutputMode::Inplace {
        // PyTorch's `check_inplace` for operators without TensorIterator.
        if let Some(s) = outs.maybe_get_output(0) {
            if s.sizes()[..] != sizes[..] {
                return Err(Error::runtime(format!(
                    "Bad in-place call: input tensor size {:?} and output tensor size {sizes:?} should match",
                    &s.sizes()[..]
                )));
            }
        }
    }
    outs.set_output(0, &sizes, None, mat1.dtype(), mat1.device())?;
    // The impl expands `self` to the output's size; its errors surface here.
    self_.try_expand(&sizes)?;
    Ok(())
}

impl AddmmOutCpuCpu for Cpu {
    fn addmm_out_cpu(
        self_: &Tensor,
        mat1: &Tensor,
        mat2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
        out: &Tensor,
    ) -> Result<()> {
        if out.dtype() == DType::Bool {
            return Err(not_implemented("addmm_impl_cpu_", DType::Bool));
        }
        product_into(out, mat1, mat2, Some((self_, beta)), alpha)
    }
}
