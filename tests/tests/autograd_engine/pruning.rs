//! Engine tests: pruning to inputs.

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
fn backward_with_inputs_only_accumulates_into_them() {
    let x = leaf(&[0.5, 0.75]);
    let y = leaf(&[0.1, 0.9]);
    let z = sum(&exp(&mul(&x, &y)));
    backward(&[z], &[], None, false, std::slice::from_ref(&x)).unwrap();
    assert!(close(&vals(&x.grad().unwrap()), &[0.1051, 1.7676]), "{:?}", x.grad());
    assert!(y.grad().is_none());
}

#[test]
fn backward_with_a_non_leaf_input_retains_its_grad() {
    let x = leaf(&[1.0, 2.0]);
    let h = mul(&x, &t(&[3.0, 3.0]));
    let s = sum(&mul(&h, &h));
    backward(&[s], &[], None, false, std::slice::from_ref(&h)).unwrap();
    assert!(h.retains_grad());
    assert_eq!(vals(&h.grad().unwrap()), [6.0, 12.0]);
    assert!(x.grad().is_none());
}

#[test]
fn grad_prunes_nodes_not_on_a_path_to_the_inputs() {
    let x = leaf(&[0.5, 0.75]);
    let y = leaf(&[0.1, 0.9]);
    let y2 = mul(&y, &t(&[1.0, 1.0]));
    let fired = Arc::new(AtomicUsize::new(0));
    let f = fired.clone();
    let _ = y2.grad_fn().unwrap().base().register_prehook(move |_| {
        f.fetch_add(1, SeqCst);
        Ok(None)
    });
    let z = sum(&exp(&mul(&x, &y2)));
    let gx = grad_with(&[&z], &[&x], GradOpts { retain_graph: Some(true), ..Default::default() })
        .unwrap()
        .remove(0)
        .unwrap();
    assert!(close(&vals(&gx), &[0.1051, 1.7676]));
    assert_eq!(fired.load(SeqCst), 0, "the y-only node never runs");
    assert!(x.grad().is_none() && y.grad().is_none(), ".grad is untouched by grad()");
    // Both inputs at once; then the y branch runs.
    let g = grad(&[z], &[&x, &y]).unwrap();
    assert!(close(&vals(g[1].as_ref().unwrap()), &[0.5 * 1.0513, 0.75 * 1.9640]));
    assert_eq!(fired.load(SeqCst), 1);
}

#[test]
fn grad_of_unused_inputs() {
    let x = leaf(&[1.0]);
    let w = leaf(&[2.0]);
    let s = sum(&mul(&x, &x));
    let e = grad_with(&[&s], &[&x, &w], GradOpts { retain_graph: Some(true), ..Default::default() }).unwrap_err();
    assert_eq!(
        e.message,
        "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
    );
    let g = grad_with(&[s], &[x, w], GradOpts { allow_unused: true, ..Default::default() }).unwrap();
    assert_eq!(vals(g[0].as_ref().unwrap()), [2.0]);
    assert!(g[1].is_none());
}
