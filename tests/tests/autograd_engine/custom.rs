//! Engine tests: custom functions.

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

struct Square;
impl Function for Square {
    fn name(&self) -> String {
        "Square".into()
    }
    fn forward(&self, ctx: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
        assert!(!is_grad_enabled(), "forward runs without recording");
        ctx.save_for_backward(&[x[0].clone()]);
        ctx.set_data(2.0f64);
        Ok(vec![ops::mul::call(&x[0], &x[0])?])
    }
    fn backward(&self, ctx: &FunctionCtx, g: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        assert!(ctx.needs_input_grad(0) && !ctx.needs_input_grad(1));
        let x = &ctx.saved_tensors()?[0];
        let two = *ctx.data::<f64>().unwrap();
        let gx = ops::mul::call(g[0].as_ref().unwrap(), &ops::mul_scalar::call(x, Scalar::Float(two))?)?;
        Ok(vec![Some(gx), Some(t(&[1.0]))])
    }
}

#[test]
fn custom_function_forward_and_backward() {
    let x = leaf(&[1.0, 2.0, 3.0]);
    let other = t(&[1.0]);
    let y = apply_function(Square, &[x.clone(), other]).unwrap().remove(0);
    assert_eq!(vals(&y), [1.0, 4.0, 9.0]);
    assert_eq!(y.grad_fn().unwrap().name(), "SquareBackward");
    sum(&y).backward();
    assert_eq!(vals(&x.grad().unwrap()), [2.0, 4.0, 6.0]);
    // Nothing requires grad: no node.
    let y = apply_function(Square, &[t(&[2.0]), t(&[1.0])]).unwrap().remove(0);
    assert!(y.grad_fn().is_none());
    assert!(no_grad(|| apply_function(Square, &[x.clone(), t(&[1.0])])).unwrap()[0].grad_fn().is_none());
}

struct ExpFn;
impl Function for ExpFn {
    fn name(&self) -> String {
        "ExpFn".into()
    }
    fn forward(&self, ctx: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
        let y = ops::exp::call(&x[0])?;
        let idx = ops::argmax::call(&y, None, false)?;
        ctx.save_for_backward(std::slice::from_ref(&y));
        ctx.mark_non_differentiable(std::slice::from_ref(&idx));
        Ok(vec![y, idx, x[0].clone()])
    }
    fn backward(&self, ctx: &FunctionCtx, g: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        assert!(g[1].is_some() && g[2].is_some(), "missing gradients are materialized as zeros");
        let y = &ctx.saved_tensors()?[0];
        Ok(vec![Some(ops::add::call(
            &ops::mul::call(g[0].as_ref().unwrap(), y)?,
            g[2].as_ref().unwrap(),
            Scalar::Int(1),
        )?)])
    }
}

#[test]
fn custom_function_outputs_saved_outputs_and_version_checks() {
    let x = leaf(&[0.0, 1.0]);
    let outs = apply_function(ExpFn, std::slice::from_ref(&x)).unwrap();
    let (y, idx, same) = (&outs[0], &outs[1], &outs[2]);
    assert!(y.requires_grad() && !idx.requires_grad());
    // An input returned as-is comes back as a new tensor with history; the input stays a leaf.
    assert!(!same.is_same(&x) && same.storage().is_alias_of(x.storage()));
    assert_eq!(same.output_nr(), 2);
    assert!(x.is_leaf() && same.grad_fn().is_some());
    // The saved output does not keep the node alive through a cycle.
    let node = Arc::downgrade(&y.grad_fn().unwrap());
    sum(y).backward_with(BackwardOpts { retain_graph: Some(true), ..Default::default() });
    assert!(close(&vals(&x.grad().unwrap()), &[1.0, std::f32::consts::E]));
    no_grad(|| ops::mul_scalar_::call(y, Scalar::Float(2.0))).unwrap();
    let e = sum(y).try_backward().unwrap_err();
    assert!(e.message.contains("which is output 0 of ExpFnBackward, is at version 1; expected version 0"), "{e}");
    drop(outs);
    assert!(node.upgrade().is_none());
}

/// The blog's reentrant function: backward runs a backward pass of its own.
struct SumSquares;
impl Function for SumSquares {
    fn name(&self) -> String {
        "SumSquares".into()
    }
    fn forward(&self, ctx: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[x[0].clone()]);
        Ok(vec![ops::sum::call(&ops::mul::call(&x[0], &x[0])?, None)?])
    }
    fn backward(&self, ctx: &FunctionCtx, g: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let inner = ctx.saved_tensors()?[0].detach().requires_grad_(true);
        enable_grad(|| sum(&mul(&inner, &inner))).try_backward()?; // reentrant
        Ok(vec![Some(ops::mul::call(g[0].as_ref().unwrap(), &inner.grad().unwrap())?)])
    }
}

#[test]
fn reentrant_backward() {
    let x = leaf(&[1.0, 2.0]);
    let y = apply_function(SumSquares, std::slice::from_ref(&x)).unwrap().remove(0);
    mul(&y, &t(&[3.0])).backward_with(BackwardOpts { gradient: Some(t(&[1.0])), ..Default::default() });
    assert_eq!(vals(&x.grad().unwrap()), [6.0, 12.0]);
}

/// Backward of level `n` runs a backward pass through level `n - 1`.
struct Nested {
    depth: usize,
    deepest: Arc<Mutex<Option<(bool, bool, String)>>>,
    fail_at: Option<usize>,
}
impl Function for Nested {
    fn name(&self) -> String {
        "Nested".into()
    }
    fn forward(&self, _: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![ops::mul_scalar::call(&x[0], Scalar::Float(1.0))?])
    }
    fn backward(&self, _: &FunctionCtx, g: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        if self.fail_at == Some(self.depth) {
            return Err(oxten::Error::runtime(format!("failed at depth {}", self.depth)));
        }
        if self.depth == 0 {
            let name = std::thread::current().name().unwrap_or("").to_string();
            *self.deepest.lock().unwrap() = Some((is_grad_enabled(), is_anomaly_enabled(), name));
        } else {
            let inner = leaf(&[1.0]);
            let f = Nested { depth: self.depth - 1, deepest: self.deepest.clone(), fail_at: self.fail_at };
            let y = enable_grad(|| apply_function(f, std::slice::from_ref(&inner)))?.remove(0);
            y.try_backward()?;
        }
        Ok(vec![g[0].clone()])
    }
}

fn run_nested(depth: usize, fail_at: Option<usize>) -> (Result<()>, Option<(bool, bool, String)>) {
    let deepest = Arc::new(Mutex::new(None));
    let x = leaf(&[1.0]);
    let y = apply_function(Nested { depth, deepest: deepest.clone(), fail_at }, &[x]).unwrap().remove(0);
    let r = detect_anomaly(|| y.try_backward());
    let d = deepest.lock().unwrap().clone();
    (r, d)
}

#[test]
fn deep_reentrant_backward_continues_on_fresh_threads_with_the_callers_modes() {
    // Deeper than one thread's inline limit: completes, and the deepest level (on a
    // continuation thread) sees the caller's anomaly mode and grad mode = create_graph.
    let (r, deepest) = run_nested(MAX_REENTRANT_INLINE_DEPTH + 40, None);
    r.unwrap();
    let (grad_mode, anomaly, thread) = deepest.unwrap();
    assert!(!grad_mode && anomaly);
    assert_eq!(thread, "oxten-reentrant-backward");
    // An error deep inside (on a continuation thread) reaches the caller.
    let (r, _) = run_nested(MAX_REENTRANT_INLINE_DEPTH + 10, Some(3));
    assert!(r.unwrap_err().message.starts_with("failed at depth 3"));
}

#[test]
fn reentrant_backward_depth_is_limited() {
    let (r, deepest) = run_nested(MAX_REENTRANT_DEPTH + 5, None);
    let e = r.unwrap_err();
    assert!(e.message.starts_with("maximum reentrant backward depth exceeded"), "{e}");
    assert!(deepest.is_none());
}
