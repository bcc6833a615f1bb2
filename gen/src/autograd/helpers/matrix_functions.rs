//! Formula helpers of the analytic matrix functions (`linalg_matrix_exp`).

use oxten_runtime::{ops, Result, Tensor};

/// The derivative of `exp` at `A` in direction `E` (`adjoint = false`: the forward-mode
/// tangent), or its adjoint applied to the gradient `G` (`adjoint = true`: the backward
/// gradient, the same with `Aᵀ`): for an analytic `f`, `f([[A, E], [0, A]]) = [[f(A), Df(A)[E]],
/// [0, f(A)]]`, so the derivative is the top-right block of one exponential of twice the size.
/// Built from differentiable ops, so it has derivatives of its own.
pub fn linalg_matrix_exp_differential(a: &Tensor, e: &Tensor, adjoint: bool) -> Result<Tensor> {
    let a = if adjoint { ops::transpose::call(a, -2, -1)? } else { a.clone() };
    let n = a.size(-1)?;
    let e = ops::expand::call(e, &a.sizes(), false)?;
    let top = ops::cat::call(&[a.clone(), e], -1)?;
    let bottom = ops::cat::call(&[ops::zeros_like::call(&a, None, None, None, None, None)?, a.clone()], -1)?;
    let block = ops::linalg_matrix_exp::call(&ops::cat::call(&[top, bottom], -2)?)?;
    ops::narrow::call(&ops::narrow::call(&block, -2, 0, n)?, -1, n, n)
}
