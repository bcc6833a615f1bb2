//! `_unique2` (`torch.unique` without `dim`): the distinct values, sorted, with each element's
//! position among them and each value's count. NaN never equals NaN, so every NaN is a value of
//! its own (after all numbers), as in PyTorch.

use super::{pairs_of, SortKey};
use crate::generated::decls::Unique2Cpu;
use crate::Cpu;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Result, Tensor};
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
