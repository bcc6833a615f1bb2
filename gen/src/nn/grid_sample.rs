//! `F.grid_sample` and `F.affine_grid`: sampling an input at normalized positions, and the
//! positions an affine map gives (spatial transformer networks), through the `grid_sampler` and
//! `affine_grid_generator` operators.

use crate::{ops, Result, Tensor};

/// How `grid_sample` reads between samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GridSampleMode {
    /// Bilinear (trilinear for 5-D inputs): PyTorch's default.
    #[default]
    Bilinear,
    /// The nearest sample.
    Nearest,
    /// Keys' cubic convolution over 4 × 4 samples (4-D inputs only).
    Bicubic,
}

/// What `grid_sample` reads outside the input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GridSamplePadding {
    /// Zeros: PyTorch's default.
    #[default]
    Zeros,
    /// The nearest border value.
    Border,
    /// The input mirrored at its border.
    Reflection,
}

/// `F.grid_sample(input, grid, mode, padding_mode, align_corners)`: `input` `[N, C, H, W]`
/// sampled at `grid` `[N, H', W', 2]` (or `[N, C, D, H, W]` at `[N, D', H', W', 3]`), whose
/// `(x, y[, z])` run from −1 to 1 across the input. `align_corners` is false when `None`.
///
/// ```
/// use oxten::nn::{grid_sample, GridSampleMode, GridSamplePadding};
/// let x = oxten::tensor![[[[1., 2.], [3., 4.]]]];
/// let grid = oxten::tensor![[[[-1., -1.], [0., 0.]]]];
/// let y = grid_sample(&x, &grid, GridSampleMode::Bilinear, GridSamplePadding::Border, None).unwrap();
/// assert_eq!(Vec::<f32>::try_from(&y.reshape(&[2])).unwrap(), [1., 2.5]);
/// ```
pub fn grid_sample(
    input: &Tensor,
    grid: &Tensor,
    mode: GridSampleMode,
    padding: GridSamplePadding,
    align_corners: Option<bool>,
) -> Result<Tensor> {
    let mode = match mode {
        GridSampleMode::Bilinear => 0,
        GridSampleMode::Nearest => 1,
        GridSampleMode::Bicubic => 2,
    };
    let padding = match padding {
        GridSamplePadding::Zeros => 0,
        GridSamplePadding::Border => 1,
        GridSamplePadding::Reflection => 2,
    };
    ops::grid_sampler::call(input, grid, mode, padding, align_corners.unwrap_or(false))
}

/// `F.affine_grid(theta, size, align_corners)`: the `grid_sample` grid that the affine maps
/// `theta` (`[N, 2, 3]` for a 4-D `size` `[N, C, H, W]`, `[N, 3, 4]` for a 5-D one) give over
/// the output. `align_corners` is false when `None`.
///
/// ```
/// let identity = oxten::tensor![[[1., 0., 0.], [0., 1., 0.]]];
/// let grid = oxten::nn::affine_grid(&identity, &[1, 1, 1, 2], Some(true)).unwrap();
/// assert_eq!(Vec::<f32>::try_from(&grid.reshape(&[4])).unwrap(), [-1., 0., 1., 0.]);
/// ```
pub fn affine_grid(theta: &Tensor, size: &[i64], align_corners: Option<bool>) -> Result<Tensor> {
    ops::affine_grid_generator::call(theta, size, align_corners.unwrap_or(false))
}
