//! `bmm`: a batch of matrix products, `[B, m, k] x [B, k, n] -> [B, m, n]` (no broadcasting;
//! `matmul` broadcasts and then calls this).

use super::{not_implemented, product_into};
use crate::generated::decls::{BmmOutCpuCpu, BmmOutMetaFn};
use crate::iter::{scalar_type_name, StructuredOutputs};
use crate::{Cpu, Meta};
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

/// PyTorch's checks (`common_checks_baddbmm_bmm`, then the kernel's dtype check): both operands
/// 3-D, batch and inner sizes equal, same dtype; the output is a contiguous `[B, m, n]` tensor.
impl BmmOutMetaFn for Meta {
    fn bmm_out(outs: &mut StructuredOutputs, self_: &Tensor, mat2: &Tensor) -> Result<()> {
        if self_.dim() != 3 {
            return Err(Error::runtime("batch1 must be a 3D tensor"));
        }
        if mat2.dim() != 3 {
            return Err(Error::runtime("batch2 must be a 3D tensor"));
        }
        let (a, b) = (self_.sizes(), mat2.sizes());
        if b[0] != a[0] || b[1] != a[2] {
            return Err(Error::runtime(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a[0], a[2], b[0], b[1]
            )));
        }
        if self_.dtype() != mat2.dtype() {
            return Err(Error::runtime(format!(
                "expected scalar type {} but found {}",
                scalar_type_name(self_.dtype()),
                scalar_type_name(mat2.dtype())
            )));
        }
        outs.set_output(0, &[a[0], a[1], b[2]], None, mat2.dtype(), mat2.device())
    }
}

impl BmmOutCpuCpu for Cpu {
    fn bmm_out_cpu(self_: &Tensor, mat2: &Tensor, out: &Tensor) -> Result<()> {
        if out.dtype() == DType::Bool {
            return Err(not_implemented("bmm", DType::Bool));
        }
        product_into(out, self_, mat2, None, Scalar::Int(1))
    }
}
