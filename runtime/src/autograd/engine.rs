//! The backward engine: runs a graph task from root edges to the leaves.
//!
//! Preparation: dependency counts (incoming edges per node) by a DFS from the root, pruned by
//! topological number when only some inputs' gradients are wanted; an execution mask
//! (`exec_info`) marking the nodes on a path to those inputs, with the gradients to capture for
//! `grad()`. Execution: a ready queue ordered by sequence number (newest node first;
//! `AccumulateGrad` first of all) on the calling thread. Each node's incoming gradients are summed
//! in an input buffer; the node runs once all its dependencies have delivered. Every gradient a
//! node returns is checked against the receiving input's metadata: reduced (`sum_to`) when its
//! shape broadcasts to the expected one, cast to the expected dtype, an error otherwise.
//!
//! Backward runs with grad mode = `create_graph`. Without `retain_graph`, each node releases its
//! saved variables after it ran. Errors from a node end the pass and are returned to the caller
//! (thread-local modes are restored by guards). A backward pass started inside a node's backward
//! (reentrant backward) runs nested on the same thread; every
//! [`MAX_REENTRANT_INLINE_DEPTH`] levels it continues on a fresh thread (with the caller's
//! thread-local state) so that deep nesting does not overflow the stack, up to
//! [`MAX_REENTRANT_DEPTH`] levels in all.
//!
//! CUDA nodes run on the stream their forward ran on (recorded in the node when its CUDA outputs
//! were recorded), with the ordering PyTorch's engine gives: a gradient handed to a node on
//! another stream makes that stream wait for the producer's (and keeps the gradient's memory from
//! being reused meanwhile), and before `backward` returns the caller's current streams wait for
//! every stream the pass used; no device-wide synchronisation.

use super::functions::{GraphRoot, Identity};
use super::mode::{is_anomaly_enabled, GradModeGuard, ThreadLocalState};
use super::node::{node_id, Edge, Node, NodeMap, NodeSet};
use super::utils::{self, cast_to, is_expandable_to, sum_to};
use crate::error::{Error, ErrorKind, Result};
use crate::ops_support::tensor_list;
use crate::tensor::Tensor;
use crate::{Device, MemoryFormat};
use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// Nested (reentrant) backward passes run inline on one thread up to this depth.
pub const MAX_REENTRANT_INLINE_DEPTH: usize = 60;
/// Reentrant backward passes nested deeper than this are an error.
pub const MAX_REENTRANT_DEPTH: usize = 1000;
/// Stack size of the threads that continue deep reentrant backward passes.
const REENTRANT_THREAD_STACK: usize = 256 << 20;

#[derive(Default, Clone)]
struct ExecInfo {
    needed: bool,
    /// `(input index of the node, index among the captured gradients)`.
    captures: Vec<(usize, usize)>,
}

impl ExecInfo {
    fn should_execute(&self) -> bool {
        self.needed || !self.captures.is_empty()
    }
}

type ExecInfoMap = NodeMap<ExecInfo>;

thread_local! {
    /// The execution mask of the graph task running on this thread (for
    /// `NodeBase::should_compute_output`).
    static EXEC_INFO: RefCell<Option<Arc<ExecInfoMap>>> = const { RefCell::new(None) };
    /// The nodes being applied on this thread, innermost last (anomaly mode's parent links).
    static CURRENT_NODES: RefCell<Vec<Arc<dyn Node>>> = const { RefCell::new(Vec::new()) };
    /// Reentrant backward depth on this thread, and in all (across continuation threads).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    static TOTAL_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// The node whose backward is running on this thread, if any.
pub fn current_node() -> Option<Arc<dyn Node>> {
    CURRENT_NODES.with(|c| c.borrow().last().cloned())
}

/// Whether the running graph task needs the gradient flowing along `e` (always true outside a
/// masked pass).
pub(crate) fn edge_needed(e: &Edge) -> bool {
    let Some(f) = e.function.as_ref() else { return false };
    EXEC_INFO.with(|x| match x.borrow().as_ref() {
        Some(map) if !map.is_empty() => map.get(&node_id(f)).is_some_and(ExecInfo::should_execute),
        _ => true,
    })
}

struct ExecInfoGuard(Option<Arc<ExecInfoMap>>);
impl ExecInfoGuard {
    fn set(v: Option<Arc<ExecInfoMap>>) -> Self {
        ExecInfoGuard(EXEC_INFO.with(|x| x.replace(v)))
    }
}
impl Drop for ExecInfoGuard {
    fn drop(&mut self) {
        let prev = self.0.take();
        EXEC_INFO.with(|x| *x.borrow_mut() = prev);
    }
}

/// Runs `f` as if no execution mask were active (every valid edge is needed).
pub(crate) fn without_exec_info<R>(f: impl FnOnce() -> R) -> R {
    let _g = ExecInfoGuard::set(None);
    f()
}

struct CurrentNodeGuard;
impl CurrentNodeGuard {
    fn push(n: &Arc<dyn Node>) -> Self {
        CURRENT_NODES.with(|c| c.borrow_mut().push(n.clone()));
        CurrentNodeGuard
    }
}
impl Drop for CurrentNodeGuard {
    fn drop(&mut self) {
        CURRENT_NODES.with(|c| c.borrow_mut().pop());
    }
}

struct DepthGuard;
impl DepthGuard {
    fn enter() -> Self {
        DEPTH.with(|d| d.set(d.get() + 1));
        TOTAL_DEPTH.with(|d| d.set(d.get() + 1));
        DepthGuard
    }
}
impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
        TOTAL_DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Gradients arriving at one node, summed per input slot.
struct InputBuffer(Vec<Option<Tensor>>);

impl InputBuffer {
    fn new(n: usize) -> Self {
        InputBuffer(vec![None; n])
    }
    fn add(&mut self, pos: usize, g: Option<Tensor>) -> Result<()> {
        let Some(g) = g else { return Ok(()) };
        if self.0.len() <= pos {
            self.0.resize(pos + 1, None);
        }
        self.0[pos] = Some(match self.0[pos].take() {
            None => g,
            Some(old) => accumulate(old, g)?,
        });
        Ok(())
    }
}

/// Whether the buffer may add into `t` in place: nothing else can observe it.
fn owned_exclusively(t: &Tensor) -> bool {
    t.use_count() == 1 && t.storage().use_count() == 1 && t.raw_grad_fn().is_none()
}

fn accumulate(old: Tensor, new: Tensor) -> Result<Tensor> {
    if !super::mode::is_grad_enabled() && old.sizes() == new.sizes() && old.dtype() == new.dtype() {
        if owned_exclusively(&old) {
            utils::add_(&old, &new)?;
            return Ok(old);
        }
        if owned_exclusively(&new) {
            utils::add_(&new, &old)?;
            return Ok(new);
        }
    }
    utils::add(&old, &new)
}

struct NodeTask {
    seq: u64,
    order: u64,
    node: Arc<dyn Node>,
    inputs: Vec<Option<Tensor>>,
}

impl PartialEq for NodeTask {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for NodeTask {}
impl PartialOrd for NodeTask {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for NodeTask {
    /// Highest sequence number first; FIFO among equals.
    fn cmp(&self, o: &Self) -> Ordering {
        self.seq.cmp(&o.seq).then(o.order.cmp(&self.order))
    }
}

struct GraphTask {
    keep_graph: bool,
    dependencies: NodeMap<usize>,
    not_ready: NodeMap<InputBuffer>,
    exec_info: Arc<ExecInfoMap>,
    captured: Vec<Option<Tensor>>,
    queue: BinaryHeap<NodeTask>,
    pushed: u64,
    /// The CUDA streams the pass's nodes ran on (the caller waits for them at the end).
    #[cfg(feature = "cuda")]
    streams: Vec<crate::cuda::Stream>,
}

impl GraphTask {
    fn push(&mut self, node: Arc<dyn Node>, inputs: Vec<Option<Tensor>>) {
        self.pushed += 1;
        self.queue.push(NodeTask { seq: node.base().sequence_nr(), order: self.pushed, node, inputs });
    }
}

fn compute_dependencies(root: &Arc<dyn Node>, min_topo_nr: u64) -> NodeMap<usize> {
    let mut deps = NodeMap::default();
    let mut seen = NodeSet::default();
    let mut stack = vec![root.clone()];
    seen.insert(node_id(root));
    while let Some(f) = stack.pop() {
        if f.base().topological_nr() < min_topo_nr {
            continue;
        }
        for e in f.base().next_edges() {
            if let Some(n) = &e.function {
                *deps.entry(node_id(n)).or_insert(0) += 1;
                if seen.insert(node_id(n)) {
                    stack.push(n.clone());
                }
            }
        }
    }
    deps
}

/// Marks the nodes that lie on a path from `root` to one of `outputs` (the requested inputs'
/// gradient edges), and what to capture for `grad()`.
fn init_to_execute(root: &Arc<dyn Node>, outputs: &[Edge], accumulate_grad: bool, min_topo_nr: u64) -> ExecInfoMap {
    let mut info = ExecInfoMap::default();
    for (idx, e) in outputs.iter().enumerate() {
        let Some(f) = e.function.as_ref() else { continue };
        let entry = info.entry(node_id(f)).or_default();
        if accumulate_grad {
            entry.needed = true;
        } else {
            entry.captures.push((e.input_nr, idx));
        }
    }
    let should = |info: &ExecInfoMap, id: usize| info.get(&id).is_some_and(ExecInfo::should_execute);
    struct Frame {
        node: Arc<dyn Node>,
        next: usize,
    }
    let mut seen = NodeSet::default();
    info.entry(node_id(root)).or_default();
    let mut stack = vec![Frame { node: root.clone(), next: 0 }];
    while let Some(frame) = stack.last_mut() {
        let fid = node_id(&frame.node);
        let mut child = None;
        while frame.next < frame.node.base().num_outputs() {
            let e = &frame.node.base().next_edges()[frame.next];
            frame.next += 1;
            let Some(c) = e.function.as_ref() else { continue };
            if seen.insert(node_id(c)) {
                child = Some(c.clone());
                break;
            }
            if should(&info, node_id(c)) {
                info.entry(fid).or_default().needed = true;
            }
        }
        match child {
            Some(c) => {
                if c.base().topological_nr() >= min_topo_nr {
                    stack.push(Frame { node: c, next: 0 });
                }
            }
            None => {
                stack.pop();
                if should(&info, fid) {
                    if let Some(parent) = stack.last() {
                        info.entry(node_id(&parent.node)).or_default().needed = true;
                    }
                }
            }
        }
    }
    info
}

/// Checks (and fixes up) the gradients a node returns against the metadata of the inputs they go
/// to: broadcast-compatible shapes are summed down, dtypes are cast, anything else is an error.
fn validate_outputs(edges: &[Edge], grads: &mut [Option<Tensor>], node: Option<&dyn Node>) -> Result<()> {
    // Formatted only for an error: this runs for every node of every backward.
    let prefix = || node.map_or(String::new(), |n| format!("Function {} returned an ", n.name()));
    if edges.len() != grads.len() {
        return Err(Error::runtime(format!(
            "{}invalid number of gradients - expected {}, but got {}",
            prefix(),
            edges.len(),
            grads.len()
        )));
    }
    for (i, (e, slot)) in edges.iter().zip(grads.iter_mut()).enumerate() {
        let Some(f) = e.function.as_ref() else { continue };
        let Some(g) = slot.as_ref() else { continue };
        let Some(md) = f.base().input_metadata(e.input_nr) else { continue };
        let sizes = g.sizes();
        let mut fixed: Option<Tensor> = None;
        if sizes != md.sizes {
            if !is_expandable_to(&md.sizes, &sizes) {
                return Err(Error::shape(format!(
                    "{}invalid gradient at index {i} - got {:?} but expected shape compatible with {:?}",
                    prefix(),
                    &sizes[..],
                    &md.sizes[..]
                )));
            }
            fixed = Some(sum_to(g, &md.sizes)?);
        }
        let cur = fixed.as_ref().unwrap_or(g);
        if cur.device() != md.device {
            return Err(Error::device(format!(
                "{}invalid gradient at index {i} - expected device {} but got {}",
                prefix(),
                md.device,
                cur.device()
            )));
        }
        if cur.dtype() != md.dtype {
            fixed = Some(cast_to(cur, md.dtype)?);
        }
        if let Some(t) = fixed {
            *slot = Some(t);
        }
    }
    Ok(())
}

fn run_tensor_hook(hook: &super::hooks::TensorHook, slot: &mut Option<Tensor>) -> Result<()> {
    if let Some(g) = slot.as_ref() {
        if let Some(new) = hook(g)? {
            *slot = Some(new);
        }
    }
    Ok(())
}

/// Tensor hooks (of a leaf for `AccumulateGrad`, else of the node's outputs), then `retain_grad`.
fn call_tensor_pre_hooks(node: &Arc<dyn Node>, inputs: &mut [Option<Tensor>]) -> Result<()> {
    if let Some(var) = node.leaf_variable() {
        for h in var.leaf_hooks() {
            if let Some(slot) = inputs.get_mut(0) {
                run_tensor_hook(&h, slot)?;
            }
        }
    }
    let Some(hooks) = node.base().hooks() else { return Ok(()) };
    for (idx, h) in hooks.tensor_pre.snapshot() {
        if let Some(slot) = inputs.get_mut(idx) {
            run_tensor_hook(&h, slot)?;
        }
    }
    for (idx, w) in node.base().retains_grad_entries() {
        let (Some(t), Some(Some(g))) = (w.upgrade(), inputs.get(idx)) else { continue };
        let new = match t.grad() {
            None => utils::clone_contiguous(g)?,
            Some(old) => utils::add(&old, g)?,
        };
        t.set_grad(Some(new));
    }
    Ok(())
}

fn anomaly_trace(node: &dyn Node) -> Option<String> {
    let md = node.base().anomaly_metadata()?;
    let mut s = format!("{}", md.trace);
    let mut parent = md.parent.as_ref().and_then(|w| w.upgrade());
    while let Some(p) = parent {
        let Some(pm) = p.base().anomaly_metadata() else { break };
        s += &format!(
            "\n\nPrevious calculation was induced by {}. Traceback of forward call that induced the previous calculation:\n{}",
            p.name(),
            pm.trace
        );
        parent = pm.parent.as_ref().and_then(|w| w.upgrade());
    }
    Some(s)
}

fn annotate_anomaly(e: Error, node: &dyn Node) -> Error {
    if !is_anomaly_enabled() || e.message.contains("Traceback of forward call that caused the error") {
        return e;
    }
    let mut e = e;
    match anomaly_trace(node) {
        Some(t) => {
            e.message +=
                &format!("\n\nError detected in {}. Traceback of forward call that caused the error:\n{t}", node.name())
        }
        None => e.message += &format!("\n\nError detected in {}.", node.name()),
    }
    e
}

/// CUDA streams in backward (PyTorch's rule): a node runs on the stream its forward ran on, a
/// gradient handed to a node on another stream makes that stream wait for the producer's, and
/// the caller's stream waits for every stream the pass used before `backward` returns.
#[cfg(feature = "cuda")]
mod streams {
    use super::*;
    use crate::cuda::{current_stream, record_stream, Stream};

    /// Orders `consumer`'s stream after `producer`'s (the caller's current stream when the
    /// producer has none) before it reads `grad`, and keeps `grad`'s memory from being reused on
    /// the producer's stream while the consumer may still read it.
    pub(super) fn hand_over(producer: Option<Stream>, consumer: &dyn Node, grad: &Tensor) -> Result<()> {
        let Some(c) = consumer.base().stream() else { return Ok(()) };
        if grad.device() != c.device() {
            return Ok(());
        }
        let p = producer.filter(|p| p.device() == c.device()).unwrap_or_else(|| current_stream(c.device()));
        if p != c {
            c.wait_stream(p)?;
            record_stream(grad.storage().data_ptr(), grad.device(), c);
        }
        Ok(())
    }

    /// Makes the caller's current streams wait for every stream in `used`.
    pub(super) fn join(used: &[Stream]) -> Result<()> {
        for s in used {
            current_stream(s.device()).wait_stream(*s)?;
        }
        Ok(())
    }
}

fn evaluate_function(task: &mut GraphTask, node: Arc<dyn Node>, mut inputs: Vec<Option<Tensor>>) -> Result<()> {
    #[cfg(feature = "cuda")]
    let stream = node.base().stream();
    #[cfg(feature = "cuda")]
    let _on_stream = stream.map(|s| {
        if !task.streams.contains(&s) {
            task.streams.push(s);
        }
        crate::cuda::StreamGuard::new(s)
    });
    call_tensor_pre_hooks(&node, &mut inputs)?;
    if !task.exec_info.is_empty() {
        let info = task.exec_info.get(&node_id(&node)).cloned().unwrap_or_default();
        for &(input_idx, output_idx) in &info.captures {
            task.captured[output_idx] = inputs.get(input_idx).cloned().flatten();
        }
        if !info.needed {
            return Ok(());
        }
    }
    if let Some(hooks) = node.base().hooks() {
        for h in hooks.pre.snapshot() {
            if let Some(new) = h(&inputs)? {
                inputs = new;
            }
        }
    }
    let post_hooks = node.base().hooks().map(|h| h.post.snapshot()).unwrap_or_default();
    let mut outputs = {
        let _cur = CurrentNodeGuard::push(&node);
        let (r, kept) =
            if post_hooks.is_empty() { (node.apply(inputs), Vec::new()) } else { (node.apply(inputs.clone()), inputs) };
        match r {
            Ok(o) => {
                let mut o = o;
                for h in &post_hooks {
                    if let Some(new) = h(&o, &kept)? {
                        o = new;
                    }
                }
                o
            }
            Err(e) => return Err(annotate_anomaly(e, &*node)),
        }
    };
    if !task.keep_graph {
        node.release_variables();
    }
    let edges = node.base().next_edges();
    if outputs.is_empty() && edges.is_empty() {
        return Ok(());
    }
    validate_outputs(edges, &mut outputs, Some(&*node)).map_err(|e| annotate_anomaly(e, &*node))?;
    if is_anomaly_enabled() {
        for (i, o) in outputs.iter().enumerate() {
            if o.as_ref().is_some_and(utils::has_nan) {
                let trace = anomaly_trace(&*node)
                    .unwrap_or_else(|| "<unknown: the node was created outside anomaly mode>".to_string());
                return Err(Error::runtime(format!(
                    "Function '{}' returned nan values in its {i}th output.\n(forward op created at:\n{trace})",
                    node.name()
                )));
            }
        }
    }
    for (e, g) in edges.iter().zip(outputs) {
        let Some(next) = e.function.as_ref() else { continue };
        let id = node_id(next);
        let ready = match task.dependencies.get_mut(&id) {
            None => return Err(Error::runtime(format!("dependency not found for {}", next.name()))),
            Some(d) => {
                *d -= 1;
                *d == 0
            }
        };
        if ready {
            task.dependencies.remove(&id);
        }
        if !task.exec_info.is_empty() && !task.exec_info.get(&id).is_some_and(ExecInfo::should_execute) {
            continue;
        }
        // The gradient is summed into the consumer's buffer on the consumer's stream, which has
        // waited for every producer so far (a sum on this node's stream could read another
        // producer's gradient before that producer's stream wrote it).
        #[cfg(feature = "cuda")]
        let _on_consumer_stream = match g.as_ref() {
            Some(g) => {
                streams::hand_over(stream, &**next, g)?;
                next.base().stream().map(crate::cuda::StreamGuard::new)
            }
            None => None,
        };
        let buf = task.not_ready.entry(id).or_insert_with(|| InputBuffer::new(next.base().num_inputs()));
        buf.add(e.input_nr, g)?;
        if ready {
            let buf = task.not_ready.remove(&id).expect("buffer just inserted");
            task.push(next.clone(), buf.0);
        }
    }
    Ok(())
}

/// Runs a graph task: the engine's entry point (`Engine::execute`). `roots` are the gradient
/// edges of the outputs, `grads` their gradients; `outputs` (possibly empty) the edges of the
/// inputs whose gradients are wanted. With `accumulate_grad` the leaves' `.grad` are updated,
/// otherwise the gradients arriving at `outputs` are returned (one per output edge).
pub fn execute(
    roots: Vec<Edge>,
    grads: Vec<Tensor>,
    keep_graph: bool,
    create_graph: bool,
    accumulate_grad: bool,
    outputs: Vec<Edge>,
) -> Result<Vec<Option<Tensor>>> {
    let total = TOTAL_DEPTH.with(Cell::get);
    if total >= MAX_REENTRANT_DEPTH {
        return Err(Error::runtime(format!(
            "maximum reentrant backward depth exceeded ({MAX_REENTRANT_DEPTH} nested backward passes)"
        )));
    }
    if DEPTH.with(Cell::get) < MAX_REENTRANT_INLINE_DEPTH {
        return execute_inline(roots, grads, keep_graph, create_graph, accumulate_grad, outputs);
    }
    // Continue on a fresh thread (with this thread's modes) so the stack does not overflow.
    let tls = ThreadLocalState::capture();
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("oxten-reentrant-backward".into())
            .stack_size(REENTRANT_THREAD_STACK)
            .spawn_scoped(s, move || {
                tls.enter(|| {
                    TOTAL_DEPTH.with(|d| d.set(total));
                    execute_inline(roots, grads, keep_graph, create_graph, accumulate_grad, outputs)
                })
            })
            .map_err(|e| Error::runtime(format!("could not start a thread for reentrant backward: {e}")))?;
        match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

fn execute_inline(
    roots: Vec<Edge>,
    mut grads: Vec<Tensor>,
    keep_graph: bool,
    create_graph: bool,
    accumulate_grad: bool,
    outputs: Vec<Edge>,
) -> Result<Vec<Option<Tensor>>> {
    let _depth = DepthGuard::enter();
    let _grad_mode = GradModeGuard::new(create_graph);
    if roots.len() != grads.len() || roots.is_empty() {
        return Err(Error::runtime(format!("backward: {} roots but {} gradients", roots.len(), grads.len())));
    }
    let mut gopt: Vec<Option<Tensor>> = grads.drain(..).map(Some).collect();
    validate_outputs(&roots, &mut gopt, None)?;

    let (root, root_inputs): (Arc<dyn Node>, Vec<Option<Tensor>>) = if roots.len() == 1 {
        let e = &roots[0];
        let f = e.function.clone().ok_or_else(|| Error::runtime("backward: invalid root edge"))?;
        let mut buf = InputBuffer::new(f.base().num_inputs());
        buf.add(e.input_nr, gopt.pop().flatten())?;
        (f, buf.0)
    } else {
        (Arc::new(GraphRoot::new(roots, gopt)), Vec::new())
    };

    let min_topo_nr = outputs.iter().filter_map(|e| e.function.as_ref()).map(|f| f.base().topological_nr()).min();
    let min_topo_nr = if outputs.is_empty() { 0 } else { min_topo_nr.unwrap_or(0) };
    let dependencies = compute_dependencies(&root, min_topo_nr);
    let exec_info = if outputs.is_empty() {
        ExecInfoMap::default()
    } else {
        init_to_execute(&root, &outputs, accumulate_grad, min_topo_nr)
    };
    let exec_info = Arc::new(exec_info);
    let _mask = ExecInfoGuard::set(Some(exec_info.clone()));

    let mut task = GraphTask {
        keep_graph,
        dependencies,
        not_ready: NodeMap::default(),
        exec_info,
        captured: vec![None; outputs.len()],
        queue: BinaryHeap::new(),
        pushed: 0,
        #[cfg(feature = "cuda")]
        streams: Vec::new(),
    };
    #[cfg(feature = "cuda")]
    for g in root_inputs.iter().flatten() {
        // The root gradients were made on the caller's stream.
        streams::hand_over(None, &*root, g)?;
    }
    task.push(root, root_inputs);
    while let Some(t) = task.queue.pop() {
        evaluate_function(&mut task, t.node, t.inputs)?;
    }
    #[cfg(feature = "cuda")]
    streams::join(&task.streams)?;
    Ok(task.captured)
}

// ----- the user-facing entry points -----

fn sizes_str(t: &Tensor) -> String {
    let s: Vec<String> = t.sizes().iter().map(|d| d.to_string()).collect();
    format!("torch.Size([{}])", s.join(", "))
}

fn root_edges(tensors: &[Tensor]) -> Result<Vec<Edge>> {
    tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let e = t.gradient_edge();
            if e.is_valid() {
                Ok(e)
            } else {
                Err(Error::runtime(format!("element {i} of tensors does not require grad and does not have a grad_fn")))
            }
        })
        .collect()
}

/// Fills in the default gradient (ones) for scalar outputs and checks given ones' shapes.
fn make_grads(outputs: &[Tensor], grads: &[Option<Tensor>]) -> Result<Vec<Tensor>> {
    if !grads.is_empty() && grads.len() != outputs.len() {
        return Err(Error::runtime(format!(
            "grad can be implicitly created only for scalar outputs: got {} gradients for {} outputs",
            grads.len(),
            outputs.len()
        )));
    }
    outputs
        .iter()
        .enumerate()
        .map(|(i, out)| match grads.get(i).cloned().flatten() {
            Some(g) => {
                if g.sizes() != out.sizes() {
                    return Err(Error::shape(format!(
                        "Mismatch in shape: grad_output[{i}] has a shape of {} and output[{i}] has a shape of {}.",
                        sizes_str(&g),
                        sizes_str(out)
                    )));
                }
                Ok(g)
            }
            None => {
                if out.numel() != 1 {
                    return Err(Error::runtime("grad can be implicitly created only for scalar outputs"));
                }
                if !out.dtype().is_floating_point() {
                    return Err(Error::runtime(format!(
                        "grad can be implicitly created only for real scalar outputs but got {}",
                        out.dtype()
                    )));
                }
                if out.dim() == 0 && out.device() == Device::Cpu {
                    // The usual `loss.backward()`: a CPU scalar, made directly rather than through
                    // the dispatcher and a fill.
                    return crate::iter::to_dtype(&Tensor::scalar(1.0f64), out.dtype());
                }
                crate::ops::ones_like::call(out, None, None, None, None, Some(MemoryFormat::Preserve))
            }
        })
        .collect()
}

/// The edge whose incoming gradient is an input's gradient: `(grad_fn, output_nr)`, the leaf's
/// existing accumulator, or (if the input is not part of any graph) a dangling `Identity`.
fn input_edge(t: &Tensor) -> Edge {
    if let Some(f) = t.grad_fn() {
        return Edge::new(f, t.output_nr());
    }
    if let Some(acc) = t.try_grad_accumulator() {
        return Edge::new(acc, 0);
    }
    Edge::new(Arc::new(Identity::new(Vec::new())), 0)
}

/// `torch.autograd.backward`: accumulates the gradients of `tensors` (weighted by
/// `grad_tensors`; `None` = ones for scalars) into the leaves' `.grad`. `retain_graph` defaults
/// to `create_graph`. Non-empty `inputs` restricts accumulation to those tensors (non-leaf ones
/// get `retain_grad()`).
pub fn backward(
    tensors: &[Tensor],
    grad_tensors: &[Option<Tensor>],
    retain_graph: Option<bool>,
    create_graph: bool,
    inputs: &[Tensor],
) -> Result<()> {
    if tensors.is_empty() {
        return Err(Error::runtime("backward: no tensors to differentiate"));
    }
    let roots = root_edges(tensors)?;
    let grads = make_grads(tensors, grad_tensors)?;
    let keep_graph = retain_graph.unwrap_or(create_graph);
    let mut out_edges = Vec::with_capacity(inputs.len());
    for t in inputs {
        if !t.requires_grad() {
            return Err(Error::runtime("One of the differentiated Tensors does not require grad"));
        }
        t.retain_grad()?;
        out_edges.push(input_edge(t));
    }
    execute(roots, grads, keep_graph, create_graph, true, out_edges)?;
    Ok(())
}

/// Options of [`grad_with`] (the keyword arguments of `torch.autograd.grad`).
#[derive(Clone, Debug, Default)]
pub struct GradOpts {
    /// The gradient of each output (`None` or missing: ones, for one-element outputs).
    pub grad_outputs: Vec<Option<Tensor>>,
    /// Keep the graph's saved tensors for another backward; defaults to `create_graph`.
    pub retain_graph: Option<bool>,
    /// Record the backward computation so that higher-order gradients can be taken.
    pub create_graph: bool,
    /// An input the outputs do not depend on gives `None` instead of an error.
    pub allow_unused: bool,
}

/// `torch.autograd.grad(outputs, inputs)`: the gradients of `outputs` with respect to `inputs`,
/// returned instead of accumulated into `.grad`. Both take what callers hold: `&[y]`,
/// `&[&x, &w]`, `&params` (a `Vec<Tensor>`).
///
/// ```no_run
/// # fn f(x: &oxten_runtime::Tensor, y: &oxten_runtime::Tensor) -> oxten_runtime::Result<()> {
/// use oxten_runtime::autograd::{grad, grad_with, GradOpts};
/// let g = grad(&[y], &[x])?;
/// let gg = grad_with(&[y], &[x], GradOpts { create_graph: true, ..Default::default() })?;
/// # Ok(()) }
/// ```
pub fn grad(outputs: &[impl AsRef<Tensor>], inputs: &[impl AsRef<Tensor>]) -> Result<Vec<Option<Tensor>>> {
    grad_with(outputs, inputs, GradOpts::default())
}

/// [`grad`] with options; an input that is not part of the graph gives `None` with
/// `allow_unused`, an error otherwise.
pub fn grad_with(
    outputs: &[impl AsRef<Tensor>],
    inputs: &[impl AsRef<Tensor>],
    opts: GradOpts,
) -> Result<Vec<Option<Tensor>>> {
    let (outputs, inputs) = (tensor_list(outputs), tensor_list(inputs));
    let GradOpts { grad_outputs, retain_graph, create_graph, allow_unused } = opts;
    let (outputs, inputs, grad_outputs) = (&outputs[..], &inputs[..], &grad_outputs[..]);
    if outputs.is_empty() {
        return Err(Error::runtime("grad requires non-empty outputs."));
    }
    if inputs.is_empty() {
        return Err(Error::runtime("grad requires non-empty inputs."));
    }
    let roots = root_edges(outputs)?;
    let grads = make_grads(outputs, grad_outputs)?;
    let keep_graph = retain_graph.unwrap_or(create_graph);
    let mut out_edges = Vec::with_capacity(inputs.len());
    for t in inputs {
        if !t.requires_grad() {
            return Err(Error::runtime("One of the differentiated Tensors does not require grad"));
        }
        out_edges.push(input_edge(t));
    }
    let res = execute(roots, grads, keep_graph, create_graph, false, out_edges)?;
    if !allow_unused && res.iter().any(Option::is_none) {
        return Err(Error::new(
            ErrorKind::Runtime,
            "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
        ));
    }
    Ok(res)
}
