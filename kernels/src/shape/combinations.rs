//! `combinations`: the length-`r` combinations of a 1-D tensor's elements (Python's
//! `itertools.combinations`, or `combinations_with_replacement`), as rows. The positions depend
//! only on the length and `r`, so they are enumerated here and gathered with `index_select`,
//! which also gives the gradient.

use crate::generated::decls::CombinationsCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Tensor};

/// The positions of every combination, row after row, in lexicographic order.
fn positions(n: i64, r: usize, with_replacement: bool) -> Result<Vec<i64>> {
    let too_many =
        || Error::runtime(format!("combinations: too many combinations of {n} elements taken {r} at a time"));
    let mut out = Vec::new();
    if n == 0 || (!with_replacement && r as i64 > n) {
        return Ok(out);
    }
    let mut idx: Vec<i64> = Vec::new();
    idx.try_reserve_exact(r).map_err(|_| too_many())?;
    idx.extend((0..r as i64).map(|i| if with_replacement { 0 } else { i }));
    loop {
        out.try_reserve(r).map_err(|_| too_many())?;
        out.extend_from_slice(&idx);
        // The rightmost position that can still move right.
        let movable = (0..r).rev().find(|&i| {
            let limit = if with_replacement { n - 1 } else { n - (r - i) as i64 };
            idx[i] < limit
        });
        let Some(i) = movable else { return Ok(out) };
        idx[i] += 1;
        for j in i + 1..r {
            idx[j] = if with_replacement { idx[i] } else { idx[j - 1] + 1 };
        }
    }
}

impl CombinationsCompositeImplicit for Composite {
    fn combinations(self_: &Tensor, r: i64, with_replacement: bool) -> Result<Tensor> {
        if self_.dim() != 1 {
            return Err(Error::runtime(format!("Expect a 1D vector, but got shape {:?}", self_.sizes())));
        }
        if r < 0 {
            return Err(Error::runtime(format!("Expect a non-negative number, but got {r}")));
        }
        if r == 0 {
            return ops::empty::call(&[0], Some(self_.dtype()), None, Some(self_.device()), None, None);
        }
        let pos = positions(self_.sizes()[0], r as usize, with_replacement)?;
        let rows = (pos.len() / r as usize) as i64;
        let index = Tensor::from_slice(&pos, &[pos.len() as i64])?;
        let index = if self_.device() == index.device() { index } else { index.try_to_device(self_.device())? };
        debug_assert_eq!(index.dtype(), DType::I64);
        ops::view::call(&ops::index_select::call(self_, 0, &index)?, &[rows, r])
    }
}
