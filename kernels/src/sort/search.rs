//! `searchsorted` and `bucketize`: binary search of each value in an ascending sequence (the
//! last dimension of `sorted_sequence`, one row per row of values, or one 1-D sequence for all),
//! in the common dtype of both, with PyTorch's treatment of NaN (a NaN value lands after every
//! element).

use super::SortKey;
use crate::generated::decls::{
    BucketizeCompositeImplicit, BucketizeScalarCompositeImplicit, SearchsortedCpu, SearchsortedScalarCompositeImplicit,
};
use crate::iter::to_dtype;
use crate::logical::promote::{result_type, Arg};
use crate::{Composite, Cpu};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// PyTorch's argument checks: `side` and `right` agree, the dims of sequence and values line
/// up, and a `sorter` is an int64 permutation-shaped tensor. Returns whether to search right.
fn check(
    sorted_sequence: &Tensor,
    self_: &Tensor,
    right: bool,
    side: Option<&str>,
    sorter: Option<&Tensor>,
) -> Result<bool> {
    let right =
        match side {
            None => right,
            Some("right") => true,
            Some("left") if right => return Err(Error::runtime(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True",
            )),
            Some("left") => false,
            Some(other) => {
                return Err(Error::runtime(format!(
                    "torch.searchsorted(): side can only be 'left' or 'right' but got {other}"
                )))
            }
        };
    let (sb, sv) = (sorted_sequence.sizes(), self_.sizes());
    if sorted_sequence.dim() == 0 {
        return Err(Error::runtime(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension",
        ));
    }
    if sorted_sequence.dim() != 1 && (sb.len() != sv.len() || sb[..sb.len() - 1] != sv[..sv.len() - 1]) {
        return Err(Error::runtime(format!(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor {:?} and input value tensor {:?}",
            &sb[..],
            &sv[..]
        )));
    }
    if let Some(s) = sorter {
        if s.dtype() != DType::I64 {
            return Err(Error::dtype(format!(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {}",
                crate::iter::scalar_type_name(s.dtype())
            )));
        }
        if s.sizes() != sb {
            return Err(Error::runtime("torch.searchsorted(): boundary and sorter must have the same size"));
        }
    }
    Ok(right)
}

/// The insertion points of `values` (row-major, `rows` rows) in `seq` (one row per value row,
/// or one shared row), left or right of equal elements.
fn search_typed<T: SortKey>(seq: &Tensor, values: &Tensor, sorter: Option<&[i64]>, right: bool) -> Result<Vec<i64>> {
    let seq_data = seq.to_vec::<T>()?;
    let vals = values.to_vec::<T>()?;
    let n = *seq.sizes().last().expect("checked: at least 1-D") as usize;
    let per_row = if values.dim() == 0 { 1 } else { *values.sizes().last().expect("not 0-dim") as usize };
    let shared = seq.dim() == 1;
    let mut out = Vec::with_capacity(vals.len());
    for (i, &v) in vals.iter().enumerate() {
        let row = if shared || per_row == 0 { 0 } else { i / per_row };
        let base = row * n;
        let at = |k: usize| match sorter {
            Some(s) => seq_data[base + s[base + k] as usize],
            None => seq_data[base + k],
        };
        // PyTorch's bounds: past every element that is not `> v` (right) or not `>= v` (left),
        // with C++'s comparisons, so a NaN value lands after every element.
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let b = at(mid);
            let go_right = if right { !b.ieee_gt(v) } else { !b.ieee_ge(v) };
            if go_right {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        out.push(lo as i64);
    }
    Ok(out)
}

impl SearchsortedCpu for Cpu {
    fn searchsorted(
        sorted_sequence: &Tensor,
        self_: &Tensor,
        out_int32: bool,
        right: bool,
        side: Option<&str>,
        sorter: Option<&Tensor>,
    ) -> Result<Tensor> {
        let right = check(sorted_sequence, self_, right, side, sorter)?;
        let common = result_type(&[Arg::Tensor(sorted_sequence), Arg::Tensor(self_)]);
        let (seq, vals) = (to_dtype(sorted_sequence, common)?, to_dtype(self_, common)?);
        let sorter = sorter.map(|s| s.to_vec::<i64>()).transpose()?;
        if let Some(s) = &sorter {
            let n = *sorted_sequence.sizes().last().expect("at least 1-D");
            if s.iter().any(|&k| k < 0 || k >= n) {
                return Err(Error::index("torch.searchsorted(): sorter index out of range"));
            }
        }
        let idx = with_key_type!(common, T => search_typed::<T>(&seq, &vals, sorter.as_deref(), right))?;
        let out = Tensor::from_vec(idx, &self_.sizes())?;
        if out_int32 {
            out.try_to_dtype(DType::I32)
        } else {
            Ok(out)
        }
    }
}

/// A Python number as the 0-dim tensor PyTorch's `scalar_to_tensor` makes (int64, float64 or
/// bool).
fn scalar_tensor(s: Scalar, like: &Tensor) -> Result<Tensor> {
    let dtype = match s {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::I64,
        _ => DType::F64,
    };
    ops::full::call(&[], s, Some(dtype), None, Some(like.device()), None)
}

impl SearchsortedScalarCompositeImplicit for Composite {
    fn searchsorted_scalar(
        sorted_sequence: &Tensor,
        self_: Scalar,
        out_int32: bool,
        right: bool,
        side: Option<&str>,
        sorter: Option<&Tensor>,
    ) -> Result<Tensor> {
        if sorted_sequence.dim() != 1 {
            return Err(Error::runtime(format!(
                "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim({}) and input value's dim(0) numel(1)",
                sorted_sequence.dim()
            )));
        }
        let value = scalar_tensor(self_, sorted_sequence)?;
        ops::searchsorted::call(sorted_sequence, &value, out_int32, right, side, sorter)
    }
}

fn check_boundaries(boundaries: &Tensor) -> Result<()> {
    if boundaries.dim() != 1 {
        return Err(Error::runtime(format!(
            "boundaries tensor must be 1 dimension, but got dim({})",
            boundaries.dim()
        )));
    }
    Ok(())
}

impl BucketizeCompositeImplicit for Composite {
    fn bucketize(self_: &Tensor, boundaries: &Tensor, out_int32: bool, right: bool) -> Result<Tensor> {
        check_boundaries(boundaries)?;
        ops::searchsorted::call(boundaries, self_, out_int32, right, None, None)
    }
}

impl BucketizeScalarCompositeImplicit for Composite {
    fn bucketize_scalar(self_: Scalar, boundaries: &Tensor, out_int32: bool, right: bool) -> Result<Tensor> {
        check_boundaries(boundaries)?;
        ops::searchsorted::call(boundaries, &scalar_tensor(self_, boundaries)?, out_int32, right, None, None)
    }
}
