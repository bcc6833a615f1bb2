//! Formula helpers of the random family (`native_dropout`).

use oxten_runtime::{ops, Result, Tensor};

/// The factor `native_dropout`'s backward multiplies the kept gradients by: `1 / (1 - p)` when
/// the forward trained (`train` is `None` or `Some(true)`), 0 for `p == 1`, and 1 when it did
/// not train.
///
/// PyTorch's formula uses 1 for `train == None` too, although its forward then scales by
/// `1 / (1 - p)`; oxten's gradient matches its forward.
pub fn dropout_scale(p: f64, train: Option<bool>) -> f64 {
    if train == Some(false) {
        1.0
    } else if p == 1.0 {
        0.0
    } else {
        1.0 / (1.0 - p)
    }
}

/// The gradient of `native_dropout`'s input: `grad * mask * dropout_scale(p, train)`, through
/// the differentiable `native_dropout_backward` operator.
pub fn dropout_backward(grad: &Tensor, mask: &Tensor, p: f64, train: Option<bool>) -> Result<Tensor> {
    ops::native_dropout_backward::call(grad, mask, dropout_scale(p, train))
}

/// The gradient of `native_dropout_backward`'s `grad_output` (it is linear in it): the same
/// operator applied to the incoming gradient.
pub fn native_dropout_double_backward(grad: &Tensor, mask: &Tensor, scale: f64) -> Result<Tensor> {
    ops::native_dropout_backward::call(grad, mask, scale)
}
