//! `torch.gradient`: the derivative of sampled values along each asked dimension by finite
//! differences — central differences inside, one-sided ones (first or second order, by
//! `edge_order`) at both ends — with uniform spacings (a scalar per dimension) or sample
//! coordinates (a 1-D tensor per dimension, unevenly spaced). PyTorch's formulas and order of
//! operations; composites of slices, arithmetic and `cat`, so they are differentiable and run on
//! every backend. Integer inputs give floats (the spacings divide).

use crate::generated::decls::{
    GradientArrayCompositeImplicit, GradientScalararrayCompositeImplicit, GradientScalarintCompositeImplicit,
    GradientScalarrayarrayCompositeImplicit, GradientScalarrayintCompositeImplicit,
    GradientTensorarrayCompositeImplicit, GradientTensorarrayintCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::tensor::wrap_dim;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// The dims a call differentiates along: the one given, or all of them.
fn dims_of(self_: &Tensor, dim: Option<i64>) -> Vec<i64> {
    match dim {
        Some(d) => vec![d],
        None => (0..self_.dim() as i64).collect(),
    }
}

/// PyTorch's `pre_check_gradient`: spacing and dims agree in number, `edge_order` is 1 or 2,
/// dims are valid and distinct, and every differentiated dim has at least `edge_order + 1`
/// samples.
fn check(self_: &Tensor, spacings: Option<usize>, dim: Option<&[i64]>, edge_order: i64) -> Result<()> {
    if self_.dtype() == DType::U8 {
        return Err(Error::runtime("torch.gradient does not support uint8 input."));
    }
    match (spacings, dim) {
        (Some(n), None) if n != self_.dim() => {
            return Err(Error::runtime(format!(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to 'self.dim() = {}', since dim argument was not given, but got a list of length {n}",
                self_.dim()
            )))
        }
        (Some(n), Some(d)) if n != d.len() => {
            return Err(Error::runtime(format!(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length {n} and a dim argument of length {}.",
                d.len()
            )))
        }
        _ => {}
    }
    if edge_order != 1 && edge_order != 2 {
        return Err(Error::runtime("torch.gradient only supports edge_order=1 and edge_order=2."));
    }
    let all: Vec<i64> = (0..self_.dim() as i64).collect();
    let dims = dim.unwrap_or(&all);
    let mut seen = vec![false; self_.dim()];
    for &d in dims {
        if self_.dim() == 0 {
            return Err(Error::index(format!("Dimension specified as {d} but tensor has no dimensions")));
        }
        let w = wrap_dim(d, self_.dim())?;
        if std::mem::replace(&mut seen[w], true) {
            return Err(Error::runtime(format!("dim {w} appears multiple times in the list of dims")));
        }
        if self_.sizes()[w] < edge_order + 1 {
            return Err(Error::runtime("torch.gradient expected each dimension size to be at least edge_order+1"));
        }
    }
    Ok(())
}

fn slice(t: &Tensor, dim: i64, start: i64, end: Option<i64>) -> Result<Tensor> {
    ops::slice::call(t, dim, Some(start), end, 1)
}

fn float(v: f64) -> Scalar {
    Scalar::Float(v)
}

/// `[prepend, center, append]` along `dim`.
fn assemble(prepend: Tensor, center: Tensor, append: Tensor, dim: i64) -> Result<Tensor> {
    ops::cat::call(&[prepend, center, append], dim)
}

/// Uniform spacing `h` along `dim`: `(x[i+1] − x[i−1]) / h / 2` inside.
fn uniform(self_: &Tensor, h: &Scalar, dim: i64, edge_order: i64) -> Result<Tensor> {
    let dim = wrap_dim(dim, self_.dim())? as i64;
    let s = |a: i64, b: Option<i64>| slice(self_, dim, a, b);
    let center = ops::div_scalar::call(&ops::sub::call(&s(2, None)?, &s(0, Some(-2))?, Scalar::Int(1))?, *h)?;
    let (prepend, append) = if edge_order == 1 {
        (
            ops::div_scalar::call(&ops::sub::call(&s(1, Some(2))?, &s(0, Some(1))?, Scalar::Int(1))?, *h)?,
            ops::div_scalar::call(&ops::sub::call(&s(-1, None)?, &s(-2, Some(-1))?, Scalar::Int(1))?, *h)?,
        )
    } else {
        // (−3/2 x₀ + 2 x₁ − 1/2 x₂) / h, and its mirror image at the end.
        let weighted = |a: i64, b: Option<i64>, w: f64| ops::mul_scalar::call(&s(a, b)?, float(w));
        let first = ops::add::call(&weighted(0, Some(1), -1.5)?, &weighted(1, Some(2), 2.0)?, Scalar::Int(1))?;
        let first = ops::sub::call(&first, &weighted(2, Some(3), 0.5)?, Scalar::Int(1))?;
        let last = ops::add::call(&weighted(-3, Some(-2), 0.5)?, &weighted(-2, Some(-1), -2.0)?, Scalar::Int(1))?;
        let last = ops::add::call(&last, &weighted(-1, None, 1.5)?, Scalar::Int(1))?;
        (ops::div_scalar::call(&first, *h)?, ops::div_scalar::call(&last, *h)?)
    };
    assemble(prepend, ops::div_scalar::call(&center, Scalar::Int(2))?, append, dim)
}

/// Sample coordinates `x` along `dim`: the second-order formula for uneven steps `d₁ = x[i] −
/// x[i−1]`, `d₂ = x[i+1] − x[i]`: `−d₂/(d₁(d₁+d₂)) f[i−1] + (d₂−d₁)/(d₁d₂) f[i] + d₁/(d₂(d₁+d₂)) f[i+1]`.
fn coordinates(self_: &Tensor, x: &Tensor, dim: i64, edge_order: i64) -> Result<Tensor> {
    if x.dim() != 1 {
        return Err(Error::runtime(format!(
            "torch.gradient expected each element of spacing to have one dimension, but got an element with {} dimensions!",
            x.dim()
        )));
    }
    let dim = wrap_dim(dim, self_.dim())? as i64;
    let mut shape = vec![1i64; self_.dim()];
    shape[dim as usize] = -1;
    let s = |a: i64, b: Option<i64>| slice(self_, dim, a, b);
    let (mul, add, sub, div) = (ops::mul::call, ops::add::call, ops::sub::call, ops::div::call);
    let one = || Scalar::Int(1);
    let dx = ops::diff::call(x, 1, 0, None, None)?;
    let d1 = slice(&dx, 0, 0, Some(-1))?;
    let d2 = slice(&dx, 0, 1, None)?;
    let d12 = add(&d1, &d2, one())?;
    let a = div(&ops::neg::call(&d2)?, &mul(&d1, &d12)?)?;
    let b = div(&sub(&d2, &d1, one())?, &mul(&d1, &d2)?)?;
    let c = div(&d1, &mul(&d2, &d12)?)?;
    let (a, b, c) = (ops::reshape::call(&a, &shape)?, ops::reshape::call(&b, &shape)?, ops::reshape::call(&c, &shape)?);
    let center =
        add(&add(&mul(&a, &s(0, Some(-2))?)?, &mul(&b, &s(1, Some(-1))?)?, one())?, &mul(&c, &s(2, None)?)?, one())?;
    let step = |i: i64| ops::select::call(&dx, 0, i);
    let (prepend, append) = if edge_order == 1 {
        (
            div(&sub(&s(1, Some(2))?, &s(0, Some(1))?, one())?, &step(0)?)?,
            div(&sub(&s(-1, None)?, &s(-2, Some(-1))?, one())?, &step(-1)?)?,
        )
    } else {
        let (h0, h1) = (step(0)?, step(1)?);
        let h01 = add(&h0, &h1, one())?;
        let a = div(&ops::neg::call(&add(&ops::mul_scalar::call(&h0, float(2.0))?, &h1, one())?)?, &mul(&h0, &h01)?)?;
        let b = div(&h01, &mul(&h0, &h1)?)?;
        let c = div(&ops::neg::call(&h0)?, &mul(&h1, &h01)?)?;
        let first = add(
            &add(&mul(&a, &s(0, Some(1))?)?, &mul(&b, &s(1, Some(2))?)?, one())?,
            &mul(&c, &s(2, Some(3))?)?,
            one(),
        )?;
        let (hl, hm) = (step(-1)?, step(-2)?);
        let hlm = add(&hl, &hm, one())?;
        let a = div(&hl, &mul(&hm, &hlm)?)?;
        let b = div(&ops::neg::call(&hlm)?, &mul(&hl, &hm)?)?;
        let c = div(&add(&ops::mul_scalar::call(&hl, Scalar::Int(2))?, &hm, one())?, &mul(&hl, &hlm)?)?;
        let last = add(
            &add(&mul(&a, &s(-3, Some(-2))?)?, &mul(&b, &s(-2, Some(-1))?)?, one())?,
            &mul(&c, &s(-1, None)?)?,
            one(),
        )?;
        (first, last)
    };
    assemble(prepend, center, append, dim)
}

fn uniform_all(self_: &Tensor, spacing: &[Scalar], dims: &[i64], edge_order: i64) -> Result<Vec<Tensor>> {
    dims.iter().zip(spacing).map(|(&d, h)| uniform(self_, h, d, edge_order)).collect()
}

fn coordinates_all(self_: &Tensor, spacing: &[Tensor], dims: &[i64], edge_order: i64) -> Result<Vec<Tensor>> {
    dims.iter().zip(spacing).map(|(&d, x)| coordinates(self_, x, d, edge_order)).collect()
}

impl GradientScalarintCompositeImplicit for Composite {
    fn gradient_scalarint(
        self_: &Tensor,
        spacing: Option<Scalar>,
        dim: Option<i64>,
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        let dims = dims_of(self_, dim);
        check(self_, None, dim.map(|_| dims.as_slice()), edge_order)?;
        let h = vec![spacing.unwrap_or(Scalar::Float(1.0)); dims.len()];
        uniform_all(self_, &h, &dims, edge_order)
    }
}

impl GradientScalararrayCompositeImplicit for Composite {
    fn gradient_scalararray(self_: &Tensor, spacing: Scalar, dim: &[i64], edge_order: i64) -> Result<Vec<Tensor>> {
        check(self_, None, Some(dim), edge_order)?;
        uniform_all(self_, &vec![spacing; dim.len()], dim, edge_order)
    }
}

impl GradientArrayCompositeImplicit for Composite {
    fn gradient_array(self_: &Tensor, dim: &[i64], edge_order: i64) -> Result<Vec<Tensor>> {
        check(self_, None, Some(dim), edge_order)?;
        uniform_all(self_, &vec![Scalar::Float(1.0); dim.len()], dim, edge_order)
    }
}

impl GradientScalarrayintCompositeImplicit for Composite {
    fn gradient_scalarrayint(
        self_: &Tensor,
        spacing: &[Scalar],
        dim: Option<i64>,
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        let dims = dims_of(self_, dim);
        check(self_, Some(spacing.len()), dim.map(|_| dims.as_slice()), edge_order)?;
        uniform_all(self_, spacing, &dims, edge_order)
    }
}

impl GradientScalarrayarrayCompositeImplicit for Composite {
    fn gradient_scalarrayarray(
        self_: &Tensor,
        spacing: &[Scalar],
        dim: &[i64],
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        check(self_, Some(spacing.len()), Some(dim), edge_order)?;
        uniform_all(self_, spacing, dim, edge_order)
    }
}

impl GradientTensorarrayintCompositeImplicit for Composite {
    fn gradient_tensorarrayint(
        self_: &Tensor,
        spacing: &[Tensor],
        dim: Option<i64>,
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        let dims = dims_of(self_, dim);
        check(self_, Some(spacing.len()), dim.map(|_| dims.as_slice()), edge_order)?;
        coordinates_all(self_, spacing, &dims, edge_order)
    }
}

impl GradientTensorarrayCompositeImplicit for Composite {
    fn gradient_tensorarray(self_: &Tensor, spacing: &[Tensor], dim: &[i64], edge_order: i64) -> Result<Vec<Tensor>> {
        check(self_, Some(spacing.len()), Some(dim), edge_order)?;
        coordinates_all(self_, spacing, dim, edge_order)
    }
}
