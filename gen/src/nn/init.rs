//! `torch.nn.init`: the initialisations PyTorch's layers use, drawing from oxten's default
//! generator. They fill the tensor in place without recording autograd history.

use crate::autograd::no_grad;
use crate::Tensor;

/// `(fan_in, fan_out)` of a weight: for `[out, in, k…]`, `fan_in = in · ∏k`, `fan_out = out · ∏k`
/// (PyTorch's `_calculate_fan_in_and_fan_out`).
///
/// # Panics
/// For a tensor with fewer than 2 dims, as PyTorch raises.
pub fn fan_in_and_fan_out(t: &Tensor) -> (i64, i64) {
    let s = t.sizes();
    assert!(s.len() >= 2, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
    let receptive: i64 = s[2..].iter().product();
    (s[1] * receptive, s[0] * receptive)
}

/// Fills `t` with values uniform in `[lo, hi)`.
pub fn uniform_(t: &Tensor, lo: f64, hi: f64) {
    no_grad(|| {
        t.uniform_with_(crate::options::UniformInplaceOpts { from: lo, to: hi, generator: None });
    });
}

/// Fills `t` with normal values of mean `mean` and standard deviation `std`.
pub fn normal_(t: &Tensor, mean: f64, std: f64) {
    no_grad(|| {
        t.normal_with_(crate::options::NormalInplaceOpts { mean, std, generator: None });
    });
}

/// Fills `t` with `value`.
pub fn constant_(t: &Tensor, value: f64) {
    no_grad(|| {
        t.fill_scalar_(crate::Scalar::Float(value));
    });
}

/// Kaiming (He) uniform for a leaky-ReLU gain with negative slope `a`, fan-in mode:
/// bound `= √(2 / (1 + a²)) · √(3 / fan_in)`. With `a = √5` (what `Linear` and `Conv2d` use)
/// that is `1/√fan_in`.
pub fn kaiming_uniform_(t: &Tensor, a: f64) {
    let (fan_in, _) = fan_in_and_fan_out(t);
    if fan_in == 0 {
        return; // PyTorch warns and leaves an empty tensor alone
    }
    let gain = (2.0 / (1.0 + a * a)).sqrt();
    let bound = gain * (3.0 / fan_in as f64).sqrt();
    uniform_(t, -bound, bound);
}

/// Xavier (Glorot) uniform: bound `= gain · √(6 / (fan_in + fan_out))`.
pub fn xavier_uniform_(t: &Tensor, gain: f64) {
    let (fan_in, fan_out) = fan_in_and_fan_out(t);
    let bound = gain * (6.0 / (fan_in + fan_out).max(1) as f64).sqrt();
    uniform_(t, -bound, bound);
}
