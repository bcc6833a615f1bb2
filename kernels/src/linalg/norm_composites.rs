//! `dist`, `renorm`, `cdist` and `pdist`: CompositeImplicitAutograd over `linalg_vector_norm`, so their
//! gradients are the norm's.

use crate::generated::decls::{
    CdistCompositeImplicit, DistCompositeImplicit, PdistCompositeImplicit, RenormCompositeImplicit,
};
use crate::support::type_meta_name;
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, Error, Result, Scalar, Tensor};

impl RenormCompositeImplicit for Composite {
    fn renorm(self_: &Tensor, p: Scalar, dim: i64, maxnorm: Scalar) -> Result<Tensor> {
        if p.to_f64() <= 0.0 {
            return Err(Error::runtime("renorm: non-positive-norm not supported"));
        }
        if maxnorm.to_f64() < 0.0 {
            return Err(Error::runtime(format!("renorm: expected maxnorm to be >= 0 but got {}", maxnorm.to_f64())));
        }
        if self_.dim() <= 1 {
            return Err(Error::runtime(format!(
                "renorm: input needs at least 2 dimensions, got {} dimensions",
                self_.dim()
            )));
        }
        if !self_.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "renorm: expected a floating point tensor, got {}",
                type_meta_name(self_.dtype())
            )));
        }
        let d = wrap_dim(dim, self_.dim())?;
        let others: Vec<i64> = (0..self_.dim() as i64).filter(|&i| i != d as i64).collect();
        let norm = ops::linalg_vector_norm::call(self_, p, Some(&others), true, None)?;
        let max = maxnorm.to_f64();
        // PyTorch's factor: maxnorm / (norm + 1e-7) where the norm exceeds maxnorm, else 1.
        let factor =
            ops::reciprocal::call(&norm.try_add_scalar(Scalar::Float(1e-7))?)?.try_mul_scalar(Scalar::Float(max))?;
        let over = ops::gt_scalar::call(&norm, Scalar::Float(max))?;
        let factor = ops::where_scalarother::call(&over, &factor, Scalar::Int(1))?;
        ops::mul::call(self_, &factor)
    }
}

fn distance_checks(op: &str, t: &Tensor, p: f64) -> Result<()> {
    if !t.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "{op} only supports floating-point dtypes, X1 got: {}",
            type_meta_name(t.dtype())
        )));
    }
    if p < 0.0 {
        return Err(Error::runtime(format!("{op} only supports non-negative p values")));
    }
    Ok(())
}

impl CdistCompositeImplicit for Composite {
    fn cdist(x1: &Tensor, x2: &Tensor, p: f64, _compute_mode: Option<i64>) -> Result<Tensor> {
        for (name, t) in [("X1", x1), ("X2", x2)] {
            if t.dim() < 2 {
                return Err(Error::runtime(format!(
                    "cdist only supports at least 2D tensors, {name} got: {}D",
                    t.dim()
                )));
            }
        }
        let (c1, c2) = (x1.sizes()[x1.dim() - 1], x2.sizes()[x2.dim() - 1]);
        if c1 != c2 {
            return Err(Error::runtime(format!("X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}")));
        }
        distance_checks("cdist", x1, p)?;
        let diff = ops::sub::call(&x1.try_unsqueeze(-2)?, &x2.try_unsqueeze(-3)?, Scalar::Int(1))?;
        ops::linalg_vector_norm::call(&diff, Scalar::Float(p), Some(&[-1]), false, None)
    }
}

impl PdistCompositeImplicit for Composite {
    fn pdist(self_: &Tensor, p: f64) -> Result<Tensor> {
        if self_.dim() != 2 {
            return Err(Error::runtime(format!("pdist only supports 2D tensors, got: {}D", self_.dim())));
        }
        distance_checks("pdist", self_, p)?;
        let n = self_.sizes()[0];
        let pairs =
            n.checked_mul((n - 1).max(0)).map(|p| p / 2).ok_or_else(|| Error::runtime("pdist: too many rows"))?;
        let mut rows = oxten_runtime::error::try_vec_with_capacity(pairs as usize)?;
        let mut cols = oxten_runtime::error::try_vec_with_capacity(pairs as usize)?;
        for i in 0..n {
            for j in i + 1..n {
                rows.push(i);
                cols.push(j);
            }
        }
        let len = rows.len() as i64;
        let rows = Tensor::from_vec(rows, &[len])?.try_to_device(self_.device())?;
        let cols = Tensor::from_vec(cols, &[len])?.try_to_device(self_.device())?;
        let diff = ops::sub::call(
            &ops::index_select::call(self_, 0, &rows)?,
            &ops::index_select::call(self_, 0, &cols)?,
            Scalar::Int(1),
        )?;
        ops::linalg_vector_norm::call(&diff, Scalar::Float(p), Some(&[-1]), false, None)
    }
}

impl DistCompositeImplicit for Composite {
    fn dist(self_: &Tensor, other: &Tensor, p: Scalar) -> Result<Tensor> {
        let diff = ops::sub::call(self_, other, Scalar::Int(1))?;
        ops::linalg_vector_norm::call(&diff, p, None, false, None)
    }
}
