//! `_unique2` (`torch.unique` without `dim`): the distinct values, sorted, with each element's
//! position among them and each value's count. NaN never equals NaN, so every NaN is a value of
//! its own (after all numbers), as in PyTorch. `unique_consecutive` keeps one of each run of equal
//! neighbours; `unique_dim` and `unique_dim_consecutive` do the same for whole slices along a
//! dimension (slices equal when all their elements are).

use super::{pairs_of, SortKey};
use crate::generated::decls::{Unique2Cpu, UniqueConsecutiveCpu, UniqueDimConsecutiveCpu, UniqueDimCpu};
use crate::Cpu;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Tensor};
use std::cmp::Ordering;

fn unique_typed<T: SortKey>(
    self_: &Tensor,
    return_inverse: bool,
    return_counts: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    let data = self_.try_reshape(&[-1])?.to_vec::<T>()?;
    let mut pairs = pairs_of(&data);
    pairs.sort_by(|a, b| a.0.order(b.0));
    let (mut values, mut counts) = (Vec::new(), Vec::new());
    let mut inverse = vec![0i64; if return_inverse { data.len() } else { 0 }];
    for (k, &(v, i)) in pairs.iter().enumerate() {
        let same = k > 0 && !v.is_nan() && v.order(pairs[k - 1].0) == Ordering::Equal;
        if same {
            *counts.last_mut().expect("a run has started") += 1;
        } else {
            values.push(v);
            counts.push(1i64);
        }
        if return_inverse {
            inverse[i as usize] = values.len() as i64 - 1;
        }
    }
    let n = values.len() as i64;
    let inverse = if return_inverse {
        Tensor::from_vec(inverse, &self_.sizes())?
    } else {
        Tensor::from_vec(Vec::<i64>::new(), &[0])?
    };
    let counts =
        if return_counts { Tensor::from_vec(counts, &[n])? } else { Tensor::from_vec(Vec::<i64>::new(), &[0])? };
    Ok((Tensor::from_vec(values, &[n])?, inverse, counts))
}

impl Unique2Cpu for Cpu {
    fn unique2(
        self_: &Tensor,
        _sorted: bool,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        with_key_type!(self_.dtype(), T => unique_typed::<T>(self_, return_inverse, return_counts))
    }
}

/// IEEE equality (NaN equals nothing), as C++'s `==` in PyTorch's kernels.
fn ieee_eq<T: SortKey>(a: T, b: T) -> bool {
    !a.is_nan() && a.order(b) == Ordering::Equal
}

fn empty_i64() -> Result<Tensor> {
    Tensor::from_vec(Vec::<i64>::new(), &[0])
}

/// `unique_consecutive` of the flattened elements; the inverse has `self`'s shape.
fn consecutive_typed<T: SortKey>(
    self_: &Tensor,
    return_inverse: bool,
    return_counts: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    let data = self_.try_reshape(&[-1])?.to_vec::<T>()?;
    let (mut values, mut counts) = (Vec::<T>::new(), Vec::<i64>::new());
    let mut inverse = Vec::with_capacity(if return_inverse { data.len() } else { 0 });
    for &v in &data {
        if values.last().is_some_and(|&last| ieee_eq(v, last)) {
            *counts.last_mut().expect("a run has started") += 1;
        } else {
            values.push(v);
            counts.push(1);
        }
        if return_inverse {
            inverse.push(values.len() as i64 - 1);
        }
    }
    let n = values.len() as i64;
    let inverse = if return_inverse { Tensor::from_vec(inverse, &self_.sizes())? } else { empty_i64()? };
    let counts = if return_counts { Tensor::from_vec(counts, &[n])? } else { empty_i64()? };
    Ok((Tensor::from_vec(values, &[n])?, inverse, counts))
}

/// PyTorch's `_unique_dim_cpu_template`: the slices along `dim` (sorted unless `consecutive`),
/// one of each group of equal neighbours kept. The values come back as a view with `dim` moved
/// into place, the inverse and counts always.
fn unique_dim_typed<T: SortKey>(self_: &Tensor, dim: i64, consecutive: bool) -> Result<(Tensor, Tensor, Tensor)> {
    // A 0-dim tensor has no slices (PyTorch's `size(dim)` refuses it rather than wrapping).
    if self_.dim() == 0 {
        return Err(Error::index(format!("Dimension specified as {dim} but tensor has no dimensions")));
    }
    let d = wrap_dim(dim, self_.dim())?;
    let sizes = self_.sizes().to_vec();
    if self_.numel() == 0 {
        if sizes.iter().filter(|&&s| s == 0).count() != 1 {
            return Err(Error::runtime(
                "Number of zero sized dimensions is more than one, so unique cannot be applied ",
            ));
        }
        if sizes[d] != 0 {
            return Err(Error::runtime(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
            ));
        }
        let values = ops::empty::call(&sizes, Some(self_.dtype()), None, Some(self_.device()), None, None)?;
        return Ok((values, empty_i64()?, empty_i64()?));
    }
    let moved = ops::movedim::call(self_, d as i64, 0)?;
    let rows = sizes[d] as usize;
    let data = moved.to_vec::<T>()?;
    let len = data.len() / rows;
    let row = |i: usize| &data[i * len..(i + 1) * len];
    let mut order: Vec<usize> = (0..rows).collect();
    if !consecutive {
        // Lexicographic, NaN after numbers (a total order, so the sort is well defined).
        order.sort_by(|&a, &b| {
            row(a)
                .iter()
                .zip(row(b))
                .map(|(x, y)| x.order(*y))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(Ordering::Equal)
        });
    }
    let mut inverse = vec![0i64; rows];
    let (mut kept, mut counts) = (Vec::<usize>::new(), Vec::<i64>::new());
    for &i in &order {
        let same = kept.last().is_some_and(|&k| row(k).iter().zip(row(i)).all(|(x, y)| ieee_eq(*x, *y)));
        if same {
            *counts.last_mut().expect("a group has started") += 1;
        } else {
            kept.push(i);
            counts.push(1);
        }
        inverse[i] = kept.len() as i64 - 1;
    }
    let mut values = Vec::with_capacity(kept.len() * len);
    for &k in &kept {
        values.extend_from_slice(row(k));
    }
    let mut out_sizes = moved.sizes().to_vec();
    out_sizes[0] = kept.len() as i64;
    let values = ops::movedim::call(&Tensor::from_vec(values, &out_sizes)?, 0, d as i64)?;
    let groups = counts.len() as i64;
    Ok((values, Tensor::from_vec(inverse, &[rows as i64])?, Tensor::from_vec(counts, &[groups])?))
}

impl UniqueConsecutiveCpu for Cpu {
    /// Without `dim` (or with dim 0 of a 1-D tensor) the elements; otherwise the slices along
    /// `dim`, as PyTorch dispatches.
    fn unique_consecutive(
        self_: &Tensor,
        return_inverse: bool,
        return_counts: bool,
        dim: Option<i64>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        match dim {
            Some(d) if !(d == 0 && self_.dim() == 1) => {
                with_key_type!(self_.dtype(), T => unique_dim_typed::<T>(self_, d, true))
            }
            _ => with_key_type!(self_.dtype(), T => consecutive_typed::<T>(self_, return_inverse, return_counts)),
        }
    }
}

impl UniqueDimCpu for Cpu {
    fn unique_dim(
        self_: &Tensor,
        dim: i64,
        _sorted: bool,
        _return_inverse: bool,
        _return_counts: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        with_key_type!(self_.dtype(), T => unique_dim_typed::<T>(self_, dim, false))
    }
}

impl UniqueDimConsecutiveCpu for Cpu {
    fn unique_dim_consecutive(
        self_: &Tensor,
        dim: i64,
        _return_inverse: bool,
        _return_counts: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        with_key_type!(self_.dtype(), T => unique_dim_typed::<T>(self_, dim, true))
    }
}
