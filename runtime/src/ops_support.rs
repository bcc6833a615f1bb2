//! Small helpers the generated operator layer calls.

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The panicking forms of operators unwrap through here, so the panic message is the error's
/// message and points at the caller.
#[track_caller]
#[inline]
pub fn unwrap_op<T>(r: Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

/// A tensor-list argument as the typed entry points take it, from `&[Tensor]`, `&[&Tensor]` or
/// `&Vec<Tensor>` (handles are cloned: a reference count each).
pub fn tensor_list(ts: &[impl AsRef<Tensor>]) -> Vec<Tensor> {
    ts.iter().map(|t| t.as_ref().clone()).collect()
}

/// The `device_check: ExactSame` check: every tensor argument on one device.
pub fn check_same_device(op: &str, tensors: &[&Tensor]) -> Result<()> {
    if let Some(first) = tensors.first() {
        for t in &tensors[1..] {
            if t.device() != first.device() {
                return Err(Error::device(format!(
                    "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
                    first.device(),
                    t.device()
                ))
                .in_op(op));
            }
        }
    }
    Ok(())
}
