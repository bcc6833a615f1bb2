//! Engine tests: accumulation into leaves.

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
fn accumulate_grad_steals_unshared_gradients_and_copies_shared_ones() {
    let x = leaf(&[1.0, 2.0]);
    let ptr = Arc::new(AtomicUsize::new(0));
    let p = ptr.clone();
    let _ = x
        .register_hook(move |g| {
            p.store(g.data_ptr() as usize, SeqCst);
            Ok(None)
        })
        .unwrap();
    sum(&mul(&x, &t(&[3.0, 3.0]))).backward();
    assert_eq!(x.grad().unwrap().data_ptr() as usize, ptr.load(SeqCst), "a fresh gradient is stolen");
    // A gradient the caller still holds is copied.
    let y = leaf(&[1.0, 2.0]);
    let g = t(&[1.0, 1.0]);
    y.backward_with(BackwardOpts { gradient: Some(g.clone()), ..Default::default() });
    assert_ne!(y.grad().unwrap().data_ptr(), g.data_ptr());
    // Accumulation into an existing .grad is in place without create_graph.
    let before = y.grad().unwrap();
    y.backward_with(BackwardOpts { gradient: Some(g.clone()), ..Default::default() });
    assert!(y.grad().unwrap().is_same(&before));
    assert_eq!(vals(&before), [2.0, 2.0]);
    assert_eq!(vals(&g), [1.0, 1.0]);
}

#[test]
fn gradients_follow_the_leaf_layout() {
    let base = t2(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let x = ops::transpose::call(&base, 0, 1).unwrap().detach().requires_grad_(true); // [3, 2], strides [1, 3]
    let y = record_fn(&x, t2(&[0.0; 6], &[3, 2]), "IdBackward", |g| {
        vec![Some(ops::deep_clone::call(&g, Some(oxten::MemoryFormat::Contiguous)).unwrap())]
    });
    y.backward_with(BackwardOpts {
        gradient: Some(t2(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])),
        ..Default::default()
    });
    let g = x.grad().unwrap();
    assert_eq!(g.strides()[..], [1, 3], ".grad is laid out like its leaf");
    assert_eq!(vals(&g), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}
