//! Engine tests: threads.

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
fn backward_on_another_thread_and_thread_local_state() {
    let x = leaf(&[1.0, 2.0]);
    let s = sum(&mul(&x, &x));
    std::thread::spawn(move || s.backward()).join().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), [2.0, 4.0]);
    // A spawned thread does not inherit no_grad; with the captured state it does.
    let _g = NoGradGuard::new();
    let x2 = x.clone();
    assert!(std::thread::spawn(move || mul(&x2, &x2).requires_grad()).join().unwrap());
    let state = ThreadLocalState::capture();
    let x2 = x.clone();
    assert!(!std::thread::spawn(move || state.enter(|| mul(&x2, &x2).requires_grad())).join().unwrap());
}
