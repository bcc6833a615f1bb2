//! `min.dim`, `argmin`, and the full reductions `min(self)` / `max(self)` (with their
//! `unary_out` forms).
//!
//! `min.dim` and `argmin` mirror `max.dim` and `argmax` with the order reversed (NaN still wins,
//! the first occurrence on ties); the full reductions reuse `amin`/`amax`'s NaN-propagating
//! loop over every dim, after PyTorch's check that the input is not empty.

use super::{amax_amin_into, check_nonempty_dim, set_reduction_output};
use crate::generated::decls::{
    ArgminOutCpu, ArgminOutMetaFn, MaxCpu, MaxMeta, MaxUnaryOutCpu, MaxUnaryOutMeta, MinCpu, MinDimMinMetaFn,
    MinDimMinPrecomputed, MinMeta, MinOutCpu, MinUnaryOutCpu, MinUnaryOutMeta,
};
use crate::iter::{copy_, reduce_with_index_kernel, scalar_type_name, StructuredOutputs};
use crate::support::resize_output;
use crate::{Cpu, Meta};
use oxten_runtime::{can_cast, match_dtype, wrap_dim, DType, Error, MemoryFormat, Result, Tensor};

/// The strict order `min.dim` and `argmin` use for non-NaN values.
#[inline(always)]
fn less<M: PartialOrd>(a: M, b: M) -> bool {
    a < b
}

// ---------------------------------------------------------------------------------------------
// min.dim
// ---------------------------------------------------------------------------------------------

/// `min.dim`'s meta function: as `max.dim`'s (values of the input's dtype, i64 indices).
impl MinDimMinMetaFn for Meta {
    fn min_dim_min(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        keepdim: bool,
    ) -> Result<MinDimMinPrecomputed> {
        let wrapped = wrap_dim(dim, self_.dim())? as i64;
        check_nonempty_dim("min", self_, wrapped)?;
        set_reduction_output(outs, 0, self_, Some(&[wrapped]), keepdim, self_.dtype())?;
        set_reduction_output(outs, 1, self_, Some(&[wrapped]), keepdim, DType::I64)?;
        Ok(MinDimMinPrecomputed { dim: wrapped })
    }
}

/// Values and first indices of the minimum along `dim`; NaN counts as the minimum (the first NaN
/// wins).
impl MinOutCpu for Cpu {
    fn min_out(self_: &Tensor, dim: i64, keepdim: bool, min: &Tensor, min_indices: &Tensor) -> Result<()> {
        match_dtype!(self_.dtype(), T => reduce_with_index_kernel::<T>(
            "min",
            Some(min),
            min_indices,
            self_,
            Some(dim),
            keepdim,
            less,
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// argmin
// ---------------------------------------------------------------------------------------------

/// `argmin`'s meta function: as `argmax`'s.
impl ArgminOutMetaFn for Meta {
    fn argmin_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<()> {
        match dim {
            Some(d) => {
                let wrapped = wrap_dim(d, self_.dim())? as i64;
                check_nonempty_dim("argmin", self_, wrapped)?;
            }
            None if self_.numel() == 0 => {
                return Err(Error::index("argmin(): Expected reduction dim to be specified for input.numel() == 0."));
            }
            None => {}
        }
        let dims = dim.map(|d| [d]);
        set_reduction_output(outs, 0, self_, dims.as_ref().map(|d| &d[..]), keepdim, DType::I64)
    }
}

/// Index of the first minimum (NaN counts as the minimum), along `dim` or over the flattened
/// input.
impl ArgminOutCpu for Cpu {
    fn argmin_out(self_: &Tensor, dim: Option<i64>, keepdim: bool, out: &Tensor) -> Result<()> {
        let dtype = self_.dtype();
        if dtype == DType::Bool {
            return Err(Error::dtype("argmin(): does not support bool input"));
        }
        match_dtype!(dtype, T => reduce_with_index_kernel::<T>("argmin", None, out, self_, dim, keepdim, less))
    }
}

// ---------------------------------------------------------------------------------------------
// min(self) / max(self)
// ---------------------------------------------------------------------------------------------

fn check_nonempty(op: &str, self_: &Tensor) -> Result<()> {
    if self_.numel() == 0 {
        return Err(Error::runtime(format!(
            "{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the \
             'dim' argument."
        )));
    }
    Ok(())
}

/// The 0-dim result of `min()` / `max()` over every element, checked: the Meta kernels' work.
fn extremum_meta(op: &str, self_: &Tensor) -> Result<Tensor> {
    check_nonempty(op, self_)?;
    Tensor::empty(&[], self_.dtype(), self_.device(), MemoryFormat::Contiguous)
}

/// The extremum of every element, as a 0-dim tensor of the input's dtype (NaN propagates).
fn extremum(op: &str, self_: &Tensor, is_max: bool) -> Result<Tensor> {
    let out = extremum_meta(op, self_)?;
    amax_amin_into(self_, &[], false, &out, is_max)?;
    Ok(out)
}

/// The checks of `min(self, out=out)` / `max(self, out=out)`, and `out` made 0-dim.
fn extremum_out_meta(op: &str, self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    if self_.device() != out.device() {
        return Err(Error::device(format!(
            "{op}(): expected out to be on device {}, but got {}",
            self_.device(),
            out.device()
        )));
    }
    if !can_cast(self_.dtype(), out.dtype()) {
        return Err(Error::dtype(format!(
            "{op}(): result type {} can't be cast to the desired output type {}",
            scalar_type_name(self_.dtype()),
            scalar_type_name(out.dtype())
        )));
    }
    resize_output(out, &[])?;
    check_nonempty(op, self_)?;
    Ok(out.clone())
}

/// `min(self, out=out)` / `max(self, out=out)`: `out` becomes 0-dim and receives the extremum
/// converted to its dtype (which the input's dtype must be castable to).
fn extremum_out(op: &str, self_: &Tensor, out: &Tensor, is_max: bool) -> Result<Tensor> {
    extremum_out_meta(op, self_, out)?;
    if out.dtype() == self_.dtype() {
        amax_amin_into(self_, &[], false, out, is_max)?;
    } else {
        copy_(out, &extremum(op, self_, is_max)?)?;
    }
    Ok(out.clone())
}

impl MinCpu for Cpu {
    fn min(self_: &Tensor) -> Result<Tensor> {
        extremum("min", self_, false)
    }
}

impl MinMeta for Meta {
    fn min(self_: &Tensor) -> Result<Tensor> {
        extremum_meta("min", self_)
    }
}

impl MaxCpu for Cpu {
    fn max(self_: &Tensor) -> Result<Tensor> {
        extremum("max", self_, true)
    }
}

impl MaxMeta for Meta {
    fn max(self_: &Tensor) -> Result<Tensor> {
        extremum_meta("max", self_)
    }
}

impl MinUnaryOutCpu for Cpu {
    fn min_unary_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        extremum_out("min", self_, out, false)
    }
}

impl MinUnaryOutMeta for Meta {
    fn min_unary_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        extremum_out_meta("min", self_, out)
    }
}

impl MaxUnaryOutCpu for Cpu {
    fn max_unary_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        extremum_out("max", self_, out, true)
    }
}

impl MaxUnaryOutMeta for Meta {
    fn max_unary_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        extremum_out_meta("max", self_, out)
    }
}
