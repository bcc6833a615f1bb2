//! The CPU kernels of the dense factorizations and solves: `linalg_lu_factor_ex` (LU with
//! partial pivoting, [`lu`]), `linalg_cholesky_ex` ([`cholesky`]) and `linalg_solve_triangular`
//! ([`triangular`]). Every other solve, inverse and determinant is a composite over these three
//! (`linalg/lu_composites.rs`, `solve.rs`, `determinant.rs`, `cholesky_composites.rs`).
//!
//! The kernels copy each (broadcast) batch of matrices into a contiguous row-major buffer in its
//! own dtype (f32 or f64; PyTorch's CPU linear algebra takes no other), work matrix by matrix
//! with row-oriented loops (the inner loops run along contiguous rows and vectorize), and
//! return fresh contiguous tensors. The helpers here also give the composites PyTorch's input
//! checks and messages.

mod cholesky;
mod eigh;
mod ldl;
mod lu;
mod qr;
mod svd;
mod triangular;

use crate::iter::scalar_type_name;
use oxten_runtime::{DType, Element, Error, Result, Tensor};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// The element types of the factorizations: f32 and f64.
pub(crate) trait Field:
    Element
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    /// The machine epsilon.
    const EPSILON: Self;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    /// `sqrt(self² + other²)` without overflow.
    fn hypot(self, other: Self) -> Self;
    fn is_finite(self) -> bool;
    fn is_nan(self) -> bool;
}

macro_rules! field {
    ($t:ty) => {
        impl Field for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const EPSILON: $t = <$t>::EPSILON;
            #[inline]
            fn hypot(self, other: $t) -> $t {
                <$t>::hypot(self, other)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
            #[inline]
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
        }
    };
}
field!(f32);
field!(f64);

/// `Σ a[p] b[p]` in eight interleaved partial sums, which the compiler keeps in vector
/// registers (one running sum would be a chain of dependent adds).
pub(super) fn dot<T: Field>(a: &[T], b: &[T]) -> T {
    let mut acc = [T::ZERO; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] = acc[l] + x[l] * y[l];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (&x, &y) in ra.iter().zip(rb) {
        s = s + x * y;
    }
    s
}

/// The Householder reflector `H = I - τ v vᵀ` with `v[0] = 1` and `H x = β e₁` (LAPACK's
/// `dlarfg`): overwrites `x` with `v` and returns `(β, τ)`, `τ = 0` (no reflection) when `x[1..]`
/// is zero. Only a scaled norm and ratios are formed, so the tiny columns that a rank-deficient
/// matrix leaves neither underflow nor overflow (`1 / vᵀv` would).
pub(super) fn make_reflector<T: Field>(x: &mut [T]) -> (T, T) {
    let Some((&x0, rest)) = x.split_first() else { return (T::ZERO, T::ZERO) };
    let scale = x.iter().fold(T::ZERO, |m, v| if v.abs() > m { v.abs() } else { m });
    if scale == T::ZERO {
        return (x0, T::ZERO);
    }
    let tail = rest.iter().fold(T::ZERO, |s, &v| {
        let r = v / scale;
        s + r * r
    });
    if tail == T::ZERO {
        return (x0, T::ZERO);
    }
    let head = x0 / scale;
    let norm = scale * (head * head + tail).sqrt();
    let beta = if x0 >= T::ZERO { -norm } else { norm };
    let pivot = x0 - beta;
    x[0] = T::ONE;
    for v in &mut x[1..] {
        *v = *v / pivot;
    }
    (beta, (beta - x0) / beta)
}

/// Runs `$body` with `$T` bound to the element type of `$dtype` (f32 or f64); the caller has
/// checked the dtype with [`check_floating`].
macro_rules! with_field {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            oxten_runtime::DType::F32 => {
                type $T = f32;
                $body
            }
            _ => {
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_field;

/// PyTorch's `checkIsMatrix`: `arg` has at least two dimensions.
pub(crate) fn check_is_matrix(op: &str, arg: &str, t: &Tensor) -> Result<()> {
    if t.dim() < 2 {
        return Err(Error::runtime(format!("{op}: The input tensor {arg} must have at least 2 dimensions.")));
    }
    Ok(())
}

/// PyTorch's `squareCheckInputs`: `arg` is a (batch of) square matrices.
pub(crate) fn check_square(op: &str, arg: &str, t: &Tensor) -> Result<()> {
    check_is_matrix(op, arg, t)?;
    let s = t.sizes();
    let (m, n) = (s[s.len() - 2], s[s.len() - 1]);
    if m != n {
        return Err(Error::runtime(format!(
            "{op}: {arg} must be batches of square matrices, but they are {m} by {n} matrices"
        )));
    }
    Ok(())
}

/// PyTorch's `checkFloatingOrComplex`, for the dtypes oxten's linear algebra computes in.
pub(crate) fn check_floating(op: &str, t: &Tensor) -> Result<()> {
    match t.dtype() {
        DType::F32 | DType::F64 => Ok(()),
        d @ (DType::F16 | DType::BF16) => {
            Err(Error::runtime(format!("{op}: Low precision dtypes not supported. Got {}", scalar_type_name(d))))
        }
        d => Err(Error::runtime(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            scalar_type_name(d)
        ))),
    }
}

/// PyTorch's check that two operands of a solve share a dtype.
pub(crate) fn check_same_dtype(op: &str, (a_name, a): (&str, &Tensor), (b_name, b): (&str, &Tensor)) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "{op}: Expected {a_name} and {b_name} to have the same dtype, but found {a_name} of type {} and {b_name} of type {} instead.",
            scalar_type_name(a.dtype()),
            scalar_type_name(b.dtype())
        )));
    }
    Ok(())
}

/// The checks of a solve's two operands: `A` (named `a_name`) a (batch of) square matrices in
/// a floating dtype, `B` a (batch of) matrices of the same dtype.
pub(crate) fn check_solver_operands(op: &str, (a_name, a): (&str, &Tensor), b: &Tensor) -> Result<()> {
    check_is_matrix(op, a_name, a)?;
    check_is_matrix(op, "B", b)?;
    check_square(op, a_name, a)?;
    check_floating(op, a)?;
    check_same_dtype(op, (a_name, a), ("B", b))
}

/// PyTorch's `checkInputsSolver` shape check: `B`'s rows (`left`: `A X = B`) or columns
/// (`X A = B`) match the square `A`'s size.
pub(crate) fn check_equation_shapes(op: &str, a: &Tensor, b: &Tensor, left: bool) -> Result<()> {
    let (n, _) = matrix_dims(a);
    let (rows, cols) = matrix_dims(b);
    if (left && rows != n) || (!left && cols != n) {
        let eq = if left { "AX = B" } else { "XA = B" };
        return Err(Error::runtime(format!(
            "{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {rows}x{cols})"
        )));
    }
    Ok(())
}

/// The rows and columns of a batch of matrices.
pub(crate) fn matrix_dims(t: &Tensor) -> (i64, i64) {
    let s = t.sizes();
    (s[s.len() - 2], s[s.len() - 1])
}

/// The batch dimensions of a batch of matrices.
pub(crate) fn batch_dims(t: &Tensor) -> Vec<i64> {
    let s = t.sizes();
    s[..s.len() - 2].to_vec()
}

/// Raises PyTorch's `LinAlgError` (a `RuntimeError`) for the first nonzero entry of `info`, as
/// `torch._linalg_check_errors`: `message(info)` prefixed by the API's name and, for a batch,
/// the element's position.
pub(crate) fn check_info(info: &Tensor, api: &str, message: impl Fn(i32) -> String) -> Result<()> {
    let values = info.to_vec::<i32>()?;
    if let Some((b, &i)) = values.iter().enumerate().find(|(_, &i)| i != 0) {
        let batch = if info.dim() > 0 { format!("(Batch element {b}): ") } else { String::new() };
        return Err(Error::runtime(format!("{api}: {batch}{}", message(i))));
    }
    Ok(())
}

/// `len` zeros (`len = a * b`, checked), allocated fallibly: a batch too large for memory is an
/// error, not an abort.
pub(crate) fn zeros_vec<T: Clone + Default>(a: usize, b: usize) -> Result<Vec<T>> {
    let len = a.checked_mul(b).ok_or_else(|| Error::runtime("the result has more elements than fit in memory"))?;
    let mut v = oxten_runtime::error::try_vec_with_capacity(len)?;
    v.resize(len, T::default());
    Ok(v)
}

/// `a * b` (the elements of one matrix), checked: a matrix too large to address is an error.
pub(crate) fn elems(op: &str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b).ok_or_else(|| Error::runtime(format!("{op}: the matrices have more elements than fit in memory")))
}

/// The elements of `t` broadcast to the batch shape `batch` (its own matrix dimensions kept), in
/// row-major order, and the number of matrices.
fn broadcast_matrices<T: Element>(t: &Tensor, batch: &[i64]) -> Result<(Vec<T>, usize)> {
    let (m, n) = matrix_dims(t);
    let mut shape = batch.to_vec();
    shape.extend([m, n]);
    let expanded = t.try_expand(&shape)?;
    let count = batch.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d as usize));
    let count = count.ok_or_else(|| Error::runtime("the batch of matrices has more elements than fit in memory"))?;
    Ok((expanded.to_vec::<T>()?, count))
}
