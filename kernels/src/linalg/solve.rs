//! Square solves and inverses through the LU factorization: `linalg_solve_ex`, `linalg_solve`,
//! `linalg_inv_ex`, `linalg_inv`, `inverse`, `matrix_power` (`linalg_matrix_power`; negative
//! powers invert), `linalg_tensorinv` and `linalg_tensorsolve`.

use super::factor::{
    check_equation_shapes, check_floating, check_info, check_is_matrix, check_same_dtype, check_square, matrix_dims,
};
use crate::generated::decls::{
    InverseCompositeImplicit, LinalgInvCompositeImplicit, LinalgInvExCompositeImplicit,
    LinalgMatrixPowerCompositeImplicit, LinalgSolveCompositeImplicit, LinalgSolveExCompositeImplicit,
    LinalgTensorinvCompositeImplicit, LinalgTensorsolveCompositeImplicit, MatrixPowerCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, MemoryFormat, Result, Tensor};

const SINGULAR: &str = "The solver failed because the input matrix is singular.";

/// Whether `B` is a (batch of) vector(s) for `A`, as PyTorch decides: 1-D, or `A`'s shape without
/// its last dimension.
fn is_vector_rhs(a: &Tensor, b: &Tensor) -> bool {
    let sa = a.sizes();
    b.dim() == 1 || (a.dim() == b.dim() + 1 && b.sizes() == sa[..sa.len() - 1])
}

impl LinalgSolveExCompositeImplicit for Composite {
    fn linalg_solve_ex(a: &Tensor, b: &Tensor, left: bool, check_errors: bool) -> Result<(Tensor, Tensor)> {
        const OP: &str = "linalg.solve";
        check_square(OP, "A", a)?;
        check_floating(OP, a)?;
        check_same_dtype(OP, ("A", a), ("B", b))?;
        let vector = is_vector_rhs(a, b);
        if !left && vector {
            return Err(Error::runtime(format!(
                "{OP}: Vector broadcasting of the left hand side is not supported for left=False. In this case \
                 linalg.solve is equivalent to B / A.squeeze(-1)"
            )));
        }
        let b2 = if vector { ops::unsqueeze::call(b, -1)? } else { b.clone() };
        check_is_matrix(OP, "B", &b2)?;
        check_equation_shapes(OP, a, &b2, left)?;
        let (lu, pivots, info) = ops::linalg_lu_factor_ex::call(a, true, false)?;
        if check_errors {
            check_info(&info, "torch.linalg.solve_ex", |_| SINGULAR.to_string())?;
        }
        let x = ops::linalg_lu_solve::call(&lu, &pivots, &b2, left, false)?;
        let x = if vector { ops::squeeze_dim::call(&x, -1)? } else { x };
        Ok((x, info))
    }
}

impl LinalgSolveCompositeImplicit for Composite {
    fn linalg_solve(a: &Tensor, b: &Tensor, left: bool) -> Result<Tensor> {
        let (x, info) = ops::linalg_solve_ex::call(a, b, left, false)?;
        check_info(&info, "torch.linalg.solve", |_| SINGULAR.to_string())?;
        Ok(x)
    }
}

/// PyTorch's message for a singular matrix given to an inverse (`info` is the 1-based position
/// of the zero on `U`'s diagonal).
fn singular_inverse(i: i32) -> String {
    format!(
        "The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular."
    )
}

impl LinalgInvExCompositeImplicit for Composite {
    fn linalg_inv_ex(a: &Tensor, check_errors: bool) -> Result<(Tensor, Tensor)> {
        const OP: &str = "linalg.inv";
        check_square(OP, "A", a)?;
        check_floating(OP, a)?;
        let (n, _) = matrix_dims(a);
        let eye = ops::eye::call(n, Some(a.dtype()), None, Some(a.device()), None)?;
        let eye = ops::expand::call(&eye, &a.sizes(), false)?;
        let (lu, pivots, info) = ops::linalg_lu_factor_ex::call(a, true, false)?;
        if check_errors {
            check_info(&info, "linalg.inv_ex", singular_inverse)?;
        }
        Ok((ops::linalg_lu_solve::call(&lu, &pivots, &eye, true, false)?, info))
    }
}

impl LinalgInvCompositeImplicit for Composite {
    fn linalg_inv(a: &Tensor) -> Result<Tensor> {
        let (x, info) = ops::linalg_inv_ex::call(a, false)?;
        check_info(&info, "linalg.inv", singular_inverse)?;
        Ok(x)
    }
}

impl InverseCompositeImplicit for Composite {
    fn inverse(a: &Tensor) -> Result<Tensor> {
        ops::linalg_inv::call(a)
    }
}

impl LinalgMatrixPowerCompositeImplicit for Composite {
    fn linalg_matrix_power(a: &Tensor, n: i64) -> Result<Tensor> {
        const OP: &str = "linalg.matrix_power";
        check_square(OP, "A", a)?;
        if n == 0 {
            let (rows, _) = matrix_dims(a);
            let eye = ops::eye::call(rows, Some(a.dtype()), None, Some(a.device()), None)?;
            // The identity written over a copy of `A`, so that the result is part of the graph
            // (with a zero gradient) as PyTorch's is.
            let out = ops::deep_clone::call(a, Some(MemoryFormat::Contiguous))?;
            return ops::copy_::call(&out, &ops::expand::call(&eye, &a.sizes(), false)?, false);
        }
        let base = if n < 0 {
            check_floating(OP, a)?;
            ops::linalg_inv::call(a)?
        } else {
            a.clone()
        };
        let mut n = n.unsigned_abs();
        match n {
            1 => return ops::deep_clone::call(&base, Some(MemoryFormat::Contiguous)),
            2 => return ops::matmul::call(&base, &base),
            3 => return ops::matmul::call(&ops::matmul::call(&base, &base)?, &base),
            _ => {}
        }
        // Repeated squaring from the lowest bit, as PyTorch orders the products.
        let (mut z, mut result): (Option<Tensor>, Option<Tensor>) = (None, None);
        while n > 0 {
            let bit = n % 2;
            n /= 2;
            let square = match &z {
                Some(z) => ops::matmul::call(z, z)?,
                None => base.clone(),
            };
            if bit == 1 {
                result = Some(match &result {
                    Some(r) => ops::matmul::call(r, &square)?,
                    None => square.clone(),
                });
            }
            z = Some(square);
        }
        Ok(result.expect("n > 3 has a set bit"))
    }
}

impl MatrixPowerCompositeImplicit for Composite {
    fn matrix_power(a: &Tensor, n: i64) -> Result<Tensor> {
        ops::linalg_matrix_power::call(a, n)
    }
}

/// The product of `sizes`, or an error naming `op` when it overflows.
fn product(op: &str, sizes: &[i64]) -> Result<i64> {
    sizes
        .iter()
        .try_fold(1i64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::runtime(format!("{op}: the product of the sizes {sizes:?} overflows")))
}

impl LinalgTensorinvCompositeImplicit for Composite {
    fn linalg_tensorinv(a: &Tensor, ind: i64) -> Result<Tensor> {
        const OP: &str = "linalg.tensorinv";
        if ind <= 0 {
            return Err(Error::runtime(format!("Expected a strictly positive integer for 'ind', but got {ind}")));
        }
        let sizes = a.sizes();
        if ind as usize > sizes.len() {
            return Err(Error::index(format!(
                "{OP}: 'ind' ({ind}) is larger than the number of dimensions of the input ({})",
                sizes.len()
            )));
        }
        let (front, back) = sizes.split_at(ind as usize);
        let (p_front, p_back) = (product(OP, front)?, product(OP, back)?);
        if p_front != p_back {
            return Err(Error::runtime(format!(
                "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got \
                 {p_back} != {p_front}"
            )));
        }
        let (x, info) = ops::linalg_inv_ex::call(&ops::reshape::call(a, &[p_back, p_back])?, false)?;
        check_info(&info, "inv", singular_inverse)?;
        let shape: Vec<i64> = back.iter().chain(front).copied().collect();
        ops::reshape::call(&x, &shape)
    }
}

impl LinalgTensorsolveCompositeImplicit for Composite {
    fn linalg_tensorsolve(a: &Tensor, b: &Tensor, dims: Option<&[i64]>) -> Result<Tensor> {
        const OP: &str = "linalg.tensorsolve";
        let a = match dims {
            Some(dims) => {
                let end = a.dim() as i64;
                let dest: Vec<i64> = (end - dims.len() as i64..end).collect();
                ops::movedim_intlist::call(a, dims, &dest)?
            }
            None => a.clone(),
        };
        if b.dim() > a.dim() {
            return Err(Error::runtime(format!(
                "{OP}: other has more dimensions ({}) than self ({})",
                b.dim(),
                a.dim()
            )));
        }
        let result_shape = a.sizes()[b.dim()..].to_vec();
        let (p_result, p_other) = (product(OP, &result_shape)?, product(OP, &b.sizes())?);
        if p_result != p_other {
            return Err(Error::runtime(format!(
                "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == \
                 prod(self.shape[:other.ndim]), but got {p_result} != {p_other}"
            )));
        }
        let a = ops::reshape::call(&a, &[p_result, p_result])?;
        let x = ops::linalg_solve::call(&a, &ops::reshape::call(b, &[-1])?, true)?;
        ops::reshape::call(&x, &result_shape)
    }
}
