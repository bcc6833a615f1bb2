//! Engine tests: errors, anomaly, versions.

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
fn saved_tensor_modified_in_place_is_an_error_naming_the_node() {
    let a = leaf(&[1.0, 2.0, 3.0]);
    let b = exp(&a);
    no_grad(|| ops::add_scalar_::call(&b, Scalar::Float(1.0), Scalar::Int(1))).unwrap();
    let e = sum(&b).try_backward().unwrap_err();
    assert_eq!(
        e.message,
        "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."
    );
    // A modified saved input, through a view sharing its version counter.
    let x = mul(&a, &t(&[1.0, 1.0, 1.0]));
    let y = mul(&x, &x);
    let v = x.detach();
    no_grad(|| ops::mul_scalar_::call(&v, Scalar::Float(2.0))).unwrap();
    let e = sum(&y).try_backward().unwrap_err();
    assert!(e.message.contains("which is output 0 of MulBackward0, is at version 1; expected version 0"), "{e}");
}

#[test]
fn leaf_in_place_is_an_error_except_under_no_grad() {
    let w = leaf(&[1.0, 2.0]);
    let e = copy_(&w, &t(&[0.0, 0.0])).unwrap_err();
    assert_eq!(e.message, "a leaf Variable that requires grad is being used in an in-place operation.");
    let v0 = w.version();
    no_grad(|| copy_(&w, &t(&[0.0, 0.0]))).unwrap();
    assert_eq!(w.version(), v0 + 1, "the version still moves under no_grad");
    assert!(w.is_leaf() && w.requires_grad());
}

#[test]
fn anomaly_mode_reports_nan_gradients_with_the_forward_trace() {
    let x = leaf(&[1.0, 2.0]);
    let err = detect_anomaly(|| {
        let y = mul(&x, &t(&[f32::NAN, 1.0]));
        sum(&y).try_backward().unwrap_err()
    });
    assert!(err.message.starts_with("Function 'MulBackward0' returned nan values in its 0th output."), "{err}");
    assert!(err.message.contains("(forward op created at:"), "{err}");
    assert!(!err.message.contains("<unknown"), "{err}");
    // Without anomaly mode NaN gradients pass.
    let y = mul(&x, &t(&[f32::NAN, 1.0]));
    sum(&y).backward();
    assert!(vals(&x.grad().unwrap())[0].is_nan());
}

#[test]
fn node_errors_propagate_and_anomaly_mode_names_the_node() {
    let x = leaf(&[1.0]);
    let y = set_failing(&x);
    let e = no_grad(|| y.try_backward_with(BackwardOpts { create_graph: true, ..Default::default() })).unwrap_err();
    assert_eq!(e.message, "boom");
    assert!(is_grad_enabled(), "modes restored after the error");
    let e = detect_anomaly(|| set_failing(&x).try_backward().unwrap_err());
    assert!(e.message.starts_with("boom\n\nError detected in FailingBackward."), "{e}");
    assert!(e.message.contains("Traceback of forward call that caused the error"), "{e}");
}

struct FailNode {
    base: NodeBase,
}
impl Node for FailNode {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "FailingBackward".into()
    }
    fn apply(&self, _: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Err(oxten::Error::runtime("boom"))
    }
}
fn set_failing(x: &Tensor) -> Tensor {
    let out = t(&[1.0]);
    set_history(&[&out], Arc::new(FailNode { base: NodeBase::new(edges(&[x])) }));
    out
}
