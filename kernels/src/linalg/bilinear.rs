//! `bilinear` (`nn.Bilinear`): CompositeImplicitAutograd, as in PyTorch, so autograd and every
//! backend come from `mm`, `mul` and `sum`.

use crate::generated::decls::BilinearCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

impl BilinearCompositeImplicit for Composite {
    /// PyTorch's `bilinear` (`nn.Bilinear`): `y[…, o] = Σ_ij input1[…, i] · weight[o, i, j] ·
    /// input2[…, j] + bias[o]`, with PyTorch's checks. Computed as one product of the flattened
    /// `input1` with the weight laid out `[in1, out·in2]`, then a dot product with `input2` per
    /// output feature; autograd and every backend come from those operators.
    fn bilinear(input1: &Tensor, input2: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        let (d1, d2) = (input1.dim(), input2.dim());
        if d1 != d2 {
            return Err(Error::shape(format!("bilinear(): input dimensions do not match: got {d1} and {d2}")));
        }
        if d1 == 0 {
            return Err(Error::shape(
                "bilinear(): expected inputs with at least one dimension, got 0-dimensional ones",
            ));
        }
        let (s1, s2) = (input1.sizes(), input2.sizes());
        for i in 0..d1 - 1 {
            if s1[i] != s2[i] {
                return Err(Error::shape(format!(
                    "bilinear(): input batch dimensions do not match: got {} and {}",
                    s1[i], s2[i]
                )));
            }
        }
        if weight.dim() != 3 {
            return Err(Error::shape(format!(
                "bilinear(): expected a 3-D weight [out_features, in1_features, in2_features], got {}-D",
                weight.dim()
            )));
        }
        let ws = weight.sizes();
        let (out, in1, in2) = (ws[0], ws[1], ws[2]);
        if s1[d1 - 1] != in1 {
            return Err(Error::shape(format!(
                "bilinear(): input1 size does not match weight size: got {} but expected {in1}",
                s1[d1 - 1]
            )));
        }
        if s2[d2 - 1] != in2 {
            return Err(Error::shape(format!(
                "bilinear(): input2 size does not match weight size: got {} but expected {in2}",
                s2[d2 - 1]
            )));
        }
        if let Some(b) = bias {
            let got = b.sizes().first().copied().unwrap_or(1);
            if b.dim() != 1 || got != out {
                return Err(Error::shape(format!(
                    "bilinear(): bias size does not match weight size: got {got} but expected {out}"
                )));
            }
        }
        let batch = &s1[..d1 - 1];
        let rows: i64 = batch.iter().product();
        let x1 = input1.try_reshape(&[rows, in1])?;
        let x2 = input2.try_reshape(&[rows, 1, in2])?;
        // [rows, in1] @ [in1, out·in2] → [rows, out, in2], then the dot with input2 per output.
        let w = weight.try_permute(&[1, 0, 2])?.try_reshape(&[in1, out * in2])?;
        let t = ops::mm::call(&x1, &w)?.try_reshape(&[rows, out, in2])?;
        // (In the product's dtype: an integer sum would otherwise widen to int64.)
        let prod = t.try_mul(&x2)?;
        let y = ops::sum_dim_intlist::call(&prod, Some(&[-1]), false, Some(prod.dtype()))?;
        let sizes: Vec<i64> = batch.iter().copied().chain([out]).collect();
        let y = y.try_reshape(&sizes)?;
        match bias {
            Some(b) => y.try_add(b),
            None => Ok(y),
        }
    }
}
