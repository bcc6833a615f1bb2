//! Engine tests: graph execution.

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
fn fan_in_sums_gradients_and_shared_nodes_run_once() {
    let x = leaf(&[1.0, 2.0]);
    let runs = Arc::new(AtomicUsize::new(0));
    let shared = mul_named(&x, &t(&[1.0, 1.0]), "MulBackward0", runs.clone()); // d shared/dx = 1
    let y = add(&mul(&shared, &t(&[2.0, 2.0])), &mul(&shared, &t(&[3.0, 3.0])));
    sum(&y).backward();
    assert_eq!(vals(&x.grad().unwrap()), [5.0, 5.0]);
    assert_eq!(runs.load(SeqCst), 1, "a node reached by two paths runs once");
}

#[test]
fn ready_queue_runs_newest_node_first_and_respects_dependencies() {
    let x = leaf(&[1.0]);
    let a = mul(&x, &t(&[2.0]));
    let b = mul(&x, &t(&[3.0]));
    let y = add(&a, &b);
    let order = Arc::new(Mutex::new(Vec::new()));
    let acc = x.grad_accumulator().unwrap();
    for (label, n) in
        [("add", y.grad_fn().unwrap()), ("a", a.grad_fn().unwrap()), ("b", b.grad_fn().unwrap()), ("acc", acc)]
    {
        let order = order.clone();
        let _ = n.base().register_prehook(move |_| {
            order.lock().unwrap().push(label);
            Ok(None)
        });
    }
    y.backward();
    assert_eq!(*order.lock().unwrap(), ["add", "b", "a", "acc"]);
    assert_eq!(vals(&x.grad().unwrap()), [5.0]);
}

#[test]
fn backward_of_a_scalar_leaf_and_of_several_roots() {
    let x = leaf(&[3.0]);
    x.backward();
    assert_eq!(vals(&x.grad().unwrap()), [1.0]);

    let x = leaf(&[1.0, 2.0]);
    let y1 = mul(&x, &t(&[2.0, 2.0]));
    let y2 = sum(&mul(&x, &x));
    backward(&[y1, y2], &[Some(t(&[1.0, 10.0])), None], None, false, &[]).unwrap();
    assert_eq!(vals(&x.grad().unwrap()), [2.0 + 2.0, 20.0 + 4.0]);
}

#[test]
fn backward_argument_errors() {
    let x = leaf(&[1.0, 2.0]);
    let y = mul(&x, &t(&[2.0, 2.0]));
    let e = y.try_backward().unwrap_err();
    assert_eq!(e.message, "grad can be implicitly created only for scalar outputs");
    let e =
        y.try_backward_with(BackwardOpts { gradient: Some(t(&[1.0, 2.0, 3.0])), ..Default::default() }).unwrap_err();
    assert_eq!(
        e.message,
        "Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has a shape of torch.Size([2])."
    );
    let e = t(&[1.0]).try_backward().unwrap_err();
    assert_eq!(e.message, "element 0 of tensors does not require grad and does not have a grad_fn");
    let e = grad(&[sum(&y)], &[t(&[1.0])]).unwrap_err();
    assert_eq!(e.message, "One of the differentiated Tensors does not require grad");
}

#[test]
fn second_backward_needs_retain_graph_and_then_accumulates() {
    let x = leaf(&[1.0, 2.0]);
    let s = sum(&mul(&x, &x));
    s.backward_with(BackwardOpts { retain_graph: Some(true), ..Default::default() });
    assert_eq!(vals(&x.grad().unwrap()), [2.0, 4.0]);
    s.backward();
    assert_eq!(vals(&x.grad().unwrap()), [4.0, 8.0], "gradients accumulate across calls");
    let e = s.try_backward().unwrap_err();
    assert_eq!(e.message, ERR_BACKWARD_TWICE);
    assert!(e.message.starts_with("Trying to backward through the graph a second time"));
}

#[test]
fn saved_tensors_are_released_after_backward() {
    let x = leaf(&[1.0, 2.0]);
    let h = mul(&x, &t(&[3.0, 3.0]));
    let e = exp(&mul(&x, &t(&[3.0, 3.0])));
    let s = sum(&mul(&h, &h));
    let s2 = sum(&e);
    assert_eq!(h.use_count(), 3, "h and the two saved copies in MulBackward0");
    assert_eq!(e.storage().use_count(), 2, "exp's saved output aliases its storage");
    s.backward_with(BackwardOpts { retain_graph: Some(true), ..Default::default() });
    assert_eq!(h.use_count(), 3, "retain_graph keeps saved tensors");
    s.backward();
    assert_eq!(h.use_count(), 1, "saved tensors are freed after backward");
    s2.backward();
    assert_eq!(e.storage().use_count(), 1);
}

#[test]
fn create_graph_gives_differentiable_gradients() {
    let x = leaf(&[2.0]);
    let y = pow3(&x);
    let g = grad_with(&[y], &[&x], GradOpts { create_graph: true, ..Default::default() }).unwrap().remove(0).unwrap();
    assert_eq!(vals(&g), [12.0]);
    assert!(g.grad_fn().is_some() && g.requires_grad());
    let gg = grad(&[g], &[&x]).unwrap().remove(0).unwrap();
    assert_eq!(vals(&gg), [12.0]);
    assert!(gg.grad_fn().is_none());
    assert!(x.grad().is_none(), "grad() does not accumulate into .grad");
    // Without create_graph the gradient has no history.
    let g = grad(&[pow3(&x)], &[&x]).unwrap().remove(0).unwrap();
    assert!(g.grad_fn().is_none() && !g.requires_grad());
}

#[test]
fn backward_runs_with_grad_mode_equal_to_create_graph_and_restores_it() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    for create_graph in [false, true] {
        let x = leaf(&[1.0]);
        let y = mul(&x, &t(&[2.0]));
        let s = seen.clone();
        let _ = y.grad_fn().unwrap().base().register_prehook(move |_| {
            s.lock().unwrap().push(is_grad_enabled());
            Ok(None)
        });
        no_grad(|| y.try_backward_with(BackwardOpts { create_graph, ..Default::default() })).unwrap();
        assert!(is_grad_enabled());
    }
    assert_eq!(*seen.lock().unwrap(), [false, true]);
}
