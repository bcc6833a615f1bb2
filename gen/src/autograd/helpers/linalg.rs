//! Formula helpers of the matrix products (`mm`'s own, `mm_mat1_backward` and
//! `mm_mat2_backward`, live in the parent module and are shared with `addmm`).

use oxten_runtime::{ops, Result, Tensor};

/// The outer product `a ⊗ b` of two vectors (`ger`): `a.unsqueeze(1) * b`, differentiable.
pub fn outer(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::mul::call(&ops::unsqueeze::call(a, 1)?, b)
}
