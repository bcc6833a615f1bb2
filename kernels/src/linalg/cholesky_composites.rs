//! The composites over `linalg_cholesky_ex` and `linalg_solve_triangular`: `linalg_cholesky`
//! and the deprecated `cholesky` (raising where the matrix is not positive-definite),
//! `cholesky_solve` and `cholesky_inverse` (CompositeExplicitAutograd: PyTorch's own gradients,
//! over the whole factor), and the deprecated `triangular_solve`.

use super::factor::{check_floating, check_info, check_square, matrix_dims};
use crate::generated::decls::{
    CholeskyCompositeImplicit, CholeskyInverseCompositeExplicit, CholeskySolveCompositeExplicit,
    LinalgCholeskyCompositeImplicit, TriangularSolveCompositeImplicit,
};
use crate::iter::{infer_size, scalar_type_name};
use crate::Composite;
use oxten_runtime::{ops, Error, MemoryFormat, Result, Tensor};

fn not_positive_definite(i: i32) -> String {
    format!(
        "The factorization could not be completed because the input is not positive-definite (the leading minor of \
         order {i} is not positive-definite)."
    )
}

impl LinalgCholeskyCompositeImplicit for Composite {
    fn linalg_cholesky(a: &Tensor, upper: bool) -> Result<Tensor> {
        let (l, info) = ops::linalg_cholesky_ex::call(a, upper, false)?;
        check_info(&info, "linalg.cholesky", not_positive_definite)?;
        Ok(l)
    }
}

impl CholeskyCompositeImplicit for Composite {
    fn cholesky(a: &Tensor, upper: bool) -> Result<Tensor> {
        let (l, info) = ops::linalg_cholesky_ex::call(a, upper, false)?;
        check_info(&info, "cholesky", not_positive_definite)?;
        Ok(l)
    }
}

/// PyTorch's `linearSolveCheckInputs` for the deprecated solvers (`b`, then the matrix `A`).
fn check_solver_inputs(op: &str, b: &Tensor, a: &Tensor) -> Result<()> {
    if b.dtype() != a.dtype() {
        return Err(Error::runtime(format!(
            "Expected b and A to have the same dtype, but found b of type {} and A of type {} instead.",
            scalar_type_name(b.dtype()),
            scalar_type_name(a.dtype())
        )));
    }
    check_square(op, "A", a)?;
    check_floating(op, a)?;
    let (n, _) = matrix_dims(a);
    let (rows, cols) = matrix_dims(b);
    if rows != n {
        return Err(Error::runtime(format!(
            "Incompatible matrix sizes for {op}: each A matrix is {n} by {n} but each b matrix is {rows} by {cols}"
        )));
    }
    Ok(())
}

impl CholeskySolveCompositeExplicit for Composite {
    fn cholesky_solve(b: &Tensor, factor: &Tensor, upper: bool) -> Result<Tensor> {
        if b.dim() < 2 {
            return Err(Error::runtime(format!(
                "b should have at least 2 dimensions, but has {} dimensions instead",
                b.dim()
            )));
        }
        if factor.dim() < 2 {
            return Err(Error::runtime(format!(
                "u should have at least 2 dimensions, but has {} dimensions instead",
                factor.dim()
            )));
        }
        check_solver_inputs("cholesky_solve", b, factor)?;
        // A = L Lᵀ (or Uᵀ U): solve with the lower factor, then with its transpose.
        let t = ops::transpose::call(factor, -2, -1)?;
        let (first, second) = if upper { (&t, factor) } else { (factor, &t) };
        let y = ops::linalg_solve_triangular::call(first, b, false, true, false)?;
        ops::linalg_solve_triangular::call(second, &y, true, true, false)
    }
}

impl CholeskyInverseCompositeExplicit for Composite {
    fn cholesky_inverse(factor: &Tensor, upper: bool) -> Result<Tensor> {
        const OP: &str = "cholesky_inverse";
        check_square(OP, "input", factor)?;
        check_floating(OP, factor)?;
        let (n, _) = matrix_dims(factor);
        let eye = ops::eye::call(n, Some(factor.dtype()), None, Some(factor.device()), None)?;
        ops::cholesky_solve::call(&ops::expand::call(&eye, &factor.sizes(), false)?, factor, upper)
    }
}

impl TriangularSolveCompositeImplicit for Composite {
    fn triangular_solve(
        b: &Tensor,
        a: &Tensor,
        upper: bool,
        transpose: bool,
        unitriangular: bool,
    ) -> Result<(Tensor, Tensor)> {
        const OP: &str = "torch.triangular_solve";
        for (name, t) in [("b", b), ("A", a)] {
            if t.dim() < 2 {
                return Err(Error::runtime(format!(
                    "{OP}: Expected {name} to have at least 2 dimensions, but it has {} dimensions instead",
                    t.dim()
                )));
            }
        }
        check_solver_inputs("triangular_solve", b, a)?;
        let (sa, sb) = (a.sizes(), b.sizes());
        let batch = infer_size(&sa[..sa.len() - 2], &sb[..sb.len() - 2])?;
        let mut a_shape = batch;
        a_shape.extend_from_slice(&sa[sa.len() - 2..]);
        let coefficient = ops::expand::call(a, &a_shape, false)?;
        let system = if transpose { ops::transpose::call(a, -2, -1)? } else { a.clone() };
        let x = ops::linalg_solve_triangular::call(&system, b, upper != transpose, true, unitriangular)?;
        Ok((x, ops::deep_clone::call(&coefficient, Some(MemoryFormat::Contiguous))?))
    }
}
