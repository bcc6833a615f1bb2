//! `linalg_vector_norm` (structured) and the `norm.Scalar` / `norm.ScalarOpt_dim` composites.
//!
//! `ord` selects the reduction: 0 counts the non-zero elements (NaN counts), 1 sums `|x|`, 2 is
//! the Euclidean norm, ±inf the largest/smallest `|x|` (NaN propagates), any other `p` is
//! `(Σ |x|^p)^(1/p)` (so a zero element makes a negative-`p` norm 0). The input is converted to
//! the result dtype (`dtype`, else the input's) and accumulated in f64. As in PyTorch an empty
//! input reduces to 0 (inf for a negative `ord`), and the norms without an identity (`ord < 0`
//! or `inf`) reject reducing an empty tensor or dim.

use super::set_reduction_output;
use crate::generated::decls::{
    LinalgVectorNormOutCpu, LinalgVectorNormOutMetaFn, NormScalarCompositeImplicit, NormScalaroptDimCompositeImplicit,
};
use crate::iter::{
    make_reduction, reduce_kernel, scalar_type_name, to_dtype, OpMath, StructuredOutputs, TensorIterator,
};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{ops, promote_types, DType, Element, Error, Result, Scalar, Tensor};

/// The reduction an `ord` selects.
#[derive(Clone, Copy)]
enum NormKind {
    Zero,
    One,
    Two,
    Inf,
    NegInf,
    P(f64),
}

impl NormKind {
    fn of(ord: f64) -> NormKind {
        if ord == 0.0 {
            NormKind::Zero
        } else if ord == 1.0 {
            NormKind::One
        } else if ord == 2.0 {
            NormKind::Two
        } else if ord == f64::INFINITY {
            NormKind::Inf
        } else if ord == f64::NEG_INFINITY {
            NormKind::NegInf
        } else {
            NormKind::P(ord)
        }
    }
}

/// The larger value, NaN if either is.
#[inline(always)]
fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The smaller value, NaN if either is.
#[inline(always)]
fn min_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// The typed norm loop: `fold` on f64 values, `project` the accumulator to the result.
fn norm_loop<T: OpMath>(iter: &TensorIterator, ord: NormKind)
where
    T::Math: Element,
{
    let x64 = |x: T::Math| x.to_f64();
    let add = |a: f64, b: f64| a + b;
    let round = |v: f64| T::from_f64(v);
    match ord {
        NormKind::Zero => reduce_kernel::<T, f64, T>(iter, 0.0, |a, x| a + (x64(x) != 0.0) as u8 as f64, add, round),
        NormKind::One => reduce_kernel::<T, f64, T>(iter, 0.0, |a, x| a + x64(x).abs(), add, round),
        NormKind::Two => reduce_kernel::<T, f64, T>(
            iter,
            0.0,
            |a, x| {
                let v = x64(x);
                a + v * v
            },
            add,
            |a| round(a.sqrt()),
        ),
        NormKind::Inf => reduce_kernel::<T, f64, T>(iter, 0.0, |a, x| max_nan(a, x64(x).abs()), max_nan, round),
        NormKind::NegInf => {
            reduce_kernel::<T, f64, T>(iter, f64::INFINITY, |a, x| min_nan(a, x64(x).abs()), min_nan, round)
        }
        // Small integer powers by multiplication (much cheaper than `powf`, and as exact).
        NormKind::P(p) if p == p.trunc() && p.abs() <= 64.0 => {
            let k = p as i32;
            reduce_kernel::<T, f64, T>(
                iter,
                0.0,
                move |a, x| a + x64(x).abs().powi(k),
                add,
                move |a| round(a.powf(1.0 / p)),
            )
        }
        NormKind::P(p) => reduce_kernel::<T, f64, T>(
            iter,
            0.0,
            move |a, x| a + x64(x).abs().powf(p),
            add,
            move |a| round(a.powf(1.0 / p)),
        ),
    }
}

/// `ord` as PyTorch prints a Scalar in messages (`2`, `-1.5`, `inf`).
fn ord_text(ord: Scalar) -> String {
    match ord {
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => (b as u8).to_string(),
        Scalar::Float(f) => format!("{f}"),
    }
}

/// `at::detail::check_linalg_norm_dtype`: a requested dtype must be floating and wide enough.
pub(crate) fn check_norm_dtype(dtype: Option<DType>, self_dtype: DType, name: &str) -> Result<()> {
    let Some(d) = dtype else { return Ok(()) };
    if !d.is_floating_point() {
        return Err(Error::dtype(format!(
            "{name}: dtype should be floating point or complex, but got {}",
            scalar_type_name(d)
        )));
    }
    if promote_types(self_dtype, d) != d {
        return Err(Error::dtype(format!(
            "{name}: the dtype of the input ({}) should be convertible without narrowing to the specified dtype ({})",
            scalar_type_name(self_dtype),
            scalar_type_name(d)
        )));
    }
    Ok(())
}

/// `linalg_vector_norm`'s meta function.
impl LinalgVectorNormOutMetaFn for Meta {
    fn linalg_vector_norm_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        ord: Scalar,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<()> {
        if !self_.dtype().is_floating_point() {
            return Err(Error::dtype(format!(
                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                scalar_type_name(self_.dtype())
            )));
        }
        let p = ord.to_f64();
        if self_.numel() == 0 && (p < 0.0 || p == f64::INFINITY) {
            let dims = dim.unwrap_or(&[]);
            if dims.is_empty() {
                return Err(Error::runtime(format!(
                    "linalg.vector_norm cannot compute the {} norm on an empty tensor because the operation does not \
                     have an identity",
                    ord_text(ord)
                )));
            }
            for &d in dims {
                if self_.size(d)? == 0 {
                    return Err(Error::runtime(format!(
                        "linalg.vector_norm cannot compute the {} norm on the dimension {d}because this dimension is \
                         empty and the operation does not have an identity",
                        ord_text(ord)
                    )));
                }
            }
        }
        check_norm_dtype(dtype, self_.dtype(), "linalg.vector_norm")?;
        set_reduction_output(outs, 0, self_, dim, keepdim, dtype.unwrap_or(self_.dtype()))
    }
}

impl LinalgVectorNormOutCpu for Cpu {
    fn linalg_vector_norm_out(
        self_: &Tensor,
        ord: Scalar,
        dim: Option<&[i64]>,
        keepdim: bool,
        _dtype: Option<DType>,
        out: &Tensor,
    ) -> Result<()> {
        let input = to_dtype(self_, out.dtype())?;
        let iter = make_reduction(out, &input, dim, keepdim)?;
        let ord = NormKind::of(ord.to_f64());
        match out.dtype() {
            DType::F32 => norm_loop::<f32>(&iter, ord),
            DType::F64 => norm_loop::<f64>(&iter, ord),
            DType::F16 => norm_loop::<f16>(&iter, ord),
            DType::BF16 => norm_loop::<bf16>(&iter, ord),
            other => {
                return Err(Error::dtype(format!(
                    "linalg.vector_norm: Expected a floating point result, got {}",
                    scalar_type_name(other)
                )))
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// norm
// ---------------------------------------------------------------------------------------------

fn check_norm_input(self_: &Tensor) -> Result<()> {
    if self_.dtype().is_floating_point() {
        return Ok(());
    }
    Err(Error::dtype(format!(
        "norm(): input dtype should be either floating point or complex. Got {} instead.",
        scalar_type_name(self_.dtype())
    )))
}

/// `norm(self, p)`: the `p`-norm of every element (`linalg_vector_norm`).
impl NormScalarCompositeImplicit for Composite {
    fn norm_scalar(self_: &Tensor, p: Scalar) -> Result<Tensor> {
        check_norm_input(self_)?;
        ops::linalg_vector_norm::call(self_, p, None, false, None)
    }
}

/// `norm(self, p, dim, keepdim)`: `p` defaults to 2; `dim=[]` reduces every dim.
impl NormScalaroptDimCompositeImplicit for Composite {
    fn norm_scalaropt_dim(self_: &Tensor, p: Option<Scalar>, dim: &[i64], keepdim: bool) -> Result<Tensor> {
        check_norm_input(self_)?;
        ops::linalg_vector_norm::call(self_, p.unwrap_or(Scalar::Float(2.0)), Some(dim), keepdim, None)
    }
}
