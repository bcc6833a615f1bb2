//! Counting kernels: `bincount` (occurrences of each non-negative integer, optionally weighted),
//! `histc` (equal-width bins over a range) and `histogram` (given bin edges, or equal-width bins
//! with their edges; weights and densities), PyTorch's `histogramdd` rules in one dimension.

use crate::generated::decls::{BincountCpu, HistcCpu, HistogramBinCtCpu, HistogramCpu};
use crate::iter::to_dtype;
use crate::support::not_implemented;
use crate::Cpu;
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

impl BincountCpu for Cpu {
    fn bincount(self_: &Tensor, weights: Option<&Tensor>, minlength: i64) -> Result<Tensor> {
        if !self_.dtype().is_integral(false) {
            return Err(not_implemented("bincount_cpu", self_.dtype()));
        }
        if minlength < 0 {
            return Err(Error::value("minlength should be >= 0"));
        }
        let values = to_dtype(self_, DType::I64)?.to_vec::<i64>()?;
        if self_.dim() != 1 || values.iter().any(|&v| v < 0) {
            return Err(Error::runtime("bincount only supports 1-d non-negative integral inputs."));
        }
        if let Some(w) = weights {
            if w.dim() != 1 || w.sizes()[0] != self_.sizes()[0] {
                return Err(Error::runtime("weights should be 1-d and have the same length as input"));
            }
        }
        let len = values.iter().copied().max().map_or(0, |m| m.saturating_add(1)).max(minlength) as usize;
        match weights {
            None => {
                let mut counts = oxten_runtime::error::try_vec_with_capacity(len)?;
                counts.resize(len, 0i64);
                for &v in &values {
                    counts[v as usize] += 1;
                }
                Tensor::from_vec(counts, &[len as i64])
            }
            Some(w) => {
                // Float32 weights sum in float32; every other dtype in float64 (PyTorch's rule).
                let out_dtype = if w.dtype() == DType::F32 { DType::F32 } else { DType::F64 };
                let w = to_dtype(w, out_dtype)?.to_f64_vec()?;
                if out_dtype == DType::F32 {
                    let mut sums32 = oxten_runtime::error::try_vec_with_capacity(len)?;
                    sums32.resize(len, 0f32);
                    for (&v, &x) in values.iter().zip(&w) {
                        sums32[v as usize] += x as f32;
                    }
                    return Tensor::from_vec(sums32, &[len as i64]);
                }
                let mut sums = oxten_runtime::error::try_vec_with_capacity(len)?;
                sums.resize(len, 0f64);
                for (&v, &x) in values.iter().zip(&w) {
                    sums[v as usize] += x;
                }
                Tensor::from_vec(sums, &[len as i64])
            }
        }
    }
}

impl HistcCpu for Cpu {
    /// Bin `i` holds `[min + i·w, min + (i+1)·w)` with `w = (max − min) / bins`; the last bin
    /// also holds `max`. With `min == max` the data's range is used, widened by 1 on each side
    /// if it is a single value.
    fn histc(self_: &Tensor, bins: i64, min: Scalar, max: Scalar) -> Result<Tensor> {
        if !self_.dtype().is_floating_point() {
            return Err(not_implemented("histogram_cpu", self_.dtype()));
        }
        if bins <= 0 {
            return Err(Error::runtime(format!("torch.histogram(): bins must be > 0, but got {bins} for dimension 0")));
        }
        let values = self_.to_f64_vec()?;
        let (mut lo, mut hi) = (min.to_f64(), max.to_f64());
        if lo > hi {
            return Err(Error::runtime("torch.histc: max must be larger than min"));
        }
        if lo == hi && !values.is_empty() {
            lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if values.iter().any(|v| v.is_nan()) {
                lo = f64::NAN;
                hi = f64::NAN;
            }
        }
        if lo == hi {
            lo -= 1.0;
            hi += 1.0;
        }
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(Error::runtime(format!(
                "torch.histc: range of [{}, {}] is not finite",
                crate::support::format_g(lo),
                crate::support::format_g(hi)
            )));
        }
        let mut counts = oxten_runtime::error::try_vec_with_capacity(bins as usize)?;
        counts.resize(bins as usize, 0f64);
        for &v in &values {
            if !(v >= lo && v <= hi) {
                continue;
            }
            let pos = (((v - lo) * bins as f64 / (hi - lo)) as i64).min(bins - 1);
            counts[pos as usize] += 1.0;
        }
        Tensor::from_vec(counts, &[bins])?.try_to_dtype(self_.dtype())
    }
}

/// `histogram`'s operand checks: a floating input (f32 or f64, as PyTorch's kernel), and a
/// weight of its shape and dtype.
fn check_histogram_operands(self_: &Tensor, weight: Option<&Tensor>) -> Result<()> {
    if !matches!(self_.dtype(), DType::F32 | DType::F64) {
        return Err(not_implemented("histogramdd", self_.dtype()));
    }
    if let Some(w) = weight {
        if w.dtype() != self_.dtype() {
            return Err(Error::runtime(format!(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same dtype, but got input({}), and weight({})",
                crate::iter::scalar_type_name(self_.dtype()).to_lowercase(),
                crate::iter::scalar_type_name(w.dtype()).to_lowercase()
            )));
        }
        if w.sizes() != self_.sizes() {
            return Err(Error::runtime(format!(
                "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape {:?} and weight with shape {:?}",
                [self_.numel(), 1],
                w.sizes()
            )));
        }
    }
    Ok(())
}

fn check_bin_count(bins: i64) -> Result<()> {
    if bins <= 0 {
        return Err(Error::runtime(format!("torch.histogram(): bins must be > 0, but got {bins} for dimension 0")));
    }
    Ok(())
}

/// Counts (or sums the weights of) the elements per bin of `edges`. Elements outside
/// `[edges[0], edges[last]]` (and NaN) are skipped; an element on an inner edge belongs to the bin
/// on its right, one on the last edge to the last bin. With `equal_width`, the bin is first
/// estimated by linear interpolation and then settled among its neighbours by the edges
/// themselves (so it agrees with them exactly); otherwise it is found by binary search.
fn bin_counts(values: &[f64], weights: Option<&[f64]>, edges: &[f64], equal_width: bool) -> Result<Vec<f64>> {
    let n = edges.len();
    let mut hist = oxten_runtime::error::try_vec_with_capacity(n - 1)?;
    hist.resize(n - 1, 0.0f64);
    let (lo, hi) = (edges[0], edges[n - 1]);
    // The first edge in `window` above `v`, as an index into `edges`.
    let upper_bound = |v: f64, from: usize, to: usize| from + edges[from..to].partition_point(|&e| e <= v);
    for (i, &v) in values.iter().enumerate() {
        if !(v >= lo && v <= hi) {
            continue;
        }
        let mut pos = if equal_width {
            let guess = ((v - lo) * (n - 1) as f64 / (hi - lo)) as usize;
            upper_bound(v, guess.saturating_sub(1), (guess + 2).min(n)) - 1
        } else {
            upper_bound(v, 0, n) - 1
        };
        if pos == n - 1 {
            pos -= 1;
        }
        hist[pos] += weights.map_or(1.0, |w| w[i]);
    }
    Ok(hist)
}

/// The histogram tensor in the input's dtype, normalized to a density (by the total, then by
/// each bin's width, as PyTorch) when asked.
fn finish_histogram(hist: Vec<f64>, edges: Tensor, dtype: DType, density: bool) -> Result<(Tensor, Tensor)> {
    let bins = hist.len() as i64;
    let mut hist = Tensor::from_vec(hist, &[bins])?.try_to_dtype(dtype)?;
    if density {
        let total = oxten_runtime::ops::sum::call(&hist, None)?;
        hist = oxten_runtime::ops::div::call(&hist, &total)?;
        let widths = oxten_runtime::ops::diff::call(&edges, 1, 0, None, None)?;
        hist = oxten_runtime::ops::div::call(&hist, &widths)?;
    }
    Ok((hist, edges))
}

impl HistogramCpu for Cpu {
    fn histogram(self_: &Tensor, bins: &Tensor, weight: Option<&Tensor>, density: bool) -> Result<(Tensor, Tensor)> {
        check_histogram_operands(self_, weight)?;
        if bins.dim() != 1 {
            return Err(Error::runtime(format!(
                "torch.histogramdd: bins tensor should have one dimension, but got {} dimensions in the bins tensor for dimension 0",
                bins.dim()
            )));
        }
        check_bin_count(bins.numel() - 1)?;
        if bins.dtype() != self_.dtype() {
            return Err(Error::runtime(format!(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype {} and bins for dimension 0 with dtype {}",
                crate::iter::scalar_type_name(self_.dtype()).to_lowercase(),
                crate::iter::scalar_type_name(bins.dtype()).to_lowercase()
            )));
        }
        let edges = oxten_runtime::ops::deep_clone::call(bins, None)?;
        let weights = weight.map(|w| w.to_f64_vec()).transpose()?;
        let hist = bin_counts(&self_.to_f64_vec()?, weights.as_deref(), &edges.to_f64_vec()?, false)?;
        finish_histogram(hist, edges, self_.dtype(), density)
    }
}

impl HistogramBinCtCpu for Cpu {
    fn histogram_bin_ct(
        self_: &Tensor,
        bins: i64,
        range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Tensor)> {
        check_histogram_operands(self_, weight)?;
        check_bin_count(bins)?;
        let values = self_.to_f64_vec()?;
        let (mut lo, mut hi) = match range {
            Some(&[lo, hi]) => (lo, hi),
            Some(r) => {
                return Err(Error::runtime(format!(
                    "torch.histogramdd: for a 1-dimensional histogram range should have 2 elements, but got {}",
                    r.len()
                )))
            }
            None if values.is_empty() => (0.0, 1.0),
            // NaN propagates (PyTorch's aminmax), and is refused below.
            None => values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                if v.is_nan() || lo.is_nan() {
                    (f64::NAN, f64::NAN)
                } else {
                    (lo.min(v), hi.max(v))
                }
            }),
        };
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(Error::runtime(format!(
                "torch.histogramdd: dimension 0's range [{}, {}] is not finite",
                crate::support::format_g(lo),
                crate::support::format_g(hi)
            )));
        }
        if lo > hi {
            return Err(Error::runtime(format!(
                "torch.histogramdd: min should not exceed max, but got min {} max {} for dimension 0",
                crate::support::format_g(lo),
                crate::support::format_g(hi)
            )));
        }
        if lo == hi {
            lo -= 0.5;
            hi += 0.5;
        }
        // The edges in the input's dtype, as PyTorch's `linspace`; bins are then settled on them.
        let edges = oxten_runtime::ops::linspace::call(
            Scalar::Float(lo),
            Scalar::Float(hi),
            bins + 1,
            Some(self_.dtype()),
            None,
            Some(self_.device()),
            None,
        )?;
        let weights = weight.map(|w| w.to_f64_vec()).transpose()?;
        let hist = bin_counts(&values, weights.as_deref(), &edges.to_f64_vec()?, true)?;
        finish_histogram(hist, edges, self_.dtype(), density)
    }
}
