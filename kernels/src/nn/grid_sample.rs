//! `grid_sampler` (`F.grid_sample`), `grid_sampler_2d`, `grid_sampler_3d` and
//! `affine_grid_generator` (`F.affine_grid`): sampling an input at arbitrary normalized positions
//! — spatial transformer networks, optical-flow warping, deformable sampling.
//!
//! Composites of pointwise operators, `gather` and `where`, so gradients reach both the input
//! (through `gather`'s scatter) and the grid (through the interpolation weights), and every
//! backend that has those operators has these. The arithmetic follows PyTorch's CPU kernels step
//! by step in the input's dtype — unnormalize `(g + 1) · size/2 − 1/2` (`(g + 1) · (size − 1)/2`
//! with `align_corners`), reflect by whole double spans, clip with NaN sent to 0 — so results,
//! half precision included, match to rounding, and the gradient of the padding is PyTorch's: 0
//! where a coordinate is clipped (the borders count as clipped), −1 where it is reflected.

use crate::generated::decls::{
    AffineGridGeneratorCompositeImplicit, GridSampler2dCompositeImplicit, GridSampler3dCompositeImplicit,
    GridSamplerCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// How a position between samples is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Interpolation {
    /// The `2^n` surrounding samples, weighted by closeness.
    Linear,
    /// The closest sample (ties to even, as `nearbyint`).
    Nearest,
    /// Keys' cubic convolution (`A = −0.75`) over the 4 × 4 surrounding samples (2-D only).
    Bicubic,
}

/// What lies outside the input.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Padding {
    Zeros,
    Border,
    Reflection,
}

fn modes(op: &str, interpolation_mode: i64, padding_mode: i64) -> Result<(Interpolation, Padding)> {
    let interpolation = match interpolation_mode {
        0 => Interpolation::Linear,
        1 => Interpolation::Nearest,
        2 => Interpolation::Bicubic,
        m => {
            return Err(Error::value(format!(
                "{op}(): expected interpolation_mode to be 0 (bilinear), 1 (nearest) or 2 (bicubic), but got {m}"
            )))
        }
    };
    let padding = match padding_mode {
        0 => Padding::Zeros,
        1 => Padding::Border,
        2 => Padding::Reflection,
        m => {
            return Err(Error::value(format!(
                "{op}(): expected padding_mode to be 0 (zeros), 1 (border) or 2 (reflection), but got {m}"
            )))
        }
    };
    Ok((interpolation, padding))
}

/// PyTorch's `check_grid_sampler_common` and the 2-D/3-D rank checks, plus the dtype rules
/// (floating input, grid of the same dtype) that its kernels enforce.
fn check(op: &str, n: usize, input: &Tensor, grid: &Tensor, interpolation: Interpolation) -> Result<()> {
    if input.dim() != n + 2 || grid.dim() != n + 2 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected {}D input and grid with same number of dimensions, but got input with sizes {:?} and grid with sizes {:?}",
            n + 2,
            input.sizes(),
            grid.sizes()
        )));
    }
    if input.sizes()[0] != grid.sizes()[0] {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {:?} and grid with sizes {:?}",
            input.sizes(),
            grid.sizes()
        )));
    }
    if grid.sizes()[n + 1] != n as i64 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid to have size {n} in last dimension, but got grid with sizes {:?}",
            grid.sizes()
        )));
    }
    if let Some(i) = (2..n + 2).find(|&i| input.sizes()[i] == 0) {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes {:?} with dimension {i} being empty",
            input.sizes()
        )));
    }
    if n == 3 && interpolation == Interpolation::Bicubic {
        return Err(Error::runtime("grid_sampler(): bicubic interpolation only supports 4D input"));
    }
    if !input.dtype().is_floating_point() {
        return Err(crate::support::not_implemented(&format!("{op}_cpu_kernel_impl"), input.dtype()));
    }
    if grid.dtype() != input.dtype() {
        return Err(Error::dtype(format!(
            "{op}(): expected grid to have the dtype of input ({}), but got {}",
            crate::iter::scalar_type_name(input.dtype()),
            crate::iter::scalar_type_name(grid.dtype())
        )));
    }
    Ok(())
}

fn float(v: f64) -> Scalar {
    Scalar::Float(v)
}

/// Where `keep` holds, `x`; elsewhere `value`.
fn keep_or(keep: &Tensor, x: &Tensor, value: f64) -> Result<Tensor> {
    ops::where_scalarother::call(keep, x, float(value))
}

/// One spatial axis of the input: its size, and the step of its index in the flattened spatial
/// dims.
#[derive(Clone, Copy)]
struct Axis {
    size: i64,
    step: i64,
    align_corners: bool,
}

impl Axis {
    /// Grid value (−1 … 1) to pixel coordinate (0 … size − 1 at the pixels' centres).
    fn unnormalize(&self, g: &Tensor) -> Result<Tensor> {
        let shifted = ops::add_scalar::call(g, float(1.0), Scalar::Int(1))?;
        if self.align_corners {
            ops::mul_scalar::call(&shifted, float((self.size - 1) as f64 / 2.0))
        } else {
            let scaled = ops::mul_scalar::call(&shifted, float(self.size as f64 / 2.0))?;
            ops::sub_scalar::call(&scaled, float(0.5), Scalar::Int(1))
        }
    }

    /// Into `[0, size − 1]`; NaN goes to 0, and the gradient is 0 at and beyond both ends.
    fn clip(&self, c: &Tensor) -> Result<Tensor> {
        let above_zero = ops::gt_scalar::call(c, float(0.0))?;
        let low = keep_or(&above_zero, c, 0.0)?;
        let max = (self.size - 1) as f64;
        let below_max = ops::lt_scalar::call(&low, float(max))?;
        keep_or(&below_max, &low, max)
    }

    /// Mirrors `c` at the pixels' centres (`align_corners`) or outer edges until it lies within
    /// one span: `min(e, 2·span − e)` with `e` the distance from the low end modulo two spans.
    fn reflect(&self, c: &Tensor) -> Result<Tensor> {
        let (low, twice_span) = if self.align_corners {
            if self.size <= 1 {
                return ops::mul_scalar::call(c, float(0.0));
            }
            (0.0, 2.0 * (self.size - 1) as f64)
        } else {
            (-0.5, 2.0 * self.size as f64)
        };
        let from_low = if low == 0.0 { c.clone() } else { ops::sub_scalar::call(c, float(low), Scalar::Int(1))? };
        let dist = ops::abs::call(&from_low)?;
        let spans = ops::trunc::call(&ops::div_scalar::call(&dist, float(twice_span))?)?;
        let extra = ops::sub::call(&dist, &ops::mul_scalar::call(&spans, float(twice_span))?, Scalar::Int(1))?;
        let mirrored = ops::rsub_scalar::call(&extra, float(twice_span), Scalar::Int(1))?;
        let folded = ops::minimum::call(&extra, &mirrored)?;
        if low == 0.0 {
            Ok(folded)
        } else {
            ops::add_scalar::call(&folded, float(low), Scalar::Int(1))
        }
    }

    /// The padding mode applied to a coordinate.
    fn pad(&self, c: &Tensor, padding: Padding) -> Result<Tensor> {
        match padding {
            Padding::Zeros => Ok(c.clone()),
            Padding::Border => self.clip(c),
            Padding::Reflection => self.clip(&self.reflect(c)?),
        }
    }

    /// Whether integral coordinate `c` is a sample, and its index step (0 where it is not).
    fn locate(&self, c: &Tensor) -> Result<(Tensor, Tensor)> {
        let inside = ops::logical_and::call(
            &ops::ge_scalar::call(c, float(0.0))?,
            &ops::le_scalar::call(c, float((self.size - 1) as f64))?,
        )?;
        let at = ops::to_dtype::call(&keep_or(&inside, c, 0.0)?, DType::I64, false, false, None)?;
        Ok((inside, ops::mul_scalar::call(&at, Scalar::Int(self.step))?))
    }
}

/// The samples at integral positions: `locs[a]` is (inside, index step) on axis `a`; returns
/// `[N, C, P]` with zeros where any axis is outside.
fn read(flat: &Tensor, locs: &[&(Tensor, Tensor)], points: i64) -> Result<Tensor> {
    let (n, c) = (flat.sizes()[0], flat.sizes()[1]);
    let mut inside = locs[0].0.clone();
    let mut index = locs[0].1.clone();
    for (ok, step) in &locs[1..] {
        inside = ops::logical_and::call(&inside, ok)?;
        index = ops::add::call(&index, step, Scalar::Int(1))?;
    }
    let index = ops::expand::call(&ops::reshape::call(&index, &[n, 1, points])?, &[n, c, points], false)?;
    let values = ops::gather::call(flat, 2, &index, false)?;
    keep_or(&ops::reshape::call(&inside, &[n, 1, points])?, &values, 0.0)
}

/// `[N, P]` weights times `[N, C, P]` values.
fn weighted(values: &Tensor, weight: &Tensor) -> Result<Tensor> {
    ops::mul::call(values, &ops::unsqueeze::call(weight, 1)?)
}

fn accumulate(sum: Option<Tensor>, term: Tensor) -> Result<Tensor> {
    match sum {
        None => Ok(term),
        Some(s) => ops::add::call(&s, &term, Scalar::Int(1)),
    }
}

/// Keys' cubic convolution weights of the four taps at offsets −1, 0, 1, 2 from `floor(c)`,
/// `t` being `c − floor(c)`.
fn cubic_weights(t: &Tensor) -> Result<[Tensor; 4]> {
    const A: f64 = -0.75;
    // |d| ≤ 1: ((A + 2)·d − (A + 3))·d² + 1
    let near = |d: &Tensor| -> Result<Tensor> {
        let p = ops::sub_scalar::call(&ops::mul_scalar::call(d, float(A + 2.0))?, float(A + 3.0), Scalar::Int(1))?;
        let p = ops::mul::call(&ops::mul::call(&p, d)?, d)?;
        ops::add_scalar::call(&p, float(1.0), Scalar::Int(1))
    };
    // 1 < |d| < 2: ((A·d − 5A)·d + 8A)·d − 4A
    let far = |d: &Tensor| -> Result<Tensor> {
        let p = ops::sub_scalar::call(&ops::mul_scalar::call(d, float(A))?, float(5.0 * A), Scalar::Int(1))?;
        let p = ops::add_scalar::call(&ops::mul::call(&p, d)?, float(8.0 * A), Scalar::Int(1))?;
        ops::sub_scalar::call(&ops::mul::call(&p, d)?, float(4.0 * A), Scalar::Int(1))
    };
    let one_minus = ops::rsub_scalar::call(t, float(1.0), Scalar::Int(1))?;
    let two_minus = ops::rsub_scalar::call(t, float(2.0), Scalar::Int(1))?;
    Ok([far(&ops::add_scalar::call(t, float(1.0), Scalar::Int(1))?)?, near(t)?, near(&one_minus)?, far(&two_minus)?])
}

/// Samples `input` (`[N, C, *spatial]`, `n` spatial dims) at `grid` (`[N, *out, n]`).
fn sample(
    n: usize,
    input: &Tensor,
    grid: &Tensor,
    interpolation: Interpolation,
    padding: Padding,
    align_corners: bool,
) -> Result<Tensor> {
    let sizes = input.sizes().to_vec();
    let (batch, channels, spatial) = (sizes[0], sizes[1], &sizes[2..]);
    let out: Vec<i64> = grid.sizes()[1..=n].to_vec();
    let points = out.iter().product::<i64>();
    let flat = ops::reshape::call(input, &[batch, channels, spatial.iter().product::<i64>()])?;
    let grid = ops::reshape::call(grid, &[batch, points, n as i64])?;
    // Axes in the input's order (D, H, W); the grid lists (x, y, z), the last axis first.
    let mut axes = Vec::with_capacity(n);
    let mut step = 1;
    for &size in spatial.iter().rev() {
        axes.push(Axis { size, step, align_corners });
        step *= size;
    }
    axes.reverse();
    let raw: Vec<Tensor> = (0..n)
        .map(|a| axes[a].unnormalize(&ops::select::call(&grid, -1, (n - 1 - a) as i64)?))
        .collect::<Result<_>>()?;

    let result = match interpolation {
        Interpolation::Nearest => {
            let locs: Vec<(Tensor, Tensor)> = (0..n)
                .map(|a| axes[a].locate(&ops::round::call(&axes[a].pad(&raw[a], padding)?)?))
                .collect::<Result<_>>()?;
            read(&flat, &locs.iter().collect::<Vec<_>>(), points)?
        }
        Interpolation::Linear => {
            // Per axis: the samples below and above, and their weights `1 − f` and `f`.
            let mut taps = Vec::with_capacity(n);
            for a in 0..n {
                let c = axes[a].pad(&raw[a], padding)?;
                let floor = ops::floor::call(&c)?;
                let frac = ops::sub::call(&c, &floor, Scalar::Int(1))?;
                let rest = ops::rsub_scalar::call(&frac, float(1.0), Scalar::Int(1))?;
                let low = axes[a].locate(&floor)?;
                let high = axes[a].locate(&ops::add_scalar::call(&floor, float(1.0), Scalar::Int(1))?)?;
                taps.push([(low, rest), (high, frac)]);
            }
            // Corners with the last axis varying fastest (PyTorch's nw, ne, sw, se order).
            let mut sum = None;
            for corner in 0..1usize << n {
                let pick = |a: usize| &taps[a][(corner >> (n - 1 - a)) & 1];
                let mut weight = pick(0).1.clone();
                for a in 1..n {
                    weight = ops::mul::call(&weight, &pick(a).1)?;
                }
                let locs: Vec<&(Tensor, Tensor)> = (0..n).map(|a| &pick(a).0).collect();
                sum = Some(accumulate(sum, weighted(&read(&flat, &locs, points)?, &weight)?)?);
            }
            sum.expect("at least one corner")
        }
        Interpolation::Bicubic => {
            // 2-D only (checked): rows of four taps along x, then four rows along y.
            let (y, x) = (&raw[0], &raw[1]);
            let (fy, fx) = (ops::floor::call(y)?, ops::floor::call(x)?);
            let wy = cubic_weights(&ops::sub::call(y, &fy, Scalar::Int(1))?)?;
            let wx = cubic_weights(&ops::sub::call(x, &fx, Scalar::Int(1))?)?;
            let tap = |axis: &Axis, floor: &Tensor, k: i64| -> Result<(Tensor, Tensor)> {
                let at = ops::add_scalar::call(floor, float((k - 1) as f64), Scalar::Int(1))?;
                axis.locate(&ops::trunc::call(&axis.pad(&at, padding)?)?)
            };
            let xs: Vec<(Tensor, Tensor)> = (0..4).map(|k| tap(&axes[1], &fx, k)).collect::<Result<_>>()?;
            let mut sum = None;
            for (j, wyj) in wy.iter().enumerate() {
                let row_at = tap(&axes[0], &fy, j as i64)?;
                let mut row = None;
                for (xi, wxi) in xs.iter().zip(&wx) {
                    row = Some(accumulate(row, weighted(&read(&flat, &[&row_at, xi], points)?, wxi)?)?);
                }
                sum = Some(accumulate(sum, weighted(&row.expect("four taps"), wyj)?)?);
            }
            sum.expect("four rows")
        }
    };
    let mut shape = vec![batch, channels];
    shape.extend_from_slice(&out);
    ops::reshape::call(&result, &shape)
}

fn grid_sampler_nd(
    op: &str,
    n: usize,
    input: &Tensor,
    grid: &Tensor,
    interpolation_mode: i64,
    padding_mode: i64,
    align_corners: bool,
) -> Result<Tensor> {
    let (interpolation, padding) = modes(op, interpolation_mode, padding_mode)?;
    check(op, n, input, grid, interpolation)?;
    sample(n, input, grid, interpolation, padding, align_corners)
}

impl GridSampler2dCompositeImplicit for Composite {
    fn grid_sampler_2d(
        input: &Tensor,
        grid: &Tensor,
        interpolation_mode: i64,
        padding_mode: i64,
        align_corners: bool,
    ) -> Result<Tensor> {
        grid_sampler_nd("grid_sampler_2d", 2, input, grid, interpolation_mode, padding_mode, align_corners)
    }
}

impl GridSampler3dCompositeImplicit for Composite {
    fn grid_sampler_3d(
        input: &Tensor,
        grid: &Tensor,
        interpolation_mode: i64,
        padding_mode: i64,
        align_corners: bool,
    ) -> Result<Tensor> {
        grid_sampler_nd("grid_sampler_3d", 3, input, grid, interpolation_mode, padding_mode, align_corners)
    }
}

impl GridSamplerCompositeImplicit for Composite {
    fn grid_sampler(
        input: &Tensor,
        grid: &Tensor,
        interpolation_mode: i64,
        padding_mode: i64,
        align_corners: bool,
    ) -> Result<Tensor> {
        if input.dim() == 4 {
            ops::grid_sampler_2d::call(input, grid, interpolation_mode, padding_mode, align_corners)
        } else {
            ops::grid_sampler_3d::call(input, grid, interpolation_mode, padding_mode, align_corners)
        }
    }
}

/// `linspace(-1, 1, steps)`, pulled in to the pixels' centres without `align_corners`
/// (PyTorch's `linspace_from_neg_one`); a single step is 0.
fn unit_range(theta: &Tensor, steps: i64, align_corners: bool) -> Result<Tensor> {
    if steps <= 1 {
        return ops::zeros::call(&[steps], Some(theta.dtype()), None, Some(theta.device()), None);
    }
    let range =
        ops::linspace::call(float(-1.0), float(1.0), steps, Some(theta.dtype()), None, Some(theta.device()), None)?;
    if align_corners {
        Ok(range)
    } else {
        let scaled = ops::mul_scalar::call(&range, Scalar::Int(steps - 1))?;
        ops::div_scalar::call(&scaled, Scalar::Int(steps))
    }
}

impl AffineGridGeneratorCompositeImplicit for Composite {
    fn affine_grid_generator(theta: &Tensor, size: &[i64], align_corners: bool) -> Result<Tensor> {
        let n = match size.len() {
            4 => 2,
            5 => 3,
            _ => {
                return Err(Error::runtime(format!(
                    "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {size:?}."
                )))
            }
        };
        if size.iter().any(|&s| s <= 0) {
            return Err(Error::value(format!("Expected non-zero, positive output size. Got {size:?}")));
        }
        if !theta.dtype().is_floating_point() {
            return Err(Error::value(format!(
                "Expected theta to have floating point type, but got {}",
                crate::iter::scalar_type_name(theta.dtype())
            )));
        }
        let batch = size[0];
        if theta.sizes() != [batch, n as i64, n as i64 + 1] {
            return Err(Error::value(format!(
                "Expected a batch of {n}D affine matrices of shape Nx{n}x{} for size {size:?}. Got {:?}.",
                n + 1,
                theta.sizes()
            )));
        }
        // The base grid `[*out, n + 1]` of homogeneous points (x, y[, z], 1), x varying fastest.
        let out = &size[2..];
        let points: i64 = out.iter().product();
        let mut columns = Vec::with_capacity(n + 1);
        for k in 0..n {
            // Component k (x, y, z) runs along spatial dim n − 1 − k.
            let dim = n - 1 - k;
            let mut view = vec![1i64; n];
            view[dim] = out[dim];
            let range = ops::reshape::call(&unit_range(theta, out[dim], align_corners)?, &view)?;
            columns.push(ops::expand::call(&range, out, false)?);
        }
        columns.push(ops::ones::call(out, Some(theta.dtype()), None, Some(theta.device()), None)?);
        let base = ops::reshape::call(&ops::stack::call(&columns, -1)?, &[1, points, n as i64 + 1])?;
        // [1, P, n + 1] × [N, n + 1, n] → [N, P, n].
        let grid = ops::matmul::call(&base, &ops::transpose::call(theta, 1, 2)?)?;
        let mut shape = vec![batch];
        shape.extend_from_slice(out);
        shape.push(n as i64);
        ops::reshape::call(&grid, &shape)
    }
}
