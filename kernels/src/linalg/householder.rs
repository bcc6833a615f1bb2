//! Products with the orthogonal `Q` that `geqrf` packs as Householder reflections:
//! `linalg_householder_product` (`orgqr`), `Q`'s first columns, and `ormqr`, `Q` (or `Qᵀ`)
//! times a matrix from either side. CompositeImplicitAutograd: each reflection
//! `H_i = I - τ_i v_i v_iᵀ` is applied as a rank-one update (`X - τ v (vᵀ X)`), so the gradients
//! with respect to the reflectors and their scales come through the products.

use super::factor::{check_floating, check_same_dtype};
use crate::generated::decls::{
    LinalgHouseholderProductCompositeImplicit, OrgqrCompositeImplicit, OrmqrCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

fn dim_from_end(t: &Tensor, from_end: usize) -> i64 {
    let s = t.sizes();
    s[s.len() - from_end]
}

/// The reflectors' vectors as columns: `input`'s strict lower triangle with ones on the diagonal.
fn reflector_vectors(input: &Tensor) -> Result<Tensor> {
    let (m, n) = (dim_from_end(input, 2), dim_from_end(input, 1));
    let eye = ops::eye_m::call(m, n, Some(input.dtype()), None, Some(input.device()), None)?;
    ops::add::call(&ops::tril::call(input, -1)?, &eye, Scalar::Int(1))
}

/// Applies `H_i` to `x` from the left (`X - τ_i v_i (v_iᵀ X)`) or the right (`X - τ_i (X v_i) v_iᵀ`).
fn apply_reflection(x: &Tensor, v: &Tensor, tau: &Tensor, i: i64, left: bool) -> Result<Tensor> {
    let vi = ops::narrow::call(v, -1, i, 1)?;
    let ti = ops::unsqueeze::call(&ops::narrow::call(tau, -1, i, 1)?, -1)?;
    let update = if left {
        ops::matmul::call(&vi, &ops::matmul::call(&ops::transpose::call(&vi, -2, -1)?, x)?)?
    } else {
        ops::matmul::call(&ops::matmul::call(x, &vi)?, &ops::transpose::call(&vi, -2, -1)?)?
    };
    ops::sub::call(x, &ops::mul::call(&update, &ti)?, Scalar::Int(1))
}

/// PyTorch's checks that `tau`'s batch dimensions are `input`'s and the dtypes agree.
fn check_tau_batches(op: &str, input: &Tensor, tau: &Tensor) -> Result<()> {
    let (is, ts) = (input.sizes(), tau.sizes());
    if ts.len() + 1 != is.len() || ts[..ts.len() - 1] != is[..is.len() - 2] {
        return Err(Error::runtime(format!(
            "{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {:?}",
            &ts[..ts.len().saturating_sub(1)]
        )));
    }
    check_same_dtype(op, ("input", input), ("tau", tau))
}

fn householder_product(input: &Tensor, tau: &Tensor) -> Result<Tensor> {
    const OP: &str = "torch.linalg.householder_product";
    if input.dim() < 2 {
        return Err(Error::runtime(format!("{OP}: input must have at least 2 dimensions.")));
    }
    if tau.dim() < 1 {
        return Err(Error::runtime(format!("{OP}: tau must have at least 1 dimension.")));
    }
    let (m, n, k) = (dim_from_end(input, 2), dim_from_end(input, 1), dim_from_end(tau, 1));
    if m < n {
        return Err(Error::runtime(format!("{OP}: input.shape[-2] must be greater than or equal to input.shape[-1]")));
    }
    if n < k {
        return Err(Error::runtime(format!("{OP}: input.shape[-1] must be greater than or equal to tau.shape[-1]")));
    }
    check_tau_batches(OP, input, tau)?;
    check_floating(OP, input)?;
    let v = reflector_vectors(input)?;
    let eye = ops::eye_m::call(m, n, Some(input.dtype()), None, Some(input.device()), None)?;
    let mut x = ops::expand::call(&eye, &input.sizes(), false)?;
    if k == 0 {
        // No reflections: the identity, still a function of `input` (with a zero gradient) as
        // PyTorch's is. `V[:, :0] @ 0` is zeros without reading `input`'s values.
        let none = ops::narrow::call(&v, -1, 0, 0)?;
        let zeros = ops::full::call(&[0, n], Scalar::Int(0), Some(input.dtype()), None, Some(input.device()), None)?;
        x = ops::sub::call(&x, &ops::matmul::call(&none, &zeros)?, Scalar::Int(1))?;
    }
    for i in (0..k).rev() {
        x = apply_reflection(&x, &v, tau, i, true)?;
    }
    Ok(x)
}

impl LinalgHouseholderProductCompositeImplicit for Composite {
    fn linalg_householder_product(input: &Tensor, tau: &Tensor) -> Result<Tensor> {
        householder_product(input, tau)
    }
}

impl OrgqrCompositeImplicit for Composite {
    fn orgqr(self_: &Tensor, input2: &Tensor) -> Result<Tensor> {
        householder_product(self_, input2)
    }
}

impl OrmqrCompositeImplicit for Composite {
    fn ormqr(input: &Tensor, tau: &Tensor, other: &Tensor, left: bool, transpose: bool) -> Result<Tensor> {
        const OP: &str = "torch.ormqr";
        if input.dim() < 2 {
            return Err(Error::runtime(format!("{OP}: input must have at least 2 dimensions.")));
        }
        if other.dim() < 2 {
            return Err(Error::runtime(format!("{OP}: other must have at least 2 dimensions.")));
        }
        let side = if left { -2 } else { -1 };
        let other_side = other.sizes()[(other.dim() as i64 + side) as usize];
        if other_side != dim_from_end(input, 2) {
            return Err(Error::runtime(format!("{OP}: other.shape[{side}] must be equal to input.shape[-2]")));
        }
        if tau.dim() < 1 || dim_from_end(tau, 1) > dim_from_end(input, 1) {
            return Err(Error::runtime(format!("{OP}: tau.shape[-1] must be less than or equal to input.shape[-1]")));
        }
        if other_side < dim_from_end(tau, 1) {
            return Err(Error::runtime(format!(
                "{OP}: other.shape[{side}] must be greater than or equal to tau.shape[-1]"
            )));
        }
        check_tau_batches(OP, input, tau)?;
        let (os, is) = (other.sizes(), input.sizes());
        if os[..os.len() - 2] != is[..is.len() - 2] {
            return Err(Error::runtime(format!(
                "{OP}: Expected batch dimensions of other to be equal to input.shape[:-2], but got {:?}",
                &os[..os.len() - 2]
            )));
        }
        check_same_dtype(OP, ("input", input), ("other", other))?;
        check_floating(OP, input)?;
        let v = reflector_vectors(input)?;
        let k = dim_from_end(tau, 1);
        // Q = H_0 ... H_{k-1}: Q C applies H_{k-1} first, Qᵀ C H_0 first; from the right the
        // order turns around.
        let reversed = left != transpose;
        let mut x = other.clone();
        for j in 0..k {
            let i = if reversed { k - 1 - j } else { j };
            x = apply_reflection(&x, &v, tau, i, left)?;
        }
        Ok(x)
    }
}
