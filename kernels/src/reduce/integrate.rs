//! Finite differences and the trapezoidal rule: `diff`, `trapezoid`/`trapz` and
//! `cumulative_trapezoid`, as PyTorch composes them from `narrow`, `sum` and `cumsum`.

use crate::generated::decls::{
    CumulativeTrapezoidDxCompositeImplicit, CumulativeTrapezoidXCompositeImplicit, DiffCompositeImplicit,
    TrapezoidDxCompositeImplicit, TrapezoidXCompositeImplicit, TrapzDxCompositeImplicit, TrapzXCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Scalar, Tensor};

fn check_diff_operand(self_: &Tensor, other: &Tensor, dim: usize) -> Result<()> {
    if other.dim() != self_.dim() {
        return Err(Error::runtime("diff expects prepend or append to be the same dimension as input"));
    }
    for d in (0..self_.dim()).filter(|&d| d != dim) {
        if other.sizes()[d] != self_.sizes()[d] {
            return Err(Error::runtime(format!(
                "diff expects the shape of tensor to prepend or append to match that of input except along the differencing dimension; input.size({d}) = {}, but got tensor.size({d}) = {}",
                self_.sizes()[d],
                other.sizes()[d]
            )));
        }
    }
    Ok(())
}

impl DiffCompositeImplicit for Composite {
    fn diff(self_: &Tensor, n: i64, dim: i64, prepend: Option<&Tensor>, append: Option<&Tensor>) -> Result<Tensor> {
        if self_.dim() == 0 {
            return Err(Error::runtime("diff expects input to be at least one-dimensional"));
        }
        if n < 0 {
            return Err(Error::runtime(format!("order must be non-negative but got {n}")));
        }
        let d = wrap_dim(dim, self_.dim())?;
        let mut parts = vec![];
        for t in [prepend, Some(self_), append].into_iter().flatten() {
            check_diff_operand(self_, t, d)?;
            parts.push(t.clone());
        }
        let mut x = if parts.len() == 1 { self_.clone() } else { ops::cat::call(&parts, d as i64)? };
        let steps = n.min(x.sizes()[d]);
        if steps > 0 && x.numel() == 0 {
            // Nothing to subtract: the shape the loop would reach, without looping (an empty
            // tensor's dim can be 2^40 long).
            let mut sizes = x.sizes().to_vec();
            sizes[d] -= steps;
            return ops::new_empty::call(&x, &sizes, None, None, None, None);
        }
        for _ in 0..steps {
            let len = x.sizes()[d] - 1;
            let (hi, lo) = (ops::narrow::call(&x, d as i64, 1, len)?, ops::narrow::call(&x, d as i64, 0, len)?);
            x = if x.dtype() == DType::Bool {
                ops::logical_xor::call(&hi, &lo)?
            } else {
                ops::sub::call(&hi, &lo, Scalar::Int(1))?
            };
        }
        Ok(x)
    }
}

/// `dim` wrapped for `y`, which must have a dimension to integrate along.
fn dim_of(y: &Tensor, dim: i64) -> Result<usize> {
    if y.dim() == 0 {
        return Err(Error::index(format!("Dimension specified as {dim} but tensor has no dimensions")));
    }
    wrap_dim(dim, y.dim())
}

/// `y`'s shape without `dim`, zeros: the integral over an empty dim.
fn zeros_except(y: &Tensor, dim: usize) -> Result<Tensor> {
    let mut s = y.sizes().to_vec();
    s.remove(dim);
    ops::zeros::call(&s, Some(y.dtype()), None, Some(y.device()), None)
}

/// The spacing of the sample points `x` along `dim`, viewed to broadcast against `y`.
fn spacing(op: &str, y: &Tensor, x: &Tensor, dim: usize) -> Result<Tensor> {
    let viewed = if x.dim() == 1 {
        if x.sizes()[0] != y.sizes()[dim] {
            return Err(Error::runtime(format!("{op}: There must be one `x` value for each sample point")));
        }
        let mut s = vec![1; y.dim()];
        s[dim] = x.sizes()[0];
        ops::view::call(x, &s)?
    } else if x.dim() < y.dim() {
        let mut s = vec![1; y.dim() - x.dim()];
        s.extend_from_slice(&x.sizes());
        ops::view::call(x, &s)?
    } else {
        x.clone()
    };
    let len = viewed.sizes()[dim] - 1;
    ops::sub::call(
        &ops::narrow::call(&viewed, dim as i64, 1, len)?,
        &ops::narrow::call(&viewed, dim as i64, 0, len)?,
        Scalar::Int(1),
    )
}

/// `y`'s neighbouring pairs summed: `y[1:] + y[:-1]` along `dim`.
fn pair_sums(y: &Tensor, dim: usize) -> Result<Tensor> {
    let len = (y.sizes()[dim] - 1).max(0);
    ops::add::call(
        &ops::narrow::call(y, dim as i64, 1, len)?,
        &ops::narrow::call(y, dim as i64, 0, len)?,
        Scalar::Int(1),
    )
}

fn no_bool(op: &str, y: &Tensor, x: Option<&Tensor>) -> Result<()> {
    if y.dtype() == DType::Bool || x.is_some_and(|x| x.dtype() == DType::Bool) {
        let what = if x.is_some() { "`x` or `y`" } else { "`y`" };
        return Err(Error::runtime(format!("{op}: received a bool input for {what}, but bool is not supported")));
    }
    Ok(())
}

fn trapezoid_x(op: &str, y: &Tensor, x: &Tensor, dim: i64) -> Result<Tensor> {
    let d = dim_of(y, dim)?;
    if y.sizes()[d] == 0 {
        return zeros_except(y, d);
    }
    no_bool(op, y, Some(x))?;
    let dx = spacing(op, y, x, d)?;
    ops::sum_dim_intlist::call(&ops::mul::call(&pair_sums(y, d)?, &dx)?, Some(&[d as i64]), false, None)?
        .try_div_scalar(2.0)
}

fn trapezoid_dx(op: &str, y: &Tensor, dx: f64, dim: i64) -> Result<Tensor> {
    let d = dim_of(y, dim)?;
    if y.sizes()[d] == 0 {
        return zeros_except(y, d);
    }
    no_bool(op, y, None)?;
    let last = y.sizes()[d] - 1;
    let ends =
        ops::add::call(&ops::select::call(y, d as i64, 0)?, &ops::select::call(y, d as i64, last)?, Scalar::Int(1))?;
    let total = ops::sum_dim_intlist::call(y, Some(&[d as i64]), false, None)?;
    ops::sub::call(&total, &ops::mul_scalar::call(&ends, Scalar::Float(0.5))?, Scalar::Int(1))?
        .try_mul_scalar(Scalar::Float(dx))
}

impl TrapezoidXCompositeImplicit for Composite {
    fn trapezoid_x(y: &Tensor, x: &Tensor, dim: i64) -> Result<Tensor> {
        trapezoid_x("trapezoid", y, x, dim)
    }
}

impl TrapezoidDxCompositeImplicit for Composite {
    fn trapezoid_dx(y: &Tensor, dx: Scalar, dim: i64) -> Result<Tensor> {
        trapezoid_dx("trapezoid", y, dx.to_f64(), dim)
    }
}

impl TrapzXCompositeImplicit for Composite {
    fn trapz_x(y: &Tensor, x: &Tensor, dim: i64) -> Result<Tensor> {
        trapezoid_x("trapezoid", y, x, dim)
    }
}

impl TrapzDxCompositeImplicit for Composite {
    fn trapz_dx(y: &Tensor, dx: f64, dim: i64) -> Result<Tensor> {
        trapezoid_dx("trapezoid", y, dx, dim)
    }
}

impl CumulativeTrapezoidXCompositeImplicit for Composite {
    fn cumulative_trapezoid_x(y: &Tensor, x: &Tensor, dim: i64) -> Result<Tensor> {
        let d = dim_of(y, dim)?;
        no_bool("cumulative_trapezoid", y, Some(x))?;
        let dx = spacing("cumulative_trapezoid", y, x, d)?;
        ops::cumsum::call(&ops::mul::call(&pair_sums(y, d)?, &dx)?, d as i64, None)?.try_div_scalar(2.0)
    }
}

impl CumulativeTrapezoidDxCompositeImplicit for Composite {
    fn cumulative_trapezoid_dx(y: &Tensor, dx: Scalar, dim: i64) -> Result<Tensor> {
        let d = dim_of(y, dim)?;
        no_bool("cumulative_trapezoid", y, None)?;
        let half = ops::mul_scalar::call(&pair_sums(y, d)?, Scalar::Float(dx.to_f64() / 2.0))?;
        ops::cumsum::call(&half, d as i64, None)
    }
}
