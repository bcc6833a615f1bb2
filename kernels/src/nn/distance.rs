//! `cosine_similarity` and `pairwise_distance`, CompositeImplicitAutograd as in PyTorch: norms,
//! divisions and sums, so their gradients come from those operators.

use crate::generated::decls::{CosineSimilarityCompositeImplicit, PairwiseDistanceCompositeImplicit};
use crate::iter::{infer_size, scalar_type_name};
use crate::logical::promote::{result_type, Arg};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

impl CosineSimilarityCompositeImplicit for Composite {
    /// Each input is divided by its own norm, clamped below at `eps`, before the dot product
    /// (PyTorch's formulation since 2.0: no overflow from multiplying two large norms).
    fn cosine_similarity(x1: &Tensor, x2: &Tensor, dim: i64, eps: f64) -> Result<Tensor> {
        let dtype = result_type(&[Arg::Tensor(x1), Arg::Tensor(x2)]);
        if !dtype.is_floating_point() {
            return Err(Error::dtype(format!(
                "expected common dtype to be floating point, yet common dtype is {}",
                scalar_type_name(dtype)
            )));
        }
        let shape = infer_size(&x1.sizes(), &x2.sizes())?;
        let unit = |x: &Tensor| -> Result<Tensor> {
            // Normalised in its own dtype; the product promotes (as PyTorch computes it).
            let x = x.try_expand(&shape)?;
            let norm = ops::linalg_vector_norm::call(&x, Scalar::Int(2), Some(&[dim]), true, None)?;
            // PyTorch clamps a copy of the norm in place under no_grad: the value is clamped but
            // the gradient flows as if it were not (also below `eps`).
            let norm = ops::deep_clone::call(&norm, None)?;
            oxten_runtime::autograd::no_grad(|| ops::clamp_::call(&norm, Some(Scalar::Float(eps)), None))?;
            x.try_div(&norm)
        };
        unit(x1)?.try_mul(&unit(x2)?)?.try_sum_dim_intlist_with(
            Some(&[dim]),
            false,
            oxten_runtime::options::SumDimIntlistOpts { dtype: None },
        )
    }
}

impl PairwiseDistanceCompositeImplicit for Composite {
    /// `norm(x1 - x2 + eps, p)` over the last dimension of the broadcast inputs.
    fn pairwise_distance(x1: &Tensor, x2: &Tensor, p: f64, eps: f64, keepdim: bool) -> Result<Tensor> {
        let innermost = x1.dim().max(x2.dim()) as i64 - 1;
        let diff = x1.try_sub(x2)?.try_add_scalar(eps)?;
        ops::norm_scalaropt_dim::call(&diff, Some(Scalar::Float(p)), &[innermost], keepdim)
    }
}
