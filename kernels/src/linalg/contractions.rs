//! `addmv`, `addr`, `inner`, `tensordot`, `kron` and `vdot`: CompositeImplicitAutograd over
//! `mv`, `outer`, `mm` and `mul`, with PyTorch's checks and its rules for `beta`/`alpha` with
//! integer and bool operands.

use super::products::{add_scaled, integral_scalar};
use crate::generated::decls::{
    AddmvCompositeImplicit, AddrCompositeImplicit, InnerCompositeImplicit, KronCompositeImplicit,
    TensordotCompositeImplicit, VdotCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Scalar, Tensor};

impl AddmvCompositeImplicit for Composite {
    fn addmv(self_: &Tensor, mat: &Tensor, vec: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        if !(mat.dim() == 2 && vec.dim() == 1 && self_.dim() <= 1) {
            return Err(Error::runtime(format!(
                "vector + matrix @ vector expected, got {}, {}, {}",
                self_.dim(),
                mat.dim(),
                vec.dim()
            )));
        }
        let (m, k) = (mat.sizes()[0], mat.sizes()[1]);
        if k != vec.sizes()[0] || (self_.numel() != m && self_.numel() != 1) {
            return Err(Error::runtime(format!(
                "size mismatch, got input ({}), mat ({m}x{k}), vec ({})",
                if self_.dim() == 0 { 1 } else { self_.sizes()[0] },
                vec.sizes()[0]
            )));
        }
        let (beta, alpha) = (integral_scalar(self_, beta), integral_scalar(self_, alpha));
        let product = ops::mv::call(mat, vec)?;
        let product = if alpha.to_f64() == 1.0 { product } else { product.try_mul_scalar(alpha)? };
        add_scaled(product, &self_.try_expand(&[m])?, beta)
    }
}

impl AddrCompositeImplicit for Composite {
    fn addr(self_: &Tensor, vec1: &Tensor, vec2: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        for (name, v) in [("vec1", vec1), ("vec2", vec2)] {
            if v.dim() != 1 {
                return Err(Error::runtime(format!("addr: Expected 1-D argument {name}, but got {}-D", v.dim())));
            }
        }
        let shape = [vec1.sizes()[0], vec2.sizes()[0]];
        let input = self_.try_expand(&shape)?;
        if self_.dtype() != DType::Bool {
            for (name, s) in [("beta", beta), ("alpha", alpha)] {
                if s.is_bool() {
                    return Err(Error::runtime(format!("Boolean {name} only supported for Boolean results.")));
                }
            }
        }
        if self_.dtype() == DType::Bool {
            // (beta and self) or (alpha and outer(vec1, vec2)).
            let outer = ops::logical_and::call(&vec1.try_unsqueeze(1)?, vec2)?;
            let left = if beta.to_f64() != 0.0 {
                input.try_to_dtype(DType::Bool)?
            } else {
                ops::zeros_like::call(&input, Some(DType::Bool), None, None, None, None)?
            };
            let right = if alpha.to_f64() != 0.0 {
                outer
            } else {
                ops::zeros_like::call(&outer, None, None, None, None, None)?
            };
            return ops::logical_or::call(&left, &right);
        }
        if !self_.dtype().is_floating_point() {
            for (name, s) in [("beta", beta), ("alpha", alpha)] {
                if s.is_floating_point() {
                    return Err(Error::runtime(format!(
                        "For integral input tensors, argument {name} must not be a floating point number."
                    )));
                }
            }
        }
        let product = ops::outer::call(vec1, vec2)?;
        let product = if alpha.to_f64() == 1.0 { product } else { product.try_mul_scalar(alpha)? };
        add_scaled(product, &input, beta)
    }
}

impl InnerCompositeImplicit for Composite {
    fn inner(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        if self_.dim() == 0 || other.dim() == 0 {
            return ops::mul::call(self_, other);
        }
        let (a, b) = (self_.sizes()[self_.dim() - 1], other.sizes()[other.dim() - 1]);
        if a != b {
            return Err(Error::runtime(format!(
                "inner() the last dimension must match on both input tensors but got shapes {:?} and {:?}",
                &self_.sizes()[..],
                &other.sizes()[..]
            )));
        }
        Self::tensordot(self_, other, &[-1], &[-1])
    }
}

impl TensordotCompositeImplicit for Composite {
    /// PyTorch's algorithm: a size-1 contracted dim is summed away first (it broadcasts), the
    /// others are moved together and the contraction is one `mm`.
    fn tensordot(self_: &Tensor, other: &Tensor, dims_self: &[i64], dims_other: &[i64]) -> Result<Tensor> {
        if dims_self.len() != dims_other.len() {
            return Err(Error::runtime("both dimension lists should have same length"));
        }
        if self_.dtype() != other.dtype() {
            return Err(Error::runtime(format!(
                "both inputs should have same dtype, but got {} and {}",
                crate::support::type_meta_name(self_.dtype()),
                crate::support::type_meta_name(other.dtype())
            )));
        }
        for (t, dims) in [(self_, dims_self), (other, dims_other)] {
            if t.dim() == 0 {
                if let Some(d) = dims.first() {
                    return Err(Error::index(format!("Dimension specified as {d} but tensor has no dimensions")));
                }
            }
        }
        let (mut t1, mut t2) = (self_.clone(), other.clone());
        let mut csize = 1i64;
        let (mut c1, mut c2) = (vec![false; self_.dim()], vec![false; other.dim()]);
        for (&a, &b) in dims_self.iter().zip(dims_other) {
            let (da, db) = (wrap_dim(a, self_.dim())?, wrap_dim(b, other.dim())?);
            if c1[da] {
                return Err(Error::runtime(format!("dim {da} appears multiple times in the list of dims")));
            }
            if c2[db] {
                return Err(Error::runtime(format!("dim {db} appears multiple times in the list of dims")));
            }
            c1[da] = true;
            c2[db] = true;
            let (s1, s2) = (self_.sizes()[da], other.sizes()[db]);
            if s2 == 1 {
                t1 = ops::sum_dim_intlist::call(&t1, Some(&[da as i64]), true, Some(self_.dtype()))?;
            } else if s1 == 1 {
                t2 = ops::sum_dim_intlist::call(&t2, Some(&[db as i64]), true, Some(other.dtype()))?;
            } else if s1 != s2 {
                return Err(Error::runtime(format!(
                    "contracted dimensions need to match, but first has size {s1} in dim {a} and second has size {s2} in dim {b}"
                )));
            } else {
                csize *= s1;
            }
        }
        // t1: kept dims first, contracted last (in dims_self order); t2: contracted first.
        let kept1: Vec<usize> = (0..self_.dim()).filter(|&d| !c1[d]).collect();
        let kept2: Vec<usize> = (0..other.dim()).filter(|&d| !c2[d]).collect();
        let con1: Vec<usize> = dims_self.iter().map(|&d| wrap_dim(d, self_.dim())).collect::<Result<_>>()?;
        let con2: Vec<usize> = dims_other.iter().map(|&d| wrap_dim(d, other.dim())).collect::<Result<_>>()?;
        let p1: Vec<i64> = kept1.iter().chain(&con1).map(|&d| d as i64).collect();
        let p2: Vec<i64> = con2.iter().chain(&kept2).map(|&d| d as i64).collect();
        let size1: i64 = kept1.iter().map(|&d| t1.sizes()[d]).product();
        let size2: i64 = kept2.iter().map(|&d| t2.sizes()[d]).product();
        let mut out_sizes: Vec<i64> = kept1.iter().map(|&d| t1.sizes()[d]).collect();
        out_sizes.extend(kept2.iter().map(|&d| t2.sizes()[d]));
        let m1 = ops::reshape::call(&ops::permute::call(&t1, &p1)?, &[size1, csize])?;
        let m2 = ops::reshape::call(&ops::permute::call(&t2, &p2)?, &[csize, size2])?;
        ops::reshape::call(&ops::mm::call(&m1, &m2)?, &out_sizes)
    }
}

impl KronCompositeImplicit for Composite {
    /// `a` viewed as `[a0, 1, a1, 1, …]` times `b` as `[1, b0, 1, b1, …]` (shapes padded with
    /// leading ones to one rank), reshaped to `[a0·b0, a1·b1, …]`.
    fn kron(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        let nd = self_.dim().max(other.dim());
        let pad = |t: &Tensor| -> Vec<i64> {
            let mut s = vec![1; nd - t.dim()];
            s.extend_from_slice(&t.sizes());
            s
        };
        let (sa, sb) = (pad(self_), pad(other));
        let va: Vec<i64> = sa.iter().flat_map(|&s| [s, 1]).collect();
        let vb: Vec<i64> = sb.iter().flat_map(|&s| [1, s]).collect();
        let prod = ops::mul::call(&ops::reshape::call(self_, &va)?, &ops::reshape::call(other, &vb)?)?;
        let out: Vec<i64> = sa.iter().zip(&sb).map(|(a, b)| a * b).collect();
        ops::reshape::call(&prod, &out)
    }
}

impl VdotCompositeImplicit for Composite {
    fn vdot(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::dot::call(self_, other)
    }
}
