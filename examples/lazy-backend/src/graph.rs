//! The graph: immutable nodes (an IR operator, captured data, zeros, or a write into part of a
//! storage), and values — a node's result seen through a view — which are what IR operands hold.

use crate::backend::ir;
use crate::storage;
use oxten::{DType, Error, Result, Tensor};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Sizes, strides and dtype: the layout of a node's result, which is also the layout of the
/// storages bound to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub dtype: DType,
}

impl Geometry {
    pub fn of(t: &Tensor) -> Geometry {
        Geometry { sizes: t.sizes().to_vec(), strides: t.strides().to_vec(), dtype: t.dtype() }
    }
    pub fn numel(&self) -> i64 {
        self.sizes.iter().product()
    }
}

/// What a node computes.
pub(crate) enum Op {
    /// A recorded operator.
    Ir(Box<ir::Node<Value>>),
    /// A storage nobody wrote: zeros.
    Zeros,
    /// `src` written through `view` into a copy of `base` (or into fresh memory when the view
    /// covers it all): a `copy_` into part of a storage, or with conversion or broadcasting.
    Write { base: Option<Value>, view: View, src: Value },
}

/// A node's state: waiting to run, or its result (a CPU tensor with the node's geometry).
pub(crate) enum State {
    Pending(Op),
    Done(Tensor),
}

/// A node of the graph. Nodes never change once built except that a pending node, once run,
/// keeps its result and drops its operands.
pub struct Node {
    pub(crate) id: u64,
    pub(crate) geometry: Geometry,
    pub(crate) state: Mutex<State>,
}

impl Node {
    pub(crate) fn new(geometry: Geometry, state: State) -> Arc<Node> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Arc::new(Node { id: NEXT.fetch_add(1, Ordering::Relaxed), geometry, state: Mutex::new(state) })
    }
    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// The result, when the node has run.
    pub(crate) fn result(&self) -> Option<Tensor> {
        match &*self.state() {
            State::Done(t) => Some(t.clone()),
            State::Pending(_) => None,
        }
    }
    /// The values this pending node reads (none once it has run).
    pub(crate) fn inputs(&self) -> Vec<Value> {
        match &*self.state() {
            State::Pending(Op::Ir(n)) => n.operands().into_iter().cloned().collect(),
            State::Pending(Op::Write { base, src, .. }) => base.iter().chain([src]).cloned().collect(),
            State::Pending(Op::Zeros) | State::Done(_) => Vec::new(),
        }
    }
}

/// Where a value sits in its node's result: sizes, strides and offset in elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct View {
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
}

impl View {
    pub fn of(t: &Tensor) -> View {
        View { sizes: t.sizes().to_vec(), strides: t.strides().to_vec(), offset: t.storage_offset() }
    }
}

/// A tensor's value in the graph: a node's result seen through a view (the whole result when
/// the view has the node's sizes and strides at offset 0). The operands of IR nodes.
#[derive(Clone)]
pub struct Value {
    pub(crate) node: Arc<Node>,
    pub(crate) view: View,
}

impl Value {
    /// The whole result of `node`.
    pub(crate) fn whole(node: Arc<Node>) -> Value {
        let g = &node.geometry;
        let view = View { sizes: g.sizes.clone(), strides: g.strides.clone(), offset: 0 };
        Value { node, view }
    }
    /// Whether the value is its node's whole result, as laid out there.
    pub(crate) fn is_whole(&self) -> bool {
        let g = &self.node.geometry;
        self.view.offset == 0 && self.view.sizes == g.sizes && self.view.strides == g.strides
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.node.id)?;
        if !self.is_whole() {
            write!(f, ".view({:?}, {:?}, {})", self.view.sizes, self.view.strides, self.view.offset)?;
        }
        Ok(())
    }
}

/// The storage token of a lazy tensor.
pub(crate) fn token(t: &Tensor) -> usize {
    t.storage().data_ptr() as usize
}

/// The node holding the contents of `t`'s storage (binding zeros to a storage nobody wrote).
pub(crate) fn storage_node(t: &Tensor) -> Result<Arc<Node>> {
    let key = token(t);
    if let Some(n) = storage::bound(key) {
        return Ok(n);
    }
    let item = t.dtype().size();
    let nbytes = t.storage().nbytes();
    if item == 0 || !nbytes.is_multiple_of(item) {
        return Err(Error::device(format!(
            "lazy: a {} view of a storage of {nbytes} bytes, which is not a whole number of elements",
            t.dtype()
        )));
    }
    let n = (nbytes / item) as i64;
    let node = Node::new(Geometry { sizes: vec![n], strides: vec![1], dtype: t.dtype() }, State::Pending(Op::Zeros));
    storage::bind(key, node.clone());
    Ok(node)
}

/// The value of a lazy tensor.
pub(crate) fn value_of(t: &Tensor) -> Result<Value> {
    if t.device() != crate::LAZY {
        return Err(Error::device(format!("lazy: expected a tensor on {}, got one on {}", crate::LAZY, t.device())));
    }
    let node = storage_node(t)?;
    if node.geometry.dtype != t.dtype() {
        return Err(Error::dtype(format!(
            "lazy: reading a {} storage as {} (views with another dtype) is not supported",
            node.geometry.dtype,
            t.dtype()
        )));
    }
    Ok(Value { node, view: View::of(t) })
}

/// A captured CPU tensor (copied, so later writes to it do not change the graph).
pub(crate) fn data(t: &Tensor) -> Result<Value> {
    let copy = t.detach().try_deep_clone()?;
    Ok(Value::whole(Node::new(Geometry::of(&copy), State::Done(copy))))
}

/// The pending nodes `root` depends on (itself included), each after its inputs.
pub(crate) fn pending_order(root: &Arc<Node>) -> Vec<Arc<Node>> {
    let mut order = Vec::new();
    let mut seen = HashMap::new();
    // Iterative post-order: graphs of long training runs are deep.
    let mut stack = vec![(root.clone(), false)];
    while let Some((n, expanded)) = stack.pop() {
        if expanded {
            order.push(n);
            continue;
        }
        if seen.insert(n.id, ()).is_some() || n.result().is_some() {
            continue;
        }
        stack.push((n.clone(), true));
        for v in n.inputs().into_iter().rev() {
            if !seen.contains_key(&v.node.id) {
                stack.push((v.node, false));
            }
        }
    }
    order
}

/// The graph behind `v` as text (see [`crate::graph`]).
pub(crate) fn print(v: &Value) -> String {
    let mut names: HashMap<u64, usize> = HashMap::new();
    let mut out = String::new();
    let name = |n: &Arc<Node>, names: &mut HashMap<u64, usize>| {
        let k = names.len();
        *names.entry(n.id).or_insert(k)
    };
    let operand = |v: &Value, names: &HashMap<u64, usize>| {
        let mut s = format!("%{}", names.get(&v.node.id).copied().unwrap_or(usize::MAX));
        if !v.is_whole() {
            s.push_str(&format!(".view({:?}, {:?}, {})", v.view.sizes, v.view.strides, v.view.offset));
        }
        s
    };
    for n in pending_order(&v.node) {
        // Inputs that have run appear as data.
        for i in n.inputs() {
            if i.node.result().is_some() && !names.contains_key(&i.node.id) {
                let k = name(&i.node, &mut names);
                out.push_str(&format!("%{k} = data {}\n", shape(&i.node.geometry)));
            }
        }
        let what = match &*n.state() {
            State::Pending(Op::Ir(op)) => {
                let mut args: Vec<String> = op.operands().into_iter().map(|v| operand(v, &names)).collect();
                let attrs = op.attributes();
                if !attrs.is_empty() {
                    args.push(attrs);
                }
                format!("{}({})", op.name(), args.join(", "))
            }
            State::Pending(Op::Zeros) => "zeros".into(),
            State::Pending(Op::Write { base, view, src }) => format!(
                "write({}{}, view=({:?}, {:?}, {}))",
                base.as_ref().map(|b| format!("{}, ", operand(b, &names))).unwrap_or_default(),
                operand(src, &names),
                view.sizes,
                view.strides,
                view.offset
            ),
            State::Done(_) => "data".into(),
        };
        let k = name(&n, &mut names);
        out.push_str(&format!("%{k} = {what} {}\n", shape(&n.geometry)));
    }
    if !names.contains_key(&v.node.id) {
        let k = name(&v.node, &mut names);
        out.push_str(&format!("%{k} = data {}\n", shape(&v.node.geometry)));
    }
    out.push_str(&format!("return {}\n", operand(v, &names)));
    out
}

fn shape(g: &Geometry) -> String {
    let dtype = match g.dtype {
        DType::F32 => "f32".to_string(),
        DType::F64 => "f64".to_string(),
        DType::I64 => "i64".to_string(),
        DType::Bool => "bool".to_string(),
        other => format!("{other}"),
    };
    format!("{dtype}{:?}", g.sizes)
}
