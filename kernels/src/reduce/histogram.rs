//! Counting kernels: `bincount` (occurrences of each non-negative integer, optionally weighted),
//! `histc` (equal-width bins over a range) and `histogram` (given bin edges, or equal-width bins
//! with their edges; weights and densities), and `histogramdd` (the same over the `N` values of
//! each row of a `[.., N]` input: a bin per combination of the dims' bins). The counting is on
//! the host, in float64.

use crate::generated::decls::{
    BincountCpu, HistcCpu, HistogramBinCtCpu, HistogramCpu, HistogramddBinEdgesCpu, HistogramddCompositeImplicit,
    HistogramddFromBinCtsCpu, HistogramddFromBinTensorsCpu, HistogramddIntBinsCompositeImplicit,
    HistogramddTensorlistBinsCompositeImplicit,
};
use crate::iter::to_dtype;
use crate::support::not_implemented;
use crate::{Composite, Cpu};
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

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

/// Counts (or sums the weights of) the `rows` rows of `values` (`n` values each, one per dim) per bin of
/// `edges` (one list per dim), into a row-major histogram. Rows with a value outside its dim's
/// `[first edge, last edge]` (or NaN) are skipped; a value on an inner edge belongs to the bin on
/// its right, one on the last edge to the last bin. With `equal_width`, the bin is first estimated
/// by linear interpolation and then settled among its neighbours by the edges themselves (so it
/// agrees with them exactly); otherwise it is found by binary search.
fn bin_counts(
    values: &[f64],
    rows: usize,
    n: usize,
    weights: Option<&[f64]>,
    edges: &[Vec<f64>],
    equal_width: bool,
) -> Result<Vec<f64>> {
    let len = edges.iter().try_fold(1usize, |acc, e| acc.checked_mul(e.len() - 1));
    let len = len.ok_or_else(|| Error::out_of_memory(u128::MAX, "histogram bins"))?;
    let mut hist = oxten_runtime::error::try_vec_with_capacity(len)?;
    hist.resize(len, 0.0f64);
    'rows: for i in 0..rows {
        let row = &values[i * n..(i + 1) * n];
        let mut at = 0;
        for (&v, e) in row.iter().zip(edges) {
            let m = e.len();
            let (lo, hi) = (e[0], e[m - 1]);
            if !(v >= lo && v <= hi) {
                continue 'rows;
            }
            // The first edge in `e[from..to]` above `v`, as an index into `e`.
            let upper_bound = |from: usize, to: usize| from + e[from..to].partition_point(|&x| x <= v);
            let mut pos = if equal_width {
                let guess = ((v - lo) * (m - 1) as f64 / (hi - lo)) as usize;
                upper_bound(guess.saturating_sub(1), (guess + 2).min(m)) - 1
            } else {
                upper_bound(0, m) - 1
            };
            if pos == m - 1 {
                pos -= 1;
            }
            at = at * (m - 1) + pos;
        }
        hist[at] += weights.map_or(1.0, |w| w[i]);
    }
    Ok(hist)
}

/// The histogram tensor (shaped by the bins of each dim) in `dtype`, normalized to a density
/// when asked: divided by the total, then by the bin widths along each dim, as PyTorch does.
fn finish_histogram(hist: Vec<f64>, edges: &[Tensor], dtype: DType, density: bool) -> Result<Tensor> {
    let shape: Vec<i64> = edges.iter().map(|e| e.numel() - 1).collect();
    let mut hist = Tensor::from_vec(hist, &shape)?.try_to_dtype(dtype)?;
    if density {
        let total = ops::sum::call(&hist, None)?;
        hist = ops::div::call(&hist, &total)?;
        for (d, e) in edges.iter().enumerate() {
            let mut along = vec![1i64; edges.len()];
            along[d] = shape[d];
            let widths = ops::diff::call(e, 1, 0, None, None)?.try_reshape(&along)?;
            hist = ops::div::call(&hist, &widths)?;
        }
    }
    Ok(hist)
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
        let edges = ops::deep_clone::call(bins, None)?;
        let weights = weight.map(|w| w.to_f64_vec()).transpose()?;
        let hist = bin_counts(
            &self_.to_f64_vec()?,
            self_.numel() as usize,
            1,
            weights.as_deref(),
            &[edges.to_f64_vec()?],
            false,
        )?;
        Ok((finish_histogram(hist, std::slice::from_ref(&edges), self_.dtype(), density)?, edges))
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
        let edges = ops::linspace::call(
            Scalar::Float(lo),
            Scalar::Float(hi),
            bins + 1,
            Some(self_.dtype()),
            None,
            Some(self_.device()),
            None,
        )?;
        let weights = weight.map(|w| w.to_f64_vec()).transpose()?;
        let hist = bin_counts(&values, values.len(), 1, weights.as_deref(), &[edges.to_f64_vec()?], true)?;
        Ok((finish_histogram(hist, std::slice::from_ref(&edges), self_.dtype(), density)?, edges))
    }
}

/// `histogramdd`'s input as rows: the values (float64), the number of rows and the values per row
/// (`N`), after the checks of PyTorch's `select_outer_bin_edges`: at least two dims, f32 or f64.
fn dd_rows(self_: &Tensor) -> Result<(Vec<f64>, usize, usize)> {
    if self_.dim() < 2 {
        return Err(Error::runtime(format!(
            "torch.histogramdd: input tensor should have at least 2 dimensions, but got {}",
            self_.dim()
        )));
    }
    if !matches!(self_.dtype(), DType::F32 | DType::F64) {
        return Err(not_implemented("histogramdd", self_.dtype()));
    }
    let n = *self_.sizes().last().unwrap_or(&1) as usize;
    let values = self_.to_f64_vec()?;
    let rows = self_.sizes()[..self_.dim() - 1].iter().product::<i64>() as usize;
    Ok((values, rows, n))
}

/// The leftmost and rightmost edge of each dim (PyTorch's `select_outer_bin_edges`): `range`'s
/// pairs, else the data's extremes (`[0, 1]` without data), widened by 1/2 on each side where
/// they are equal.
fn outer_edges(values: &[f64], n: usize, range: Option<&[f64]>) -> Result<Vec<(f64, f64)>> {
    let mut out = oxten_runtime::error::try_vec_with_capacity(n)?;
    out.resize(n, (0.0, 1.0));
    match range {
        Some(r) if r.len() != 2 * n => {
            return Err(Error::runtime(format!(
                "torch.histogramdd: for a {n}-dimensional histogram range should have {} elements, but got {}",
                2 * n,
                r.len()
            )))
        }
        Some(r) => {
            for (d, e) in out.iter_mut().enumerate() {
                *e = (r[2 * d], r[2 * d + 1]);
            }
        }
        None if values.is_empty() => {}
        None => {
            for (d, e) in out.iter_mut().enumerate() {
                // NaN propagates (PyTorch's aminmax), and is refused below.
                *e = values.iter().skip(d).step_by(n).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    if v.is_nan() || lo.is_nan() {
                        (f64::NAN, f64::NAN)
                    } else {
                        (lo.min(v), hi.max(v))
                    }
                });
            }
        }
    }
    for (d, (lo, hi)) in out.iter_mut().enumerate() {
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(Error::runtime(format!(
                "torch.histogramdd: dimension {d}'s range [{}, {}] is not finite",
                crate::support::format_g(*lo),
                crate::support::format_g(*hi)
            )));
        }
        if lo > hi {
            return Err(Error::runtime(format!(
                "torch.histogramdd: min should not exceed max, but got min {} max {} for dimension {d}",
                crate::support::format_g(*lo),
                crate::support::format_g(*hi)
            )));
        }
        if lo == hi {
            *lo -= 0.5;
            *hi += 0.5;
        }
    }
    Ok(out)
}

/// `bins` bins per dim: PyTorch's checks (one count per dim, each positive).
fn check_bin_cts(n: usize, bins: &[i64]) -> Result<()> {
    if bins.len() != n {
        return Err(Error::runtime(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input.",
        ));
    }
    if let Some((d, b)) = bins.iter().enumerate().find(|(_, &b)| b <= 0) {
        return Err(Error::runtime(format!("torch.histogram(): bins must be > 0, but got {b} for dimension {d}")));
    }
    Ok(())
}

/// The equal-width edges of each dim, in the input's dtype (as PyTorch's `linspace`).
fn equal_width_edges(self_: &Tensor, bins: &[i64], range: Option<&[f64]>) -> Result<Vec<Tensor>> {
    let (values, _, n) = dd_rows(self_)?;
    let outer = outer_edges(&values, n, range)?;
    check_bin_cts(n, bins)?;
    outer
        .iter()
        .zip(bins)
        .map(|(&(lo, hi), &b)| {
            let steps = b.checked_add(1).ok_or_else(|| Error::value("torch.histogramdd: too many bins"))?;
            ops::linspace::call(
                Scalar::Float(lo),
                Scalar::Float(hi),
                steps,
                Some(self_.dtype()),
                None,
                Some(self_.device()),
                None,
            )
        })
        .collect()
}

/// PyTorch's `histogramdd_check_inputs`: one 1-D, non-empty edge tensor per dim in the input's
/// dtype, and a weight per row in that dtype. Returns the weights (float64).
fn check_dd_inputs(self_: &Tensor, edges: &[Tensor], weight: Option<&Tensor>) -> Result<Option<Vec<f64>>> {
    let n = *self_.sizes().last().unwrap_or(&1);
    if edges.len() as i64 != n {
        return Err(Error::runtime(format!(
            "torch.histogramdd: expected {n} sequences of bin edges for each of the {n} input dimensions, but got {} \
             bin edge tensors",
            edges.len()
        )));
    }
    let name = |d: DType| crate::iter::scalar_type_name(d).to_lowercase();
    for (d, e) in edges.iter().enumerate() {
        if e.dtype() != self_.dtype() {
            return Err(Error::runtime(format!(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype \
                 {} and bins for dimension {d} with dtype {}",
                name(self_.dtype()),
                name(e.dtype())
            )));
        }
        if e.dim() != 1 {
            return Err(Error::runtime(format!(
                "torch.histogramdd: bins tensor should have one dimension, but got {} dimensions in the bins tensor for \
                 dimension {d}",
                e.dim()
            )));
        }
        if e.numel() == 0 {
            return Err(Error::runtime(format!(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins tensor \
                 for dimension {d}"
            )));
        }
    }
    let Some(w) = weight else { return Ok(None) };
    if w.dtype() != self_.dtype() {
        return Err(Error::runtime(format!(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same \
             dtype, but got input({}), and weight({})",
            name(self_.dtype()),
            name(w.dtype())
        )));
    }
    let sizes = self_.sizes();
    let rows = &sizes[..sizes.len() - 1];
    let ws = if w.dim() == 0 { vec![1] } else { w.sizes().to_vec() };
    if ws[..] != rows[..] {
        return Err(Error::runtime(format!(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor \
             excluding its innermost dimension, but got input with shape {:?} and weight with shape {:?}",
            &sizes[..],
            &w.sizes()[..]
        )));
    }
    Ok(Some(w.to_f64_vec()?))
}

/// The histogram over `edges` (checked), counted by interpolation where they are equal-width.
fn dd_counts(
    self_: &Tensor,
    edges: &[Tensor],
    weight: Option<&Tensor>,
    density: bool,
    equal_width: bool,
) -> Result<Tensor> {
    let weights = check_dd_inputs(self_, edges, weight)?;
    if let Some((d, _)) = edges.iter().enumerate().find(|(_, e)| e.numel() < 2) {
        return Err(Error::runtime(format!("torch.histogram(): bins must be > 0, but got 0 for dimension {d}")));
    }
    let (values, rows, n) = dd_rows(self_)?;
    let host = edges.iter().map(|e| e.to_f64_vec()).collect::<Result<Vec<_>>>()?;
    let hist = bin_counts(&values, rows, n, weights.as_deref(), &host, equal_width)?;
    finish_histogram(hist, edges, self_.dtype(), density)
}

impl HistogramddBinEdgesCpu for Cpu {
    fn histogramdd_bin_edges(
        self_: &Tensor,
        bins: &[i64],
        range: Option<&[f64]>,
        _weight: Option<&Tensor>,
        _density: bool,
    ) -> Result<Vec<Tensor>> {
        equal_width_edges(self_, bins, range)
    }
}

impl HistogramddFromBinCtsCpu for Cpu {
    fn histogramdd_from_bin_cts(
        self_: &Tensor,
        bins: &[i64],
        range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<Tensor> {
        let edges = equal_width_edges(self_, bins, range)?;
        dd_counts(self_, &edges, weight, density, true)
    }
}

impl HistogramddFromBinTensorsCpu for Cpu {
    fn histogramdd_from_bin_tensors(
        self_: &Tensor,
        bins: &[Tensor],
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<Tensor> {
        if self_.dim() < 2 {
            dd_rows(self_)?;
        }
        dd_counts(self_, bins, weight, density, false)
    }
}

impl HistogramddCompositeImplicit for Composite {
    fn histogramdd(
        self_: &Tensor,
        bins: &[i64],
        range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let edges = ops::_histogramdd_bin_edges::call(self_, bins, range, weight, density)?;
        let hist = ops::_histogramdd_from_bin_cts::call(self_, bins, range, weight, density)?;
        Ok((hist, edges))
    }
}

impl HistogramddIntBinsCompositeImplicit for Composite {
    fn histogramdd_int_bins(
        self_: &Tensor,
        bins: i64,
        range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let n = self_.sizes().last().copied().unwrap_or(1).max(0) as usize;
        let mut per_dim = oxten_runtime::error::try_vec_with_capacity(n)?;
        per_dim.resize(n, bins);
        ops::histogramdd::call(self_, &per_dim, range, weight, density)
    }
}

impl HistogramddTensorlistBinsCompositeImplicit for Composite {
    /// The edges returned are `bins` themselves, as in PyTorch.
    fn histogramdd_tensorlist_bins(
        self_: &Tensor,
        bins: &[Tensor],
        _range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let hist = ops::_histogramdd_from_bin_tensors::call(self_, bins, weight, density)?;
        Ok((hist, bins.to_vec()))
    }
}
