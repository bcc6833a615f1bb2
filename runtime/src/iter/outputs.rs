//! `StructuredOutputs`: the `set_output` hook of structured kernels.
//!
//! A structured operator has one meta function shared by three variants. The variants differ only
//! in what happens once the meta function knows an output's sizes, strides and dtype:
//!
//! * **functional** (`add(a, b)`): allocate a fresh tensor;
//! * **inplace** (`a.add_(b)`): check that `self` already has that geometry;
//! * **out** (`add(a, b, out=c)`): check dtype and device, resize `c` if its sizes differ.

use crate::device::{Device, MemoryFormat};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

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
    given: Vec<Option<Tensor>>,
    /// The tensor each slot resolves to once `set_output` ran.
    results: Vec<Option<Tensor>>,
}

impl StructuredOutputs {
    /// `n` outputs, each allocated by `set_output`.
    pub fn functional(n: usize) -> Self {
        StructuredOutputs { mode: OutputMode::Functional, given: vec![None; n], results: vec![None; n] }
    }

    /// One output, `self_`, written in place.
    pub fn inplace(self_: &Tensor) -> Self {
        StructuredOutputs { mode: OutputMode::Inplace, given: vec![Some(self_.clone())], results: vec![None] }
    }

    /// The user's `out=` tensors.
    pub fn out(outs: &[&Tensor]) -> Self {
        StructuredOutputs {
            mode: OutputMode::Out,
            given: outs.iter().map(|t| Some((*t).clone())).collect(),
            results: vec![None; outs.len()],
        }
    }

    /// Slots that are given (`Some`) behave like `out=`; missing ones are allocated. This is what
    /// the plain [`TensorIteratorConfig::build`](super::TensorIteratorConfig::build) uses.
    pub(crate) fn from_given(given: Vec<Option<Tensor>>) -> Self {
        let n = given.len();
        StructuredOutputs { mode: OutputMode::Out, given, results: vec![None; n] }
    }

    pub fn mode(&self) -> OutputMode {
        self.mode
    }

    /// Number of outputs.
    pub fn len(&self) -> usize {
        self.given.len()
    }

    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// The tensor the caller supplied for output `idx` (inplace `self`, an `out=` tensor), if any.
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
            None => match strides {
                Some(st) => Tensor::empty_strided(sizes, st, dtype, device)?,
                None => Tensor::empty(sizes, dtype, device, MemoryFormat::Contiguous)?,
            },
            Some(t) if self.mode == OutputMode::Inplace => {
                check_inplace(&t, sizes, dtype, device)?;
                t
            }
            Some(t) => {
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
    pub fn output(&self, idx: usize) -> &Tensor {
        self.results[idx].as_ref().unwrap_or_else(|| panic!("set_output was not called for output {idx}"))
    }

    /// The user-visible results: the new tensors (functional), `self` (inplace), or the `out=`
    /// tensors (out). Slots whose `set_output` never ran fall back to the given tensor.
    ///
    /// # Panics
    /// If a functional slot was never set.
    pub fn into_outputs(self) -> Vec<Tensor> {
        self.results
            .into_iter()
            .zip(self.given)
            .enumerate()
            .map(|(i, (r, g))| r.or(g).unwrap_or_else(|| panic!("set_output was not called for output {i}")))
            .collect()
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
