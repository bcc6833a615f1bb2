//! The matrix norms and what is built on them, as PyTorch's `LinearAlgebra.cpp`:
//! `linalg_matrix_norm` (orders ±1, ±inf through `linalg_vector_norm`, ±2 and `'nuc'` through
//! the singular values, `'fro'`), `linalg_norm` (a vector or a matrix norm by the arguments),
//! `nuclear_norm` and `linalg_cond`. CompositeImplicitAutograd.

use super::factor::{check_is_matrix, check_square};
use crate::generated::decls::{
    LinalgCondCompositeImplicit, LinalgCondStrCompositeImplicit, LinalgMatrixNormCompositeImplicit,
    LinalgMatrixNormStrCompositeImplicit, LinalgNormCompositeImplicit, LinalgNormStrCompositeImplicit,
    NuclearNormCompositeImplicit, NuclearNormDimCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::reduce::check_norm_dtype;
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Scalar, Tensor};

/// PyTorch's `_linalg_matrix_norm_checks`: a (batch of) matrices in a floating dtype (half
/// precision only where `low_precision`), two different dimensions, a dtype not narrower than
/// the input's. Returns the wrapped dimensions.
fn matrix_norm_checks(a: &Tensor, dim: &[i64], dtype: Option<DType>, low_precision: bool) -> Result<[i64; 2]> {
    const OP: &str = "linalg.matrix_norm";
    check_is_matrix(OP, "A", a)?;
    match a.dtype() {
        DType::F32 | DType::F64 => {}
        DType::F16 | DType::BF16 if low_precision => {}
        d @ (DType::F16 | DType::BF16) => {
            return Err(Error::runtime(format!(
                "{OP}: Low precision dtypes not supported. Got {}",
                scalar_type_name(d)
            )))
        }
        d => {
            return Err(Error::runtime(format!(
                "{OP}: Expected a floating point or complex tensor as input. Got {}",
                scalar_type_name(d)
            )))
        }
    }
    if dim.len() != 2 {
        return Err(Error::runtime(format!("{OP}: dim must be a 2-tuple. Got {dim:?}")));
    }
    let d = [wrap_dim(dim[0], a.dim())? as i64, wrap_dim(dim[1], a.dim())? as i64];
    if d[0] == d[1] {
        return Err(Error::runtime(format!("{OP}: dims must be different. Got ({}, {})", d[0], d[1])));
    }
    check_norm_dtype(dtype, a.dtype(), OP)?;
    Ok(d)
}

/// `f` (a reduction over the last dimension) of `a` with the dimensions `dim` moved to the end,
/// the reduced dimensions put back as size 1 when `keepdim`.
fn over_moved_dims(a: &Tensor, dim: [i64; 2], keepdim: bool, f: impl Fn(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    let n = a.dim() as i64;
    let mut perm: Vec<i64> = (0..n).filter(|d| !dim.contains(d)).collect();
    perm.extend(dim);
    let result = f(&ops::permute::call(a, &perm)?)?;
    if !keepdim {
        return Ok(result);
    }
    // The reduced dimensions back as size 1, the lower first so that the higher lands in place.
    let (lo, hi) = (dim[0].min(dim[1]), dim[0].max(dim[1]));
    ops::unsqueeze::call(&ops::unsqueeze::call(&result, lo)?, hi)
}

/// `A` in `dtype` (when given).
fn cast_for_norm(a: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    match dtype {
        Some(d) => ops::to_dtype::call(a, d, false, false, None),
        None => Ok(a.clone()),
    }
}

impl LinalgMatrixNormCompositeImplicit for Composite {
    fn linalg_matrix_norm(
        self_: &Tensor,
        ord: Scalar,
        dim: &[i64],
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let o = ord.to_f64();
        let abs_ord = o.abs();
        if !(abs_ord == 2.0 || abs_ord == 1.0 || abs_ord == f64::INFINITY) {
            return Err(Error::runtime(format!("linalg.matrix_norm: Order {} not supported.", ord.to_f64())));
        }
        let [d0, d1] = matrix_norm_checks(self_, dim, dtype, abs_ord != 2.0)?;
        let extreme = |x: &Tensor, d: i64| {
            if o > 0.0 {
                ops::amax::call(x, &[d], keepdim)
            } else {
                ops::amin::call(x, &[d], keepdim)
            }
        };
        if abs_ord == 2.0 {
            let a = cast_for_norm(self_, dtype)?;
            return over_moved_dims(&a, [d0, d1], keepdim, |x| {
                let s = ops::linalg_svdvals::call(x, None)?;
                if o > 0.0 {
                    ops::amax::call(&s, &[-1], false)
                } else {
                    ops::amin::call(&s, &[-1], false)
                }
            });
        }
        // The inf-norm is the 1-norm of the transpose: sums over the columns, then the extreme
        // over the rows.
        let (sum_dim, mut max_dim) = if abs_ord == f64::INFINITY { (d1, d0) } else { (d0, d1) };
        if !keepdim && sum_dim < max_dim {
            max_dim -= 1;
        }
        let sums = ops::linalg_vector_norm::call(self_, Scalar::Float(1.0), Some(&[sum_dim]), keepdim, dtype)?;
        extreme(&sums, max_dim)
    }
}

impl LinalgMatrixNormStrCompositeImplicit for Composite {
    fn linalg_matrix_norm_str(
        self_: &Tensor,
        ord: &str,
        dim: &[i64],
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        if ord != "fro" && ord != "nuc" {
            return Err(Error::runtime(format!("linalg.matrix_norm: Order {ord} not supported.")));
        }
        let dims = matrix_norm_checks(self_, dim, dtype, ord != "nuc")?;
        if ord == "fro" {
            return ops::linalg_vector_norm::call(self_, Scalar::Float(2.0), Some(&dims), keepdim, dtype);
        }
        let a = cast_for_norm(self_, dtype)?;
        over_moved_dims(&a, dims, keepdim, |x| {
            ops::sum_dim_intlist::call(&ops::linalg_svdvals::call(x, None)?, Some(&[-1]), false, None)
        })
    }
}

/// `linalg.norm`'s check of `dim` (one or two dimensions) and, without it, of the input's rank.
fn norm_dim_checks(x: &Tensor, dim: Option<&[i64]>, ord_given: bool) -> Result<()> {
    match dim {
        Some(d) if d.len() != 1 && d.len() != 2 => {
            Err(Error::runtime(format!("linalg.norm: If dim is specified, it must be of length 1 or 2. Got {d:?}")))
        }
        None if ord_given && x.dim() != 1 && x.dim() != 2 => Err(Error::runtime(format!(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {}D.",
            x.dim()
        ))),
        _ => Ok(()),
    }
}

impl LinalgNormCompositeImplicit for Composite {
    fn linalg_norm(
        self_: &Tensor,
        ord: Option<Scalar>,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        norm_dim_checks(self_, dim, ord.is_some())?;
        let matrix = match dim {
            Some(d) => d.len() == 2,
            None => self_.dim() == 2,
        };
        match ord {
            Some(o) if matrix => ops::linalg_matrix_norm::call(self_, o, dim.unwrap_or(&[0, 1]), keepdim, dtype),
            // Without an order, the 2-norm of the elements (the Frobenius norm of a matrix).
            _ => ops::linalg_vector_norm::call(self_, ord.unwrap_or(Scalar::Float(2.0)), dim, keepdim, dtype),
        }
    }
}

impl LinalgNormStrCompositeImplicit for Composite {
    fn linalg_norm_str(
        self_: &Tensor,
        ord: &str,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        norm_dim_checks(self_, dim, true)?;
        ops::linalg_matrix_norm_str_ord::call(self_, ord, dim.unwrap_or(&[0, 1]), keepdim, dtype)
    }
}

impl NuclearNormCompositeImplicit for Composite {
    fn nuclear_norm(self_: &Tensor, keepdim: bool) -> Result<Tensor> {
        if self_.dim() != 2 {
            return Err(Error::runtime(format!("nuclear_norm(): expected a 2D tensor, but got {}D", self_.dim())));
        }
        ops::linalg_matrix_norm_str_ord::call(self_, "nuc", &[-2, -1], keepdim, None)
    }
}

impl NuclearNormDimCompositeImplicit for Composite {
    fn nuclear_norm_dim(self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
        ops::linalg_matrix_norm_str_ord::call(self_, "nuc", dim, keepdim, None)
    }
}

/// The condition number of an empty matrix: 0 (NumPy leaves it undefined), per matrix.
fn cond_of_empty(a: &Tensor) -> Result<Tensor> {
    let s = a.sizes();
    ops::full::call(&s[..s.len() - 2], Scalar::Int(0), Some(a.dtype()), None, Some(a.device()), None)
}

/// `norm(A) * norm(A⁻¹)` for a square `A`, the norm of the inverse infinite where `A` is
/// singular.
fn cond_by_inverse(a: &Tensor, norm: impl Fn(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    let (inverse, info) = ops::linalg_inv_ex::call(a, false)?;
    let singular = ops::unsqueeze::call(&ops::unsqueeze::call(&ops::gt_scalar::call(&info, Scalar::Int(0))?, -1)?, -1)?;
    let inverse = ops::masked_fill_scalar::call(&inverse, &singular, Scalar::Float(f64::INFINITY))?;
    ops::mul::call(&norm(a)?, &norm(&inverse)?)
}

impl LinalgCondCompositeImplicit for Composite {
    fn linalg_cond(self_: &Tensor, p: Option<Scalar>) -> Result<Tensor> {
        if self_.dim() < 2 {
            return Err(Error::runtime("linalg.cond: The input tensor must have at least 2 dimensions."));
        }
        let ord = p.unwrap_or(Scalar::Int(2));
        let o = ord.to_f64();
        if !(o.abs() == 2.0 || o.abs() == 1.0 || o.abs() == f64::INFINITY) {
            return Err(Error::runtime(format!("linalg.cond got an invalid norm type: {}", o)));
        }
        if self_.numel() == 0 {
            return cond_of_empty(self_);
        }
        if o.abs() == 2.0 {
            let s = ops::linalg_svdvals::call(self_, None)?;
            let k = *s.sizes().last().expect("singular values");
            let (largest, smallest) = (ops::select::call(&s, -1, 0)?, ops::select::call(&s, -1, k - 1)?);
            return if o < 0.0 { ops::div::call(&smallest, &largest) } else { ops::div::call(&largest, &smallest) };
        }
        check_square(&format!("linalg.cond(ord={o})"), "A", self_)?;
        cond_by_inverse(self_, |x| ops::linalg_matrix_norm::call(x, ord, &[-2, -1], false, None))
    }
}

impl LinalgCondStrCompositeImplicit for Composite {
    fn linalg_cond_str(self_: &Tensor, p: &str) -> Result<Tensor> {
        if self_.dim() < 2 {
            return Err(Error::runtime("linalg.cond: The input tensor must have at least 2 dimensions."));
        }
        if p != "fro" && p != "nuc" {
            return Err(Error::runtime(format!("linalg.cond got an invalid norm type: {p}")));
        }
        if self_.numel() == 0 {
            return cond_of_empty(self_);
        }
        check_square(&format!("linalg.cond(ord={p})"), "A", self_)?;
        cond_by_inverse(self_, |x| ops::linalg_matrix_norm_str_ord::call(x, p, &[-2, -1], false, None))
    }
}
