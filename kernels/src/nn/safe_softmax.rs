//! `_safe_softmax`: the softmax attention uses for masked rows. A slice that is -inf throughout
//! (a query that may attend to nothing) has no distribution; plain `softmax` gives NaNs there
//! (0/0) and this gives zeros. CompositeExplicitAutograd with the softmax's derivative, which
//! the zeros make zero on those slices (through the composite, `softmax`'s NaNs would leak in).

use crate::generated::decls::SafeSoftmaxCompositeExplicit;
use crate::Composite;
use oxten_runtime::{ops, DType, Result, Scalar, Tensor};

impl SafeSoftmaxCompositeExplicit for Composite {
    fn safe_softmax(self_: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        let out = ops::softmax::call(self_, dim, dtype)?;
        let masked = ops::eq_scalar::call(self_, Scalar::Float(f64::NEG_INFINITY))?;
        let empty_rows = ops::all_dim::call(&masked, dim, true)?;
        ops::masked_fill_scalar::call(&out, &empty_rows, Scalar::Float(0.0))
    }
}
