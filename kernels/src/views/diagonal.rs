//! `diagonal` and `unfold` (views: `as_strided` on the same storage, so writes through them reach
//! the base), and `diag_embed` (the inverse of `diagonal`, a new tensor). `diagonal`'s gradient
//! is `as_strided`'s; `unfold`'s windows may overlap, so it has its own (`unfold_backward`).

use crate::generated::decls::{DiagEmbedCompositeImplicit, DiagonalCompositeImplicit, UnfoldCompositeExplicit};
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Scalar, Tensor};

fn check_distinct(d1: usize, d2: usize, dim1: i64, dim2: i64) -> Result<()> {
    if d1 == d2 {
        return Err(Error::runtime(format!("diagonal dimensions cannot be identical {dim1}, {dim2}")));
    }
    Ok(())
}

impl DiagonalCompositeImplicit for Composite {
    fn diagonal(self_: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        let nd = self_.dim();
        let (d1, d2) = (wrap_dim(dim1, nd)?, wrap_dim(dim2, nd)?);
        check_distinct(d1, d2, dim1, dim2)?;
        let (sizes, strides) = (self_.sizes(), self_.strides());
        let len = if offset >= 0 {
            sizes[d1].min(sizes[d2].saturating_sub(offset)).max(0)
        } else {
            sizes[d1].saturating_add(offset).min(sizes[d2]).max(0)
        };
        let mut start = self_.storage_offset();
        if len > 0 {
            start += if offset >= 0 { offset * strides[d2] } else { -offset * strides[d1] };
        }
        let keep = |v: &[i64]| -> Vec<i64> {
            v.iter().enumerate().filter(|&(d, _)| d != d1 && d != d2).map(|(_, &x)| x).collect()
        };
        let (mut new_sizes, mut new_strides) = (keep(&sizes), keep(&strides));
        new_sizes.push(len);
        new_strides.push(strides[d1] + strides[d2]);
        ops::as_strided::call(self_, &new_sizes, &new_strides, Some(start))
    }
}

impl UnfoldCompositeExplicit for Composite {
    fn unfold(self_: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
        let d = wrap_dim(dimension, self_.dim())?;
        let (mut sizes, mut strides) = (self_.sizes().to_vec(), self_.strides().to_vec());
        let scalar = sizes.is_empty();
        if scalar {
            // A 0-dim tensor unfolds as one element (and the result is 1-D: [size]).
            sizes.push(1);
            strides.push(1);
        }
        if size > sizes[d] {
            return Err(Error::runtime(format!(
                "maximum size for tensor at dimension {d} is {} but size is {size}",
                sizes[d]
            )));
        }
        if step <= 0 {
            return Err(Error::runtime(format!("step is {step} but must be > 0")));
        }
        if scalar {
            return ops::as_strided::call(self_, &[size], &[1], Some(self_.storage_offset()));
        }
        let stride = strides[d];
        sizes[d] = (sizes[d] - size) / step + 1;
        strides[d] = stride * step;
        sizes.push(size);
        strides.push(stride);
        ops::as_strided::call(self_, &sizes, &strides, Some(self_.storage_offset()))
    }
}

impl DiagEmbedCompositeImplicit for Composite {
    /// `self[..., i]` goes to `[i, i + offset]` of a new `m × m` matrix (`m = n + |offset|`):
    /// `self.unsqueeze(-1)` times a 0/1 `[n, m]` pattern, padded to `m` rows, then moved to
    /// `dim1`/`dim2`.
    fn diag_embed(self_: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        let nd = self_.dim() + 1;
        let (d1, d2) = (wrap_dim(dim1, nd)?, wrap_dim(dim2, nd)?);
        check_distinct(d1, d2, dim1, dim2)?;
        let x = if self_.dim() == 0 { self_.try_unsqueeze(0)? } else { self_.clone() };
        let n = x.sizes()[x.dim() - 1];
        let m = offset
            .checked_abs()
            .and_then(|o| n.checked_add(o))
            .ok_or_else(|| Error::runtime(format!("diag_embed: offset {offset} is too large")))?;
        let cols = ops::arange::call(Scalar::Int(m), Some(DType::I64), None, Some(x.device()), None)?;
        let targets = ops::arange::call(Scalar::Int(n), Some(DType::I64), None, Some(x.device()), None)?
            .try_add_scalar(Scalar::Int(offset.max(0)))?;
        let pattern = cols.try_unsqueeze(0)?.try_eq(&targets.try_unsqueeze(1)?)?.try_to_dtype(x.dtype())?;
        let rows = x.try_unsqueeze(-1)?.try_mul(&pattern)?;
        let (before, after) = if offset >= 0 { (0, offset) } else { (-offset, 0) };
        let square = ops::constant_pad_nd::call(&rows, &[0, 0, before, after], Scalar::Int(0))?;
        // [others…, rows, cols] → rows at d1, cols at d2, the others in order around them.
        let mut others = 0..nd - 2;
        let perm: Vec<i64> = (0..nd)
            .map(|a| {
                if a == d1 {
                    (nd - 2) as i64
                } else if a == d2 {
                    (nd - 1) as i64
                } else {
                    others.next().expect("one source dim per other output dim") as i64
                }
            })
            .collect();
        square.try_permute(&perm)?.try_contiguous()
    }
}
