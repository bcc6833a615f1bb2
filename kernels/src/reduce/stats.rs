//! `var`, `std`, `var_mean` and `std_mean` (the `.correction` overloads, and the `out=` forms of
//! `var` and `std`).
//!
//! As in PyTorch these are plain (not structured) kernels; one function serves the CPU and Meta
//! keys. The input is converted to the output dtype first (PyTorch's `make_reduction`), then
//! reduced with Welford's algorithm (over blocks of 64 values) in f64 accumulators — the accumulation PyTorch's CPU kernel
//! uses for every floating dtype — through the runtime's generic [`reduce_kernel`] (whose
//! partial accumulators of a split reduction are merged with Chan's formula). The result is
//! `m2 / max(n - correction, 0)`: a correction ≥ N gives inf (or NaN for a constant slice), as
//! in PyTorch (which also warns; oxten does not). An empty input gives NaN everywhere.

use crate::generated::decls::{
    StdCpu, StdMeanCpu, StdMeanMeta, StdMeta, StdOutCpu, StdOutMeta, VarCpu, VarMeanCpu, VarMeanMeta, VarMeta,
    VarOutCpu, VarOutMeta,
};
use crate::iter::{make_reduction, reduce_kernel, reduction_output_shape, scalar_type_name, to_dtype, OpMath};
use crate::support::resize_output;
use crate::{Cpu, Meta};
use oxten_runtime::{can_cast, DType, Element, Error, MemoryFormat, Result, Scalar, Tensor};

/// Count, mean and sum of squared deviations of a set of values.
#[derive(Clone, Copy)]
struct Welford {
    n: f64,
    mean: f64,
    m2: f64,
}

const EMPTY: Welford = Welford { n: 0.0, mean: 0.0, m2: 0.0 };

/// Chan et al.'s merge of two partial accumulators (left to right).
#[inline(always)]
fn welford_combine(a: Welford, b: Welford) -> Welford {
    if a.n == 0.0 {
        return b;
    }
    if b.n == 0.0 {
        return a;
    }
    let n = a.n + b.n;
    let delta = b.mean - a.mean;
    let nb_over_n = b.n / n;
    Welford { n, mean: a.mean + delta * nb_over_n, m2: a.m2 + b.m2 + delta * delta * a.n * nb_over_n }
}

/// Values folded per block before the block's moments are merged into the running total.
const BLOCK: u32 = 64;

/// The reduction's accumulator: Welford moments of the values seen so far, plus the current
/// block of up to [`BLOCK`] values summarised as sums of `x - shift` and `(x - shift)²` around
/// the block's first value. A block costs a subtraction and two additions per value (no
/// division, no long dependency chain) and is merged with Chan's formula; shifting by a value
/// of the block keeps the block's sums free of cancellation for any mean.
#[derive(Clone, Copy)]
struct Acc {
    total: Welford,
    shift: f64,
    sum: f64,
    sum_sq: f64,
    count: u32,
}

const ACC0: Acc = Acc { total: EMPTY, shift: 0.0, sum: 0.0, sum_sq: 0.0, count: 0 };

impl Acc {
    #[inline(always)]
    fn push(mut self, x: f64) -> Acc {
        if self.count == 0 {
            self.shift = x;
        }
        let d = x - self.shift;
        self.sum += d;
        self.sum_sq += d * d;
        self.count += 1;
        if self.count == BLOCK {
            self.flush()
        } else {
            self
        }
    }

    /// The moments of everything folded, with the current block merged in.
    #[inline]
    fn flush(self) -> Acc {
        if self.count == 0 {
            return self;
        }
        let n = self.count as f64;
        let mean_d = self.sum / n;
        let m2 = self.sum_sq - self.sum * mean_d;
        // Rounding may leave a tiny negative m2; NaN (from a NaN or inf value) must stay NaN.
        let block = Welford { n, mean: self.shift + mean_d, m2: if m2 < 0.0 { 0.0 } else { m2 } };
        Acc { total: welford_combine(self.total, block), ..ACC0 }
    }

    fn combine(a: Acc, b: Acc) -> Acc {
        Acc { total: welford_combine(a.flush().total, b.flush().total), ..ACC0 }
    }
}

/// An f64 result rounded to `T` the way PyTorch's kernel does (through f32 for f16/bf16).
#[inline(always)]
fn round_to<T: Element>(v: f64) -> T {
    if T::DTYPE.is_reduced_float() {
        T::from_f64(v as f32 as f64)
    } else {
        T::from_f64(v)
    }
}

/// What a reduction writes: the variance or standard deviation, or the mean.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stat {
    Var,
    Std,
    Mean,
}

/// Runs the reduction of `input` (already of `out`'s floating dtype) into `out`.
fn stat_into(
    input: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    out: &Tensor,
    stat: Stat,
    correction: f64,
) -> Result<()> {
    let iter = make_reduction(out, input, dim, keepdim)?;
    macro_rules! run {
        ($t:ty) => {{
            type T = $t;
            match stat {
                Stat::Mean => reduce_kernel::<T, (f64, f64), T>(
                    &iter,
                    (0.0, 0.0),
                    |a, x| (a.0 + <<T as OpMath>::Math as Element>::to_f64(x), a.1 + 1.0),
                    |a, b| (a.0 + b.0, a.1 + b.1),
                    |a| round_to::<T>(if a.1 == 0.0 { f64::NAN } else { a.0 / a.1 }),
                ),
                _ => {
                    let take_sqrt = stat == Stat::Std;
                    reduce_kernel::<T, Acc, T>(
                        &iter,
                        ACC0,
                        |a, x| a.push(<<T as OpMath>::Math as Element>::to_f64(x)),
                        Acc::combine,
                        move |a| {
                            let a = a.flush().total;
                            if a.n == 0.0 {
                                return round_to::<T>(f64::NAN);
                            }
                            let var = a.m2 / (a.n - correction).max(0.0);
                            round_to::<T>(if take_sqrt { var.sqrt() } else { var })
                        },
                    )
                }
            }
        }};
    }
    match out.dtype() {
        DType::F32 => run!(f32),
        DType::F64 => run!(f64),
        DType::F16 => run!(oxten_runtime::dtype::f16),
        DType::BF16 => run!(oxten_runtime::dtype::bf16),
        other => {
            return Err(Error::dtype(format!(
                "std and var only support floating point and complex dtypes, got an output of dtype {}",
                scalar_type_name(other)
            )))
        }
    }
    Ok(())
}

/// `std and var only support floating point and complex dtypes` (with the operator's name for
/// `var_mean` / `std_mean`).
pub(super) fn check_floating(what: &str, self_: &Tensor) -> Result<()> {
    if self_.dtype().is_floating_point() {
        return Ok(());
    }
    Err(Error::dtype(format!("{what} only support floating point and complex dtypes")))
}

pub(super) fn correction_value(correction: Option<Scalar>) -> f64 {
    correction.map_or(1.0, |c| c.to_f64())
}

/// A fresh output of the reduction shape (contiguous), on `self_`'s device.
pub(super) fn new_output(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let (shape, _) = reduction_output_shape(&self_.sizes(), dim, keepdim)?;
    Tensor::empty(&shape, self_.dtype(), self_.device(), MemoryFormat::Contiguous)
}

/// The checks and the output shape of `var` / `std` into `out`: all the Meta kernels do.
pub(super) fn std_var_out_meta(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, out: &Tensor) -> Result<()> {
    check_floating("std and var", self_)?;
    if !can_cast(self_.dtype(), out.dtype()) {
        return Err(Error::dtype(format!(
            "result type {} can't be cast to the desired output type {}",
            scalar_type_name(self_.dtype()),
            scalar_type_name(out.dtype())
        )));
    }
    let (shape, _) = reduction_output_shape(&self_.sizes(), dim, keepdim)?;
    resize_output(out, &shape)
}

/// `var` / `std` into `out` (the `out=` overloads, and the functional ones with a fresh `out`).
fn std_var_out(
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
    out: &Tensor,
    take_sqrt: bool,
) -> Result<Tensor> {
    std_var_out_meta(self_, dim, keepdim, out)?;
    let input = to_dtype(self_, out.dtype())?;
    let stat = if take_sqrt { Stat::Std } else { Stat::Var };
    stat_into(&input, dim, keepdim, out, stat, correction_value(correction))?;
    Ok(out.clone())
}

/// The functional `var` / `std`'s result, checked and shaped (the Meta kernels' whole work).
pub(super) fn std_var_meta(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    check_floating("std and var", self_)?;
    let out = new_output(self_, dim, keepdim)?;
    std_var_out_meta(self_, dim, keepdim, &out)?;
    Ok(out)
}

fn std_var(
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
    take_sqrt: bool,
) -> Result<Tensor> {
    let out = std_var_meta(self_, dim, keepdim)?;
    let input = to_dtype(self_, out.dtype())?;
    let stat = if take_sqrt { Stat::Std } else { Stat::Var };
    stat_into(&input, dim, keepdim, &out, stat, correction_value(correction))?;
    Ok(out)
}

/// `var_mean` / `std_mean`'s two results, checked and shaped: the variance (or standard
/// deviation) and the mean, both of the input's dtype.
fn std_var_mean_meta(what: &str, self_: &Tensor, dim: Option<&[i64]>, keepdim: bool) -> Result<(Tensor, Tensor)> {
    check_floating(what, self_)?;
    Ok((new_output(self_, dim, keepdim)?, new_output(self_, dim, keepdim)?))
}

/// `var_mean` / `std_mean`: the Welford pass gives the first result, a plain f64 sum the second.
fn std_var_mean(
    what: &str,
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
    take_sqrt: bool,
) -> Result<(Tensor, Tensor)> {
    let (first, mean) = std_var_mean_meta(what, self_, dim, keepdim)?;
    let stat = if take_sqrt { Stat::Std } else { Stat::Var };
    stat_into(self_, dim, keepdim, &first, stat, correction_value(correction))?;
    stat_into(self_, dim, keepdim, &mean, Stat::Mean, 0.0)?;
    Ok((first, mean))
}

impl VarCpu for Cpu {
    fn var(self_: &Tensor, dim: Option<&[i64]>, correction: Option<Scalar>, keepdim: bool) -> Result<Tensor> {
        std_var(self_, dim, correction, keepdim, false)
    }
}

impl VarMeta for Meta {
    fn var(self_: &Tensor, dim: Option<&[i64]>, _correction: Option<Scalar>, keepdim: bool) -> Result<Tensor> {
        std_var_meta(self_, dim, keepdim)
    }
}

impl VarOutCpu for Cpu {
    fn var_out(
        self_: &Tensor,
        dim: Option<&[i64]>,
        correction: Option<Scalar>,
        keepdim: bool,
        out: &Tensor,
    ) -> Result<Tensor> {
        std_var_out(self_, dim, correction, keepdim, out, false)
    }
}

impl VarOutMeta for Meta {
    fn var_out(
        self_: &Tensor,
        dim: Option<&[i64]>,
        _correction: Option<Scalar>,
        keepdim: bool,
        out: &Tensor,
    ) -> Result<Tensor> {
        std_var_out_meta(self_, dim, keepdim, out)?;
        Ok(out.clone())
    }
}

impl StdCpu for Cpu {
    fn std(self_: &Tensor, dim: Option<&[i64]>, correction: Option<Scalar>, keepdim: bool) -> Result<Tensor> {
        std_var(self_, dim, correction, keepdim, true)
    }
}

impl StdMeta for Meta {
    fn std(self_: &Tensor, dim: Option<&[i64]>, _correction: Option<Scalar>, keepdim: bool) -> Result<Tensor> {
        std_var_meta(self_, dim, keepdim)
    }
}

impl StdOutCpu for Cpu {
    fn std_out(
        self_: &Tensor,
        dim: Option<&[i64]>,
        correction: Option<Scalar>,
        keepdim: bool,
        out: &Tensor,
    ) -> Result<Tensor> {
        std_var_out(self_, dim, correction, keepdim, out, true)
    }
}

impl StdOutMeta for Meta {
    fn std_out(
        self_: &Tensor,
        dim: Option<&[i64]>,
        _correction: Option<Scalar>,
        keepdim: bool,
        out: &Tensor,
    ) -> Result<Tensor> {
        std_var_out_meta(self_, dim, keepdim, out)?;
        Ok(out.clone())
    }
}

impl VarMeanCpu for Cpu {
    fn var_mean(
        self_: &Tensor,
        dim: Option<&[i64]>,
        correction: Option<Scalar>,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        std_var_mean("var_mean", self_, dim, correction, keepdim, false)
    }
}

impl VarMeanMeta for Meta {
    fn var_mean(
        self_: &Tensor,
        dim: Option<&[i64]>,
        _correction: Option<Scalar>,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        std_var_mean_meta("var_mean", self_, dim, keepdim)
    }
}

impl StdMeanCpu for Cpu {
    fn std_mean(
        self_: &Tensor,
        dim: Option<&[i64]>,
        correction: Option<Scalar>,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        std_var_mean("std_mean", self_, dim, correction, keepdim, true)
    }
}

impl StdMeanMeta for Meta {
    fn std_mean(
        self_: &Tensor,
        dim: Option<&[i64]>,
        _correction: Option<Scalar>,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        std_var_mean_meta("std_mean", self_, dim, keepdim)
    }
}
