//! Formula helpers of the fused recurrent cell `_thnn_fused_lstm_cell`, after PyTorch's
//! `_thnn_fused_lstm_cell_backward` / `_thnn_differentiable_lstm_cell_backward`.

use oxten_runtime::autograd::is_grad_enabled;
use oxten_runtime::{ops, Result, Scalar, Tensor};

/// The gradients of `(input_gates, hidden_gates, cx, input_bias, hidden_bias)`.
pub type LstmCellGrads = (Option<Tensor>, Option<Tensor>, Option<Tensor>, Option<Tensor>, Option<Tensor>);

/// `1 - t`.
fn one_minus(t: &Tensor) -> Result<Tensor> {
    ops::rsub_scalar::call(t, Scalar::Int(1), Scalar::Int(1))
}

/// `σ'` from `s = σ(x)`: `s·(1 - s)`.
fn sigmoid_slope(s: &Tensor) -> Result<Tensor> {
    ops::mul::call(s, &one_minus(s)?)
}

/// `tanh'` from `t = tanh(x)`: `1 - t²`.
fn tanh_slope(t: &Tensor) -> Result<Tensor> {
    one_minus(&ops::mul::call(t, t)?)
}

/// The activated gates `σ(i), σ(f), tanh(g), σ(o)` of `input_gates + hidden_gates (+ biases)`,
/// computed by differentiable operators.
fn activated_gates(
    input_gates: &Tensor,
    hidden_gates: &Tensor,
    input_bias: Option<&Tensor>,
    hidden_bias: Option<&Tensor>,
) -> Result<[Tensor; 4]> {
    let mut gates = ops::add::call(input_gates, hidden_gates, Scalar::Int(1))?;
    for b in [input_bias, hidden_bias].into_iter().flatten() {
        gates = ops::add::call(&gates, b, Scalar::Int(1))?;
    }
    let g = ops::chunk::call(&gates, 4, -1)?;
    Ok([ops::sigmoid::call(&g[0])?, ops::sigmoid::call(&g[1])?, ops::tanh::call(&g[2])?, ops::sigmoid::call(&g[3])?])
}

/// The four gates of a workspace (or of a gradient of the gates), split along the last dim.
fn split_gates(t: &Tensor) -> Result<[Tensor; 4]> {
    let g = ops::chunk::call(t, 4, -1)?;
    let [i, f, c, o] = <[Tensor; 4]>::try_from(g)
        .map_err(|g| oxten_runtime::Error::shape(format!("expected 4 gates, got {}", g.len())))?;
    Ok([i, f, c, o])
}

/// `_thnn_fused_lstm_cell`'s gradients from those of `(h', c')` (`grads`). Without
/// `create_graph` this is the fused backward kernel over the saved `cx`, `c'` and workspace;
/// with it, the gates are recomputed by differentiable operators from the saved inputs (and `c'`
/// from them, so that the second derivative sees every path), as PyTorch does.
#[allow(clippy::too_many_arguments)]
pub fn fused_lstm_cell_grads(
    grads: &[Tensor],
    input_gates: &Tensor,
    hidden_gates: &Tensor,
    cx: &Tensor,
    input_bias: Option<&Tensor>,
    hidden_bias: Option<&Tensor>,
    cy: &Tensor,
    workspace: &Tensor,
) -> Result<LstmCellGrads> {
    let (grad_hy, grad_cy) = (&grads[0], &grads[1]);
    let has_bias = input_bias.is_some() || hidden_bias.is_some();
    let (grad_gates, grad_cx, grad_bias) = if is_grad_enabled() {
        let [i, f, g, o] = activated_gates(input_gates, hidden_gates, input_bias, hidden_bias)?;
        let cy = ops::add::call(&ops::mul::call(&f, cx)?, &ops::mul::call(&i, &g)?, Scalar::Int(1))?;
        let tanh_cy = ops::tanh::call(&cy)?;
        // The gradient reaching c': its own plus h''s through tanh.
        let gcx = ops::add::call(
            grad_cy,
            &ops::mul::call(&ops::mul::call(grad_hy, &o)?, &tanh_slope(&tanh_cy)?)?,
            Scalar::Int(1),
        )?;
        let gi = ops::mul::call(&ops::mul::call(&gcx, &g)?, &sigmoid_slope(&i)?)?;
        let gf = ops::mul::call(&ops::mul::call(&gcx, cx)?, &sigmoid_slope(&f)?)?;
        let gg = ops::mul::call(&ops::mul::call(&gcx, &i)?, &tanh_slope(&g)?)?;
        let go = ops::mul::call(&ops::mul::call(grad_hy, &tanh_cy)?, &sigmoid_slope(&o)?)?;
        let grad_gates = ops::cat::call(&[gi, gf, gg, go], -1)?;
        let grad_cx = ops::mul::call(&gcx, &f)?;
        let grad_bias = if !has_bias {
            None
        } else if grad_gates.dim() == 2 {
            Some(ops::sum_dim_intlist::call(&grad_gates, Some(&[0]), false, None)?)
        } else {
            Some(grad_gates.clone())
        };
        (grad_gates, grad_cx, grad_bias)
    } else {
        let (gates, gcx, gb) =
            ops::_thnn_fused_lstm_cell_backward_impl::call(Some(grad_hy), Some(grad_cy), cx, cy, workspace, has_bias)?;
        (gates, gcx, has_bias.then_some(gb))
    };
    Ok((
        Some(grad_gates.clone()),
        Some(grad_gates),
        Some(grad_cx),
        input_bias.and(grad_bias.clone()),
        hidden_bias.and(grad_bias),
    ))
}

/// The tangents of `_thnn_fused_lstm_cell`'s `(h', c')` from those of its inputs, using the
/// activated gates of the workspace: `dc' = σ(f)'·df·cx + σ(f)·dcx + σ(i)'·di·g + σ(i)·tanh'·dg`
/// and `dh' = σ(o)'·do·tanh(c') + σ(o)·tanh'(c')·dc'`.
#[allow(clippy::too_many_arguments)]
pub fn fused_lstm_cell_jvp(
    input_gates_t: &Tensor,
    hidden_gates_t: &Tensor,
    cx_t: &Tensor,
    input_bias_t: Option<&Tensor>,
    hidden_bias_t: Option<&Tensor>,
    cx: &Tensor,
    cy: &Tensor,
    workspace: &Tensor,
) -> Result<(Tensor, Tensor)> {
    let mut dgates = ops::add::call(input_gates_t, hidden_gates_t, Scalar::Int(1))?;
    for b in [input_bias_t, hidden_bias_t].into_iter().flatten() {
        dgates = ops::add::call(&dgates, b, Scalar::Int(1))?;
    }
    let [di, df, dg, d_o] = split_gates(&dgates)?;
    let [i, f, g, o] = split_gates(workspace)?;
    let di = ops::mul::call(&di, &sigmoid_slope(&i)?)?;
    let df = ops::mul::call(&df, &sigmoid_slope(&f)?)?;
    let dg = ops::mul::call(&dg, &tanh_slope(&g)?)?;
    let d_o = ops::mul::call(&d_o, &sigmoid_slope(&o)?)?;
    let terms =
        [ops::mul::call(&df, cx)?, ops::mul::call(&f, cx_t)?, ops::mul::call(&di, &g)?, ops::mul::call(&i, &dg)?];
    let mut dcy = terms[0].clone();
    for t in &terms[1..] {
        dcy = ops::add::call(&dcy, t, Scalar::Int(1))?;
    }
    let tanh_cy = ops::tanh::call(cy)?;
    let dhy = ops::add::call(
        &ops::mul::call(&d_o, &tanh_cy)?,
        &ops::mul::call(&ops::mul::call(&o, &tanh_slope(&tanh_cy)?)?, &dcy)?,
        Scalar::Int(1),
    )?;
    Ok((dhy, dcy))
}
