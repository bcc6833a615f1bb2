//! `nn.Conv1d/2d/3d` and `nn.ConvTranspose1d/2d/3d`: one generic layer per direction over the
//! number of spatial dimensions `N`.

use super::{init, Module, Slot};
use crate::{ops, Result, Tensor};

/// The weight and bias of a convolution layer, initialised like PyTorch (Kaiming-uniform with
/// `a = √5`, bias uniform in `±1/√fan_in`, `fan_in` read off the weight's shape).
fn parameters(weight_shape: &[i64], out_channels: i64, bias: bool) -> (Tensor, Option<Tensor>) {
    let weight = crate::empty(weight_shape);
    init::kaiming_uniform_(&weight, 5f64.sqrt());
    let (fan_in, _) = init::fan_in_and_fan_out(&weight);
    let bias = bias.then(|| {
        let b = crate::empty(&[out_channels]);
        let bound = if fan_in > 0 { 1.0 / (fan_in as f64).sqrt() } else { 0.0 };
        init::uniform_(&b, -bound, bound);
        b.requires_grad_(true)
    });
    (weight.requires_grad_(true), bias)
}

fn visit_parameters(weight: &Tensor, bias: Option<&Tensor>, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
    f("weight", weight, Slot::Parameter);
    if let Some(b) = bias {
        f("bias", b, Slot::Parameter);
    }
}

/// An `N`-d convolution over `[batch, C_in, *spatial]` (or unbatched `[C_in, *spatial]`) input;
/// the 2-d one keeps a channels_last input's format. `weight` is `[C_out, C_in / groups,
/// *kernel]`. [`Conv1d`], [`Conv2d`] and [`Conv3d`] are its instances.
pub struct ConvNd<const N: usize> {
    /// `[out_channels, in_channels / groups, *kernel_size]`.
    pub weight: Tensor,
    /// `[out_channels]`, when the layer has a bias.
    pub bias: Option<Tensor>,
    /// Step between windows, per spatial dimension.
    pub stride: [i64; N],
    /// Zeros added on each side, per spatial dimension.
    pub padding: [i64; N],
    /// Spacing between kernel elements.
    pub dilation: [i64; N],
    /// Channel groups (`in_channels` and `out_channels` divide by it).
    pub groups: i64,
}

/// `nn.Conv1d` over `[N, C, L]`.
pub type Conv1d = ConvNd<1>;
/// `nn.Conv2d` over `[N, C, H, W]`, NCHW or channels_last.
pub type Conv2d = ConvNd<2>;
/// `nn.Conv3d` over `[N, C, D, H, W]`.
pub type Conv3d = ConvNd<3>;

impl<const N: usize> ConvNd<N> {
    /// A cubic `kernel_size` convolution with stride 1, no padding, a bias.
    pub fn new(in_channels: i64, out_channels: i64, kernel_size: i64) -> Self {
        Self::build(in_channels, out_channels, [kernel_size; N], 1, true)
    }

    /// The general constructor; set `stride`, `padding`, `dilation` afterwards (builder style).
    pub fn build(in_channels: i64, out_channels: i64, kernel_size: [i64; N], groups: i64, bias: bool) -> Self {
        let mut shape = vec![out_channels, in_channels / groups.max(1)];
        shape.extend_from_slice(&kernel_size);
        let (weight, bias) = parameters(&shape, out_channels, bias);
        ConvNd { weight, bias, stride: [1; N], padding: [0; N], dilation: [1; N], groups }
    }

    /// Sets the padding (every spatial dim).
    pub fn padding(mut self, p: i64) -> Self {
        self.padding = [p; N];
        self
    }

    /// Sets the stride (every spatial dim).
    pub fn stride(mut self, s: i64) -> Self {
        self.stride = [s; N];
        self
    }

    /// Sets the dilation (every spatial dim).
    pub fn dilation(mut self, d: i64) -> Self {
        self.dilation = [d; N];
        self
    }
}

impl<const N: usize> Module for ConvNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (w, b, s, p, d, g) =
            (&self.weight, self.bias.as_ref(), &self.stride, &self.padding, &self.dilation, self.groups);
        match N {
            1 => ops::conv1d::call(x, w, b, s, p, d, g),
            2 => ops::conv2d::call(x, w, b, s, p, d, g),
            _ => ops::conv3d::call(x, w, b, s, p, d, g),
        }
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        visit_parameters(&self.weight, self.bias.as_ref(), f);
    }
}

/// An `N`-d transposed convolution (the gradient of [`ConvNd`] with respect to its input).
/// `weight` is `[C_in, C_out / groups, *kernel]`. [`ConvTranspose1d`], [`ConvTranspose2d`] and
/// [`ConvTranspose3d`] are its instances.
pub struct ConvTransposeNd<const N: usize> {
    /// `[in_channels, out_channels / groups, *kernel_size]`.
    pub weight: Tensor,
    /// `[out_channels]`, when the layer has a bias.
    pub bias: Option<Tensor>,
    /// Step between the input's positions in the output.
    pub stride: [i64; N],
    /// Removed from each side of the output (`dilation · (kernel - 1) - padding` zeros in the
    /// equivalent convolution).
    pub padding: [i64; N],
    /// Extra size added to one side of the output (less than the stride or the dilation).
    pub output_padding: [i64; N],
    /// Spacing between kernel elements.
    pub dilation: [i64; N],
    /// Channel groups.
    pub groups: i64,
}

/// `nn.ConvTranspose1d`.
pub type ConvTranspose1d = ConvTransposeNd<1>;
/// `nn.ConvTranspose2d`.
pub type ConvTranspose2d = ConvTransposeNd<2>;
/// `nn.ConvTranspose3d`.
pub type ConvTranspose3d = ConvTransposeNd<3>;

impl<const N: usize> ConvTransposeNd<N> {
    /// A cubic `kernel_size` transposed convolution with stride 1, no padding, a bias.
    pub fn new(in_channels: i64, out_channels: i64, kernel_size: i64) -> Self {
        Self::build(in_channels, out_channels, [kernel_size; N], 1, true)
    }

    /// The general constructor; set `stride`, `padding`, `output_padding`, `dilation` afterwards.
    pub fn build(in_channels: i64, out_channels: i64, kernel_size: [i64; N], groups: i64, bias: bool) -> Self {
        let mut shape = vec![in_channels, out_channels / groups.max(1)];
        shape.extend_from_slice(&kernel_size);
        let (weight, bias) = parameters(&shape, out_channels, bias);
        ConvTransposeNd {
            weight,
            bias,
            stride: [1; N],
            padding: [0; N],
            output_padding: [0; N],
            dilation: [1; N],
            groups,
        }
    }

    /// Sets the padding (every spatial dim).
    pub fn padding(mut self, p: i64) -> Self {
        self.padding = [p; N];
        self
    }

    /// Sets the stride (every spatial dim).
    pub fn stride(mut self, s: i64) -> Self {
        self.stride = [s; N];
        self
    }

    /// Sets the output padding (every spatial dim).
    pub fn output_padding(mut self, p: i64) -> Self {
        self.output_padding = [p; N];
        self
    }
}

impl<const N: usize> Module for ConvTransposeNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (w, b, g) = (&self.weight, self.bias.as_ref(), self.groups);
        let (s, p, op, d) = (&self.stride, &self.padding, &self.output_padding, &self.dilation);
        match N {
            1 => ops::conv_transpose1d::call(x, w, b, s, p, op, g, d),
            2 => ops::conv_transpose2d_input::call(x, w, b, s, p, op, g, d),
            _ => ops::conv_transpose3d_input::call(x, w, b, s, p, op, g, d),
        }
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        visit_parameters(&self.weight, self.bias.as_ref(), f);
    }
}
