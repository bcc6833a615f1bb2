//! The resampling operators `F.interpolate` calls — `upsample_nearest{1,2,3}d`,
//! `_upsample_nearest_exact{1,2,3}d`, `upsample_linear1d`, `upsample_bilinear2d`,
//! `upsample_trilinear3d` and `upsample_bicubic2d` (the `.vec` overloads) — as composites of
//! `index_select` and products, one spatial axis at a time from the last: nearest picks a source
//! position per output position; linear blends the two nearest, cubic the four nearest (PyTorch's
//! order of operations, so the nested sums round the same way). Source coordinates follow
//! PyTorch's `area_pixel_compute_source_index` in the compute type (f32 for f32/f16/bf16 inputs,
//! f64 for f64), so results match to rounding. Gradients come from `index_select` and `mul`.

use crate::generated::decls::{
    UpsampleBicubic2dVecCompositeImplicit, UpsampleBilinear2dVecCompositeImplicit,
    UpsampleLinear1dVecCompositeImplicit, UpsampleNearest1dVecCompositeImplicit, UpsampleNearest2dVecCompositeImplicit,
    UpsampleNearest3dVecCompositeImplicit, UpsampleNearestExact1dVecCompositeImplicit,
    UpsampleNearestExact2dVecCompositeImplicit, UpsampleNearestExact3dVecCompositeImplicit,
    UpsampleTrilinear3dVecCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{DType, Error, Result, Tensor};

/// The names of the spatial dims of an `n`-d resampling, outermost first.
fn axis_names(n: usize) -> &'static [&'static str] {
    &["D", "H", "W"][3 - n..]
}

/// The output size and the coordinate scale (input per output pixel, or `1 / scale_factor`) of
/// each of the `n` spatial dims.
fn plan(
    op: &str,
    n: usize,
    input: &Tensor,
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
) -> Result<Vec<(i64, f64)>> {
    let names = axis_names(n);
    if input.dim() != n + 2 {
        return Err(Error::runtime(format!(
            "{op}: expected a {}-D input [N, C, {}], but got {}-D",
            n + 2,
            names.join(", "),
            input.dim()
        )));
    }
    let spatial = &input.sizes()[2..];
    let plan: Vec<(i64, f64)> = match (output_size, scale_factors) {
        (Some(o), None) if o.len() == n => spatial.iter().zip(o).map(|(&i, &o)| (o, i as f64 / o as f64)).collect(),
        (None, Some(s)) if s.len() == n => {
            spatial.iter().zip(s).map(|(&i, &s)| ((i as f64 * s).floor() as i64, 1.0 / s)).collect()
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(Error::runtime(format!(
                "{op}: output_size and scale_factors need {n} values ({})",
                names.join(", ")
            )))
        }
        _ => return Err(Error::runtime("Must specify exactly one of output_size and scale_factors")),
    };
    // The output must be allocatable (its size in elements representable).
    let numel =
        input.sizes()[..2].iter().chain(plan.iter().map(|(o, _)| o)).try_fold(1i64, |a, &b| a.checked_mul(b.max(0)));
    if numel.is_none() {
        let sizes: Vec<String> = plan.iter().map(|(o, _)| o.to_string()).collect();
        return Err(Error::runtime(format!("{op}: the output size {} is too large", sizes.join(" × "))));
    }
    if spatial.iter().chain(plan.iter().map(|(o, _)| o)).any(|&s| s <= 0) {
        let show = |v: Vec<i64>| names.iter().zip(v).map(|(k, s)| format!("{k}: {s}")).collect::<Vec<_>>().join(", ");
        let (i, o) = (show(spatial.to_vec()), show(plan.iter().map(|(o, _)| *o).collect()));
        let and = if n == 1 { " and" } else { "" };
        return Err(Error::runtime(format!(
            "Input and output sizes should be greater than 0, but got input ({i}){and} output ({o})"
        )));
    }
    Ok(plan)
}

/// The kernel name PyTorch's "not implemented for" error gives.
fn kernel_name(op: &str) -> &str {
    match op {
        "upsample_nearest2d" => "upsample_nearest2d_channels_last",
        "upsample_bilinear2d" => "upsample_bilinear2d_out_frame",
        other => other,
    }
}

fn index_tensor(v: Vec<i64>, device: oxten_runtime::Device) -> Result<Tensor> {
    let n = v.len() as i64;
    Tensor::from_vec(v, &[n])?.try_to_device(device)
}

/// Nearest-neighbour resampling over the last `n` dims; `exact` is `nearest-exact` (pixel
/// centres, `floor((dst + 0.5) · scale)`), else PyTorch's legacy `floor(dst · scale)`.
fn nearest(
    op: &str,
    n: usize,
    exact: bool,
    input: &Tensor,
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
) -> Result<Tensor> {
    let plan = plan(op, n, input, output_size, scale_factors)?;
    if !(input.dtype().is_floating_point() || input.dtype() == DType::U8) {
        return Err(crate::support::not_implemented(kernel_name(op), input.dtype()));
    }
    let mut x = input.clone();
    for (axis, (out, scale)) in plan.into_iter().enumerate() {
        let len = input.sizes()[2 + axis];
        // PyTorch computes the source index in f32, clamped to the last position.
        let scale = scale as f32;
        let shift = if exact { 0.5f32 } else { 0.0 };
        let mut idx = oxten_runtime::error::try_vec_with_capacity(out as usize)?;
        idx.extend((0..out).map(|i| (((i as f32 + shift) * scale).floor() as i64).min(len - 1)));
        x = x.try_index_select(2 + axis as i64, &index_tensor(idx, x.device())?)?;
    }
    Ok(x)
}

/// The source coordinate of output position `dst` (`area_pixel_compute_source_index`): with
/// `align_corners` the corners' centres meet; otherwise pixel centres map, clamped at 0 except
/// for cubic interpolation.
fn source_index(scale: f64, dst: i64, align_corners: bool, cubic: bool, f64_math: bool) -> f64 {
    if f64_math {
        let src = if align_corners { scale * dst as f64 } else { scale * (dst as f64 + 0.5) - 0.5 };
        if !cubic && src < 0.0 {
            0.0
        } else {
            src
        }
    } else {
        let s = scale as f32;
        let src = if align_corners { s * dst as f32 } else { s * (dst as f32 + 0.5) - 0.5 };
        f64::from(if !cubic && src < 0.0 { 0.0 } else { src })
    }
}

/// The coordinate scale of one axis (`area_pixel_compute_scale`).
fn axis_scale(len: i64, out: i64, scale: f64, align_corners: bool) -> f64 {
    match (align_corners, out > 1) {
        (true, true) => (len - 1) as f64 / (out - 1) as f64,
        (true, false) => 0.0,
        (false, _) => scale,
    }
}

/// Per tap, the source positions and weights of every output position along one axis.
type Taps = Vec<(Vec<i64>, Vec<f64>)>;

fn linear_taps(len: i64, out: i64, scale: f64, align_corners: bool, f64_math: bool) -> Taps {
    let scale = axis_scale(len, out, scale, align_corners);
    let (mut i0, mut i1, mut w0, mut w1) = (vec![], vec![], vec![], vec![]);
    for dst in 0..out {
        let src = source_index(scale, dst, align_corners, false, f64_math);
        let lo = src as i64;
        let frac = if f64_math { src - lo as f64 } else { f64::from(src as f32 - lo as f32) };
        i0.push(lo);
        i1.push(lo + i64::from(lo < len - 1));
        w0.push(1.0 - frac);
        w1.push(frac);
    }
    vec![(i0, w0), (i1, w1)]
}

/// Keys' cubic convolution with PyTorch's `A = -0.75`, for the four taps around `t`.
fn cubic_coefficients(t: f64) -> [f64; 4] {
    const A: f64 = -0.75;
    let near = |x: f64| ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A;
    [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]
}

fn cubic_taps(len: i64, out: i64, scale: f64, align_corners: bool, f64_math: bool) -> Taps {
    let scale = axis_scale(len, out, scale, align_corners);
    let mut taps: Taps = vec![(vec![], vec![]); 4];
    for dst in 0..out {
        let src = source_index(scale, dst, align_corners, true, f64_math);
        let base = (src.floor() as i64).min(len - 1);
        let t = (src - base as f64).clamp(0.0, 1.0);
        // The coefficients in the compute type, as PyTorch's opmath.
        let coeffs = cubic_coefficients(t).map(|c| if f64_math { c } else { f64::from(c as f32) });
        for (k, (idx, w)) in taps.iter_mut().enumerate() {
            idx.push((base - 1 + k as i64).clamp(0, len - 1));
            w.push(coeffs[k]);
        }
    }
    taps
}

/// Linear or cubic resampling over the last `n` dims: per axis from the last, the weighted sum
/// of the taps (left to right, as PyTorch's nested sums).
fn interpolate(
    op: &str,
    n: usize,
    cubic: bool,
    input: &Tensor,
    output_size: Option<&[i64]>,
    align_corners: bool,
    scale_factors: Option<&[f64]>,
) -> Result<Tensor> {
    let plan = plan(op, n, input, output_size, scale_factors)?;
    if !input.dtype().is_floating_point() {
        return Err(crate::support::not_implemented(kernel_name(op), input.dtype()));
    }
    // Half types blend in f32 and round once, as PyTorch's `opmath` does.
    let compute = if input.dtype() == DType::F64 { DType::F64 } else { DType::F32 };
    let mut x = input.try_to_dtype(compute)?;
    for axis in (0..n).rev() {
        let (out, scale) = plan[axis];
        let len = input.sizes()[2 + axis];
        oxten_runtime::error::try_vec_with_capacity::<f64>((out as usize).saturating_mul(8))?;
        let f64_math = compute == DType::F64;
        let taps = if cubic {
            cubic_taps(len, out, scale, align_corners, f64_math)
        } else {
            linear_taps(len, out, scale, align_corners, f64_math)
        };
        let dim = 2 + axis as i64;
        let mut shape = vec![1i64; n + 2];
        shape[2 + axis] = out;
        let mut sum: Option<Tensor> = None;
        for (idx, w) in taps {
            let w = Tensor::from_vec(w, &shape)?.try_to_dtype(compute)?.try_to_device(x.device())?;
            let term = x.try_index_select(dim, &index_tensor(idx, x.device())?)?.try_mul(&w)?;
            sum = Some(match sum {
                Some(s) => s.try_add(&term)?,
                None => term,
            });
        }
        x = sum.expect("at least two taps");
    }
    x.try_to_dtype(input.dtype())
}

impl UpsampleNearest1dVecCompositeImplicit for Composite {
    fn upsample_nearest1d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        nearest("upsample_nearest1d", 1, false, input, output_size, scale_factors)
    }
}

impl UpsampleNearest2dVecCompositeImplicit for Composite {
    fn upsample_nearest2d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        nearest("upsample_nearest2d", 2, false, input, output_size, scale_factors)
    }
}

impl UpsampleNearest3dVecCompositeImplicit for Composite {
    fn upsample_nearest3d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        nearest("upsample_nearest3d", 3, false, input, output_size, scale_factors)
    }
}

impl UpsampleNearestExact1dVecCompositeImplicit for Composite {
    fn upsample_nearest_exact1d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        nearest("_upsample_nearest_exact1d", 1, true, input, output_size, scale_factors)
    }
}

impl UpsampleNearestExact2dVecCompositeImplicit for Composite {
    fn upsample_nearest_exact2d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        nearest("_upsample_nearest_exact2d", 2, true, input, output_size, scale_factors)
    }
}

impl UpsampleNearestExact3dVecCompositeImplicit for Composite {
    fn upsample_nearest_exact3d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        nearest("_upsample_nearest_exact3d", 3, true, input, output_size, scale_factors)
    }
}

impl UpsampleLinear1dVecCompositeImplicit for Composite {
    fn upsample_linear1d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        align_corners: bool,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        interpolate("upsample_linear1d", 1, false, input, output_size, align_corners, scale_factors)
    }
}

impl UpsampleBilinear2dVecCompositeImplicit for Composite {
    fn upsample_bilinear2d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        align_corners: bool,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        interpolate("upsample_bilinear2d", 2, false, input, output_size, align_corners, scale_factors)
    }
}

impl UpsampleTrilinear3dVecCompositeImplicit for Composite {
    fn upsample_trilinear3d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        align_corners: bool,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        interpolate("upsample_trilinear3d", 3, false, input, output_size, align_corners, scale_factors)
    }
}

impl UpsampleBicubic2dVecCompositeImplicit for Composite {
    fn upsample_bicubic2d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        align_corners: bool,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        interpolate("upsample_bicubic2d", 2, true, input, output_size, align_corners, scale_factors)
    }
}
