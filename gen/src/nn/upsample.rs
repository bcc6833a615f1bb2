//! `F.interpolate` and `nn.Upsample`: resampling of `[N, C, ...]` inputs with one to three
//! spatial dims, by mode, to a size or by scale factors, through the `upsample_*` operators
//! (and `adaptive_avg_pool*d` for `area`), as PyTorch's Python function dispatches.

use super::Module;
use crate::{ops, Error, Result, Tensor};

/// The resampling modes of `F.interpolate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpolateMode {
    /// The legacy nearest neighbour, `floor(dst · scale)` (PyTorch's default).
    Nearest,
    /// Nearest neighbour by pixel centres, `floor((dst + 0.5) · scale)`.
    NearestExact,
    /// Linear, for 3-D inputs.
    Linear,
    /// Bilinear, for 4-D inputs.
    Bilinear,
    /// Bicubic (Keys, `A = -0.75`), for 4-D inputs.
    Bicubic,
    /// Trilinear, for 5-D inputs.
    Trilinear,
    /// Averages over the source area of each output element (`adaptive_avg_pool`).
    Area,
}

impl InterpolateMode {
    fn name(self) -> &'static str {
        match self {
            InterpolateMode::Nearest => "nearest",
            InterpolateMode::NearestExact => "nearest-exact",
            InterpolateMode::Linear => "linear",
            InterpolateMode::Bilinear => "bilinear",
            InterpolateMode::Bicubic => "bicubic",
            InterpolateMode::Trilinear => "trilinear",
            InterpolateMode::Area => "area",
        }
    }
}

/// The target of a resampling: an output size or scale factors, one per spatial dim (or one for
/// all).
#[derive(Clone, Debug, PartialEq)]
pub enum Resize {
    /// The output's spatial sizes.
    Size(Vec<i64>),
    /// Output size over input size, per spatial dim.
    Scale(Vec<f64>),
}

/// `F.interpolate(x, size | scale_factor, mode, align_corners)`. `align_corners` may only be
/// given for the linear modes (PyTorch's rule) and is false when `None`.
pub fn interpolate(x: &Tensor, resize: &Resize, mode: InterpolateMode, align_corners: Option<bool>) -> Result<Tensor> {
    use InterpolateMode::*;
    let n = x.dim().checked_sub(2).filter(|n| (1..=3).contains(n)).ok_or_else(|| {
        Error::runtime(format!(
            "interpolate: expected a 3-D, 4-D or 5-D input [N, C, ...], but got a {}-D input",
            x.dim()
        ))
    })?;
    let linear = matches!(mode, Linear | Bilinear | Bicubic | Trilinear);
    if align_corners.is_some() && !linear {
        return Err(Error::value(
            "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear",
        ));
    }
    let per_dim = |len: usize, what: &str| -> Result<()> {
        if len == 1 || len == n {
            Ok(())
        } else {
            Err(Error::value(format!(
                "Input and {what} must have the same number of spatial dimensions, but got input with spatial dimensions of {n} and {what} of length {len}"
            )))
        }
    };
    let (size, scales): (Option<Vec<i64>>, Option<Vec<f64>>) = match resize {
        Resize::Size(s) => {
            per_dim(s.len(), "output size")?;
            (Some(if s.len() == 1 { vec![s[0]; n] } else { s.clone() }), None)
        }
        Resize::Scale(f) => {
            per_dim(f.len(), "scale_factor")?;
            (None, Some(if f.len() == 1 { vec![f[0]; n] } else { f.clone() }))
        }
    };
    let align = align_corners.unwrap_or(false);
    let (size, scales) = (size.as_deref(), scales.as_deref());
    let wrong_dims = |needs: usize| {
        Err(Error::runtime(format!("Got {}D input, but {} mode needs {needs}D input", x.dim(), mode.name())))
    };
    match (mode, n) {
        (Nearest, 1) => ops::upsample_nearest1d_vec::call(x, size, scales),
        (Nearest, 2) => ops::upsample_nearest2d_vec::call(x, size, scales),
        (Nearest, _) => ops::upsample_nearest3d_vec::call(x, size, scales),
        (NearestExact, 1) => ops::_upsample_nearest_exact1d_vec::call(x, size, scales),
        (NearestExact, 2) => ops::_upsample_nearest_exact2d_vec::call(x, size, scales),
        (NearestExact, _) => ops::_upsample_nearest_exact3d_vec::call(x, size, scales),
        (Linear, 1) => ops::upsample_linear1d_vec::call(x, size, align, scales),
        (Bilinear, 2) => ops::upsample_bilinear2d_vec::call(x, size, align, scales),
        (Bicubic, 2) => ops::upsample_bicubic2d_vec::call(x, size, align, scales),
        (Trilinear, 3) => ops::upsample_trilinear3d_vec::call(x, size, align, scales),
        (Linear, _) => wrong_dims(3),
        (Bilinear | Bicubic, _) => wrong_dims(4),
        (Trilinear, _) => wrong_dims(5),
        (Area, _) => {
            // The output size of a scale factor, as PyTorch recomputes it for `area`.
            let out: Vec<i64> = match (size, scales) {
                (Some(s), _) => s.to_vec(),
                (None, Some(f)) => x.sizes()[2..].iter().zip(f).map(|(&i, &f)| (i as f64 * f).floor() as i64).collect(),
                (None, None) => unreachable!("one of size and scale is set"),
            };
            match n {
                1 => ops::adaptive_avg_pool1d::call(x, &out),
                2 => ops::adaptive_avg_pool2d::call(x, &out),
                _ => ops::adaptive_avg_pool3d::call(x, &out),
            }
        }
    }
}

/// `nn.Upsample`: [`interpolate`] as a layer.
#[derive(Clone, Debug)]
pub struct Upsample {
    /// The output size or the scale factors.
    pub resize: Resize,
    /// The resampling mode.
    pub mode: InterpolateMode,
    /// For the linear modes: whether the corner pixels' centres map onto each other.
    pub align_corners: Option<bool>,
}

impl Upsample {
    /// Resampling by `resize` with `mode` (`align_corners` unset).
    pub fn new(resize: Resize, mode: InterpolateMode) -> Self {
        Upsample { resize, mode, align_corners: None }
    }

    /// Sets `align_corners` (linear modes only).
    pub fn align_corners(mut self, align: bool) -> Self {
        self.align_corners = Some(align);
        self
    }
}

impl Module for Upsample {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        interpolate(x, &self.resize, self.mode, self.align_corners)
    }
}
