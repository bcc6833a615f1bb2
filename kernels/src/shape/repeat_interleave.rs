//! `repeat_interleave`: each element (or slice along `dim`) repeated `repeats[i]` times. The
//! counts become an index vector (`repeat_interleave.Tensor`), and the tensor forms are an
//! `index_select` with it, so their gradient is `index_select`'s.

use crate::generated::decls::{
    RepeatInterleaveCpu, RepeatInterleaveSelfIntCompositeImplicit, RepeatInterleaveSelfTensorCompositeImplicit,
};
use crate::iter::to_dtype;
use crate::{Composite, Cpu};
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Tensor};

impl RepeatInterleaveCpu for Cpu {
    /// `[0, …, 0, 1, …, 1, …]`: index `i` repeated `repeats[i]` times.
    fn repeat_interleave(repeats: &Tensor, output_size: Option<i64>) -> Result<Tensor> {
        if repeats.dim() != 1 {
            return Err(Error::runtime("repeat_interleave only accept 1D vector as repeat"));
        }
        if !matches!(repeats.dtype(), DType::I64 | DType::I32) {
            return Err(Error::dtype("repeats has to be Long or Int tensor"));
        }
        let counts = to_dtype(repeats, DType::I64)?.to_vec::<i64>()?;
        if counts.iter().any(|&c| c < 0) {
            return Err(Error::runtime("repeats can not be negative"));
        }
        let total = counts.iter().try_fold(0i64, |acc, &c| acc.checked_add(c));
        let total = total.ok_or_else(|| Error::runtime("repeat_interleave: the total number of repeats overflows"))?;
        if let Some(size) = output_size {
            if size != total {
                return Err(Error::runtime(format!(
                    "allocated size does not match required size: output_size is {size} but the repeats sum to {total}"
                )));
            }
        }
        let mut index = oxten_runtime::error::try_vec_with_capacity(total as usize)?;
        for (i, &c) in counts.iter().enumerate() {
            index.extend(std::iter::repeat_n(i as i64, c as usize));
        }
        // The result has the dtype of `repeats` (int32 or int64).
        Tensor::from_vec(index, &[total])?.try_to_dtype(repeats.dtype())
    }
}

impl RepeatInterleaveSelfTensorCompositeImplicit for Composite {
    fn repeat_interleave_self_tensor(
        self_: &Tensor,
        repeats: &Tensor,
        dim: Option<i64>,
        output_size: Option<i64>,
    ) -> Result<Tensor> {
        let (input, d) = match dim {
            Some(d) => (self_.clone(), wrap_dim(d, self_.dim())? as i64),
            None => (self_.try_reshape(&[-1])?, 0),
        };
        let len = if input.dim() == 0 { 1 } else { input.sizes()[d as usize] };
        let repeats = match repeats.dim() {
            0 => repeats.try_reshape(&[1])?.try_expand(&[len])?,
            1 if repeats.sizes()[0] == 1 => repeats.try_expand(&[len])?,
            1 if repeats.sizes()[0] == len => repeats.clone(),
            1 => {
                return Err(Error::runtime(format!(
                    "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({d}) = {len}",
                    repeats.sizes()[0]
                )))
            }
            _ => return Err(Error::runtime("repeats must be 0-dim or 1-dim tensor")),
        };
        let index = ops::repeat_interleave::call(&repeats, output_size)?;
        input.try_index_select(d, &index)
    }
}

impl RepeatInterleaveSelfIntCompositeImplicit for Composite {
    fn repeat_interleave_self_int(
        self_: &Tensor,
        repeats: i64,
        dim: Option<i64>,
        output_size: Option<i64>,
    ) -> Result<Tensor> {
        let repeats = Tensor::scalar(repeats);
        ops::repeat_interleave_self_tensor::call(self_, &repeats, dim, output_size)
    }
}
