//! Pooling layers: max, average and adaptive pooling over 1, 2 or 3 spatial
//! dimensions (one generic layer each, over `N`), fractional max pooling and max unpooling.

use super::Module;
use crate::{ops, Result, Tensor};

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

/// `nn.MaxUnpoolNd`: the partial inverse of [`MaxPoolNd`], writing each value where the pool's
/// indices say it came from, zeros elsewhere. [`MaxUnpool1d`], [`MaxUnpool2d`] and
/// [`MaxUnpool3d`] are its instances. It takes the indices too: [`MaxUnpoolNd::forward_with`].
#[derive(Clone, Copy, Debug)]
pub struct MaxUnpoolNd<const N: usize> {
    /// The pool's window size.
    pub kernel_size: [i64; N],
    /// The pool's stride.
    pub stride: [i64; N],
    /// The pool's padding.
    pub padding: [i64; N],
}

/// `nn.MaxUnpool1d`.
pub type MaxUnpool1d = MaxUnpoolNd<1>;
/// `nn.MaxUnpool2d`.
pub type MaxUnpool2d = MaxUnpoolNd<2>;
/// `nn.MaxUnpool3d`.
pub type MaxUnpool3d = MaxUnpoolNd<3>;

impl<const N: usize> MaxUnpoolNd<N> {
    /// The inverse of a pool with a cubic window of `k` and stride `k`.
    pub fn new(k: i64) -> Self {
        MaxUnpoolNd { kernel_size: [k; N], stride: [k; N], padding: [0; N] }
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

    /// The spatial output size (PyTorch's `_unpool_output_size`): `(in - 1)·stride - 2·padding +
    /// kernel` per dim, or `output_size` (its last `N` entries), which must lie strictly within a
    /// stride of that.
    fn output_size(&self, x: &Tensor, output_size: Option<&[i64]>) -> Result<Vec<i64>> {
        oxten_kernels::unpool_output_size(x, &self.kernel_size, &self.stride, &self.padding, output_size)
    }

    /// Unpools `x` with the `indices` its pool returned, to the default size or `output_size`.
    pub fn forward_with(&self, x: &Tensor, indices: &Tensor, output_size: Option<&[i64]>) -> Result<Tensor> {
        let size = self.output_size(x, output_size)?;
        match N {
            1 => ops::max_unpool1d::call(x, indices, &self.kernel_size, Some(&self.stride), &self.padding, Some(&size)),
            2 => ops::max_unpool2d::call(x, indices, &size),
            _ => ops::max_unpool3d::call(x, indices, &size, &self.stride, &self.padding),
        }
    }
}

/// The output of a [`FractionalMaxPoolNd`]: a size, or a ratio of the input's size.
#[derive(Clone, Copy, Debug)]
pub enum FractionalOutput<const N: usize> {
    /// The output's spatial size.
    Size([i64; N]),
    /// `⌊input size · ratio⌋` along each spatial dim, each ratio in (0, 1).
    Ratio([f64; N]),
}

/// `nn.FractionalMaxPool2d`/`3d` (Graham, 2014): max pooling over `kernel_size` windows whose
/// starts are spread pseudo-randomly over the input so that the output has the asked size.
/// Every call draws new starts (`rand` of `[N, C, 2 or 3]` in the input's dtype, from oxten's
/// generator); [`FractionalMaxPoolNd::forward_with_samples`] takes given ones.
/// [`FractionalMaxPool2d`] and [`FractionalMaxPool3d`] are its instances.
#[derive(Clone, Copy, Debug)]
pub struct FractionalMaxPoolNd<const N: usize> {
    /// The window size.
    pub kernel_size: [i64; N],
    /// The output size or ratio.
    pub output: FractionalOutput<N>,
}

/// `nn.FractionalMaxPool2d`.
pub type FractionalMaxPool2d = FractionalMaxPoolNd<2>;
/// `nn.FractionalMaxPool3d`.
pub type FractionalMaxPool3d = FractionalMaxPoolNd<3>;

impl<const N: usize> FractionalMaxPoolNd<N> {
    /// A cubic window of `k` and the given output.
    pub fn new(k: i64, output: FractionalOutput<N>) -> Self {
        FractionalMaxPoolNd { kernel_size: [k; N], output }
    }

    /// The pooled values and the flat index (over the pooled dims) of each maximum, with the
    /// window starts drawn from `samples` (`[N, C, 2 or 3]` in `[0, 1)`, in `x`'s dtype) or new
    /// ones.
    pub fn forward_with_samples(&self, x: &Tensor, samples: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
        let sizes = x.sizes();
        let output = match self.output {
            FractionalOutput::Size(s) => s.to_vec(),
            FractionalOutput::Ratio(r) => {
                if let Some(bad) = r.iter().find(|&&v| !(v > 0.0 && v < 1.0)) {
                    return Err(crate::Error::value(format!(
                        "FractionalMaxPool{N}d: output_ratio must be between 0 and 1 (got {bad})"
                    )));
                }
                if sizes.len() < N {
                    return Err(crate::Error::shape(format!(
                        "FractionalMaxPool{N}d: expected an input with at least {N} dims, got {}",
                        sizes.len()
                    )));
                }
                let spatial = &sizes[sizes.len() - N..];
                (0..N).map(|d| (spatial[d] as f64 * r[d]) as i64).collect()
            }
        };
        let drawn;
        let samples = match samples {
            Some(s) => s,
            None => {
                // One row of draws per (batch, channel); an input of the wrong rank gets the
                // operator's own message from an empty draw.
                let shape = match sizes.len() {
                    d if d == N + 1 => vec![1, sizes[0], N as i64],
                    d if d == N + 2 => vec![sizes[0], sizes[1], N as i64],
                    _ => vec![0, 0, N as i64],
                };
                drawn = ops::rand::call(&shape, Some(x.dtype()), None, Some(x.device()), None)?;
                &drawn
            }
        };
        if N == 2 {
            ops::fractional_max_pool2d::call(x, &self.kernel_size, &output, samples)
        } else {
            ops::fractional_max_pool3d::call(x, &self.kernel_size, &output, samples)
        }
    }
}

impl<const N: usize> Module for FractionalMaxPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(self.forward_with_samples(x, None)?.0)
    }
}
