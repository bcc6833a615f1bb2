//! Engine tests: inference mode.

#[allow(unused_imports)]
use super::minilib::*;
#[allow(unused_imports)]
use oxten::autograd::*;
#[allow(unused_imports)]
use oxten::{ops, DType, Result, Scalar, Tensor};
#[allow(unused_imports)]
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
#[allow(unused_imports)]
use std::sync::{Arc, Mutex};

#[test]
fn inference_tensors_in_autograd() {
    let x = leaf(&[1.0, 2.0]);
    let (y, view) = inference_mode(|| {
        let y = ops::mul::call(&x, &t(&[2.0, 2.0])).unwrap();
        let view = ops::slice::call(&y, 0, Some(0), Some(1), 1).unwrap();
        (y, view)
    });
    assert!(y.is_inference() && !y.requires_grad() && y.grad_fn().is_none());
    assert!(view.is_inference());
    // Used with a tensor that requires grad, it would have to be saved.
    let out = no_grad(|| ops::mul::call(&x, &y)).unwrap();
    let _ = out;
    let e = SavedVariable::new(&y, false).unwrap_err();
    assert!(e.message.starts_with("Inference tensors cannot be saved for backward."));
    let e = copy_(&y, &t(&[0.0, 0.0])).unwrap_err();
    assert!(e.message.starts_with("Inplace update to inference tensor outside InferenceMode is not allowed."));
    inference_mode(|| copy_(&y, &t(&[0.0, 0.0]))).unwrap();
}
