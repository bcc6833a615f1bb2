//! `index_add`, `index_copy`, `index_fill` and `masked_scatter` (functional forms):
//! CompositeImplicitAutograd over `index_put` (with `None` for the dims before `dim`) and
//! `where`, so repeated indices accumulate for `index_add` and gradients come from those ops;
//! and `index_reduce` (+ `_`), `scatter_reduce` with the index expanded over the source's slices.

use crate::generated::decls::{
    IndexAddCompositeImplicit, IndexCopyCompositeImplicit, IndexFillScalarCompositeImplicit,
    IndexFillTensorCompositeImplicit, IndexReduceCompositeImplicit, IndexReduceInplaceCompositeImplicit,
    MaskedScatterCompositeImplicit,
};
use crate::iter::infer_size;
use crate::support::type_meta_name;
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Scalar, Tensor};

/// `self` (as 1-D when 0-dim), the wrapped dim, and `index` as 1-D, after the common checks.
fn prepare(op: &str, self_: &Tensor, dim: i64, index: &Tensor) -> Result<(Tensor, usize, Tensor)> {
    if index.dim() > 1 {
        return Err(Error::index(format!("{op}(): Index is supposed to be a vector")));
    }
    if !matches!(index.dtype(), DType::I64 | DType::I32) {
        return Err(Error::index(format!(
            "{op}(): Expected dtype int32/int64 for index but got: {}",
            type_meta_name(index.dtype())
        )));
    }
    let d = wrap_dim(dim, self_.dim())?;
    let x = if self_.dim() == 0 { ops::reshape::call(self_, &[1])? } else { self_.clone() };
    let idx = ops::reshape::call(index, &[-1])?.try_to_dtype(DType::I64)?;
    Ok((x, d, idx))
}

/// The index list that selects `index` along `dim`: `None` for every dim before it.
fn along(dim: usize, index: Tensor) -> Vec<Option<Tensor>> {
    let mut v = vec![None; dim];
    v.push(Some(index));
    v
}

/// `source` checked against `self` for an update along `dim` with `n` indices, moved so its
/// `dim` comes where `index_put` puts the indexed dim (first when `dim > 0`... it stays: with
/// leading `None`s, `index_put` keeps the indexed dim in place).
fn source_for(op: &str, self_: &Tensor, x: &Tensor, dim: usize, n: i64, source: &Tensor) -> Result<Tensor> {
    if source.dtype() != self_.dtype() {
        return Err(Error::runtime(format!(
            "{op}(): self ({}) and source ({}) must have the same scalar type",
            type_meta_name(self_.dtype()),
            type_meta_name(source.dtype())
        )));
    }
    let src = if source.dim() == 0 { ops::reshape::call(source, &[1])? } else { source.clone() };
    let src_n = if src.dim() > dim { src.sizes()[dim] } else { 1 };
    if src.dim() != x.dim() && !(src.dim() == 1 && x.dim() == 1) {
        return Err(Error::index(format!(
            "{op}(): Source/destination tensor must have same number of dimensions, but got {} and {}",
            source.dim(),
            self_.dim()
        )));
    }
    if src_n != n {
        return Err(Error::index(format!(
            "{op}(): Number of indices ({n}) should be equal to source.size(dim) ({src_n}), for dim={dim}"
        )));
    }
    for d in (0..x.dim()).filter(|&d| d != dim) {
        if src.sizes()[d] != x.sizes()[d] {
            return Err(Error::index(format!(
                "{op}(): Source/destination tensor must have same slice shapes. Destination slice shape: {:?} at dimension {dim} and source slice shape: {:?} at dimension {dim}.",
                &x.sizes()[..],
                &src.sizes()[..]
            )));
        }
    }
    Ok(src)
}

fn shaped_like(result: Tensor, self_: &Tensor) -> Result<Tensor> {
    if self_.dim() == 0 {
        ops::reshape::call(&result, &[])
    } else {
        Ok(result)
    }
}

impl IndexAddCompositeImplicit for Composite {
    fn index_add(self_: &Tensor, dim: i64, index: &Tensor, source: &Tensor, alpha: Scalar) -> Result<Tensor> {
        let (x, d, idx) = prepare("index_add_", self_, dim, index)?;
        let src = source_for("index_add_", self_, &x, d, idx.numel(), source)?;
        let src = if alpha.to_f64() == 1.0 && !alpha.is_bool() { src } else { ops::mul_scalar::call(&src, alpha)? };
        shaped_like(ops::index_put::call(&x, &along(d, idx), &src, true)?, self_)
    }
}

impl IndexCopyCompositeImplicit for Composite {
    fn index_copy(self_: &Tensor, dim: i64, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        if index.dtype() != DType::I64 {
            return Err(Error::index(format!(
                "index_copy_(): Expected a long tensor for index, but got {}",
                type_meta_name(index.dtype())
            )));
        }
        let (x, d, idx) = prepare("index_copy_", self_, dim, index)?;
        let src = source_for("index_copy_", self_, &x, d, idx.numel(), source)?;
        shaped_like(ops::index_put::call(&x, &along(d, idx), &src, false)?, self_)
    }
}

fn index_fill(self_: &Tensor, dim: i64, index: &Tensor, value: &Tensor) -> Result<Tensor> {
    if index.dtype() != DType::I64 {
        return Err(Error::index("index_fill_(): Expected dtype int64 for index."));
    }
    let (x, d, idx) = prepare("index_fill_", self_, dim, index)?;
    // A mask of the filled positions along `d` (a repeated index fills once, so `value`'s
    // gradient counts each position once), then `where`.
    let n = x.sizes()[d];
    let on = ops::full::call(&[], Scalar::Bool(true), Some(DType::Bool), None, Some(x.device()), None)?;
    let mask = ops::zeros::call(&[n], Some(DType::Bool), None, Some(x.device()), None)?;
    let mask = ops::index_put::call(&mask, &[Some(idx)], &on, false)?;
    let mut shape = vec![1; x.dim()];
    shape[d] = n;
    let v = value.try_to_dtype(self_.dtype())?;
    shaped_like(ops::where_self::call(&ops::reshape::call(&mask, &shape)?, &v, &x)?, self_)
}

impl IndexFillScalarCompositeImplicit for Composite {
    fn index_fill_scalar(self_: &Tensor, dim: i64, index: &Tensor, value: Scalar) -> Result<Tensor> {
        let v = ops::full::call(&[], value, Some(self_.dtype()), None, Some(self_.device()), None)?;
        index_fill(self_, dim, index, &v)
    }
}

impl IndexFillTensorCompositeImplicit for Composite {
    fn index_fill_tensor(self_: &Tensor, dim: i64, index: &Tensor, value: &Tensor) -> Result<Tensor> {
        if value.dim() != 0 {
            return Err(Error::index(format!(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                value.dim()
            )));
        }
        index_fill(self_, dim, index, value)
    }
}

impl MaskedScatterCompositeImplicit for Composite {
    /// Position `i` of the mask's true elements (in row-major order) takes `source`'s `i`-th
    /// element: a gather by the running count of the mask, then `where`.
    fn masked_scatter(self_: &Tensor, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
        if mask.dtype() != DType::Bool {
            return Err(Error::runtime(format!(
                "masked_scatter_: expected BoolTensor for mask, got {}",
                type_meta_name(mask.dtype())
            )));
        }
        if source.dtype() != self_.dtype() {
            return Err(Error::runtime(format!(
                "masked_scatter: expected self and source to have same dtypes but got {} and {}",
                type_meta_name(self_.dtype()),
                type_meta_name(source.dtype())
            )));
        }
        let shape = infer_size(&self_.sizes(), &mask.sizes())?;
        let x = self_.try_expand(&shape)?;
        let m = mask.try_expand(&shape)?;
        let count = ops::cumsum::call(&ops::reshape::call(&m, &[-1])?, 0, Some(DType::I64))?;
        let needed = if count.numel() == 0 { 0 } else { count.try_select(0, -1)?.item::<i64>()? };
        if needed > source.numel() {
            return Err(Error::runtime(
                "masked_scatter: expected source to have at least as many elements as ones in mask",
            ));
        }
        if needed == 0 {
            return ops::deep_clone::call(&x, None);
        }
        let at = count.try_sub_scalar(1)?.try_clamp_min(0)?;
        let picked = ops::index_select::call(&ops::reshape::call(source, &[-1])?, 0, &at)?;
        ops::where_self::call(&m, &ops::reshape::call(&picked, &shape)?, &x)
    }
}

/// `index_reduce`'s checks, then the `scatter_reduce` index: `index[i]` at every position of
/// `source`'s slice `i` along `dim`. Returns (self as at least 1-D, dim, index, source).
fn index_reduce_args(
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    source: &Tensor,
    reduce: &str,
) -> Result<(Tensor, usize, Tensor, Tensor)> {
    const OP: &str = "index_reduce_";
    if !matches!(reduce, "prod" | "mean" | "amax" | "amin") {
        return Err(Error::value(format!(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
        )));
    }
    let (x, d, idx) = prepare(OP, self_, dim, index)?;
    let src = source_for(OP, self_, &x, d, idx.numel(), source)?;
    let n = x.sizes()[d];
    if crate::support::any_outside(&idx, 0, n)? {
        return Err(Error::index(format!("{OP}(): index out of range for dimension {d} with size {n}")));
    }
    let mut shape = vec![1; src.dim()];
    shape[d] = -1;
    let expanded = ops::expand::call(&ops::reshape::call(&idx, &shape)?, &src.sizes(), false)?;
    Ok((x, d, expanded, src))
}

impl IndexReduceCompositeImplicit for Composite {
    fn index_reduce(
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        source: &Tensor,
        reduce: &str,
        include_self: bool,
    ) -> Result<Tensor> {
        let (x, d, idx, src) = index_reduce_args(self_, dim, index, source, reduce)?;
        shaped_like(ops::scatter_reduce_two::call(&x, d as i64, &idx, &src, reduce, include_self)?, self_)
    }
}

impl IndexReduceInplaceCompositeImplicit for Composite {
    fn index_reduce_(
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        source: &Tensor,
        reduce: &str,
        include_self: bool,
    ) -> Result<Tensor> {
        let (x, d, idx, src) = index_reduce_args(self_, dim, index, source, reduce)?;
        ops::scatter_reduce_two_::call(&x, d as i64, &idx, &src, reduce, include_self)?;
        Ok(self_.clone())
    }
}
