//! `StructuredOutputs`: the `set_output` hook of structured kernels.
//!
//! A structured operator has one meta function shared by three variants. The variants differ only
//! in what happens once the meta function knows an output's sizes, strides and dtype:
//!
//! * **functional** (`add(a, b)`): allocate a fresh tensor;
//! * **inplace** (`a.add_(b)`): check that `self` already has that geometry;
//! * **out** (`add(a, b, out=c)`): check dtype and device, resize `c` if its sizes differ.

use super::small::SmallVec;
use crate::device::{Device, MemoryFormat};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// One optional tensor per output, inline for the usual one or two outputs.
type Slots = SmallVec<Option<Tensor>, 2>;

#[inline]
fn none_slots(n: usize) -> Slots {
    let mut slots = Slots::new();
    for _ in 0..n {
        slots.push(None);
    }
    slots
}

/// Which structured variant is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Outputs are allocated by [`StructuredOutputs::set_output`].
    Functional,
    /// Output 0 is `self`; `set_output` only checks it.
    Inplace,
    /// The user passed `out=` tensors; `set_output` checks and resizes them.
    Out,
}

/// The outputs of one structured-kernel call: what `set_output` does once the meta function
/// knows an output's geometry depends on the variant (functional: allocate; inplace: check
/// `self`; out: check dtype/device and resize).
pub struct StructuredOutputs {
    mode: OutputMode,
    /// Tensors the caller supplied (inplace `self`, `out=` tensors); `None` for functional slots.
    given: Slots,
    /// The tensor each slot resolves to once `set_output` ran.
    results: Slots,
    /// Identities ([`Tensor::impl_id`]) of the inputs, for the out= mode: an `out=` tensor that
    /// is also an input must not be resized before the kernel has read it.
    inputs: SmallVec<usize, 4>,
}

impl StructuredOutputs {
    /// `n` outputs, each allocated by `set_output`.
    #[inline]
    pub fn functional(n: usize) -> Self {
        StructuredOutputs {
            mode: OutputMode::Functional,
            given: none_slots(n),
            results: none_slots(n),
            inputs: SmallVec::new(),
        }
    }

    /// One output, `self_`, written in place.
    #[inline]
    pub fn inplace(self_: &Tensor) -> Self {
        StructuredOutputs {
            mode: OutputMode::Inplace,
            given: [Some(self_.clone())].into_iter().collect(),
            results: none_slots(1),
            inputs: SmallVec::new(),
        }
    }

    /// The user's `out=` tensors.
    #[inline]
    pub fn out(outs: &[&Tensor]) -> Self {
        StructuredOutputs {
            mode: OutputMode::Out,
            given: outs.iter().map(|t| Some((*t).clone())).collect(),
            results: none_slots(outs.len()),
            inputs: SmallVec::new(),
        }
    }

    /// Records the call's tensor inputs (out= mode): resizing an `out=` tensor that is one of
    /// them would change an input before the kernel reads it, so that is an error.
    #[inline]
    pub fn with_inputs(mut self, inputs: &[Option<&Tensor>]) -> Self {
        self.inputs = inputs.iter().flatten().map(|t| t.impl_id()).collect();
        self
    }

    /// Slots that are given (`Some`) behave like `out=`; missing ones are allocated. This is what
    /// the plain [`TensorIteratorConfig::build`](super::TensorIteratorConfig::build) uses.
    pub(crate) fn from_given(given: impl IntoIterator<Item = Option<Tensor>>) -> Self {
        let given: Slots = given.into_iter().collect();
        let n = given.len();
        StructuredOutputs { mode: OutputMode::Out, given, results: none_slots(n), inputs: SmallVec::new() }
    }

    #[inline]
    pub fn mode(&self) -> OutputMode {
        self.mode
    }

    /// Number of outputs.
    #[inline]
    pub fn len(&self) -> usize {
        self.given.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// The tensor the caller supplied for output `idx` (inplace `self`, an `out=` tensor), if any.
    #[inline]
    pub fn maybe_get_output(&self, idx: usize) -> Option<&Tensor> {
        self.given.get(idx).and_then(Option::as_ref)
    }

    /// Called once the op's meta function knows output `idx`'s geometry. `strides` (in elements)
    /// is a layout request: used when allocating, and when an `out=` tensor has to be resized;
    /// `None` means contiguous.
    pub fn set_output(
        &mut self,
        idx: usize,
        sizes: &[i64],
        strides: Option<&[i64]>,
        dtype: DType,
        device: Device,
    ) -> Result<()> {
        if idx >= self.len() {
            return Err(Error::index(format!(
                "set_output: output index {idx} out of range for {} outputs",
                self.len()
            )));
        }
        let result = match self.given[idx].clone() {
            // Deferred: the kernel that follows overwrites the output without zero-filling it
            // first (and anyone reading it before that still sees zeros).
            None => match strides {
                Some(st) => Tensor::empty_strided_deferred(sizes, st, dtype, device)?,
                None => Tensor::empty_deferred(sizes, dtype, device, MemoryFormat::Contiguous)?,
            },
            Some(t) if self.mode == OutputMode::Inplace => {
                check_inplace(&t, sizes, dtype, device)?;
                t
            }
            Some(t) => {
                if self.inputs.contains(&t.impl_id()) {
                    check_out_input_keeps_sizes(&t, sizes)?;
                }
                resize_out(&t, sizes, strides, dtype, device)?;
                t
            }
        };
        self.results[idx] = Some(result);
        Ok(())
    }

    /// The tensor the kernel writes for output `idx`.
    ///
    /// # Panics
    /// If `set_output(idx, ..)` has not been called.
    #[inline]
    pub fn output(&self, idx: usize) -> &Tensor {
        self.results[idx].as_ref().unwrap_or_else(|| panic!("set_output was not called for output {idx}"))
    }

    /// The user-visible results: the new tensors (functional), `self` (inplace), or the `out=`
    /// tensors (out). Slots whose `set_output` never ran fall back to the given tensor.
    ///
    /// # Panics
    /// If a functional slot was never set.
    #[inline]
    pub fn into_outputs(mut self) -> Vec<Tensor> {
        let mut v = Vec::with_capacity(self.results.len());
        for i in 0..self.results.len() {
            let t = self.results[i].take().or_else(|| self.given[i].take());
            v.push(t.unwrap_or_else(|| panic!("set_output was not called for output {i}")));
        }
        v
    }
}

/// The in-place variant's check: `self` must already have the result's sizes, dtype and device.
fn check_inplace(t: &Tensor, sizes: &[i64], dtype: DType, device: Device) -> Result<()> {
    if t.sizes() != sizes {
        return Err(Error::shape(format!(
            "output with shape {:?} doesn't match the broadcast shape {:?}",
            &t.sizes()[..],
            sizes
        )));
    }
    if t.dtype() != dtype {
        return Err(Error::dtype(format!(
            "Bad in-place call: input tensor dtype {} and output tensor dtype {dtype} should match",
            t.dtype()
        )));
    }
    if t.device() != device {
        return Err(Error::device(format!(
            "Bad in-place call: input tensor device {} and output tensor device {device} should match",
            t.device()
        )));
    }
    Ok(())
}

/// PyTorch's `resize_out`: check device and dtype, then resize; only a tensor that was actually
/// resized gets the requested strides.
/// The check for an `out=` tensor that is also one of the call's inputs: resizing it would change
/// the input before the kernel reads it, so it must already have `sizes`. Shared by the
/// structured out= wrappers and hand-written out= kernels.
pub fn check_out_input_keeps_sizes(out: &Tensor, sizes: &[i64]) -> Result<()> {
    if out.sizes() == sizes {
        return Ok(());
    }
    Err(Error::overlap(format!(
        "unsupported operation: the out= tensor of sizes {:?} is also an input, and would have to be resized to \
         {sizes:?} before it is read. Please pass another tensor as out=.",
        &out.sizes()[..]
    )))
}

fn resize_out(t: &Tensor, sizes: &[i64], strides: Option<&[i64]>, dtype: DType, device: Device) -> Result<()> {
    if t.device() != device {
        return Err(Error::device(format!(
            "Expected out tensor to have device {device}, but got {} instead",
            t.device()
        )));
    }
    if t.dtype() != dtype {
        return Err(Error::dtype(format!("Expected out tensor to have dtype {dtype}, but got {} instead", t.dtype())));
    }
    if t.sizes() != sizes {
        resize_as_requested(t, sizes, strides)?;
    }
    Ok(())
}

/// Resizes `t` to `sizes`, with `strides` when given and contiguous strides otherwise.
pub(crate) fn resize_as_requested(t: &Tensor, sizes: &[i64], strides: Option<&[i64]>) -> Result<()> {
    t.resize_(sizes, MemoryFormat::Contiguous)?;
    if let Some(st) = strides {
        if t.strides() != st {
            t.set_layout_(sizes, st, t.storage_offset())?;
        }
    }
    Ok(())
}
