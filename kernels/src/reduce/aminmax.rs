//! `aminmax`: `amin` and `amax` over the same dims, with PyTorch's checks for empty inputs.

use crate::generated::decls::AminmaxCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, Error, Result, Tensor};

impl AminmaxCompositeImplicit for Composite {
    fn aminmax(self_: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dims: Vec<i64> = match dim {
            Some(d) => {
                let w = wrap_dim(d, self_.dim())?;
                if self_.dim() > 0 && self_.sizes()[w] == 0 {
                    return Err(Error::index(
                        "aminmax(): Expected reduction dim 0 to have non-zero size.".replace('0', &w.to_string()),
                    ));
                }
                vec![d]
            }
            None => {
                if self_.numel() == 0 {
                    return Err(Error::runtime(
                        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
                    ));
                }
                vec![]
            }
        };
        Ok((ops::amin::call(self_, &dims, keepdim)?, ops::amax::call(self_, &dims, keepdim)?))
    }
}
