//! The autograd engine, driven by hand-written nodes (independent of the generated Autograd
//! kernels): a tiny differentiable library (`mul`, `add`, `exp`, `sum`, `pow3`, `copy_`) whose
//! forward runs the real operators under `no_grad` and records its own nodes, and whose backward
//! is written with the same functions, so `create_graph` records the backward pass.

use oxten::autograd::*;
use oxten::{ops, DType, Result, Scalar, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

// ---------------------------------------------------------------- a tiny differentiable library

fn t(v: &[f32]) -> Tensor {
    Tensor::from_slice(v, &[v.len() as i64]).unwrap()
}
fn t2(v: &[f32], s: &[i64]) -> Tensor {
    Tensor::from_slice(v, s).unwrap()
}
fn leaf(v: &[f32]) -> Tensor {
    t(v).requires_grad_(true)
}
fn vals(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}
fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4)
}
fn edges(ts: &[&Tensor]) -> Vec<Edge> {
    collect_next_edges(&ts.iter().map(|t| Some(*t)).collect::<Vec<_>>())
}
fn requires(ts: &[&Tensor]) -> bool {
    compute_requires_grad(&ts.iter().map(|t| Some(*t)).collect::<Vec<_>>())
}

struct MulNode {
    base: NodeBase,
    a: SavedVariable,
    b: SavedVariable,
    name: String,
    runs: Arc<AtomicUsize>,
}
impl Node for MulNode {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        self.runs.fetch_add(1, SeqCst);
        let Some(g) = grads[0].clone() else { return Ok(vec![None, None]) };
        let ga = if self.base.should_compute_output(0) { Some(mul(&g, &self.b.unpack(self)?)) } else { None };
        let gb = if self.base.should_compute_output(1) { Some(mul(&g, &self.a.unpack(self)?)) } else { None };
        Ok(vec![ga, gb])
    }
    fn release_variables(&self) {
        self.a.reset();
        self.b.reset();
    }
    fn visit_saved(&self, f: &mut dyn FnMut(&str, &SavedVariable)) {
        f("self", &self.a);
        f("other", &self.b);
    }
}

fn mul_named(a: &Tensor, b: &Tensor, name: &str, runs: Arc<AtomicUsize>) -> Tensor {
    let out = no_grad(|| ops::mul::call(a, b)).unwrap();
    if requires(&[a, b]) {
        let node = MulNode {
            base: NodeBase::new(edges(&[a, b])),
            a: SavedVariable::new(a, false).unwrap(),
            b: SavedVariable::new(b, false).unwrap(),
            name: name.into(),
            runs,
        };
        set_history(&[&out], Arc::new(node));
    }
    out
}
fn mul(a: &Tensor, b: &Tensor) -> Tensor {
    mul_named(a, b, "MulBackward0", Arc::default())
}

/// A node computing nothing: passes `grads[0]` to every input.
struct PassNode {
    base: NodeBase,
    name: String,
}
impl Node for PassNode {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![grads[0].clone(); self.base.num_outputs()])
    }
}

fn add(a: &Tensor, b: &Tensor) -> Tensor {
    let out = no_grad(|| ops::add::call(a, b, Scalar::Int(1))).unwrap();
    if requires(&[a, b]) {
        set_history(&[&out], Arc::new(PassNode { base: NodeBase::new(edges(&[a, b])), name: "AddBackward0".into() }));
    }
    out
}

struct ExpNode {
    base: NodeBase,
    result: std::sync::OnceLock<SavedVariable>,
}
impl Node for ExpNode {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "ExpBackward0".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = grads[0].clone() else { return Ok(vec![None]) };
        Ok(vec![Some(mul(&g, &self.result.get().unwrap().unpack(self)?))])
    }
    fn release_variables(&self) {
        self.result.get().unwrap().reset();
    }
    fn visit_saved(&self, f: &mut dyn FnMut(&str, &SavedVariable)) {
        f("result", self.result.get().unwrap());
    }
}

fn exp(a: &Tensor) -> Tensor {
    let out = no_grad(|| ops::exp::call(a)).unwrap();
    if requires(&[a]) {
        let node = Arc::new(ExpNode { base: NodeBase::new(edges(&[a])), result: Default::default() });
        set_history(&[&out], node.clone());
        // Outputs are saved after set_history, as the generated kernels do.
        node.result.set(SavedVariable::new(&out, true).unwrap()).unwrap();
    }
    out
}

struct SumNode {
    base: NodeBase,
    sizes: Vec<i64>,
    dtype: DType,
}
impl Node for SumNode {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "SumBackward0".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = grads[0].clone() else { return Ok(vec![None]) };
        let ones = ops::ones::call(&self.sizes, Some(self.dtype), None, None, None)?;
        Ok(vec![Some(mul(&g, &ones))])
    }
}

fn sum(a: &Tensor) -> Tensor {
    let out = no_grad(|| ops::sum::call(a, None)).unwrap();
    if requires(&[a]) {
        let node = SumNode { base: NodeBase::new(edges(&[a])), sizes: a.sizes().to_vec(), dtype: a.dtype() };
        set_history(&[&out], Arc::new(node));
    }
    out
}

/// `x³` as one node, with backward `g · (x·x) · 3` written with `mul` (so it is recorded).
struct Pow3Node {
    base: NodeBase,
    x: SavedVariable,
}
impl Node for Pow3Node {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "PowBackward0".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = grads[0].clone() else { return Ok(vec![None]) };
        let x = self.x.unpack(self)?;
        Ok(vec![Some(mul(&mul(&g, &mul(&x, &x)), &Tensor::scalar(3.0f32)))])
    }
}

fn pow3(x: &Tensor) -> Tensor {
    let out = no_grad(|| ops::pow_tensor_scalar::call(x, Scalar::Float(3.0))).unwrap();
    if requires(&[x]) {
        let node = Pow3Node { base: NodeBase::new(edges(&[x])), x: SavedVariable::new(x, false).unwrap() };
        set_history(&[&out], Arc::new(node));
    }
    out
}

/// `dst.copy_(src)`: zero gradient for dst's old values, the gradient of dst for src.
struct CopyNode {
    base: NodeBase,
}
impl Node for CopyNode {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "CopyBackwards".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![None, grads[0].clone()])
    }
}

fn copy_(dst: &Tensor, src: &Tensor) -> Result<()> {
    let rg = requires(&[dst, src]);
    check_inplace(dst, rg)?;
    let node = rg.then(|| Arc::new(CopyNode { base: NodeBase::new(edges(&[dst, src])) }));
    no_grad(|| ops::copy_::call(dst, src, false))?;
    if let Some(n) = node {
        rebase_history(dst, n);
    }
    Ok(())
}

/// `a[start:end]` along dim 0, recorded as a view of `a`.
fn slice(a: &Tensor, start: i64, end: i64) -> Tensor {
    let v = no_grad(|| ops::slice::call(a, 0, Some(start), Some(end), 1)).unwrap();
    if requires(&[a]) {
        set_history(&[&v], Arc::new(AsStridedBackward::new(a, &v)));
    }
    make_view(&v, a);
    v
}

/// A node returning whatever `f` makes of its incoming gradient (for malformed gradients).
struct FnNode<F: Fn(Tensor) -> Vec<Option<Tensor>> + Send + Sync + 'static> {
    base: NodeBase,
    name: &'static str,
    f: F,
}
impl<F: Fn(Tensor) -> Vec<Option<Tensor>> + Send + Sync + 'static> Node for FnNode<F> {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        self.name.into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Ok((self.f)(grads[0].clone().unwrap()))
    }
}
fn record_fn(
    x: &Tensor,
    out: Tensor,
    name: &'static str,
    f: impl Fn(Tensor) -> Vec<Option<Tensor>> + Send + Sync + 'static,
) -> Tensor {
    set_history(&[&out], Arc::new(FnNode { base: NodeBase::new(edges(&[x])), name, f }));
    out
}

// ---------------------------------------------------------------- graph execution

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
    let e = grad(&[sum(&y)], &[t(&[1.0])], &[], None, false, false).unwrap_err();
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
    let g = grad(&[y], std::slice::from_ref(&x), &[], None, true, false).unwrap().remove(0).unwrap();
    assert_eq!(vals(&g), [12.0]);
    assert!(g.grad_fn().is_some() && g.requires_grad());
    let gg = grad(&[g], std::slice::from_ref(&x), &[], None, false, false).unwrap().remove(0).unwrap();
    assert_eq!(vals(&gg), [12.0]);
    assert!(gg.grad_fn().is_none());
    assert!(x.grad().is_none(), "grad() does not accumulate into .grad");
    // Without create_graph the gradient has no history.
    let g = grad(&[pow3(&x)], std::slice::from_ref(&x), &[], None, false, false).unwrap().remove(0).unwrap();
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

// ---------------------------------------------------------------- pruning to inputs

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
    let gx = grad(std::slice::from_ref(&z), std::slice::from_ref(&x), &[], Some(true), false, false)
        .unwrap()
        .remove(0)
        .unwrap();
    assert!(close(&vals(&gx), &[0.1051, 1.7676]));
    assert_eq!(fired.load(SeqCst), 0, "the y-only node never runs");
    assert!(x.grad().is_none() && y.grad().is_none(), ".grad is untouched by grad()");
    // Both inputs at once; then the y branch runs.
    let g = grad(&[z], &[x.clone(), y.clone()], &[], None, false, false).unwrap();
    assert!(close(&vals(g[1].as_ref().unwrap()), &[0.5 * 1.0513, 0.75 * 1.9640]));
    assert_eq!(fired.load(SeqCst), 1);
}

#[test]
fn grad_of_unused_inputs() {
    let x = leaf(&[1.0]);
    let w = leaf(&[2.0]);
    let s = sum(&mul(&x, &x));
    let e = grad(std::slice::from_ref(&s), &[x.clone(), w.clone()], &[], Some(true), false, false).unwrap_err();
    assert_eq!(
        e.message,
        "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
    );
    let g = grad(&[s], &[x, w], &[], None, false, true).unwrap();
    assert_eq!(vals(g[0].as_ref().unwrap()), [2.0]);
    assert!(g[1].is_none());
}

// ---------------------------------------------------------------- central gradient checks

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

// ---------------------------------------------------------------- hooks

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

// ---------------------------------------------------------------- accumulation into leaves

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

// ---------------------------------------------------------------- errors, anomaly, versions

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

// ---------------------------------------------------------------- views and in-place

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

// ---------------------------------------------------------------- inference mode

#[test]
fn inference_tensors_in_autograd() {
    let x = leaf(&[1.0, 2.0]);
    let (y, view) = inference_mode(|| {
        let y = ops::mul::call(&x, &t(&[2.0, 2.0])).unwrap();
        let view = ops::slice::call(&y, 0, Some(0), Some(1), 1).unwrap();
        (y, view)
    });
    assert!(y.is_inference() && !y.requires_grad() && y.grad_fn().is_none());
    assert!(view.is_inference());
    // Used with a tensor that requires grad, it would have to be saved.
    let out = no_grad(|| ops::mul::call(&x, &y)).unwrap();
    let _ = out;
    let e = SavedVariable::new(&y, false).unwrap_err();
    assert!(e.message.starts_with("Inference tensors cannot be saved for backward."));
    let e = copy_(&y, &t(&[0.0, 0.0])).unwrap_err();
    assert!(e.message.starts_with("Inplace update to inference tensor outside InferenceMode is not allowed."));
    inference_mode(|| copy_(&y, &t(&[0.0, 0.0]))).unwrap();
}

// ---------------------------------------------------------------- custom functions

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

// ---------------------------------------------------------------- threads

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

// ---------------------------------------------------------------- with the generated kernels

mod generated_kernels {
    use super::{close, leaf, t, vals};
    use oxten::autograd::*;
    use oxten::options::SliceOpts;
    use oxten::Tensor;

    fn sl(x: &Tensor, start: i64, end: i64) -> Tensor {
        x.slice_with(SliceOpts { dim: 0, start: Some(start), end: Some(end), step: 1 })
    }

    #[test]
    fn in_place_on_a_view_of_a_non_leaf() {
        let a = leaf(&[1.0, 2.0, 3.0, 4.0]);
        let b = a.mul_scalar(1.0);
        sl(&b, 1, 3).mul_scalar_(2.0);
        assert_eq!(b.grad_fn().unwrap().name(), "CopySlices");
        b.mul(&t(&[1.0, 10.0, 100.0, 1000.0])).sum().backward();
        assert_eq!(vals(&a.grad().unwrap()), [1.0, 20.0, 200.0, 1000.0]);
    }

    #[test]
    fn views_taken_before_an_in_place_op_on_the_base_see_it() {
        let a = leaf(&[1.0, 2.0, 3.0]);
        let b = a.mul_scalar(1.0);
        let v = sl(&b, 0, 2);
        assert_eq!(v.grad_fn().unwrap().name(), "SliceBackward0");
        b.mul_scalar_(3.0);
        assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
        v.sum().backward();
        assert_eq!(vals(&a.grad().unwrap()), [3.0, 3.0, 0.0]);
    }

    #[test]
    fn create_graph_into_grad_and_through_fan_in() {
        let x = leaf(&[2.0]);
        let y = x.mul(&x).add(&x.mul(&x).mul(&x)); // x² + x³
        y.backward_with(BackwardOpts { create_graph: true, ..Default::default() });
        let g = x.grad().unwrap();
        assert_eq!(vals(&g), [4.0 + 12.0]);
        assert!(g.grad_fn().is_some(), ".grad has history under create_graph");
        let gg = grad(&[g.sum()], std::slice::from_ref(&x), &[], None, false, false).unwrap().remove(0).unwrap();
        assert_eq!(vals(&gg), [2.0 + 12.0]);
    }

    #[test]
    fn inference_tensor_used_with_a_tensor_that_requires_grad() {
        let x = leaf(&[1.0, 2.0]);
        let y = inference_mode(|| x.mul(&x));
        assert!(y.is_inference() && !y.requires_grad());
        let e = x.try_mul(&y).unwrap_err();
        assert!(e.to_string().contains("Inference tensors cannot be saved for backward."), "{e}");
        let e = y.try_add_scalar_(1.0).unwrap_err();
        assert!(e.to_string().contains("Inplace update to inference tensor outside InferenceMode"), "{e}");
        let z = x.mul_scalar(2.0); // saves nothing that is an inference tensor
        z.sum().backward();
        assert!(close(&vals(&x.grad().unwrap()), &[2.0, 2.0]));
    }

    #[test]
    fn a_view_made_under_no_grad_cannot_be_modified_with_grad_on() {
        let a = leaf(&[1.0, 2.0]);
        let b = a.mul_scalar(1.0);
        let v = no_grad(|| sl(&b, 0, 1));
        let e = v.try_mul_(&leaf(&[2.0])).unwrap_err();
        assert!(e.to_string().contains("A view was created in no_grad mode"), "{e}");
    }

    #[test]
    fn anomaly_mode_names_a_generated_node() {
        let x = leaf(&[0.0, 1.0]);
        let e = detect_anomaly(|| x.mul(&t(&[f32::NAN, 1.0])).sum().try_backward().unwrap_err());
        assert!(e.to_string().contains("Function 'MulBackward0' returned nan values in its 0th output."), "{e}");
        let e = detect_anomaly(|| x.div(&x).sum().try_backward().unwrap_err());
        assert!(e.to_string().contains("Function 'DivBackward0' returned nan values in its 1th output."), "{e}");
    }

    #[test]
    fn long_chains_run_and_free_without_recursion() {
        let x = leaf(&[1.0]);
        let mut y = x.clone();
        for _ in 0..20_000 {
            y = y.mul_scalar(1.0).add_scalar(0.0);
        }
        y.sum().backward();
        assert_eq!(vals(&x.grad().unwrap()), [1.0]);
        drop(y);
    }
}
