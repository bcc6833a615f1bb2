//! `upsample_nearest2d.vec` and `upsample_bilinear2d.vec` (what `F.interpolate` calls), as
//! composites of `index_select` and products: nearest picks a source row and column per output
//! position; bilinear blends the two nearest columns, then the two nearest rows (PyTorch's order
//! of operations). Source coordinates follow PyTorch's `area_pixel_compute_source_index` in the
//! compute type (f32 for f32/f16/bf16 inputs, f64 for f64), so results match to rounding.

use crate::generated::decls::{UpsampleBilinear2dVecCompositeImplicit, UpsampleNearest2dVecCompositeImplicit};
use crate::Composite;
use oxten_runtime::{DType, Error, Result, Tensor};

/// The output size and the coordinate scale (input per output pixel, or `1 / scale_factor`) of
/// each spatial dim.
fn plan(
    op: &str,
    input: &Tensor,
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
) -> Result<[(i64, f64); 2]> {
    if input.dim() != 4 {
        return Err(Error::runtime(format!("{op}: expected a 4-D input [N, C, H, W], but got {}-D", input.dim())));
    }
    let (h, w) = (input.sizes()[2], input.sizes()[3]);
    let sizes_and_scales = match (output_size, scale_factors) {
        (Some(o), None) if o.len() == 2 => [(o[0], h as f64 / o[0] as f64), (o[1], w as f64 / o[1] as f64)],
        (None, Some(s)) if s.len() == 2 => {
            [((h as f64 * s[0]).floor() as i64, 1.0 / s[0]), ((w as f64 * s[1]).floor() as i64, 1.0 / s[1])]
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(Error::runtime(format!("{op}: output_size and scale_factors need two values (height, width)")))
        }
        _ => return Err(Error::runtime("Must specify exactly one of output_size and scale_factors")),
    };
    let [(oh, _), (ow, _)] = sizes_and_scales;
    // The output must be allocatable (its size in elements representable).
    let numel =
        [input.sizes()[0], input.sizes()[1], oh.max(0), ow.max(0)].iter().try_fold(1i64, |a, &b| a.checked_mul(b));
    if numel.is_none() {
        return Err(Error::runtime(format!("{op}: the output size {oh} × {ow} is too large")));
    }
    if h <= 0 || w <= 0 || oh <= 0 || ow <= 0 {
        return Err(Error::runtime(format!(
            "Input and output sizes should be greater than 0, but got input (H: {h}, W: {w}) output (H: {oh}, W: {ow})"
        )));
    }
    Ok(sizes_and_scales)
}

fn index_tensor(v: Vec<i64>, device: oxten_runtime::Device) -> Result<Tensor> {
    let n = v.len() as i64;
    Tensor::from_vec(v, &[n])?.try_to_device(device)
}

impl UpsampleNearest2dVecCompositeImplicit for Composite {
    fn upsample_nearest2d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        let plan = plan("upsample_nearest2d", input, output_size, scale_factors)?;
        if !(input.dtype().is_floating_point() || input.dtype() == DType::U8) {
            return Err(crate::support::not_implemented("upsample_nearest2d_channels_last", input.dtype()));
        }
        let mut x = input.clone();
        for (axis, (out, scale)) in plan.into_iter().enumerate() {
            let len = input.sizes()[2 + axis];
            // PyTorch computes the source index in f32: min(floor(dst · scale), len − 1).
            let scale = scale as f32;
            let mut idx = oxten_runtime::error::try_vec_with_capacity(out as usize)?;
            idx.extend((0..out).map(|i| ((i as f32 * scale).floor() as i64).min(len - 1)));
            x = x.try_index_select(2 + axis as i64, &index_tensor(idx, x.device())?)?;
        }
        Ok(x)
    }
}

/// Per output position along one axis: the two source positions and their weights.
fn bilinear_taps(
    len: i64,
    out: i64,
    scale: f64,
    align_corners: bool,
    f64_math: bool,
) -> (Vec<i64>, Vec<i64>, Vec<f64>, Vec<f64>) {
    let scale = if align_corners {
        if out > 1 {
            (len - 1) as f64 / (out - 1) as f64
        } else {
            0.0
        }
    } else {
        scale
    };
    let (mut i0, mut i1, mut w0, mut w1) = (vec![], vec![], vec![], vec![]);
    for dst in 0..out {
        let (lo, frac) = if f64_math {
            let src = if align_corners { scale * dst as f64 } else { (scale * (dst as f64 + 0.5) - 0.5).max(0.0) };
            let lo = src as i64;
            (lo, src - lo as f64)
        } else {
            let s = scale as f32;
            let src = if align_corners { s * dst as f32 } else { (s * (dst as f32 + 0.5) - 0.5).max(0.0) };
            let lo = src as i64;
            (lo, (src - lo as f32) as f64)
        };
        i0.push(lo);
        i1.push(lo + i64::from(lo < len - 1));
        w0.push(1.0 - frac);
        w1.push(frac);
    }
    (i0, i1, w0, w1)
}

impl UpsampleBilinear2dVecCompositeImplicit for Composite {
    fn upsample_bilinear2d_vec(
        input: &Tensor,
        output_size: Option<&[i64]>,
        align_corners: bool,
        scale_factors: Option<&[f64]>,
    ) -> Result<Tensor> {
        let plan = plan("upsample_bilinear2d", input, output_size, scale_factors)?;
        if !input.dtype().is_floating_point() {
            return Err(crate::support::not_implemented("upsample_bilinear2d_out_frame", input.dtype()));
        }
        // Half types blend in f32 and round once, as PyTorch's `opmath` does.
        let compute = if input.dtype() == DType::F64 { DType::F64 } else { DType::F32 };
        let mut x = input.try_to_dtype(compute)?;
        // Width first, then height: PyTorch's `h0λ·(w0λ·x00 + w1λ·x01) + h1λ·(…)`.
        for axis in [1usize, 0] {
            let (out, scale) = plan[axis];
            let len = input.sizes()[2 + axis];
            oxten_runtime::error::try_vec_with_capacity::<f64>((out as usize).saturating_mul(4))?;
            let (i0, i1, w0, w1) = bilinear_taps(len, out, scale, align_corners, compute == DType::F64);
            let dim = 2 + axis as i64;
            let mut shape = vec![1i64; 4];
            shape[2 + axis] = out;
            let weights = |w: Vec<f64>| -> Result<Tensor> {
                Tensor::from_vec(w, &shape)?.try_to_dtype(compute)?.try_to_device(x.device())
            };
            let a = x.try_index_select(dim, &index_tensor(i0, x.device())?)?.try_mul(&weights(w0)?)?;
            let b = x.try_index_select(dim, &index_tensor(i1, x.device())?)?.try_mul(&weights(w1)?)?;
            x = a.try_add(&b)?;
        }
        x.try_to_dtype(input.dtype())
    }
}
