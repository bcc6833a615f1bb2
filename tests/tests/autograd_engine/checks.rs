//! Engine tests: central gradient checks.

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
fn broadcast_gradients_are_summed_to_the_input_shape() {
    let x = leaf(&[1.0, 2.0, 3.0]);
    let c = t2(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let y = mul(&x, &c); // [2, 3]; MulBackward0 returns a [2, 3] gradient for x
    sum(&y).backward();
    assert_eq!(x.grad().unwrap().sizes()[..], [3]);
    assert_eq!(vals(&x.grad().unwrap()), [5.0, 7.0, 9.0]);
    // A keepdim-style broadcast: [2, 1] input.
    let x = t2(&[1.0, 2.0], &[2, 1]).requires_grad_(true);
    sum(&mul(&x, &c)).backward();
    assert_eq!(x.grad().unwrap().sizes()[..], [2, 1]);
    assert_eq!(vals(&x.grad().unwrap()), [6.0, 15.0]);
}

#[test]
fn gradients_are_cast_to_the_input_dtype() {
    let x = leaf(&[1.0, 2.0]);
    let y = record_fn(&x, t(&[0.0, 0.0]), "CastBackward", |g| {
        vec![Some(ops::to_dtype::call(&g, DType::F64, false, false, None).unwrap())]
    });
    sum(&y).backward();
    let g = x.grad().unwrap();
    assert_eq!(g.dtype(), DType::F32);
    assert_eq!(vals(&g), [1.0, 1.0]);
}

#[test]
fn invalid_gradients_are_reported_with_the_node_name() {
    let x = leaf(&[1.0, 2.0, 3.0]);
    let y = record_fn(&x, t(&[0.0; 3]), "BadBackward", |_| vec![Some(t(&[1.0, 2.0]))]);
    let e = sum(&y).try_backward().unwrap_err();
    assert_eq!(
        e.message,
        "Function BadBackward returned an invalid gradient at index 0 - got [2] but expected shape compatible with [3]"
    );
    let y = record_fn(&x, t(&[0.0; 3]), "BadBackward", |g| vec![Some(g.clone()), Some(g)]);
    let e = sum(&y).try_backward().unwrap_err();
    assert_eq!(e.message, "Function BadBackward returned an invalid number of gradients - expected 1, but got 2");
}
