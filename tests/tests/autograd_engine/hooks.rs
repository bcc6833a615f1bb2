//! Engine tests: hooks.

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
fn tensor_hooks_see_and_replace_gradients() {
    let x = leaf(&[1.0, 2.0]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _ = x
        .register_hook(move |g| {
            s.lock().unwrap().push(vals(g));
            Ok(Some(ops::mul_scalar::call(g, Scalar::Float(10.0))?))
        })
        .unwrap();
    let h = mul(&x, &t(&[2.0, 2.0]));
    let handle = h.register_hook(|g| Ok(Some(ops::add_scalar::call(g, Scalar::Float(1.0), Scalar::Int(1))?))).unwrap();
    sum(&h).backward();
    // h's gradient 1 becomes 2, x's 2·2 = 4 is seen by the leaf hook and becomes 40.
    assert_eq!(*seen.lock().unwrap(), [vec![4.0, 4.0]]);
    assert_eq!(vals(&x.grad().unwrap()), [40.0, 40.0]);
    assert!(h.grad().is_none(), "non-leaf .grad is not kept without retain_grad");
    // Removed hooks no longer run.
    assert!(handle.remove());
    x.set_grad(None);
    let h2 = mul(&x, &t(&[2.0, 2.0]));
    h2.retain_grad().unwrap();
    sum(&h2).backward();
    assert_eq!(vals(&x.grad().unwrap()), [20.0, 20.0]);
    assert_eq!(vals(&h2.grad().unwrap()), [1.0, 1.0], "retain_grad keeps a non-leaf's gradient");
}

#[test]
fn retain_grad_sees_the_hooked_gradient_and_follows_inplace_history() {
    let x = leaf(&[1.0, 2.0]);
    let h = mul(&x, &t(&[2.0, 2.0]));
    h.retain_grad().unwrap();
    let _ = h.register_hook(|g| Ok(Some(ops::mul_scalar::call(g, Scalar::Float(3.0))?))).unwrap();
    sum(&mul(&h, &t(&[1.0, 1.0]))).backward();
    assert_eq!(vals(&h.grad().unwrap()), [3.0, 3.0]);
    // After an in-place op on a non-leaf, retain_grad follows its new grad_fn.
    let x = leaf(&[1.0, 2.0]);
    let h = mul(&x, &t(&[2.0, 2.0]));
    h.retain_grad().unwrap();
    copy_(&h, &mul(&x, &t(&[5.0, 5.0]))).unwrap();
    assert_eq!(h.grad_fn().unwrap().name(), "CopyBackwards");
    sum(&h).backward();
    assert_eq!(vals(&h.grad().unwrap()), [1.0, 1.0]);
    assert_eq!(vals(&x.grad().unwrap()), [5.0, 5.0]);
}

#[test]
fn node_pre_and_post_hooks() {
    let x = leaf(&[1.0, 2.0]);
    let y = mul(&x, &t(&[2.0, 2.0]));
    let node = y.grad_fn().unwrap();
    let pre = node.base().register_prehook(|grads| {
        let g = grads[0].as_ref().unwrap();
        Ok(Some(vec![Some(ops::mul_scalar::call(g, Scalar::Float(2.0))?)]))
    });
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let post = node.base().register_hook(move |grad_inputs, grad_outputs| {
        *s.lock().unwrap() = Some((vals(grad_inputs[0].as_ref().unwrap()), vals(grad_outputs[0].as_ref().unwrap())));
        Ok(Some(vec![Some(t(&[7.0, 7.0])), None]))
    });
    sum(&y).backward_with(BackwardOpts { retain_graph: Some(true), ..Default::default() });
    // Pre-hook doubled the incoming 1 → 2; the node computed 2·2 = 4; the post-hook replaced it.
    assert_eq!(*seen.lock().unwrap(), Some((vec![4.0, 4.0], vec![2.0, 2.0])));
    assert_eq!(vals(&x.grad().unwrap()), [7.0, 7.0]);
    assert!(pre.remove() && post.remove());
    x.set_grad(None);
    sum(&y).backward();
    assert_eq!(vals(&x.grad().unwrap()), [2.0, 2.0]);
}
