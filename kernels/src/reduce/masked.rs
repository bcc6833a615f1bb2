//! `torch.masked`'s reductions, scans and normalizations on strided tensors (`masked_*`: `sum
//! prod amax amin mean var std norm median logsumexp argmax argmin cumsum cumprod softmax
//! log_softmax softmin normalize logaddexp`;
//! PyTorch has them in Python only): the masked-out elements replaced by the operation's identity
//! (`where(mask, input, identity)`, the mask broadcast to the input), then the ordinary operator
//! over the given dims (all by default for the reductions). Composed of those operators, as PyTorch's
//! definitions are, so autograd and every backend come from them.

use crate::generated::decls::{
    MaskedAmaxCompositeImplicit, MaskedAminCompositeImplicit, MaskedArgmaxCompositeImplicit,
    MaskedArgminCompositeImplicit, MaskedCumprodCompositeImplicit, MaskedCumsumCompositeImplicit,
    MaskedLogSoftmaxCompositeImplicit, MaskedLogaddexpCompositeImplicit, MaskedLogsumexpCompositeImplicit,
    MaskedMeanCompositeImplicit, MaskedMedianCompositeImplicit, MaskedNormCompositeImplicit,
    MaskedNormalizeCompositeImplicit, MaskedProdCompositeImplicit, MaskedSoftmaxCompositeImplicit,
    MaskedSoftminCompositeImplicit, MaskedStdCompositeImplicit, MaskedSumCompositeImplicit, MaskedVarCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// `_canonical_dim`: the dims to reduce, sorted, each once (all of them for `None` or `[]`).
fn canonical_dims(dim: Option<&[i64]>, ndim: usize) -> Result<Vec<i64>> {
    let Some(dim) = dim.filter(|d| !d.is_empty()) else { return Ok((0..ndim as i64).collect()) };
    let n = ndim.max(1) as i64;
    let mut dims: Vec<i64> = Vec::with_capacity(dim.len());
    for &d in dim {
        // As PyTorch: the raw dim against those already normalized.
        if dims.contains(&d) {
            return Err(Error::runtime(format!("dim={d} appears multiple times in the list of dims")));
        }
        if d >= n || d < -n {
            return Err(Error::index(format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
                -n,
                n - 1
            )));
        }
        dims.push(d.rem_euclid(n));
    }
    dims.sort_unstable();
    Ok(dims)
}

/// `_input_mask`: the mask broadcast to the input's shape, as bool.
fn input_mask(input: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let mask = if mask.sizes() != input.sizes() {
        if mask.dim() > input.dim() {
            return Err(Error::index(
                "_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)",
            ));
        }
        ops::broadcast_to::call(mask, &input.sizes())?
    } else {
        mask.clone()
    };
    ops::to_dtype::call(&mask, DType::Bool, false, false, None)
}

/// `input` with its masked-out elements replaced by `identity` (`input` itself without a mask).
fn combine(input: &Tensor, mask: Option<&Tensor>, identity: Scalar) -> Result<Tensor> {
    let Some(mask) = mask else { return Ok(input.clone()) };
    let mask = input_mask(input, mask)?;
    let fill = ops::full::call(&[], identity, Some(input.dtype()), None, Some(input.device()), None)?;
    ops::where_self::call(&mask, input, &fill)
}

/// The largest (`max`) or smallest value of an integer dtype, or ∓∞ for a floating one.
fn extreme(dtype: DType, max: bool) -> Scalar {
    let (lo, hi) = match dtype {
        DType::U8 => (0, u8::MAX as i64),
        DType::I8 => (i8::MIN as i64, i8::MAX as i64),
        DType::I16 => (i16::MIN as i64, i16::MAX as i64),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        DType::I64 => (i64::MIN, i64::MAX),
        DType::Bool => (0, 1),
        _ => return Scalar::Float(if max { f64::INFINITY } else { f64::NEG_INFINITY }),
    };
    Scalar::Int(if max { hi } else { lo })
}

/// The dtype `masked.sum`/`prod` accumulate in without `dtype=`: int64 for the small integers
/// and bool, the input's otherwise.
fn accumulating(dtype: DType) -> DType {
    match dtype {
        DType::U8 | DType::Bool | DType::I8 | DType::I16 | DType::I32 => DType::I64,
        d => d,
    }
}

fn masked_sum_impl(
    input: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
    mask: Option<&Tensor>,
) -> Result<Tensor> {
    let dtype = dtype.unwrap_or(accumulating(input.dtype()));
    let dims = canonical_dims(dim, input.dim())?;
    let x = combine(input, mask, Scalar::Int(0))?;
    ops::sum_dim_intlist::call(&x, Some(&dims), keepdim, Some(dtype))
}

impl MaskedSumCompositeImplicit for Composite {
    fn masked_sum(
        input: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_sum_impl(input, dim, keepdim, dtype, mask)
    }
}

impl MaskedProdCompositeImplicit for Composite {
    fn masked_prod(
        input: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(accumulating(input.dtype()));
        let dims = canonical_dims(dim, input.dim())?;
        let x = combine(input, mask, Scalar::Int(1))?;
        let mut r = ops::to_dtype::call(&x, dtype, false, false, None)?;
        for &d in dims.iter().rev() {
            r = ops::prod_dim_int::call(&r, d, keepdim, None)?;
        }
        Ok(r)
    }
}

/// `masked.amax` (`max`) or `masked.amin`.
fn masked_extreme(
    input: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
    mask: Option<&Tensor>,
    max: bool,
) -> Result<Tensor> {
    let dtype = dtype.unwrap_or(input.dtype());
    let x = combine(input, mask, extreme(input.dtype(), !max))?;
    let dims = canonical_dims(dim, x.dim())?;
    let r = if max { ops::amax::call(&x, &dims, keepdim)? } else { ops::amin::call(&x, &dims, keepdim)? };
    ops::to_dtype::call(&r, dtype, false, false, None)
}

impl MaskedAmaxCompositeImplicit for Composite {
    fn masked_amax(
        input: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_extreme(input, dim, keepdim, dtype, mask, true)
    }
}

impl MaskedAminCompositeImplicit for Composite {
    fn masked_amin(
        input: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_extreme(input, dim, keepdim, dtype, mask, false)
    }
}

impl MaskedMeanCompositeImplicit for Composite {
    /// The masked sum divided by the number of elements kept (NaN where none is).
    fn masked_mean(
        input: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (dtype, source) = match dtype {
            Some(d) => (d, "Optional"),
            None => (input.dtype(), "Input"),
        };
        if !dtype.is_floating_point() {
            return Err(Error::value(format!(
                "mean(): Could not infer output dtype. {source} dtype must be either a floating point or complex dtype. \
                 Got: torch.{}",
                dtype.name()
            )));
        }
        let kept = match mask {
            Some(m) => input_mask(input, m)?,
            None => ops::ones::call(&input.sizes(), Some(DType::Bool), None, Some(input.device()), None)?,
        };
        let count = masked_sum_impl(&kept, dim, keepdim, Some(DType::I64), None)?;
        let total = masked_sum_impl(input, dim, keepdim, Some(dtype), Some(&kept))?;
        ops::div::call(&total, &count)
    }
}

/// The one dim a scan or normalization runs along (`_canonical_dim(dim)[0]`).
fn one_dim(dim: i64, ndim: usize) -> Result<i64> {
    Ok(canonical_dims(Some(&[dim]), ndim)?[0])
}

impl MaskedLogsumexpCompositeImplicit for Composite {
    fn masked_logsumexp(
        input: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let dims = canonical_dims(dim, input.dim())?;
        let x = combine(input, mask, extreme(input.dtype(), false))?;
        ops::to_dtype::call(&ops::logsumexp::call(&x, &dims, keepdim)?, dtype, false, false, None)
    }
}

/// `masked.argmax` (`max`) or `masked.argmin`: the index in the dtype asked for (the input's by
/// default, as PyTorch's).
fn masked_arg_extreme(
    input: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    dtype: Option<DType>,
    mask: Option<&Tensor>,
    max: bool,
) -> Result<Tensor> {
    let dtype = dtype.unwrap_or(input.dtype());
    let x = combine(input, mask, extreme(input.dtype(), !max))?;
    let r = if max { ops::argmax::call(&x, dim, keepdim)? } else { ops::argmin::call(&x, dim, keepdim)? };
    ops::to_dtype::call(&r, dtype, false, false, None)
}

impl MaskedArgmaxCompositeImplicit for Composite {
    fn masked_argmax(
        input: &Tensor,
        dim: Option<i64>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_arg_extreme(input, dim, keepdim, dtype, mask, true)
    }
}

impl MaskedArgminCompositeImplicit for Composite {
    fn masked_argmin(
        input: &Tensor,
        dim: Option<i64>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_arg_extreme(input, dim, keepdim, dtype, mask, false)
    }
}

impl MaskedCumsumCompositeImplicit for Composite {
    fn masked_cumsum(input: &Tensor, dim: i64, dtype: Option<DType>, mask: Option<&Tensor>) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let d = one_dim(dim, input.dim())?;
        ops::cumsum::call(&combine(input, mask, Scalar::Int(0))?, d, Some(dtype))
    }
}

impl MaskedCumprodCompositeImplicit for Composite {
    fn masked_cumprod(input: &Tensor, dim: i64, dtype: Option<DType>, mask: Option<&Tensor>) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let d = one_dim(dim, input.dim())?;
        ops::cumprod::call(&combine(input, mask, Scalar::Int(1))?, d, Some(dtype))
    }
}

impl MaskedSoftmaxCompositeImplicit for Composite {
    /// Masked-out elements count as -∞ (a fully masked slice is NaN, as PyTorch's).
    fn masked_softmax(input: &Tensor, dim: i64, dtype: Option<DType>, mask: Option<&Tensor>) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let d = one_dim(dim, input.dim())?;
        ops::softmax::call(&combine(input, mask, extreme(input.dtype(), false))?, d, Some(dtype))
    }
}

impl MaskedLogSoftmaxCompositeImplicit for Composite {
    fn masked_log_softmax(input: &Tensor, dim: i64, dtype: Option<DType>, mask: Option<&Tensor>) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let d = one_dim(dim, input.dim())?;
        ops::log_softmax::call(&combine(input, mask, extreme(input.dtype(), false))?, d, Some(dtype))
    }
}

impl MaskedSoftminCompositeImplicit for Composite {
    /// `softmax(-x)`, masked-out elements counting as +∞.
    fn masked_softmin(input: &Tensor, dim: i64, dtype: Option<DType>, mask: Option<&Tensor>) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let d = one_dim(dim, input.dim())?;
        let x = combine(input, mask, extreme(input.dtype(), true))?;
        ops::softmax::call(&ops::neg::call(&x)?, d, Some(dtype))
    }
}

/// `masked.norm`: the vector norm of the kept elements (masked-out ones count as 0, or as +∞
/// for `ord = -∞`).
fn masked_norm_impl(
    input: &Tensor,
    ord: f64,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
    mask: Option<&Tensor>,
) -> Result<Tensor> {
    let dtype = dtype.unwrap_or(input.dtype());
    let identity = if ord == f64::NEG_INFINITY { Scalar::Float(f64::INFINITY) } else { Scalar::Int(0) };
    let x = combine(input, mask, identity)?;
    let dims = canonical_dims(dim, input.dim())?;
    ops::linalg_vector_norm::call(&x, Scalar::Float(ord), Some(&dims), keepdim, Some(dtype))
}

impl MaskedNormCompositeImplicit for Composite {
    fn masked_norm(
        input: &Tensor,
        ord: Option<f64>,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_norm_impl(input, ord.unwrap_or(2.0), dim, keepdim, dtype, mask)
    }
}

impl MaskedNormalizeCompositeImplicit for Composite {
    /// The kept elements divided by their `ord`-norm along `dim` (at least `eps`); masked-out
    /// elements are 0.
    fn masked_normalize(
        input: &Tensor,
        ord: f64,
        dim: i64,
        eps: f64,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let kept = combine(input, mask, Scalar::Int(0))?;
        let norm = masked_norm_impl(input, ord, Some(&[dim]), true, dtype, mask)?;
        let floor = ops::full::call(&[], Scalar::Float(eps), Some(norm.dtype()), None, Some(norm.device()), None)?;
        ops::div::call(&kept, &ops::maximum::call(&norm, &floor)?)
    }
}

impl MaskedMedianCompositeImplicit for Composite {
    /// The median of the kept elements along `dim` (NaN for a fully masked row of a floating
    /// input; an error for an integer one, as PyTorch's).
    fn masked_median(
        input: &Tensor,
        dim: i64,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let d = one_dim(dim, input.dim())?;
        let is_float = input.dtype().is_floating_point();
        let x = if is_float { input.clone() } else { ops::to_dtype::call(input, DType::F32, false, false, None)? };
        let x = combine(&x, mask, Scalar::Float(f64::NAN))?;
        let (values, _) = ops::nanmedian_dim::call(&x, d, keepdim)?;
        if is_float {
            return Ok(values);
        }
        if values.to_f64_vec()?.iter().any(|v| v.is_nan()) {
            return Err(Error::value("masked median expects no fully masked out rows if dtype is not floating point"));
        }
        ops::to_dtype::call(&values, dtype, false, false, None)
    }
}

impl MaskedLogaddexpCompositeImplicit for Composite {
    fn masked_logaddexp(
        input: &Tensor,
        other: &Tensor,
        dtype: Option<DType>,
        input_mask: Option<&Tensor>,
        other_mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(input.dtype());
        let a = combine(input, input_mask, extreme(input.dtype(), false))?;
        let b = combine(other, other_mask, extreme(other.dtype(), false))?;
        ops::to_dtype::call(&ops::logaddexp::call(&a, &b)?, dtype, false, false, None)
    }
}

/// `masked.var` / `masked.std` (`sqrt`): the kept elements' squared deviations from their mean,
/// summed and divided by `count - correction` (at least 0).
#[allow(clippy::too_many_arguments)]
fn masked_var_impl(
    input: &Tensor,
    dim: Option<&[i64]>,
    unbiased: Option<bool>,
    correction: Option<f64>,
    keepdim: bool,
    dtype: Option<DType>,
    mask: Option<&Tensor>,
    sqrt: bool,
) -> Result<Tensor> {
    if unbiased.is_some() && correction.is_some() {
        return Err(Error::value("Only one of unbiased and correction may be given"));
    }
    let correction = correction.unwrap_or(if unbiased == Some(false) { 0.0 } else { 1.0 });
    let dtype = dtype.unwrap_or(input.dtype());
    let dtype = if dtype.is_floating_point() { dtype } else { DType::F32 };
    let kept = match mask {
        Some(m) => Some(input_mask(input, m)?),
        None => None,
    };
    let ones = ops::ones::call(&input.sizes(), Some(DType::Bool), None, Some(input.device()), None)?;
    let count = masked_sum_impl(kept.as_ref().unwrap_or(&ones), dim, true, Some(DType::I64), None)?;
    let sample_total = masked_sum_impl(input, dim, true, Some(dtype), kept.as_ref())?;
    let x = ops::sub::call(input, &ops::div::call(&sample_total, &count)?, Scalar::Int(1))?;
    let total = masked_sum_impl(&ops::mul::call(&x, &x)?, dim, keepdim, Some(dtype), kept.as_ref())?;
    let mut count = if keepdim { count } else { count.try_reshape(&total.sizes())? };
    if correction != 0.0 {
        count = ops::to_dtype::call(&count, dtype, false, false, None)?;
        count = ops::sub_scalar::call(&count, Scalar::Float(correction), Scalar::Int(1))?;
        count = ops::clamp_min::call(&count, Scalar::Int(0))?;
    }
    let out = ops::to_dtype::call(&ops::div::call(&total, &count)?, dtype, false, false, None)?;
    if sqrt {
        ops::sqrt::call(&out)
    } else {
        Ok(out)
    }
}

impl MaskedVarCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn masked_var(
        input: &Tensor,
        dim: Option<&[i64]>,
        unbiased: Option<bool>,
        correction: Option<f64>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_var_impl(input, dim, unbiased, correction, keepdim, dtype, mask, false)
    }
}

impl MaskedStdCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn masked_std(
        input: &Tensor,
        dim: Option<&[i64]>,
        unbiased: Option<bool>,
        correction: Option<f64>,
        keepdim: bool,
        dtype: Option<DType>,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        masked_var_impl(input, dim, unbiased, correction, keepdim, dtype, mask, true)
    }
}
