//! Pooling layers: max, average and adaptive pooling over 1, 2 or 3 spatial
//! dimensions (one generic layer each, over `N`), and max unpooling.

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
    /// kernel` per dim, or `output_size` (its last `N` entries), which must lie within a stride
    /// of that.
    fn output_size(&self, x: &Tensor, output_size: Option<&[i64]>) -> Result<[i64; N]> {
        let s = x.sizes();
        if s.len() < N {
            return Err(crate::Error::shape(format!(
                "MaxUnpool{N}d: expected an input with at least {N} dims, got {}",
                s.len()
            )));
        }
        let spatial = &s[s.len() - N..];
        let too_large = || crate::Error::value(format!("MaxUnpool{N}d: the output size overflows int64"));
        let mut default = [0; N];
        for d in 0..N {
            default[d] = (spatial[d] - 1)
                .checked_mul(self.stride[d])
                .and_then(|v| v.checked_add(self.kernel_size[d]))
                .and_then(|v| v.checked_sub(self.padding[d].checked_mul(2)?))
                .ok_or_else(too_large)?;
        }
        let Some(given) = output_size else { return Ok(default) };
        let given = if given.len() == N + 2 { &given[2..] } else { given };
        if given.len() != N {
            return Err(crate::Error::value(format!(
                "output_size should be a sequence containing {N} or {} elements, but it has a length of '{}'",
                N + 2,
                given.len()
            )));
        }
        let mut out = [0; N];
        for d in 0..N {
            let lo = default[d].checked_sub(self.stride[d]).ok_or_else(too_large)?;
            let hi = default[d].checked_add(self.stride[d]).ok_or_else(too_large)?;
            if given[d] < lo || given[d] > hi {
                return Err(crate::Error::value(format!(
                    "invalid output_size \"{given:?}\" (dim {d} must be between {lo} and {hi})"
                )));
            }
            out[d] = given[d];
        }
        Ok(out)
    }

    /// Unpools `x` with the `indices` its pool returned, to the default size or `output_size`.
    pub fn forward_with(&self, x: &Tensor, indices: &Tensor, output_size: Option<&[i64]>) -> Result<Tensor> {
        let size = self.output_size(x, output_size)?;
        match N {
            // As PyTorch's `max_unpool1d`: the 2-d operator over a width of 1.
            1 => ops::max_unpool2d::call(&x.try_unsqueeze(-1)?, &indices.try_unsqueeze(-1)?, &[size[0], 1])?
                .try_squeeze_dim(-1),
            2 => ops::max_unpool2d::call(x, indices, &size),
            _ => ops::max_unpool3d::call(x, indices, &size, &self.stride, &self.padding),
        }
    }
}
