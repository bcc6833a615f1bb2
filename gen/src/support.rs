//! Helpers for the generated registrations.

use oxten_runtime::Tensor;

/// The one output of a structured kernel.
pub(crate) fn take1(v: Vec<Tensor>) -> Tensor {
    v.into_iter().next().expect("a structured op with one return has one output")
}

/// The two outputs of a structured kernel.
pub(crate) fn take2(v: Vec<Tensor>) -> (Tensor, Tensor) {
    let mut it = v.into_iter();
    let a = it.next().expect("a structured op with two returns has two outputs");
    let b = it.next().expect("a structured op with two returns has two outputs");
    (a, b)
}
