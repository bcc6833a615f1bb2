//! `nanmedian` and `quantile`/`nanquantile`, as PyTorch computes them: sort (NaN last), then
//! pick or interpolate by rank. CompositeImplicitAutograd: gradients flow through `sort`'s values
//! and `gather`/`lerp`.

use crate::generated::decls::{
    NanmedianCompositeImplicit, NanmedianDimCompositeImplicit, NanquantileCompositeImplicit,
    NanquantileScalarCompositeImplicit, QuantileCompositeImplicit, QuantileScalarCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Scalar, Tensor};

/// The lower median of the non-NaN elements of each row of `sorted` (last dim), with its
/// index in `order`: rank `(count - 1) / 2`, clamped at 0 (a row of NaNs gives its first NaN).
fn nan_median_rows(sorted: &Tensor, order: &Tensor) -> Result<(Tensor, Tensor)> {
    let count = ops::sum_dim_intlist::call(&ops::isnan::call(sorted)?.try_logical_not()?, Some(&[-1]), true, None)?;
    let rank = ops::floor_divide::call(
        &count.try_sub_scalar(Scalar::Int(1))?.try_clamp_min(0)?,
        &ops::full::call(&[], Scalar::Int(2), Some(DType::I64), None, Some(sorted.device()), None)?,
    )?;
    let values = ops::gather::call(sorted, -1, &rank, false)?;
    let indices = ops::gather::call(order, -1, &rank, false)?;
    Ok((values.try_squeeze_dim(-1)?, indices.try_squeeze_dim(-1)?))
}

impl NanmedianCompositeImplicit for Composite {
    fn nanmedian(self_: &Tensor) -> Result<Tensor> {
        if self_.dtype() == DType::Bool {
            return Err(crate::support::not_implemented("nanmedian_cpu", DType::Bool));
        }
        if self_.numel() == 0 {
            return ops::full::call(
                &[],
                Scalar::Float(f64::NAN),
                Some(self_.dtype()),
                None,
                Some(self_.device()),
                None,
            );
        }
        let (sorted, order) = ops::sort::call(&ops::reshape::call(self_, &[-1])?, 0, false)?;
        Ok(nan_median_rows(&sorted, &order)?.0)
    }
}

impl NanmedianDimCompositeImplicit for Composite {
    fn nanmedian_dim(self_: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        if self_.dtype() == DType::Bool {
            return Err(crate::support::not_implemented("nanmedian_cpu", DType::Bool));
        }
        let d = wrap_dim(dim, self_.dim())?;
        if self_.dim() == 0 {
            let zero = ops::zeros::call(&[], Some(DType::I64), None, Some(self_.device()), None)?;
            return Ok((ops::deep_clone::call(self_, None)?, zero));
        }
        if self_.sizes()[d] == 0 {
            return Err(Error::index(format!("nanmedian(): Expected reduction dim {d} to have non-zero size.")));
        }
        let moved = self_.try_transpose(d as i64, -1)?;
        let (sorted, order) = ops::sort::call(&moved, -1, false)?;
        let (v, i) = nan_median_rows(&sorted, &order)?;
        // Put `dim` back where it was (it is the last dim of the moved tensor).
        let back = |t: Tensor| -> Result<Tensor> {
            let t = t.try_unsqueeze(-1)?.try_transpose(d as i64, -1)?.try_contiguous()?;
            if keepdim {
                Ok(t)
            } else {
                t.try_squeeze_dim(d as i64)
            }
        };
        Ok((back(v)?, back(i)?))
    }
}

const INTERPOLATIONS: [&str; 5] = ["linear", "lower", "higher", "midpoint", "nearest"];

#[allow(clippy::too_many_arguments)]
fn quantile_impl(
    op: &str,
    self_: &Tensor,
    q: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    interpolation: &str,
    ignore_nan: bool,
) -> Result<Tensor> {
    if self_.numel() == 0 {
        return Err(Error::runtime(format!("{op}() input tensor must be non-empty")));
    }
    if q.dim() > 1 {
        return Err(Error::runtime(format!("{op}() q must be a scalar or 1D tensor")));
    }
    if !matches!(self_.dtype(), DType::F32 | DType::F64) {
        return Err(Error::runtime(format!("{op}() input tensor must be either float or double dtype")));
    }
    if q.dtype() != self_.dtype() {
        return Err(Error::runtime(format!("{op}() q tensor must be same dtype as the input tensor")));
    }
    if !INTERPOLATIONS.contains(&interpolation) {
        return Err(Error::runtime(format!(
            "{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {interpolation}"
        )));
    }
    let qv = q.try_to_dtype(DType::F64)?.to_vec::<f64>()?;
    if qv.iter().any(|v| !(0.0..=1.0).contains(v)) {
        return Err(Error::runtime(format!("{op}() q values must be in the range [0, 1]")));
    }
    // Rows to take quantiles of, along the last dim (the other dims keep their order).
    let (rows, d) = match dim {
        None => (ops::reshape::call(self_, &[-1])?, None),
        Some(dim) => {
            let d = wrap_dim(dim, self_.dim())?;
            let moved =
                if self_.dim() == 0 { ops::reshape::call(self_, &[1])? } else { self_.try_movedim(d as i64, -1)? };
            (moved, Some(d))
        }
    };
    let sorted = ops::sort::call(&rows, -1, false)?.0;
    let n = sorted.sizes()[sorted.dim() - 1];
    let qs = ops::reshape::call(q, &[-1])?;
    let ranks = if ignore_nan {
        let count =
            ops::sum_dim_intlist::call(&ops::isnan::call(&sorted)?.try_logical_not()?, Some(&[-1]), true, None)?;
        let ranks = ops::mul::call(&qs, &count.try_sub_scalar(Scalar::Int(1))?.try_to_dtype(self_.dtype())?)?;
        ops::masked_fill_scalar::call(&ranks, &ops::lt_scalar::call(&ranks, Scalar::Int(0))?, Scalar::Int(0))?
    } else {
        let last = (n - 1) as f64;
        let ranks = ops::mul_scalar::call(&qs, Scalar::Float(last))?;
        // A row holding NaN reads its last element (a NaN, sorted last).
        let has_nan = ops::any_dim::call(&ops::isnan::call(&sorted)?, -1, true)?;
        let shape = {
            let mut s = has_nan.sizes().to_vec();
            let len = s.len();
            s[len - 1] = qs.numel();
            s
        };
        let ranks = ranks.try_expand(&shape)?;
        ops::masked_fill_scalar::call(&ranks, &has_nan, Scalar::Float(last))?
    };
    let (below, above, weights) = match interpolation {
        "lower" => {
            let r = ops::floor::call(&ranks)?;
            (r.clone(), r, None)
        }
        "higher" => {
            let r = ops::ceil::call(&ranks)?;
            (r.clone(), r, None)
        }
        "nearest" => {
            let r = ops::round::call(&ranks)?;
            (r.clone(), r, None)
        }
        _ => {
            let (lo, hi) = (ops::floor::call(&ranks)?, ops::ceil::call(&ranks)?);
            let w = if interpolation == "midpoint" {
                ops::full_like::call(&ranks, Scalar::Float(0.5), None, None, None, None, None)?
            } else {
                ops::sub::call(&ranks, &lo, Scalar::Int(1))?
            };
            (lo, hi, Some(w))
        }
    };
    let take = |r: &Tensor| -> Result<Tensor> {
        let idx = r.try_to_dtype(DType::I64)?;
        let mut shape = sorted.sizes().to_vec();
        let len = shape.len();
        shape[len - 1] = idx.sizes()[idx.dim() - 1];
        ops::gather::call(&sorted, -1, &idx.try_expand(&shape)?, false)
    };
    let lo = take(&below)?;
    let result = match weights {
        None => lo,
        Some(w) => {
            let hi = take(&above)?;
            let mut shape = lo.sizes().to_vec();
            let len = shape.len();
            shape[len - 1] = w.sizes()[w.dim() - 1];
            ops::lerp::call(&lo, &hi, &w.try_expand(&shape)?)?
        }
    };
    // `result` is [others.., Q]: Q goes first (dropped for a 0-dim q), then keepdim puts the
    // reduced dims back as ones.
    let mut result = result.try_movedim(-1, 0)?;
    if q.dim() == 0 {
        result = result.try_squeeze_dim(0)?;
    }
    let lead = q.dim() as i64;
    if keepdim {
        match d {
            None => {
                let mut shape: Vec<i64> = result.sizes()[..lead as usize].to_vec();
                shape.extend(std::iter::repeat_n(1, self_.dim()));
                result = ops::reshape::call(&result, &shape)?;
            }
            Some(d) if self_.dim() > 0 => result = result.try_unsqueeze(lead + d as i64)?,
            Some(_) => {}
        }
    }
    result.try_contiguous()
}

impl QuantileCompositeImplicit for Composite {
    fn quantile(self_: &Tensor, q: &Tensor, dim: Option<i64>, keepdim: bool, interpolation: &str) -> Result<Tensor> {
        quantile_impl("quantile", self_, q, dim, keepdim, interpolation, false)
    }
}

impl QuantileScalarCompositeImplicit for Composite {
    fn quantile_scalar(self_: &Tensor, q: f64, dim: Option<i64>, keepdim: bool, interpolation: &str) -> Result<Tensor> {
        let q = ops::scalar_tensor::call(Scalar::Float(q), Some(self_.dtype()), None, Some(self_.device()), None)?;
        quantile_impl("quantile", self_, &q, dim, keepdim, interpolation, false)
    }
}

impl NanquantileCompositeImplicit for Composite {
    fn nanquantile(self_: &Tensor, q: &Tensor, dim: Option<i64>, keepdim: bool, interpolation: &str) -> Result<Tensor> {
        quantile_impl("nanquantile", self_, q, dim, keepdim, interpolation, true)
    }
}

impl NanquantileScalarCompositeImplicit for Composite {
    fn nanquantile_scalar(
        self_: &Tensor,
        q: f64,
        dim: Option<i64>,
        keepdim: bool,
        interpolation: &str,
    ) -> Result<Tensor> {
        let q = ops::scalar_tensor::call(Scalar::Float(q), Some(self_.dtype()), None, Some(self_.device()), None)?;
        quantile_impl("nanquantile", self_, &q, dim, keepdim, interpolation, true)
    }
}
