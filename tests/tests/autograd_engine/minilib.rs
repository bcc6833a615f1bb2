//! A tiny differentiable library for the engine tests: each function runs the real operator
//! under `no_grad` and records its own hand-written node.
#![allow(dead_code)]

use oxten::autograd::*;
use oxten::{ops, DType, Result, Scalar, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

pub(crate) fn t(v: &[f32]) -> Tensor {
    Tensor::from_slice(v, &[v.len() as i64]).unwrap()
}
pub(crate) fn t2(v: &[f32], s: &[i64]) -> Tensor {
    Tensor::from_slice(v, s).unwrap()
}
pub(crate) fn leaf(v: &[f32]) -> Tensor {
    t(v).requires_grad_(true)
}
pub(crate) fn vals(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}
pub(crate) fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4)
}
pub(crate) fn edges(ts: &[&Tensor]) -> Vec<Edge> {
    collect_next_edges(&ts.iter().map(|t| Some(*t)).collect::<Vec<_>>())
}
pub(crate) fn requires(ts: &[&Tensor]) -> bool {
    compute_requires_grad(&ts.iter().map(|t| Some(*t)).collect::<Vec<_>>())
}

pub(crate) struct MulNode {
    pub(crate) base: NodeBase,
    pub(crate) a: SavedVariable,
    pub(crate) b: SavedVariable,
    pub(crate) name: String,
    pub(crate) runs: Arc<AtomicUsize>,
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

pub(crate) fn mul_named(a: &Tensor, b: &Tensor, name: &str, runs: Arc<AtomicUsize>) -> Tensor {
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
pub(crate) fn mul(a: &Tensor, b: &Tensor) -> Tensor {
    mul_named(a, b, "MulBackward0", Arc::default())
}

/// A node computing nothing: passes `grads[0]` to every input.
pub(crate) struct PassNode {
    pub(crate) base: NodeBase,
    pub(crate) name: String,
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

pub(crate) fn add(a: &Tensor, b: &Tensor) -> Tensor {
    let out = no_grad(|| ops::add::call(a, b, Scalar::Int(1))).unwrap();
    if requires(&[a, b]) {
        set_history(&[&out], Arc::new(PassNode { base: NodeBase::new(edges(&[a, b])), name: "AddBackward0".into() }));
    }
    out
}

pub(crate) struct ExpNode {
    pub(crate) base: NodeBase,
    pub(crate) result: std::sync::OnceLock<SavedVariable>,
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

pub(crate) fn exp(a: &Tensor) -> Tensor {
    let out = no_grad(|| ops::exp::call(a)).unwrap();
    if requires(&[a]) {
        let node = Arc::new(ExpNode { base: NodeBase::new(edges(&[a])), result: Default::default() });
        set_history(&[&out], node.clone());
        // Outputs are saved after set_history, as the generated kernels do.
        node.result.set(SavedVariable::new(&out, true).unwrap()).unwrap();
    }
    out
}

pub(crate) struct SumNode {
    pub(crate) base: NodeBase,
    pub(crate) sizes: Vec<i64>,
    pub(crate) dtype: DType,
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

pub(crate) fn sum(a: &Tensor) -> Tensor {
    let out = no_grad(|| ops::sum::call(a, None)).unwrap();
    if requires(&[a]) {
        let node = SumNode { base: NodeBase::new(edges(&[a])), sizes: a.sizes().to_vec(), dtype: a.dtype() };
        set_history(&[&out], Arc::new(node));
    }
    out
}

/// `x³` as one node, with backward `g · (x·x) · 3` written with `mul` (so it is recorded).
pub(crate) struct Pow3Node {
    pub(crate) base: NodeBase,
    pub(crate) x: SavedVariable,
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

pub(crate) fn pow3(x: &Tensor) -> Tensor {
    let out = no_grad(|| ops::pow_tensor_scalar::call(x, Scalar::Float(3.0))).unwrap();
    if requires(&[x]) {
        let node = Pow3Node { base: NodeBase::new(edges(&[x])), x: SavedVariable::new(x, false).unwrap() };
        set_history(&[&out], Arc::new(node));
    }
    out
}

/// `dst.copy_(src)`: zero gradient for dst's old values, the gradient of dst for src.
pub(crate) struct CopyNode {
    pub(crate) base: NodeBase,
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

pub(crate) fn copy_(dst: &Tensor, src: &Tensor) -> Result<()> {
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
pub(crate) fn slice(a: &Tensor, start: i64, end: i64) -> Tensor {
    let v = no_grad(|| ops::slice::call(a, 0, Some(start), Some(end), 1)).unwrap();
    if requires(&[a]) {
        set_history(&[&v], Arc::new(AsStridedBackward::new(a, &v)));
    }
    make_view(&v, a);
    v
}

/// A node returning whatever `f` makes of its incoming gradient (for malformed gradients).
pub(crate) struct FnNode<F: Fn(Tensor) -> Vec<Option<Tensor>> + Send + Sync + 'static> {
    pub(crate) base: NodeBase,
    pub(crate) name: &'static str,
    pub(crate) f: F,
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
pub(crate) fn record_fn(
    x: &Tensor,
    out: Tensor,
    name: &'static str,
    f: impl Fn(Tensor) -> Vec<Option<Tensor>> + Send + Sync + 'static,
) -> Tensor {
    set_history(&[&out], Arc::new(FnNode { base: NodeBase::new(edges(&[x])), name, f }));
    out
}
