//! `expand`: broadcasting as a view (stride 0 on the repeated dims).

use super::{strided_view, type_string};
use crate::generated::decls::ExpandCompositeExplicit;
use oxten_runtime::{Error, Result, Tensor};

impl ExpandCompositeExplicit for crate::Composite {
    /// Sizes align from the right; `-1` keeps an existing size, size-1 dims may grow (stride 0),
    /// and new leading dims are added (stride 0 when larger than 1). `implicit` only matters to
    /// tracing in PyTorch and is ignored.
    fn expand(self_: &Tensor, size: &[i64], _implicit: bool) -> Result<Tensor> {
        let l = self_.layout();
        let ndim = size.len();
        let tdim = l.dim();
        if ndim < tdim {
            return Err(Error::shape(format!(
                "expand({}{{{:?}}}, size={size:?}): the number of sizes provided ({ndim}) must be greater or \
                 equal to the number of dimensions in the tensor ({tdim})",
                type_string(self_.dtype(), self_.device()),
                &l.sizes[..]
            )));
        }
        let mut sizes = vec![0i64; ndim];
        let mut strides = vec![0i64; ndim];
        for i in (0..ndim).rev() {
            let from_right = ndim - 1 - i;
            // The existing dim this target dim lines up with, if any.
            let existing = (from_right < tdim).then(|| tdim - 1 - from_right);
            let (mut n, mut st) = match existing {
                Some(d) => (l.sizes[d], l.strides[d]),
                // A new leading dim steps over everything to its right.
                None if i + 1 < ndim => (1, sizes[i + 1] * strides[i + 1]),
                // Only reached for a 0-dim `self`, whose expansion is all stride 0 in PyTorch.
                None => (1, 0),
            };
            let mut target = size[i];
            if target == -1 {
                if existing.is_none() {
                    return Err(Error::shape(format!(
                        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                    )));
                }
                target = n;
            }
            if n != target {
                if n != 1 {
                    return Err(Error::shape(format!(
                        "The expanded size of the tensor ({target}) must match the existing size ({n}) at \
                         non-singleton dimension {i}.  Target sizes: {size:?}.  Tensor sizes: {:?}",
                        &l.sizes[..]
                    )));
                }
                n = target;
                st = 0;
            }
            sizes[i] = n;
            strides[i] = st;
        }
        strided_view(self_, &sizes, &strides, l.offset)
    }
}
