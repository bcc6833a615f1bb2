//! Pooling and dropout layers: max, average and adaptive pooling over 1, 2 or 3 spatial
//! dimensions (one generic layer each, over `N`).

use super::Module;
use crate::{ops, Result, Tensor};

/// `nn.Dropout`: in training, zeroes each element with probability `p` and scales the rest by
/// `1/(1 − p)`; the identity in evaluation.
#[derive(Clone, Copy, Debug)]
pub struct Dropout {
    /// Probability of zeroing an element in training mode.
    pub p: f64,
    training: bool,
}

impl Dropout {
    /// Dropout with probability `p` (in training mode).
    pub fn new(p: f64) -> Self {
        Dropout { p, training: true }
    }

    /// Whether the layer is in training mode (drops elements).
    pub fn training(&self) -> bool {
        self.training
    }
}

impl Module for Dropout {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_dropout(x, self.p, self.training)
    }
    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
}

/// `nn.MaxPoolNd`: the largest element of each window; the stride defaults to the window.
/// [`MaxPool1d`], [`MaxPool2d`] and [`MaxPool3d`] are its instances.
#[derive(Clone, Copy, Debug)]
pub struct MaxPoolNd<const N: usize> {
    /// Window size.
    pub kernel_size: [i64; N],
    /// Step between windows.
    pub stride: [i64; N],
    /// Implicit padding on each side (padded positions never win the max).
    pub padding: [i64; N],
    /// Spacing between window elements.
    pub dilation: [i64; N],
    /// Whether a partial window at the end makes an output (rounding the output size up).
    pub ceil_mode: bool,
}

/// `nn.MaxPool1d`.
pub type MaxPool1d = MaxPoolNd<1>;
/// `nn.MaxPool2d`.
pub type MaxPool2d = MaxPoolNd<2>;
/// `nn.MaxPool3d`.
pub type MaxPool3d = MaxPoolNd<3>;

impl<const N: usize> MaxPoolNd<N> {
    /// A cubic window of `k` with stride `k`.
    pub fn new(k: i64) -> Self {
        MaxPoolNd { kernel_size: [k; N], stride: [k; N], padding: [0; N], dilation: [1; N], ceil_mode: false }
    }

    /// Sets the stride (every spatial dim).
    pub fn stride(mut self, s: i64) -> Self {
        self.stride = [s; N];
        self
    }

    /// Sets the padding (every spatial dim).
    pub fn padding(mut self, p: i64) -> Self {
        self.padding = [p; N];
        self
    }
}

impl<const N: usize> Module for MaxPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (k, s, p, d, c) = (&self.kernel_size, &self.stride, &self.padding, &self.dilation, self.ceil_mode);
        match N {
            1 => ops::max_pool1d::call(x, k, s, p, d, c),
            2 => ops::max_pool2d::call(x, k, s, p, d, c),
            _ => ops::max_pool3d::call(x, k, s, p, d, c),
        }
    }
}

/// `nn.AvgPoolNd`: the mean of each window; the stride defaults to the window, padding is
/// counted. [`AvgPool1d`], [`AvgPool2d`] and [`AvgPool3d`] are its instances.
#[derive(Clone, Copy, Debug)]
pub struct AvgPoolNd<const N: usize> {
    /// Window size.
    pub kernel_size: [i64; N],
    /// Step between windows.
    pub stride: [i64; N],
    /// Zeros added on each side.
    pub padding: [i64; N],
    /// Whether a partial window at the end makes an output.
    pub ceil_mode: bool,
    /// Whether the padding's zeros count in the mean's divisor.
    pub count_include_pad: bool,
}

/// `nn.AvgPool1d`.
pub type AvgPool1d = AvgPoolNd<1>;
/// `nn.AvgPool2d`.
pub type AvgPool2d = AvgPoolNd<2>;
/// `nn.AvgPool3d`.
pub type AvgPool3d = AvgPoolNd<3>;

impl<const N: usize> AvgPoolNd<N> {
    /// A cubic window of `k` with stride `k`.
    pub fn new(k: i64) -> Self {
        AvgPoolNd { kernel_size: [k; N], stride: [k; N], padding: [0; N], ceil_mode: false, count_include_pad: true }
    }

    /// Sets the stride (every spatial dim).
    pub fn stride(mut self, s: i64) -> Self {
        self.stride = [s; N];
        self
    }

    /// Sets the padding (every spatial dim).
    pub fn padding(mut self, p: i64) -> Self {
        self.padding = [p; N];
        self
    }
}

impl<const N: usize> Module for AvgPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (k, s, p, c, i) = (&self.kernel_size, &self.stride, &self.padding, self.ceil_mode, self.count_include_pad);
        match N {
            1 => ops::avg_pool1d::call(x, k, s, p, c, i),
            2 => ops::avg_pool2d::call(x, k, s, p, c, i, None),
            _ => ops::avg_pool3d::call(x, k, s, p, c, i, None),
        }
    }
}

/// `nn.AdaptiveAvgPoolNd`: averages into an `output_size` grid whatever the input's size.
/// [`AdaptiveAvgPool1d`], [`AdaptiveAvgPool2d`] and [`AdaptiveAvgPool3d`] are its instances.
#[derive(Clone, Copy, Debug)]
pub struct AdaptiveAvgPoolNd<const N: usize> {
    /// The output's spatial size.
    pub output_size: [i64; N],
}

/// `nn.AdaptiveAvgPool1d`.
pub type AdaptiveAvgPool1d = AdaptiveAvgPoolNd<1>;
/// `nn.AdaptiveAvgPool2d`.
pub type AdaptiveAvgPool2d = AdaptiveAvgPoolNd<2>;
/// `nn.AdaptiveAvgPool3d`.
pub type AdaptiveAvgPool3d = AdaptiveAvgPoolNd<3>;

impl AdaptiveAvgPoolNd<1> {
    /// An output of length `l`.
    pub fn new(l: i64) -> Self {
        AdaptiveAvgPoolNd { output_size: [l] }
    }
}

impl AdaptiveAvgPoolNd<2> {
    /// An `h × w` output.
    pub fn new(h: i64, w: i64) -> Self {
        AdaptiveAvgPoolNd { output_size: [h, w] }
    }
}

impl AdaptiveAvgPoolNd<3> {
    /// A `d × h × w` output.
    pub fn new(d: i64, h: i64, w: i64) -> Self {
        AdaptiveAvgPoolNd { output_size: [d, h, w] }
    }
}

impl<const N: usize> Module for AdaptiveAvgPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match N {
            1 => ops::adaptive_avg_pool1d::call(x, &self.output_size),
            2 => ops::adaptive_avg_pool2d::call(x, &self.output_size),
            _ => ops::adaptive_avg_pool3d::call(x, &self.output_size),
        }
    }
}

/// `nn.AdaptiveMaxPoolNd`: the largest element of each of an `output_size` grid of windows.
/// [`AdaptiveMaxPool1d`], [`AdaptiveMaxPool2d`] and [`AdaptiveMaxPool3d`] are its instances;
/// [`AdaptiveMaxPoolNd::forward_with_indices`] also returns where each maximum is.
#[derive(Clone, Copy, Debug)]
pub struct AdaptiveMaxPoolNd<const N: usize> {
    /// The output's spatial size.
    pub output_size: [i64; N],
}

/// `nn.AdaptiveMaxPool1d`.
pub type AdaptiveMaxPool1d = AdaptiveMaxPoolNd<1>;
/// `nn.AdaptiveMaxPool2d`.
pub type AdaptiveMaxPool2d = AdaptiveMaxPoolNd<2>;
/// `nn.AdaptiveMaxPool3d`.
pub type AdaptiveMaxPool3d = AdaptiveMaxPoolNd<3>;

impl<const N: usize> AdaptiveMaxPoolNd<N> {
    /// An output of `output_size`.
    pub fn new(output_size: [i64; N]) -> Self {
        AdaptiveMaxPoolNd { output_size }
    }

    /// The pooled values and the flat index (over the pooled dims) of each maximum
    /// (`return_indices=True`).
    pub fn forward_with_indices(&self, x: &Tensor) -> Result<(Tensor, Tensor)> {
        match N {
            1 => ops::adaptive_max_pool1d::call(x, &self.output_size),
            2 => ops::adaptive_max_pool2d::call(x, &self.output_size),
            _ => ops::adaptive_max_pool3d::call(x, &self.output_size),
        }
    }
}

impl<const N: usize> Module for AdaptiveMaxPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(self.forward_with_indices(x)?.0)
    }
}
