//! `all` and `any`: every element, one dim (`.dim`) or a list of dims (`.dims`).
//!
//! The result is bool, except that a uint8 input gives uint8 (0/1) for backward compatibility,
//! as in PyTorch; an `out=` tensor must be bool or uint8 and decides the dtype. `dims=None`
//! reduces every dim, but an explicit empty list reduces none (the result is `x != 0`
//! elementwise) — PyTorch's `allow_empty_dims` for these two operators. The input is converted
//! to the result dtype first (`make_reduction_from_out_ty`); a one-element input is converted
//! to bool directly, and an empty reduction gives the identity (true for `all`, false for
//! `any`).

use super::set_reduction_output;
use crate::generated::decls::{
    AllAllOutCpu, AllAllOutMetaFn, AllDimsOutCpu, AllDimsOutMetaFn, AllOutCpu, AllOutMetaFn, AnyAllOutCpu,
    AnyAllOutMetaFn, AnyDimsOutCpu, AnyDimsOutMetaFn, AnyOutCpu, AnyOutMetaFn,
};
use crate::iter::{copy_, make_reduction, reduce_kernel, scalar_type_name, to_dtype, StructuredOutputs};
use crate::{Cpu, Meta};
use oxten_runtime::{DType, Error, Result, Tensor};

/// The dims of a reduction: `All` (no dim argument, or `None`), `Some(list)` (an empty list
/// reducing nothing).
#[derive(Clone, Copy)]
pub(super) enum Dims<'a> {
    All,
    List(&'a [i64]),
}

impl<'a> Dims<'a> {
    pub(super) fn of(dim: Option<&'a [i64]>) -> Self {
        dim.map_or(Dims::All, Dims::List)
    }
    /// The dims in the form of the runtime's reduction helpers (`None`: every dim).
    pub(super) fn as_reduction(self) -> Option<&'a [i64]> {
        match self {
            Dims::All => None,
            Dims::List(ds) => Some(ds),
        }
    }
    pub(super) fn reduces_nothing(self) -> bool {
        matches!(self, Dims::List([]))
    }
}

/// `allany_meta`: checks an `out=` dtype, and sets the output (bool, or uint8 for a uint8
/// input or output).
fn allany_meta(name: &str, outs: &mut StructuredOutputs, self_: &Tensor, dims: Dims, keepdim: bool) -> Result<()> {
    let out_dtype = match outs.maybe_get_output(0) {
        Some(o) if o.dtype() != DType::Bool && o.dtype() != DType::U8 => {
            return Err(Error::dtype(format!(
                "{name} only supports bool tensor for result, got: {}",
                scalar_type_name(o.dtype())
            )));
        }
        Some(o) => o.dtype(),
        None if self_.dtype() == DType::U8 => DType::U8,
        None => DType::Bool,
    };
    if dims.reduces_nothing() {
        return outs.set_output(0, &self_.sizes(), None, out_dtype, self_.device());
    }
    set_reduction_output(outs, 0, self_, dims.as_reduction(), keepdim, out_dtype)
}

/// `allany_impl`: the reduction of `self_` into `out` (shaped by the meta function).
fn allany_impl(self_: &Tensor, dims: Dims, keepdim: bool, out: &Tensor, is_all: bool) -> Result<()> {
    if self_.numel() == 1 {
        // One element: its truth value, whatever the dims (PyTorch's fast path).
        let b = to_dtype(self_, DType::Bool)?;
        let ones = vec![1i64; out.dim()];
        return copy_(out, &b.alias_with_layout(&out.sizes(), &ones, b.storage_offset())?);
    }
    let input = to_dtype(self_, out.dtype())?;
    if dims.reduces_nothing() {
        // Nothing reduced: `identity op x` is the truth value of x (after the conversion).
        return copy_(out, &to_dtype(&input, DType::Bool)?);
    }
    let iter = make_reduction(out, &input, dims.as_reduction(), keepdim)?;
    match (out.dtype(), is_all) {
        (DType::Bool, true) => reduce_kernel::<bool, bool, bool>(&iter, true, |a, x| a && x, |a, b| a && b, |a| a),
        (DType::Bool, false) => reduce_kernel::<bool, bool, bool>(&iter, false, |a, x| a || x, |a, b| a || b, |a| a),
        (DType::U8, true) => reduce_kernel::<u8, bool, u8>(&iter, true, |a, x| a && x != 0, |a, b| a && b, u8::from),
        (DType::U8, false) => reduce_kernel::<u8, bool, u8>(&iter, false, |a, x| a || x != 0, |a, b| a || b, u8::from),
        (other, _) => {
            return Err(Error::dtype(format!(
                "{} only supports bool tensor for result, got: {}",
                if is_all { "all" } else { "any" },
                scalar_type_name(other)
            )))
        }
    }
    Ok(())
}

impl AllAllOutMetaFn for Meta {
    fn all_all_out(outs: &mut StructuredOutputs, self_: &Tensor) -> Result<()> {
        allany_meta("all", outs, self_, Dims::All, false)
    }
}

impl AllAllOutCpu for Cpu {
    fn all_all_out(self_: &Tensor, out: &Tensor) -> Result<()> {
        allany_impl(self_, Dims::All, false, out, true)
    }
}

impl AllOutMetaFn for Meta {
    fn all_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, keepdim: bool) -> Result<()> {
        allany_meta("all", outs, self_, Dims::List(&[dim]), keepdim)
    }
}

impl AllOutCpu for Cpu {
    fn all_out(self_: &Tensor, dim: i64, keepdim: bool, out: &Tensor) -> Result<()> {
        allany_impl(self_, Dims::List(&[dim]), keepdim, out, true)
    }
}

impl AllDimsOutMetaFn for Meta {
    fn all_dims_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: Option<&[i64]>, keepdim: bool) -> Result<()> {
        allany_meta("all", outs, self_, Dims::of(dim), keepdim)
    }
}

impl AllDimsOutCpu for Cpu {
    fn all_dims_out(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, out: &Tensor) -> Result<()> {
        allany_impl(self_, Dims::of(dim), keepdim, out, true)
    }
}

impl AnyAllOutMetaFn for Meta {
    fn any_all_out(outs: &mut StructuredOutputs, self_: &Tensor) -> Result<()> {
        allany_meta("any", outs, self_, Dims::All, false)
    }
}

impl AnyAllOutCpu for Cpu {
    fn any_all_out(self_: &Tensor, out: &Tensor) -> Result<()> {
        allany_impl(self_, Dims::All, false, out, false)
    }
}

impl AnyOutMetaFn for Meta {
    fn any_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, keepdim: bool) -> Result<()> {
        allany_meta("any", outs, self_, Dims::List(&[dim]), keepdim)
    }
}

impl AnyOutCpu for Cpu {
    fn any_out(self_: &Tensor, dim: i64, keepdim: bool, out: &Tensor) -> Result<()> {
        allany_impl(self_, Dims::List(&[dim]), keepdim, out, false)
    }
}

impl AnyDimsOutMetaFn for Meta {
    fn any_dims_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: Option<&[i64]>, keepdim: bool) -> Result<()> {
        allany_meta("any", outs, self_, Dims::of(dim), keepdim)
    }
}

impl AnyDimsOutCpu for Cpu {
    fn any_dims_out(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, out: &Tensor) -> Result<()> {
        allany_impl(self_, Dims::of(dim), keepdim, out, false)
    }
}
