//! `linalg.vecdot` and `linalg.diagonal`: the `torch.linalg` spellings of a product-sum along
//! one dimension and of `diagonal` with the matrix dimensions last. CompositeImplicitAutograd.

use crate::generated::decls::{LinalgDiagonalCompositeImplicit, LinalgVecdotCompositeImplicit};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

impl LinalgVecdotCompositeImplicit for Composite {
    /// `(x * y).sum(dim)` (the conjugate of `x` is `x` for oxten's real dtypes); integer
    /// operands sum to int64 as `sum` does.
    fn linalg_vecdot(x: &Tensor, y: &Tensor, dim: i64) -> Result<Tensor> {
        if x.dtype() != y.dtype() {
            return Err(Error::runtime(format!(
                "linalg.vecdot: Expected x and y to have the same dtype, but found x of type {} and y of type {} instead",
                scalar_type_name(x.dtype()),
                scalar_type_name(y.dtype())
            )));
        }
        ops::sum_dim_intlist::call(&ops::mul::call(x, y)?, Some(&[dim]), false, None)
    }
}

impl LinalgDiagonalCompositeImplicit for Composite {
    fn linalg_diagonal(a: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        ops::diagonal::call(a, offset, dim1, dim2)
    }
}
