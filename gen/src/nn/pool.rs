//! Pooling and dropout layers.

use super::Module;
use crate::options::MaxPool2dOpts;
use crate::{Result, Tensor};

/// `nn.MaxPool2d` with a square window; the stride defaults to the window (PyTorch's default).
#[derive(Clone, Copy, Debug)]
pub struct MaxPool2d {
    /// Window size.
    pub kernel_size: [i64; 2],
    /// Step between windows.
    pub stride: [i64; 2],
    /// Implicit padding on each side (padded positions never win the max).
    pub padding: [i64; 2],
}

impl MaxPool2d {
    /// A `k × k` window with stride `k`.
    pub fn new(k: i64) -> Self {
        MaxPool2d { kernel_size: [k, k], stride: [k, k], padding: [0, 0] }
    }
}

impl Module for MaxPool2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_max_pool2d_with(
            x,
            &self.kernel_size,
            MaxPool2dOpts { stride: &self.stride, padding: &self.padding, ..Default::default() },
        )
    }
}

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

/// `nn.AvgPool2d` with a square window; the stride defaults to the window, padding is counted.
#[derive(Clone, Copy, Debug)]
pub struct AvgPool2d {
    /// Window size.
    pub kernel_size: [i64; 2],
    /// Step between windows.
    pub stride: [i64; 2],
    /// Zeros added on each side.
    pub padding: [i64; 2],
}

impl AvgPool2d {
    /// A `k × k` window with stride `k`.
    pub fn new(k: i64) -> Self {
        AvgPool2d { kernel_size: [k, k], stride: [k, k], padding: [0, 0] }
    }
}

impl Module for AvgPool2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_avg_pool2d_with(
            x,
            &self.kernel_size,
            crate::options::AvgPool2dOpts { stride: &self.stride, padding: &self.padding, ..Default::default() },
        )
    }
}

/// `nn.AdaptiveAvgPool2d`: averages into an `output_size` grid whatever the input's size.
#[derive(Clone, Copy, Debug)]
pub struct AdaptiveAvgPool2d {
    /// The output's height and width.
    pub output_size: [i64; 2],
}

impl AdaptiveAvgPool2d {
    /// An `h × w` output.
    pub fn new(h: i64, w: i64) -> Self {
        AdaptiveAvgPool2d { output_size: [h, w] }
    }
}

impl Module for AdaptiveAvgPool2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_adaptive_avg_pool2d(x, &self.output_size)
    }
}
