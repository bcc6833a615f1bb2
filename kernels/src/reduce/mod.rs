//! Reductions: `sum`, `mean`, `amax`/`amin`, `max.dim` and `argmax`.
//!
//! All but the plain `sum` are structured (non-TensorIterator) operators: the meta function
//! checks the arguments, computes the output shape with [`reduction_output_shape`] and the
//! output dtype with PyTorch's rules, and calls `set_output`; the CPU impl then builds a
//! reduction iterator over the output that `set_output` produced and runs one of the runtime's
//! reduction kernels. Because the meta function is shared, meta tensors get the right shapes
//! and dtypes (including `max.dim`'s pair of outputs) without any kernel running.

// The reductions beyond sum and mean, one file per operator group.
mod allany;
mod aminmax;
mod covariance;
#[cfg(feature = "cuda")]
mod cuda;
mod extrema;
mod histogram;
mod integrate;
mod masked;
mod nan_reductions;
mod norm;
pub(crate) use norm::check_norm_dtype;
mod overloads;
mod prod;
mod scan;
mod segment;
mod stats;

use crate::generated::decls::{
    AmaxOutCpu, AmaxOutMetaFn, AminOutCpu, AminOutMetaFn, ArgmaxOutCpu, ArgmaxOutMetaFn, MaxDimMaxMetaFn,
    MaxDimMaxPrecomputed, MaxOutCpu, MeanOutCpu, MeanOutMetaFn, SumCompositeExplicit, SumIntlistOutMetaFn, SumOutCpu,
};
use crate::iter::{
    copy_, cpu_kernel_unary, make_reduction, reduce_kernel, reduce_with_index_kernel, reduction_output_shape,
    scalar_type_name, sum_kernel, to_dtype, OpMath, StructuredOutputs, TensorIterator, TensorIteratorConfig,
};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{match_dtype, wrap_dim, DType, Device, Error, MemoryFormat, Result, Tensor};

// ---------------------------------------------------------------------------------------------
// dtype rules
// ---------------------------------------------------------------------------------------------

/// `get_dtype_from_self(self, dtype, promote_integers=true)`: the requested dtype, else i64 for
/// integral and bool inputs (so sums do not overflow small types), else the input's dtype.
fn dtype_from_self(self_: &Tensor, dtype: Option<DType>) -> DType {
    match dtype {
        Some(d) => d,
        None if self_.dtype().is_integral(true) => DType::I64,
        None => self_.dtype(),
    }
}

/// `infer_dtype_from_optional`: the requested dtype wins; an `out=` tensor's dtype comes next
/// (`sum(int_tensor, 0, out=float_tensor)` sums in float); otherwise [`dtype_from_self`].
fn infer_out_dtype(self_: &Tensor, dtype: Option<DType>, out: Option<&Tensor>) -> DType {
    match out {
        Some(o) => dtype.unwrap_or(o.dtype()),
        None => dtype_from_self(self_, dtype),
    }
}

/// `resize_reduction`: output 0 gets the reduction shape (contiguous) in `dtype`.
fn set_reduction_output(
    outs: &mut StructuredOutputs,
    idx: usize,
    self_: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: DType,
) -> Result<()> {
    let (shape, _) = reduction_output_shape(&self_.sizes(), dims, keepdim)?;
    outs.set_output(idx, &shape, None, dtype, self_.device())
}

/// `zero_numel_check_dims` as `amax`/`amin` call it: only an empty input is checked, and the
/// message names the dim as the caller wrote it.
fn check_nonempty_dims(op: &str, self_: &Tensor, dims: &[i64]) -> Result<()> {
    if self_.numel() != 0 {
        return Ok(());
    }
    if dims.is_empty() {
        return Err(Error::runtime(format!(
            "{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with \
             the 'dim' argument."
        )));
    }
    for &d in dims {
        check_nonempty_dim(op, self_, d)?;
    }
    Ok(())
}

/// One dim of `zero_numel_check_dims`: a 0-dim tensor accepts only 0 and -1; otherwise the dim
/// must not be empty.
fn check_nonempty_dim(op: &str, self_: &Tensor, d: i64) -> Result<()> {
    if self_.dim() == 0 {
        if d != 0 && d != -1 {
            return Err(Error::index(format!("{op}(): Expected reduction dim -1 or 0 for scalar but got {d}")));
        }
        return Ok(());
    }
    if self_.size(d)? == 0 {
        return Err(Error::index(format!("{op}(): Expected reduction dim {d} to have non-zero size.")));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// sum
// ---------------------------------------------------------------------------------------------

/// `sum(self, dtype)` is `sum(self, dim=[], keepdim=False, dtype)`: every dim reduced.
impl SumCompositeExplicit for Composite {
    fn sum(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
        oxten_runtime::ops::sum_dim_intlist::call(self_, None, false, dtype)
    }
}

/// `sum`'s meta function: shape from the dims (none or empty: all), dtype from the `dtype`
/// argument, the `out=` tensor, or the input (integral and bool inputs sum to i64).
impl SumIntlistOutMetaFn for Meta {
    fn sum_intlist_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<()> {
        let out_dtype = infer_out_dtype(self_, dtype, outs.maybe_get_output(0));
        set_reduction_output(outs, 0, self_, dim, keepdim, out_dtype)
    }
}

/// Sums `self_` into `out` (already shaped by the meta function) in `out`'s dtype: the input is
/// converted first when its dtype differs (as PyTorch's CPU sum does), and `sum_kernel`
/// accumulates in f32/f64/i64 with pairwise blocks. An empty reduction gives 0.
fn sum_into(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, out: &Tensor) -> Result<()> {
    let input = to_dtype(self_, out.dtype())?;
    let iter = make_reduction(out, &input, dim, keepdim)?;
    sum_kernel(&iter);
    Ok(())
}

impl SumOutCpu for Cpu {
    fn sum_out(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        sum_into(self_, dim, keepdim, out)
    }
}

// ---------------------------------------------------------------------------------------------
// mean
// ---------------------------------------------------------------------------------------------

/// `mean`'s meta function: like `sum`, but the dtype the mean is computed in must be floating
/// (an integral input needs an explicit floating `dtype`).
impl MeanOutMetaFn for Meta {
    fn mean_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<()> {
        let in_dtype = dtype_from_self(self_, dtype);
        if !in_dtype.is_floating_point() {
            let (what, shown) = match dtype {
                Some(d) => ("Optional", d),
                None => ("Input", self_.dtype()),
            };
            return Err(Error::dtype(format!(
                "mean(): could not infer output dtype. {what} dtype must be either a floating point or complex \
                 dtype. Got: {}",
                scalar_type_name(shown)
            )));
        }
        let out_dtype = infer_out_dtype(self_, dtype, outs.maybe_get_output(0));
        set_reduction_output(outs, 0, self_, dim, keepdim, out_dtype)
    }
}

/// Number of elements each output element of a reduction over `dims` folds.
fn reduced_count(sizes: &[i64], dims: Option<&[i64]>) -> Result<i64> {
    let (_, mask) = reduction_output_shape(sizes, dims, false)?;
    Ok(sizes.iter().zip(&mask).filter(|(_, &m)| m).map(|(&s, _)| s).product())
}

/// `out /= n` in place (f32 or f64 `out`).
fn divide_in_place(out: &Tensor, n: i64) -> Result<()> {
    let iter = TensorIteratorConfig::new().add_output(out).add_input(out).build()?;
    match out.dtype() {
        DType::F32 => {
            let n = n as f32;
            cpu_kernel_unary::<f32, f32>(&iter, move |x| x / n);
        }
        DType::F64 => {
            let n = n as f64;
            cpu_kernel_unary::<f64, f64>(&iter, move |x| x / n);
        }
        other => return Err(Error::dtype(format!("mean: cannot divide a {other} sum"))),
    }
    Ok(())
}

/// Mean as PyTorch's CPU computes it: the sum (accumulated in f32 for f16/bf16 and rounded only
/// at the end), divided by the number of reduced elements. An empty reduction is 0/0 = NaN.
impl MeanOutCpu for Cpu {
    fn mean_out(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        let out_dtype = out.dtype();
        if !out_dtype.is_floating_point() {
            // The division of the sum would have to produce a float in an integral tensor.
            return Err(Error::dtype(format!(
                "result type Float can't be cast to the desired output type {}",
                scalar_type_name(out_dtype)
            )));
        }
        let n = reduced_count(&self_.sizes(), dim)?;
        if out_dtype.is_reduced_float() {
            let acc = Tensor::empty(&out.sizes(), DType::F32, Device::Cpu, MemoryFormat::Contiguous)?;
            sum_into(self_, dim, keepdim, &acc)?;
            divide_in_place(&acc, n)?;
            copy_(out, &acc)
        } else {
            sum_into(self_, dim, keepdim, out)?;
            divide_in_place(out, n)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// amax / amin
// ---------------------------------------------------------------------------------------------

/// The extreme values of an element type in its math type: the identities of max and min.
trait Extremes: OpMath {
    const LOWEST: Self::Math;
    const HIGHEST: Self::Math;
}

macro_rules! extremes {
    ($($t:ty => $lo:expr, $hi:expr);* $(;)?) => {$(
        impl Extremes for $t {
            const LOWEST: Self::Math = $lo;
            const HIGHEST: Self::Math = $hi;
        }
    )*};
}
extremes!(
    bool => false, true;
    u8 => u8::MIN, u8::MAX;
    i8 => i8::MIN, i8::MAX;
    i16 => i16::MIN, i16::MAX;
    i32 => i32::MIN, i32::MAX;
    i64 => i64::MIN, i64::MAX;
    f16 => f32::NEG_INFINITY, f32::INFINITY;
    bf16 => f32::NEG_INFINITY, f32::INFINITY;
    f32 => f32::NEG_INFINITY, f32::INFINITY;
    f64 => f64::NEG_INFINITY, f64::INFINITY;
);

/// Whether a value is NaN, for any ordered element type (integers never are).
#[inline(always)]
#[allow(clippy::eq_op)]
fn is_nan<M: PartialOrd>(x: M) -> bool {
    x.partial_cmp(&x).is_none()
}

/// The strict order `max.dim` and `argmax` use for non-NaN values (generic, so that it also
/// serves bool, where `true > false`).
#[inline(always)]
fn greater<M: PartialOrd>(a: M, b: M) -> bool {
    a > b
}

/// The larger value, NaN if either is NaN (`torch.maximum`).
#[inline(always)]
pub(crate) fn max_nan<M: PartialOrd + Copy>(a: M, b: M) -> M {
    if is_nan(a) || a > b {
        a
    } else {
        b
    }
}

/// The smaller value, NaN if either is NaN (`torch.minimum`).
#[inline(always)]
pub(crate) fn min_nan<M: PartialOrd + Copy>(a: M, b: M) -> M {
    if is_nan(a) || a < b {
        a
    } else {
        b
    }
}

/// Meta function shared by `amax` and `amin`: an `out=` tensor must have the input's dtype, an
/// empty input may only be reduced over non-empty dims, and `dim=[]` reduces every dim.
fn amax_amin_meta(op: &str, outs: &mut StructuredOutputs, self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<()> {
    if let Some(out) = outs.maybe_get_output(0) {
        if out.dtype() != self_.dtype() {
            return Err(Error::dtype(format!(
                "Expected the dtype for input and out to match, but got {} for input's dtype and {} for out's dtype.",
                scalar_type_name(self_.dtype()),
                scalar_type_name(out.dtype())
            )));
        }
    }
    check_nonempty_dims(op, self_, dim)?;
    set_reduction_output(outs, 0, self_, Some(dim), keepdim, self_.dtype())
}

/// Runs `amax` (`is_max`) or `amin` of `self_` into `out` with NaN propagation.
fn amax_amin_into(self_: &Tensor, dim: &[i64], keepdim: bool, out: &Tensor, is_max: bool) -> Result<()> {
    let iter = make_reduction(out, self_, Some(dim), keepdim)?;
    if iter.numel() == 0 {
        return Ok(());
    }
    match_dtype!(self_.dtype(), T => amax_amin_loop::<T>(&iter, is_max));
    Ok(())
}

/// The typed loop of [`amax_amin_into`]: starts from the identity (lowest value for max,
/// highest for min) and folds with NaN propagation.
fn amax_amin_loop<T: Extremes>(iter: &TensorIterator, is_max: bool) {
    if is_max {
        reduce_kernel::<T, T::Math, T>(iter, T::LOWEST, max_nan, max_nan, T::from_math);
    } else {
        reduce_kernel::<T, T::Math, T>(iter, T::HIGHEST, min_nan, min_nan, T::from_math);
    }
}

impl AmaxOutMetaFn for Meta {
    fn amax_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<()> {
        amax_amin_meta("amax", outs, self_, dim, keepdim)
    }
}

impl AmaxOutCpu for Cpu {
    fn amax_out(self_: &Tensor, dim: &[i64], keepdim: bool, out: &Tensor) -> Result<()> {
        amax_amin_into(self_, dim, keepdim, out, true)
    }
}

impl AminOutMetaFn for Meta {
    fn amin_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<()> {
        amax_amin_meta("amin", outs, self_, dim, keepdim)
    }
}

impl AminOutCpu for Cpu {
    fn amin_out(self_: &Tensor, dim: &[i64], keepdim: bool, out: &Tensor) -> Result<()> {
        amax_amin_into(self_, dim, keepdim, out, false)
    }
}

// ---------------------------------------------------------------------------------------------
// max.dim
// ---------------------------------------------------------------------------------------------

/// `max.dim`'s meta function: wraps `dim` (handed to the impl as the precomputed value),
/// rejects reducing an empty dim, and sets the values output (input dtype) and the indices
/// output (i64), both of the reduction shape.
impl MaxDimMaxMetaFn for Meta {
    fn max_dim_max(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        keepdim: bool,
    ) -> Result<MaxDimMaxPrecomputed> {
        let wrapped = wrap_dim(dim, self_.dim())? as i64;
        check_nonempty_dim("max", self_, wrapped)?;
        set_reduction_output(outs, 0, self_, Some(&[wrapped]), keepdim, self_.dtype())?;
        set_reduction_output(outs, 1, self_, Some(&[wrapped]), keepdim, DType::I64)?;
        Ok(MaxDimMaxPrecomputed { dim: wrapped })
    }
}

/// Values and first indices of the maximum along `dim`; NaN counts as the maximum (the first
/// NaN wins).
impl MaxOutCpu for Cpu {
    fn max_out(self_: &Tensor, dim: i64, keepdim: bool, max: &Tensor, max_values: &Tensor) -> Result<()> {
        // In the schema `max` is the values output and `max_values` the indices output.
        match_dtype!(self_.dtype(), T => reduce_with_index_kernel::<T>(
            "max",
            Some(max),
            max_values,
            self_,
            Some(dim),
            keepdim,
            greater,
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// argmax
// ---------------------------------------------------------------------------------------------

/// `argmax`'s meta function: with a dim, that dim must not be empty; without one, the input must
/// not be empty and the result indexes the flattened input (shape `[]`, or all ones with
/// `keepdim`). Indices are i64.
impl ArgmaxOutMetaFn for Meta {
    fn argmax_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<()> {
        match dim {
            Some(d) => {
                let wrapped = wrap_dim(d, self_.dim())? as i64;
                check_nonempty_dim("argmax", self_, wrapped)?;
            }
            None if self_.numel() == 0 => {
                return Err(Error::index("argmax(): Expected reduction dim to be specified for input.numel() == 0."));
            }
            None => {}
        }
        let dims = dim.map(|d| [d]);
        set_reduction_output(outs, 0, self_, dims.as_ref().map(|d| &d[..]), keepdim, DType::I64)
    }
}

/// Index of the first maximum (NaN counts as the maximum), along `dim` or over the flattened
/// input.
impl ArgmaxOutCpu for Cpu {
    fn argmax_out(self_: &Tensor, dim: Option<i64>, keepdim: bool, out: &Tensor) -> Result<()> {
        let dtype = self_.dtype();
        if dtype == DType::Bool {
            return Err(Error::dtype("argmax(): does not support bool input"));
        }
        match_dtype!(dtype, T => reduce_with_index_kernel::<T>("argmax", None, out, self_, dim, keepdim, greater))
    }
}
