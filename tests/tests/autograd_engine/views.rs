//! Engine tests: views and in-place.

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
fn copy_into_a_view_routes_gradients_through_copy_slices() {
    let base = no_grad(|| ops::zeros::call(&[4], None, None, None, None)).unwrap();
    let before = slice(&base, 0, 2); // taken before the in-place op
    let x = leaf(&[10.0, 20.0]);
    let v = slice(&base, 1, 3);
    assert!(!base.requires_grad() && !v.requires_grad());
    copy_(&v, &x).unwrap();
    assert!(base.requires_grad());
    assert_eq!(base.grad_fn().unwrap().name(), "CopySlices");
    assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
    assert_eq!(vals(&base), [0.0, 10.0, 20.0, 0.0]);
    let c = t(&[1.0, 2.0, 3.0, 4.0]);
    sum(&mul(&base, &c)).backward();
    assert_eq!(vals(&x.grad().unwrap()), [2.0, 3.0], "x.grad == c[1:3]");
    // Views read after the in-place op see the new history, also one taken before it.
    x.set_grad(None);
    assert!(before.requires_grad());
    sum(&mul(&before, &t(&[5.0, 7.0]))).backward();
    assert_eq!(vals(&x.grad().unwrap()), [7.0, 0.0]);
    x.set_grad(None);
    sum(&mul(&v, &t(&[5.0, 7.0]))).backward();
    assert_eq!(vals(&x.grad().unwrap()), [5.0, 7.0]);
}

#[test]
fn in_place_on_a_view_keeps_the_rest_of_the_base_history() {
    let a = leaf(&[1.0, 2.0, 3.0, 4.0]);
    let base = mul(&a, &t(&[2.0, 2.0, 2.0, 2.0]));
    let x = leaf(&[5.0, 6.0]);
    let v = slice(&base, 1, 3);
    copy_(&v, &x).unwrap();
    let c = t(&[1.0, 10.0, 100.0, 1000.0]);
    sum(&mul(&base, &c)).backward();
    // The overwritten region gets no gradient from a; the rest flows through the old history.
    assert_eq!(vals(&a.grad().unwrap()), [2.0, 0.0, 0.0, 2000.0]);
    assert_eq!(vals(&x.grad().unwrap()), [10.0, 100.0]);
}

#[test]
fn view_of_a_leaf_in_place_is_an_error() {
    let x = leaf(&[1.0, 2.0]);
    let v = no_grad(|| ops::slice::call(&x, 0, Some(0), Some(1), 1)).unwrap();
    set_history(&[&v], Arc::new(PassNode { base: NodeBase::new(edges(&[&x])), name: "SliceBackward0".into() }));
    make_view(&v, &x);
    let e = copy_(&v, &t(&[0.0])).unwrap_err();
    assert_eq!(e.message, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}
