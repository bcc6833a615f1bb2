//! The `*_copy` operators (a view, cloned into a fresh contiguous tensor: what functionalization
//! turns views into), and views that are other views rearranged: `squeeze.dims`, `unbind`,
//! `movedim`/`moveaxis`, `broadcast_to` and `broadcast_tensors`. All CompositeImplicitAutograd,
//! so their gradients come from the views and `clone` they call.

use crate::generated::decls::{
    AliasCopyCompositeImplicit, AsStridedCopyCompositeImplicit, BroadcastTensorsCompositeImplicit,
    BroadcastToCompositeImplicit, DiagonalCopyCompositeImplicit, ExpandCopyCompositeImplicit,
    MoveaxisIntCompositeImplicit, MoveaxisIntlistCompositeImplicit, MovedimIntCompositeImplicit,
    MovedimIntlistCompositeImplicit, PermuteCopyCompositeImplicit, SplitWithSizesCopyCompositeImplicit,
    SqueezeCopyCompositeImplicit, SqueezeCopyDimCompositeImplicit, SqueezeCopyDimsCompositeImplicit,
    SqueezeDimsCompositeImplicit, TCopyCompositeImplicit, TransposeCopyCompositeImplicit, UnbindCompositeImplicit,
    UnbindCopyCompositeImplicit, UnfoldCopyCompositeImplicit, UnsqueezeCopyCompositeImplicit,
    ViewCopyCompositeImplicit,
};
use crate::iter::infer_size;
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, Error, MemoryFormat, Result, Tensor};

/// A fresh contiguous copy of a view.
fn copied(view: Result<Tensor>) -> Result<Tensor> {
    ops::deep_clone::call(&view?, Some(MemoryFormat::Contiguous))
}

fn copied_all(views: Result<Vec<Tensor>>) -> Result<Vec<Tensor>> {
    views?.into_iter().map(|v| copied(Ok(v))).collect()
}

impl AliasCopyCompositeImplicit for Composite {
    fn alias_copy(self_: &Tensor) -> Result<Tensor> {
        copied(Ok(self_.clone()))
    }
}

impl ExpandCopyCompositeImplicit for Composite {
    fn expand_copy(self_: &Tensor, size: &[i64], implicit: bool) -> Result<Tensor> {
        copied(ops::expand::call(self_, size, implicit))
    }
}

impl PermuteCopyCompositeImplicit for Composite {
    fn permute_copy(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
        copied(ops::permute::call(self_, dims))
    }
}

impl TCopyCompositeImplicit for Composite {
    fn t_copy(self_: &Tensor) -> Result<Tensor> {
        copied(ops::t::call(self_))
    }
}

impl TransposeCopyCompositeImplicit for Composite {
    fn transpose_copy(self_: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
        copied(ops::transpose::call(self_, dim0, dim1))
    }
}

impl UnsqueezeCopyCompositeImplicit for Composite {
    fn unsqueeze_copy(self_: &Tensor, dim: i64) -> Result<Tensor> {
        copied(ops::unsqueeze::call(self_, dim))
    }
}

impl ViewCopyCompositeImplicit for Composite {
    fn view_copy(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
        copied(ops::view::call(self_, size))
    }
}

impl SqueezeCopyCompositeImplicit for Composite {
    fn squeeze_copy(self_: &Tensor) -> Result<Tensor> {
        copied(ops::squeeze::call(self_))
    }
}

impl SqueezeCopyDimCompositeImplicit for Composite {
    fn squeeze_copy_dim(self_: &Tensor, dim: i64) -> Result<Tensor> {
        copied(ops::squeeze_dim::call(self_, dim))
    }
}

impl SqueezeCopyDimsCompositeImplicit for Composite {
    fn squeeze_copy_dims(self_: &Tensor, dim: &[i64]) -> Result<Tensor> {
        copied(ops::squeeze_dims::call(self_, dim))
    }
}

impl UnfoldCopyCompositeImplicit for Composite {
    fn unfold_copy(self_: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
        copied(ops::unfold::call(self_, dimension, size, step))
    }
}

impl UnbindCopyCompositeImplicit for Composite {
    fn unbind_copy(self_: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
        copied_all(ops::unbind::call(self_, dim))
    }
}

impl DiagonalCopyCompositeImplicit for Composite {
    fn diagonal_copy(self_: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        copied(ops::diagonal::call(self_, offset, dim1, dim2))
    }
}

impl AsStridedCopyCompositeImplicit for Composite {
    fn as_strided_copy(self_: &Tensor, size: &[i64], stride: &[i64], storage_offset: Option<i64>) -> Result<Tensor> {
        copied(ops::as_strided::call(self_, size, stride, storage_offset))
    }
}

impl SplitWithSizesCopyCompositeImplicit for Composite {
    fn split_with_sizes_copy(self_: &Tensor, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        copied_all(ops::split_with_sizes::call(self_, split_sizes, dim))
    }
}

impl SqueezeDimsCompositeImplicit for Composite {
    /// Each listed dim of size 1 goes (others stay, as PyTorch); a dim listed twice is an error.
    fn squeeze_dims(self_: &Tensor, dim: &[i64]) -> Result<Tensor> {
        let nd = self_.dim();
        // A 0-dim tensor takes dims 0 and -1 (as one dimension of size 1).
        let mut dims = Vec::with_capacity(dim.len());
        for &d in dim {
            let w = wrap_dim(d, nd)?;
            if dims.contains(&w) {
                return Err(Error::runtime(format!("dim {w} appears multiple times in the list of dims")));
            }
            dims.push(w);
        }
        if nd == 0 {
            return Ok(self_.clone());
        }
        let sizes = self_.sizes();
        let keep: Vec<i64> = (0..nd).filter(|d| !(dims.contains(d) && sizes[*d] == 1)).map(|d| sizes[d]).collect();
        ops::view::call(self_, &keep).or_else(|_| ops::reshape::call(self_, &keep))
    }
}

impl UnbindCompositeImplicit for Composite {
    fn unbind(self_: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
        if self_.dim() == 0 {
            return Err(Error::index("Dimension specified as 0 but tensor has no dimensions"));
        }
        let d = wrap_dim(dim, self_.dim())?;
        let n = self_.sizes()[d];
        // An empty tensor can have a huge dim: the list itself must fail as an error.
        let mut parts = oxten_runtime::error::try_vec_with_capacity(n as usize)?;
        for i in 0..n {
            parts.push(ops::select::call(self_, d as i64, i)?);
        }
        Ok(parts)
    }
}

/// The permutation that moves each `source` dim to its `destination` and keeps the other dims
/// in order, with PyTorch's checks.
fn movedim_order(nd: usize, source: &[i64], destination: &[i64]) -> Result<Vec<i64>> {
    if source.len() != destination.len() {
        return Err(Error::runtime(format!(
            "movedim: Invalid source or destination dims: source ({:?} dims) should contain the same number of dims as destination ({:?} dims)",
            source, destination
        )));
    }
    let wrap = |ds: &[i64], what: &str| -> Result<Vec<usize>> {
        let mut out = Vec::with_capacity(ds.len());
        for &d in ds {
            let w = wrap_dim(d, nd)?;
            if out.contains(&w) {
                return Err(Error::runtime(format!("movedim: repeated dim in `{what}` ({ds:?})")));
            }
            out.push(w);
        }
        Ok(out)
    };
    let (src, dst) = (wrap(source, "source")?, wrap(destination, "destination")?);
    let mut order: Vec<Option<usize>> = vec![None; nd.max(1)];
    for (&s, &d) in src.iter().zip(&dst) {
        order[d] = Some(s);
    }
    let mut rest = (0..nd).filter(|d| !src.contains(d));
    Ok(order.into_iter().take(nd).map(|o| o.or_else(|| rest.next()).unwrap_or(0) as i64).collect())
}

fn movedim(self_: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    let order = movedim_order(self_.dim(), source, destination)?;
    if self_.dim() == 0 {
        return Ok(self_.clone());
    }
    ops::permute::call(self_, &order)
}

impl MovedimIntCompositeImplicit for Composite {
    fn movedim_int(self_: &Tensor, source: i64, destination: i64) -> Result<Tensor> {
        movedim(self_, &[source], &[destination])
    }
}

impl MovedimIntlistCompositeImplicit for Composite {
    fn movedim_intlist(self_: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
        movedim(self_, source, destination)
    }
}

impl MoveaxisIntCompositeImplicit for Composite {
    fn moveaxis_int(self_: &Tensor, source: i64, destination: i64) -> Result<Tensor> {
        movedim(self_, &[source], &[destination])
    }
}

impl MoveaxisIntlistCompositeImplicit for Composite {
    fn moveaxis_intlist(self_: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
        movedim(self_, source, destination)
    }
}

impl BroadcastToCompositeImplicit for Composite {
    fn broadcast_to(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
        ops::expand::call(self_, size, false)
    }
}

impl BroadcastTensorsCompositeImplicit for Composite {
    fn broadcast_tensors(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
        let mut shape: Vec<i64> = vec![];
        for t in tensors {
            shape = infer_size(&shape, &t.sizes())?;
        }
        tensors.iter().map(|t| ops::expand::call(t, &shape, false)).collect()
    }
}
