//! End-to-end autograd through the generated kernels and nodes: pruning to requested inputs,
//! fan-in, retain_graph, double backward, freeing saved tensors, in-place writes into views, and
//! the errors PyTorch gives.

use oxten::autograd::{grad, grad_with, BackwardOpts, GradOpts};
use oxten::Tensor;

fn leaf(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len() as i64]).unwrap().requires_grad_(true)
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "{got:?} vs {want:?}");
    }
}

#[test]
fn backward_with_inputs_prunes_the_other_leaf() {
    let x = leaf(&[0.5, 0.75]);
    let y = leaf(&[0.1, 0.9]);
    let z = x.mul(&y).exp().sum();
    assert_eq!(z.grad_fn().unwrap().name(), "SumBackward0");
    z.backward_with(BackwardOpts { inputs: vec![x.clone()], ..Default::default() });
    // d/dx exp(x*y) = y * exp(x*y)
    assert_close(&values(&x.grad().unwrap()), &[0.1 * (0.05f64).exp(), 0.9 * (0.675f64).exp()], 1e-12);
    assert_close(&values(&x.grad().unwrap()), &[0.1051, 1.7676], 1e-4);
    assert!(y.grad().is_none());
}

/// `x*2 + x*3` the way PyTorch records it: multiplications by (wrapped-number) tensors, which
/// save both operands.
fn fan_in(x: &Tensor) -> Tensor {
    x.mul(&Tensor::scalar(2.0f64)).add(&x.mul(&Tensor::scalar(3.0f64))).sum()
}

#[test]
fn fan_in_sums_and_a_second_backward_needs_retain_graph() {
    let x = leaf(&[1.0]);
    let y = fan_in(&x);
    y.backward();
    assert_eq!(values(&x.grad().unwrap()), [5.0]);
    let err = y.try_backward().unwrap_err().to_string();
    assert!(err.contains("Trying to backward through the graph a second time"), "{err}");

    let x = leaf(&[1.0]);
    let y = fan_in(&x);
    y.backward_with(BackwardOpts { retain_graph: Some(true), ..Default::default() });
    assert_eq!(values(&x.grad().unwrap()), [5.0]);
    y.backward();
    assert_eq!(values(&x.grad().unwrap()), [10.0]);
}

#[test]
fn double_backward_of_a_cube() {
    let x = leaf(&[2.0]);
    let y = x.pow_tensor_scalar(3).sum();
    let g = grad_with(&[y], &[&x], GradOpts { create_graph: true, ..Default::default() }).unwrap()[0].clone().unwrap();
    assert_eq!(values(&g), [12.0]);
    assert!(g.grad_fn().is_some(), "create_graph gives a gradient with history");
    let gg = grad(&[g.sum()], &[&x]).unwrap()[0].clone().unwrap();
    assert_eq!(values(&gg), [12.0]);
}

#[test]
fn saved_tensors_are_released_after_backward() {
    let x = leaf(&[1.0, 2.0]);
    let y = x.mul(&x);
    let f = y.grad_fn().unwrap();
    let mut before = 0;
    f.visit_saved(&mut |_, v| {
        if !v.is_released() {
            before += 1;
        }
    });
    assert_eq!(before, 2, "mul saves self and other");
    y.sum().backward();
    let mut after = 0;
    f.visit_saved(&mut |_, v| {
        if !v.is_released() {
            after += 1;
        }
    });
    assert_eq!(after, 0);
}

#[test]
fn metadata_only_inputs_are_not_saved() {
    // sum saves self's sizes, not self.
    let x = leaf(&[1.0, 2.0]);
    let s = x.sum();
    let mut saved = Vec::new();
    s.grad_fn().unwrap().visit_saved(&mut |name, _| saved.push(name.to_string()));
    assert!(saved.is_empty(), "{saved:?}");
}

#[test]
fn writing_into_a_slice_of_a_base_flows_back_to_the_source() {
    let x = leaf(&[1.0, 2.0]);
    let base = oxten::zeros(&[4]).to_dtype(oxten::DType::F64);
    let c = Tensor::from_vec(vec![10.0f64, 20.0, 30.0, 40.0], &[4]).unwrap();
    base.slice(0, Some(1), Some(3), 1).copy_(&x);
    assert!(base.requires_grad());
    assert_eq!(base.grad_fn().unwrap().name(), "CopySlices");
    base.mul(&c).sum().backward();
    assert_eq!(values(&x.grad().unwrap()), [20.0, 30.0]);
}

#[test]
fn in_place_ops_record_history_and_version_errors_name_the_node() {
    let a = leaf(&[0.5, 1.0]);
    let b = a.exp();
    b.add_scalar_(1.0);
    let err = b.sum().try_backward().unwrap_err().to_string();
    assert!(err.contains("ExpBackward0"), "{err}");
    assert!(err.contains("is at version 1; expected version 0"), "{err}");

    // exp_ saves its result after the write: backward works.
    let a = leaf(&[0.5, 1.0]);
    let b = a.mul_scalar(1.0);
    b.exp_();
    assert_eq!(b.grad_fn().unwrap().name(), "ExpBackward0");
    b.sum().backward();
    assert_close(&values(&a.grad().unwrap()), &[(0.5f64).exp(), 1f64.exp()], 1e-12);

    // mul_ saves a clone of self before writing.
    let a = leaf(&[3.0, 4.0]);
    let w = leaf(&[2.0, 5.0]);
    let b = a.mul_scalar(1.0);
    b.mul_(&w);
    b.sum().backward();
    assert_eq!(values(&a.grad().unwrap()), [2.0, 5.0]);
    assert_eq!(values(&w.grad().unwrap()), [3.0, 4.0]);

    // A leaf that requires grad cannot be written in place.
    let err = a.try_add_scalar_(1.0).unwrap_err().to_string();
    assert!(err.contains("a leaf Variable that requires grad is being used in an in-place operation"), "{err}");
}

#[test]
fn out_variants_refuse_inputs_that_require_grad() {
    let x = leaf(&[1.0, 2.0]);
    let out = Tensor::from_vec(vec![0.0f64; 2], &[2]).unwrap();
    let err = oxten::try_add_out(&x, &x, &out).unwrap_err().to_string();
    assert!(
        err.contains(
            "add.out(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."
        ),
        "{err}"
    );
    // Without grad mode the out= variant works.
    oxten::autograd::no_grad(|| oxten::try_add_out(&x, &x, &out)).unwrap();
    assert_eq!(values(&out), [2.0, 4.0]);
}

#[test]
fn non_differentiable_outputs_have_no_history() {
    let x = leaf(&[1.0, 3.0, 2.0]);
    assert!(!x.gt_scalar(1.5).requires_grad());
    assert!(!x.argmax(None, false).requires_grad());
    let (values, indices) = x.max_dim(0, false);
    assert!(values.requires_grad());
    assert!(!indices.requires_grad());
    values.backward();
    assert_eq!(self::values(&x.grad().unwrap()), [0.0, 1.0, 0.0]);
    assert!(!oxten::zeros_like(&x).requires_grad());
}

#[test]
fn casts_to_integers_record_nothing() {
    let x = leaf(&[1.5, 2.5]);
    let i = x.to_dtype(oxten::DType::I64);
    assert!(!i.requires_grad() && i.grad_fn().is_none());
    let f = x.to_dtype(oxten::DType::F32);
    assert_eq!(f.grad_fn().unwrap().name(), "ToCopyBackward0");
}

#[test]
fn views_share_history_and_casts_flow_back() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap().requires_grad_(true);
    let y = x.t().mul_scalar(2.0).to_dtype(oxten::DType::F32).sum();
    y.backward();
    let g = x.grad().unwrap();
    assert_eq!(g.dtype(), oxten::DType::F64);
    assert_eq!(values(&g), [2.0; 6]);
}
