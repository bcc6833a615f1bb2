//! `nn.Conv2d`.

use super::{init, Module, Slot};
use crate::options::Conv2dOpts;
use crate::{Result, Tensor};

/// A 2-d convolution over `[N, C_in, H, W]` (or unbatched `[C_in, H, W]`) input, in NCHW or
/// channels_last: the output keeps a channels_last input's format. `weight` is
/// `[C_out, C_in / groups, kH, kW]`; initialised like PyTorch (Kaiming-uniform with `a = √5`,
/// bias uniform in `±1/√fan_in`).
pub struct Conv2d {
    /// `[out_channels, in_channels / groups, kh, kw]`.
    pub weight: Tensor,
    /// `[out_channels]`, when the layer has a bias.
    pub bias: Option<Tensor>,
    /// Step between windows, per spatial dimension.
    pub stride: [i64; 2],
    /// Zeros added on each side, per spatial dimension.
    pub padding: [i64; 2],
    /// Spacing between kernel elements.
    pub dilation: [i64; 2],
    /// Channel groups (`in_channels` and `out_channels` divide by it).
    pub groups: i64,
}

impl Conv2d {
    /// A square `kernel_size` convolution with stride 1, no padding, a bias.
    pub fn new(in_channels: i64, out_channels: i64, kernel_size: i64) -> Self {
        Conv2d::build(in_channels, out_channels, [kernel_size; 2], 1, true)
    }

    /// The general constructor; set `stride`, `padding`, `dilation` afterwards (builder style).
    pub fn build(in_channels: i64, out_channels: i64, kernel_size: [i64; 2], groups: i64, bias: bool) -> Self {
        let weight = crate::empty(&[out_channels, in_channels / groups.max(1), kernel_size[0], kernel_size[1]]);
        init::kaiming_uniform_(&weight, 5f64.sqrt());
        let (fan_in, _) = init::fan_in_and_fan_out(&weight);
        let bias = bias.then(|| {
            let b = crate::empty(&[out_channels]);
            let bound = if fan_in > 0 { 1.0 / (fan_in as f64).sqrt() } else { 0.0 };
            init::uniform_(&b, -bound, bound);
            b.requires_grad_(true)
        });
        Conv2d { weight: weight.requires_grad_(true), bias, stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups }
    }

    /// Sets the padding (both dims).
    pub fn padding(mut self, p: i64) -> Self {
        self.padding = [p, p];
        self
    }

    /// Sets the stride (both dims).
    pub fn stride(mut self, s: i64) -> Self {
        self.stride = [s, s];
        self
    }
}

impl Module for Conv2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_conv2d_with(
            x,
            &self.weight,
            self.bias.as_ref(),
            &self.stride,
            &self.padding,
            Conv2dOpts { dilation: &self.dilation, groups: self.groups },
        )
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
        if let Some(b) = &self.bias {
            f("bias", b, Slot::Parameter);
        }
    }
}
