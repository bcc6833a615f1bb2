//! Counting kernels: `bincount` (occurrences of each non-negative integer, optionally weighted)
//! and `histc` (equal-width bins over a range).

use crate::generated::decls::{BincountCpu, HistcCpu};
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
