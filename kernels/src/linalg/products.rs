//! `baddbmm`, `addbmm`, `outer` and the cross product: CompositeImplicitAutograd, as in PyTorch's
//! decompositions, so autograd and every backend come from `bmm`, `addmm`, `mul` and `roll`.
//!
//! * `baddbmm` is one `bmm` and one fused `add(beta * self)`; with `beta = 0` `self` is only
//!   checked for shape, never read, so NaN or inf in it does not reach the result (BLAS's rule).
//! * `addbmm` folds the batch into the inner dimension, `[n, b·m] @ [b·m, p]`, so the sum over
//!   the batch happens inside one `addmm` instead of as a separate reduction.
//! * `linalg_cross` is `roll(a, -1)·roll(b, -2) − roll(a, -2)·roll(b, -1)` along `dim`: the
//!   three components in two products, for any layout and batch.

use super::not_implemented;
use crate::generated::decls::{
    AddbmmCompositeImplicit, BaddbmmCompositeImplicit, CrossCompositeImplicit, LinalgCrossCompositeImplicit,
    OuterCompositeImplicit,
};
use crate::iter::infer_size;
use crate::nn::expect_dtype;
use crate::support::type_meta_name;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

/// `self` expanded to `sizes` as the functional `baddbmm`/`addbmm` do first (PyTorch's
/// `expand_size`), so a `self` that does not broadcast fails with `expand`'s message.
fn expand_self(self_: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    self_.try_expand(sizes)
}

/// `batch1` and `batch2` are 3-D with one batch size.
fn check_batches(batch1: &Tensor, batch2: &Tensor) -> Result<()> {
    if batch1.dim() != 3 {
        return Err(Error::runtime("batch1 must be a 3D tensor"));
    }
    if batch2.dim() != 3 {
        return Err(Error::runtime("batch2 must be a 3D tensor"));
    }
    let (b1, b2) = (batch1.sizes()[0], batch2.sizes()[0]);
    if b1 != b2 {
        return Err(Error::runtime(format!("batch1 and batch2 must have same number of batches, got {b1} and {b2}")));
    }
    Ok(())
}

/// A float `alpha`/`beta` with integer operands: PyTorch casts it to the integer type
/// (truncating), so the result keeps the operands' dtype.
pub(super) fn integral_scalar(t: &Tensor, s: Scalar) -> Scalar {
    match s {
        Scalar::Float(f) if !t.dtype().is_floating_point() => Scalar::Int(f as i64),
        other => other,
    }
}

/// `beta * input + product`, skipping `input` entirely when `beta` is zero.
pub(super) fn add_scaled(product: Tensor, input: &Tensor, beta: Scalar) -> Result<Tensor> {
    if beta.to_f64() == 0.0 && !beta.is_bool() {
        return Ok(product);
    }
    product.try_add_with(input, oxten_runtime::options::AddOpts { alpha: beta })
}

impl BaddbmmCompositeImplicit for Composite {
    fn baddbmm(self_: &Tensor, batch1: &Tensor, batch2: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        let target = [batch1.size(0)?, batch1.size(1)?, batch2.size(2)?];
        let input = expand_self(self_, &target)?;
        if self_.dtype() != batch1.dtype() || self_.dtype() != batch2.dtype() {
            return Err(Error::dtype(format!(
                "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
                type_meta_name(self_.dtype()),
                type_meta_name(batch1.dtype()),
                type_meta_name(batch2.dtype())
            )));
        }
        check_batches(batch1, batch2)?;
        let (alpha, beta) = (integral_scalar(self_, alpha), integral_scalar(self_, beta));
        let product = batch1.try_bmm(batch2)?;
        let product = if alpha.to_f64() == 1.0 { product } else { product.try_mul_scalar(alpha)? };
        add_scaled(product, &input, beta)
    }
}

impl AddbmmCompositeImplicit for Composite {
    fn addbmm(self_: &Tensor, batch1: &Tensor, batch2: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        let target = [batch1.size(1)?, batch2.size(2)?];
        let input = expand_self(self_, &target)?;
        check_batches(batch1, batch2)?;
        let (b, n, m) = (batch1.sizes()[0], batch1.sizes()[1], batch1.sizes()[2]);
        let p = batch2.sizes()[2];
        if batch2.sizes()[1] != m {
            return Err(Error::runtime(format!(
                "Incompatible matrix sizes for bmm ({n}x{m} and {}x{p})",
                batch2.sizes()[1]
            )));
        }
        // [b, n, m] → [n, b, m] → [n, b·m] and [b, m, p] → [b·m, p]: the batch sum is the inner sum.
        let lhs = batch1.try_transpose(0, 1)?.try_reshape(&[n, b * m])?;
        let rhs = batch2.try_reshape(&[b * m, p])?;
        ops::addmm::call(&input, &lhs, &rhs, beta, alpha)
    }
}

impl OuterCompositeImplicit for Composite {
    fn outer(self_: &Tensor, vec2: &Tensor) -> Result<Tensor> {
        for (name, t) in [("self", self_), ("vec2", vec2)] {
            if t.dim() != 1 {
                return Err(Error::runtime(format!("outer: Expected 1-D argument {name}, but got {}-D", t.dim())));
            }
        }
        self_.try_reshape(&[self_.sizes()[0], 1])?.try_mul(vec2)
    }
}

impl LinalgCrossCompositeImplicit for Composite {
    fn linalg_cross(self_: &Tensor, other: &Tensor, dim: i64) -> Result<Tensor> {
        if self_.dim() != other.dim() {
            return Err(Error::runtime("linalg.cross: inputs must have the same number of dimensions."));
        }
        let (a, b) = (self_.size(dim)?, other.size(dim)?);
        if a != 3 || b != 3 {
            return Err(Error::runtime(format!(
                "linalg.cross: inputs dimension {dim} must have length 3. Got {a} and {b}"
            )));
        }
        expect_dtype(self_.dtype(), other.dtype())?;
        if self_.dtype() == oxten_runtime::DType::Bool {
            return Err(not_implemented("linalg_cross", self_.dtype()));
        }
        let shape = infer_size(&self_.sizes(), &other.sizes())?;
        let (x, y) = (self_.try_expand(&shape)?, other.try_expand(&shape)?);
        let roll = |t: &Tensor, k: i64| t.try_roll(&[k], &[dim]);
        roll(&x, -1)?.try_mul(&roll(&y, -2)?)?.try_sub(&roll(&x, -2)?.try_mul(&roll(&y, -1)?)?)
    }
}

impl CrossCompositeImplicit for Composite {
    fn cross(self_: &Tensor, other: &Tensor, dim: Option<i64>) -> Result<Tensor> {
        let dim = match dim {
            Some(d) => d,
            // PyTorch's deprecated default: the first dimension of length 3.
            None => self_
                .sizes()
                .iter()
                .position(|&s| s == 3)
                .map(|d| d as i64)
                .ok_or_else(|| Error::runtime("no dimension of size 3 in input"))?,
        };
        ops::linalg_cross::call(self_, other, dim)
    }
}
