//! `linalg_matrix_exp` (and `matrix_exp`): `exp(A) = Σ Aᵏ / k!` by scaling and squaring, as
//! PyTorch's: each matrix is scaled by `2⁻ˢ` to a 1-norm of at most one, its Taylor polynomial
//! (degree 18: the remainder `1/19!` is below double rounding) is evaluated with
//! Paterson–Stockmeyer's scheme (7 matrix products), and squared `s` times. Only products and
//! sums, so it is a composite over `matmul` that runs on any backend, in every floating dtype.
//! The narrower dtypes are computed in f64 and rounded once: the squarings multiply rounding
//! errors by up to `2ˢ`, which in f32 left results a few times less accurate than PyTorch's
//! (whose f16/bf16 CPU kernels overflow to ±inf or NaN on the OpInfo samples). Its derivative
//! is PyTorch's: the Fréchet derivative from the exponential of a 2n x 2n block matrix.

use super::factor::check_square;
use crate::generated::decls::{LinalgMatrixExpCompositeExplicit, MatrixExpCompositeImplicit};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

const OP: &str = "linalg.matrix_exp";

/// `Σ_{k≤m} Xᵏ / k!` for a (batch of) `n x n` matrices `x`, by Paterson–Stockmeyer with blocks of
/// four: `Σ_j B_j (X⁴)ʲ` with `B_j = Σ_{i<4} X^i / (4j+i)!`, the sum over `j` by Horner's rule.
fn taylor(x: &Tensor, degree: usize) -> Result<Tensor> {
    let n = x.size(-1)?;
    let eye = ops::eye::call(n, Some(x.dtype()), None, Some(x.device()), None)?;
    let x2 = ops::matmul::call(x, x)?;
    let x3 = ops::matmul::call(&x2, x)?;
    let x4 = ops::matmul::call(&x2, &x2)?;
    let powers = [&eye, x, &x2, &x3];
    let inverse_factorial = |k: usize| 1.0 / (1..=k).map(|i| i as f64).product::<f64>();
    let block = |j: usize| -> Result<Tensor> {
        // Every block has its `X⁰` term; the last holds the powers up to `degree` only.
        let mut sum = ops::mul_scalar::call(&eye, Scalar::Float(inverse_factorial(4 * j)))?;
        for (i, p) in powers.iter().enumerate().take((degree + 1 - 4 * j).min(4)).skip(1) {
            let term = ops::mul_scalar::call(p, Scalar::Float(inverse_factorial(4 * j + i)))?;
            sum = ops::add::call(&sum, &term, Scalar::Int(1))?;
        }
        Ok(sum)
    };
    let mut result = block(degree / 4)?;
    for j in (0..degree / 4).rev() {
        result = ops::add::call(&ops::matmul::call(&result, &x4)?, &block(j)?, Scalar::Int(1))?;
    }
    Ok(result)
}

/// The exponential of each matrix of `a` (f64, `n >= 2`).
fn scaled_and_squared(a: &Tensor) -> Result<Tensor> {
    // The squarings each matrix needs: s = ⌈log₂ ‖A‖₁⌉ when above one. A non-finite norm
    // gives non-finite results without scaling; a huge one is capped (the result overflows).
    let norms =
        ops::amax::call(&ops::sum_dim_intlist::call(&ops::abs::call(a)?, Some(&[-2]), false, None)?, &[-1], false)?;
    let norms =
        ops::to_dtype::call(&norms, DType::F64, false, false, None)?.try_to_device(oxten_runtime::Device::Cpu)?;
    let squarings: Vec<u32> = norms
        .to_vec::<f64>()?
        .iter()
        .map(|&x| if x > 1.0 && x.is_finite() { x.log2().ceil().min(1100.0) as u32 } else { 0 })
        .collect();
    let most = squarings.iter().copied().max().unwrap_or(0);
    let mut batch_shape = a.sizes()[..a.dim() - 2].to_vec();
    batch_shape.extend([1, 1]);
    let per_matrix = |values: Vec<f64>| -> Result<Tensor> {
        let t = Tensor::from_vec(values, &batch_shape)?;
        ops::to_dtype::call(&t.try_to_device(a.device())?, a.dtype(), false, false, None)
    };
    let scaled = if most == 0 {
        a.clone()
    } else {
        // 2⁻ˢ is a power of two (s ≤ 1100 stays above f64's smallest subnormal only to s = 1074;
        // past that the norm was already out of range and the result overflows regardless).
        let factors = per_matrix(squarings.iter().map(|&s| 2f64.powi(-(s as i32))).collect())?;
        ops::mul::call(a, &factors)?
    };
    let mut result = taylor(&scaled, 18)?;
    let uniform = squarings.iter().all(|&s| s == most);
    for step in 0..most {
        let squared = ops::matmul::call(&result, &result)?;
        result = if uniform {
            squared
        } else {
            // Only the matrices that need this squaring take it.
            let take = per_matrix(squarings.iter().map(|&s| if step < s { 1.0 } else { 0.0 }).collect())?;
            ops::where_self::call(&ops::ne_scalar::call(&take, Scalar::Int(0))?, &squared, &result)?
        };
    }
    Ok(result)
}

impl LinalgMatrixExpCompositeExplicit for Composite {
    fn linalg_matrix_exp(a: &Tensor) -> Result<Tensor> {
        check_square(OP, "A", a)?;
        let narrow = match a.dtype() {
            DType::F64 => false,
            DType::F32 | DType::F16 | DType::BF16 => true,
            d => {
                return Err(Error::runtime(format!(
                    "{OP}: Expected a floating point or complex tensor as input. Got {}",
                    scalar_type_name(d)
                )))
            }
        };
        let n = a.size(-1)?;
        if n <= 1 || a.numel() == 0 {
            // exp of 1 x 1 matrices is elementwise (and keeps an infinity, as PyTorch's).
            return ops::exp::call(a);
        }
        if narrow {
            let wide = ops::to_dtype::call(a, DType::F64, false, false, None)?;
            return ops::to_dtype::call(&scaled_and_squared(&wide)?, a.dtype(), false, false, None);
        }
        scaled_and_squared(a)
    }
}

impl MatrixExpCompositeImplicit for Composite {
    fn matrix_exp(self_: &Tensor) -> Result<Tensor> {
        ops::linalg_matrix_exp::call(self_)
    }
}
