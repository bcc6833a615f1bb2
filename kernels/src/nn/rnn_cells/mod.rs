//! The recurrent cells `rnn_tanh_cell`, `rnn_relu_cell`, `lstm_cell` and `gru_cell`
//! (CompositeImplicitAutograd, as in PyTorch: two `linear`s and the gates, so autograd and every
//! backend come from the operators they call). The LSTM's gates are one operator,
//! `_thnn_fused_lstm_cell` ([`fused_lstm`]), with a fused CPU kernel and its own backward; the
//! others' gates are pointwise operators.
//!
//! Inputs may be batched (`input [B, I]`, states `[B, H]`) or not (`[I]`, `[H]`), as PyTorch's
//! cell modules accept; the checks are PyTorch's `check_rnn_cell_forward_input/hidden`.
//!
//! Each cell is its two projections followed by one of the gate functions below, which are
//! public (as `oxten_kernels::recurrent`) so that the multi-layer `nn::RNN`/`LSTM`/`GRU` modules
//! can project a whole sequence's inputs in one matrix product (as PyTorch does on the CPU) and
//! then run the same gates step by step.

mod fused_lstm;

use crate::generated::decls::{
    GruCellCompositeImplicit, LstmCellCompositeImplicit, RnnReluCellCompositeImplicit, RnnTanhCellCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

/// The size of the last dim (the feature dim of a batched or unbatched input).
fn features(t: &Tensor) -> i64 {
    t.sizes().last().copied().unwrap_or(1)
}

/// PyTorch's cell checks: `input` is `[B, I]` or `[I]` with `I` matching `w_ih`'s columns, and a
/// hidden state `hx` (named `name`) of the same batch and of `w_hh`'s hidden size.
fn check_cell(input: &Tensor, hx: &Tensor, w_ih: &Tensor, w_hh: &Tensor, gates: i64, name: &str) -> Result<()> {
    if input.dim() != 1 && input.dim() != 2 {
        return Err(Error::shape(format!("Expected input to be 1D or 2D, got {}D instead", input.dim())));
    }
    if w_ih.dim() != 2 || w_hh.dim() != 2 {
        return Err(Error::shape("w_ih and w_hh must be 2-D matrices"));
    }
    if features(input) != w_ih.sizes()[1] {
        return Err(Error::shape(format!(
            "input has inconsistent input_size: got {} expected {}",
            features(input),
            w_ih.sizes()[1]
        )));
    }
    let hidden = w_hh.sizes()[1];
    if w_ih.sizes()[0] != gates * hidden || w_hh.sizes()[0] != gates * hidden {
        return Err(Error::shape(format!(
            "w_ih and w_hh must have {gates} * hidden_size = {} rows, got {} and {}",
            gates * hidden,
            w_ih.sizes()[0],
            w_hh.sizes()[0]
        )));
    }
    if hx.dim() != input.dim() {
        return Err(Error::shape(format!(
            "{name}: expected a {}-D hidden state for a {}-D input, got {}-D",
            input.dim(),
            input.dim(),
            hx.dim()
        )));
    }
    if input.dim() == 2 && input.sizes()[0] != hx.sizes()[0] {
        return Err(Error::shape(format!(
            "Input batch size {} doesn't match hidden{name} batch size {}",
            input.sizes()[0],
            hx.sizes()[0]
        )));
    }
    if features(hx) != hidden {
        return Err(Error::shape(format!(
            "hidden{name} has inconsistent hidden_size: got {}, expected {hidden}",
            features(hx)
        )));
    }
    Ok(())
}

/// `input @ w_ih.T + b_ih` and `hx @ w_hh.T + b_hh`.
fn projections(
    input: &Tensor,
    hx: &Tensor,
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    Ok((ops::linear::call(input, w_ih, b_ih)?, ops::linear::call(hx, w_hh, b_hh)?))
}

/// An Elman step from the two projections: `tanh(x + h)` or `relu(x + h)`.
pub fn simple_gates(x_proj: &Tensor, h_proj: &Tensor, relu: bool) -> Result<Tensor> {
    let pre = x_proj.try_add(h_proj)?;
    if relu {
        pre.try_relu()
    } else {
        pre.try_tanh()
    }
}

/// An LSTM step from the two projections (`[…, 4H]`, gates i, f, g, o) and the cell state `c`:
/// `(h', c')`.
pub fn lstm_gates(x_proj: &Tensor, h_proj: &Tensor, c: &Tensor) -> Result<(Tensor, Tensor)> {
    let (hy, cy, _workspace) = ops::_thnn_fused_lstm_cell::call(x_proj, h_proj, c, None, None)?;
    Ok((hy, cy))
}

/// A GRU step from the two projections (`[…, 3H]`, gates r, z, n) and the hidden state `h`.
pub fn gru_gates(x_proj: &Tensor, h_proj: &Tensor, h: &Tensor) -> Result<Tensor> {
    let xs = ops::chunk::call(x_proj, 3, -1)?;
    let hs = ops::chunk::call(h_proj, 3, -1)?;
    let r = xs[0].try_add(&hs[0])?.try_sigmoid()?;
    let z = xs[1].try_add(&hs[1])?.try_sigmoid()?;
    let n = xs[2].try_add(&r.try_mul(&hs[2])?)?.try_tanh()?;
    // h' = n + z·(h - n) = (1 - z)·n + z·h.
    n.try_add(&z.try_mul(&h.try_sub(&n)?)?)
}

/// `rnn_tanh_cell` and `rnn_relu_cell`.
fn elman_cell(
    input: &Tensor,
    hx: &Tensor,
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
    relu: bool,
) -> Result<Tensor> {
    check_cell(input, hx, w_ih, w_hh, 1, "0")?;
    let (x, h) = projections(input, hx, w_ih, w_hh, b_ih, b_hh)?;
    simple_gates(&x, &h, relu)
}

impl RnnTanhCellCompositeImplicit for Composite {
    fn rnn_tanh_cell(
        input: &Tensor,
        hx: &Tensor,
        w_ih: &Tensor,
        w_hh: &Tensor,
        b_ih: Option<&Tensor>,
        b_hh: Option<&Tensor>,
    ) -> Result<Tensor> {
        elman_cell(input, hx, w_ih, w_hh, b_ih, b_hh, false)
    }
}

impl RnnReluCellCompositeImplicit for Composite {
    fn rnn_relu_cell(
        input: &Tensor,
        hx: &Tensor,
        w_ih: &Tensor,
        w_hh: &Tensor,
        b_ih: Option<&Tensor>,
        b_hh: Option<&Tensor>,
    ) -> Result<Tensor> {
        elman_cell(input, hx, w_ih, w_hh, b_ih, b_hh, true)
    }
}

impl LstmCellCompositeImplicit for Composite {
    fn lstm_cell(
        input: &Tensor,
        hx: &[Tensor],
        w_ih: &Tensor,
        w_hh: &Tensor,
        b_ih: Option<&Tensor>,
        b_hh: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor)> {
        let [h, c] = hx else {
            return Err(Error::value(format!("lstm_cell expects two hidden states, got {}", hx.len())));
        };
        check_cell(input, h, w_ih, w_hh, 4, "0")?;
        check_cell(input, c, w_ih, w_hh, 4, "1")?;
        let (x, hh) = projections(input, h, w_ih, w_hh, b_ih, b_hh)?;
        lstm_gates(&x, &hh, c)
    }
}

impl GruCellCompositeImplicit for Composite {
    fn gru_cell(
        input: &Tensor,
        hx: &Tensor,
        w_ih: &Tensor,
        w_hh: &Tensor,
        b_ih: Option<&Tensor>,
        b_hh: Option<&Tensor>,
    ) -> Result<Tensor> {
        check_cell(input, hx, w_ih, w_hh, 3, "0")?;
        let (x, h) = projections(input, hx, w_ih, w_hh, b_ih, b_hh)?;
        gru_gates(&x, &h, hx)
    }
}
