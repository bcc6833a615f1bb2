//! The backward graph: [`Node`]s (one per differentiable forward op call) joined by [`Edge`]s.
//!
//! Node `n`'s backward output `i` is the gradient with respect to its forward op's input `i`; it
//! flows along `n.base().next_edges()[i]` into input `edge.input_nr` of the node that produced
//! that forward input. A node's *inputs* (in the backward sense) are the gradients of its forward
//! op's outputs; [`InputMetadata`] describes each of them (recorded by `set_history`) so the
//! engine can check, reduce (`sum_to`) and cast incoming gradients centrally.

use super::hooks::{HookHandle, HookList, PostHook, PreHook, TensorHook};
use super::mode::is_anomaly_enabled;
use super::saved::SavedVariable;
use crate::device::Device;
use crate::dimvec::DimVec;
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::{Tensor, WeakTensor};
use std::backtrace::Backtrace;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// Describes forward output `i` of a node (= backward input `i`): what shape, dtype and device a
/// gradient arriving there must have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputMetadata {
    pub sizes: DimVec,
    pub dtype: DType,
    pub device: Device,
}

impl InputMetadata {
    pub fn of(t: &Tensor) -> InputMetadata {
        InputMetadata { sizes: t.sizes(), dtype: t.dtype(), device: t.device() }
    }
}

/// A gradient edge: the node that receives the gradient and which of its inputs it goes to.
/// An edge without a function is *invalid*: the forward input did not require grad.
#[derive(Clone, Default)]
pub struct Edge {
    pub function: Option<Arc<dyn Node>>,
    pub input_nr: usize,
}

impl Edge {
    pub fn new(function: Arc<dyn Node>, input_nr: usize) -> Edge {
        Edge { function: Some(function), input_nr }
    }
    /// The invalid edge.
    pub fn empty() -> Edge {
        Edge { function: None, input_nr: 0 }
    }
    pub fn is_valid(&self) -> bool {
        self.function.is_some()
    }
    /// Whether both edges point at the same input of the same node.
    pub fn same_as(&self, other: &Edge) -> bool {
        match (&self.function, &other.function) {
            (Some(a), Some(b)) => node_id(a) == node_id(b) && self.input_nr == other.input_nr,
            (None, None) => true,
            _ => false,
        }
    }
}

impl std::fmt::Debug for Edge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.function {
            Some(n) => write!(f, "Edge({}, {})", n.name(), self.input_nr),
            None => f.write_str("Edge(None)"),
        }
    }
}

/// A node's identity (its address), for maps keyed by node.
#[inline]
pub fn node_id(n: &Arc<dyn Node>) -> usize {
    Arc::as_ptr(n) as *const () as usize
}

/// Hashes a [`node_id`] (an address) by one multiplication: the engine looks nodes up several
/// times per node of every backward, where std's DoS-resistant SipHash costs more than the
/// lookup. Addresses are not chosen by an attacker.
#[derive(Default)]
pub(crate) struct NodeIdHasher(u64);

impl std::hash::Hasher for NodeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, id: usize) {
        // Fibonacci hashing; the map uses the high bits too, so the aligned low bits do not matter.
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by [`node_id`].
pub(crate) type NodeMap<V> = std::collections::HashMap<usize, V, std::hash::BuildHasherDefault<NodeIdHasher>>;
/// A set of [`node_id`]s.
pub(crate) type NodeSet = std::collections::HashSet<usize, std::hash::BuildHasherDefault<NodeIdHasher>>;

/// A node of the backward graph. Implementations hold a [`NodeBase`] (edges, metadata, hooks)
/// and whatever the formula needs ([`SavedVariable`]s, sizes, scalars).
pub trait Node: Send + Sync + 'static {
    fn base(&self) -> &NodeBase;
    /// E.g. `"MulBackward0"`.
    fn name(&self) -> String;
    /// `grads[i]` is the gradient w.r.t. forward output `i` (`None` = zero); returns one entry per
    /// next edge (forward input), `None` where the gradient is zero or not needed.
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>>;
    /// Frees saved state (called after the node ran when the graph is not retained).
    fn release_variables(&self) {}
    /// Visits every saved variable with its field name.
    fn visit_saved(&self, _f: &mut dyn FnMut(&str, &SavedVariable)) {}
    /// The variable an `AccumulateGrad` node accumulates into; `None` for every other node.
    #[doc(hidden)]
    fn leaf_variable(&self) -> Option<&Tensor> {
        None
    }
}

impl std::fmt::Debug for dyn Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} seq={}>", self.name(), self.base().sequence_nr())
    }
}

static NEXT_SEQUENCE_NR: AtomicU64 = AtomicU64::new(0);

/// What anomaly mode records when a node is created.
pub struct AnomalyMetadata {
    /// Where the node (and so its forward op) was created.
    pub trace: Backtrace,
    /// The node whose backward was running when this node was created (double backward).
    pub parent: Option<Weak<dyn Node>>,
}

/// Hooks registered on a node; allocated on first registration.
#[derive(Default)]
pub(crate) struct NodeHooks {
    pub(crate) pre: Arc<HookList<PreHook>>,
    pub(crate) post: Arc<HookList<PostHook>>,
    /// Tensor hooks of the forward outputs, by output index.
    pub(crate) tensor_pre: Arc<HookList<(usize, TensorHook)>>,
    /// `retain_grad()` of forward outputs, by output index.
    pub(crate) retains_grad: Mutex<Vec<(usize, WeakTensor)>>,
}

/// The state every node has: next edges, per-input metadata, ordering numbers, hooks and anomaly
/// metadata.
pub struct NodeBase {
    next_edges: Vec<Edge>,
    input_metadata: Mutex<Vec<Option<InputMetadata>>>,
    sequence_nr: u64,
    topological_nr: u64,
    self_weak: OnceLock<Weak<dyn Node>>,
    hooks: OnceLock<Box<NodeHooks>>,
    anomaly: Option<Box<AnomalyMetadata>>,
    /// The stream that was current when the node's first CUDA output was recorded: backward runs
    /// the node there (PyTorch's rule), so it needs no device-wide synchronisation.
    #[cfg(feature = "cuda")]
    stream: OnceLock<crate::cuda::Stream>,
}

impl NodeBase {
    /// A node whose backward outputs flow along `next_edges` (one per forward input). Takes the
    /// next global sequence number.
    pub fn new(next_edges: Vec<Edge>) -> Self {
        let seq = NEXT_SEQUENCE_NR.fetch_add(1, Ordering::Relaxed);
        Self::with_sequence_nr(next_edges, seq)
    }

    /// Like [`NodeBase::new`] with an explicit sequence number (`AccumulateGrad` uses
    /// `u64::MAX` so it runs as soon as it is ready).
    pub fn with_sequence_nr(next_edges: Vec<Edge>, sequence_nr: u64) -> Self {
        let topological_nr = next_edges
            .iter()
            .filter_map(|e| e.function.as_ref())
            .map(|f| f.base().topological_nr + 1)
            .max()
            .unwrap_or(0);
        let anomaly = if is_anomaly_enabled() {
            Some(Box::new(AnomalyMetadata {
                trace: Backtrace::force_capture(),
                parent: super::engine::current_node().map(|n| Arc::downgrade(&n)),
            }))
        } else {
            None
        };
        NodeBase {
            next_edges,
            input_metadata: Mutex::new(Vec::new()),
            sequence_nr,
            topological_nr,
            self_weak: OnceLock::new(),
            hooks: OnceLock::new(),
            anomaly,
            #[cfg(feature = "cuda")]
            stream: OnceLock::new(),
        }
    }

    pub fn next_edges(&self) -> &[Edge] {
        &self.next_edges
    }
    pub fn next_edge(&self, i: usize) -> &Edge {
        &self.next_edges[i]
    }
    /// Number of backward outputs (forward inputs).
    pub fn num_outputs(&self) -> usize {
        self.next_edges.len()
    }
    /// Number of backward inputs (forward outputs) with recorded metadata.
    pub fn num_inputs(&self) -> usize {
        self.metadata().len()
    }
    /// Order of creation; the engine runs ready nodes with the highest number first.
    pub fn sequence_nr(&self) -> u64 {
        self.sequence_nr
    }
    /// Longest path to a leaf (0 for nodes without next edges). `topo(x) < topo(y)` implies there
    /// is no path from `x` to `y`; the engine prunes with it.
    pub fn topological_nr(&self) -> u64 {
        self.topological_nr
    }

    fn metadata(&self) -> MutexGuard<'_, Vec<Option<InputMetadata>>> {
        self.input_metadata.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// The stream backward runs this node on: the current stream of its forward outputs' CUDA
    /// device when they were recorded; `None` for nodes without CUDA outputs.
    #[cfg(feature = "cuda")]
    pub fn stream(&self) -> Option<crate::cuda::Stream> {
        self.stream.get().copied()
    }

    #[cfg(feature = "cuda")]
    fn note_stream(&self, md: &InputMetadata) {
        if matches!(md.device, Device::Cuda(_)) {
            self.stream.get_or_init(|| crate::cuda::current_stream(md.device));
        }
    }

    /// Records the metadata of forward output `i`.
    pub fn set_input_metadata(&self, i: usize, md: InputMetadata) {
        #[cfg(feature = "cuda")]
        self.note_stream(&md);
        let mut m = self.metadata();
        if m.len() <= i {
            m.resize(i + 1, None);
        }
        m[i] = Some(md);
    }
    /// Appends metadata for the next forward output and returns its index.
    pub fn add_input_metadata(&self, md: InputMetadata) -> usize {
        #[cfg(feature = "cuda")]
        self.note_stream(&md);
        let mut m = self.metadata();
        m.push(Some(md));
        m.len() - 1
    }
    pub fn input_metadata(&self, i: usize) -> Option<InputMetadata> {
        self.metadata().get(i).cloned().flatten()
    }

    /// Whether backward output `i` is needed: its edge is valid and, when the running backward
    /// pass computes only some inputs' gradients (`inputs=` / `grad()`), the edge leads to one.
    pub fn should_compute_output(&self, i: usize) -> bool {
        match self.next_edges.get(i) {
            Some(e) if e.is_valid() => super::engine::edge_needed(e),
            _ => false,
        }
    }
    /// Whether any backward output in `range` is needed.
    pub fn should_compute_any_output(&self, range: std::ops::Range<usize>) -> bool {
        range.into_iter().any(|i| self.should_compute_output(i))
    }

    /// Records the `Arc` this base lives in (done by `set_history`), so that saved outputs can be
    /// re-attached to their node on unpack.
    pub fn set_self_weak(&self, me: &Arc<dyn Node>) {
        let _ = self.self_weak.set(Arc::downgrade(me));
    }
    /// The node owning this base, if it was registered with [`NodeBase::set_self_weak`].
    pub fn self_arc(&self) -> Option<Arc<dyn Node>> {
        self.self_weak.get().and_then(Weak::upgrade)
    }

    /// Anomaly-mode metadata (`None` if the node was created outside anomaly mode).
    pub fn anomaly_metadata(&self) -> Option<&AnomalyMetadata> {
        self.anomaly.as_deref()
    }

    pub(crate) fn hooks(&self) -> Option<&NodeHooks> {
        self.hooks.get().map(|b| &**b)
    }
    fn hooks_or_init(&self) -> &NodeHooks {
        self.hooks.get_or_init(Default::default)
    }

    /// Registers a hook that runs before the node with the gradients arriving at it (one per
    /// forward output); returning `Some(grads)` replaces them.
    pub fn register_prehook(
        &self,
        f: impl Fn(&[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync + 'static,
    ) -> HookHandle {
        HookList::add(&self.hooks_or_init().pre, Arc::new(f))
    }

    /// Registers a hook that runs after the node with `(grad_inputs, grad_outputs)`: the
    /// gradients it computed (one per forward input) and the gradients it received; returning
    /// `Some(grads)` replaces what it computed.
    pub fn register_hook(
        &self,
        f: impl Fn(&[Option<Tensor>], &[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync + 'static,
    ) -> HookHandle {
        HookList::add(&self.hooks_or_init().post, Arc::new(f))
    }

    /// Registers a tensor hook on forward output `output_nr` (how `Tensor::register_hook` works
    /// for non-leaf tensors).
    pub fn register_tensor_pre_hook(&self, output_nr: usize, f: TensorHook) -> HookHandle {
        HookList::add(&self.hooks_or_init().tensor_pre, (output_nr, f))
    }

    pub(crate) fn has_post_hooks(&self) -> bool {
        self.hooks().is_some_and(|h| !h.post.is_empty())
    }

    /// Keeps `.grad` of forward output `output_nr` (`retain_grad()`).
    pub(crate) fn add_retains_grad(&self, output_nr: usize, t: &Tensor) {
        let mut v = self.hooks_or_init().retains_grad.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|(i, _)| *i != output_nr);
        v.push((output_nr, t.downgrade()));
    }
    /// Moves the `retain_grad` entry for `output_nr` to another node (when a tensor's history is
    /// rebased by an in-place op).
    pub(crate) fn take_retains_grad(&self, output_nr: usize) -> Option<WeakTensor> {
        let h = self.hooks()?;
        let mut v = h.retains_grad.lock().unwrap_or_else(|e| e.into_inner());
        let pos = v.iter().position(|(i, _)| *i == output_nr)?;
        Some(v.remove(pos).1)
    }
    pub(crate) fn retains_grad_entries(&self) -> Vec<(usize, WeakTensor)> {
        match self.hooks() {
            Some(h) => h.retains_grad.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            None => Vec::new(),
        }
    }
}

// Dropping a long chain of nodes recursively (node -> edge -> node -> ...) would overflow the
// stack, so nodes hand their edges to a per-thread work list and the outermost drop drains it.
thread_local! {
    static DROP_QUEUE: RefCell<Option<Vec<Arc<dyn Node>>>> = const { RefCell::new(None) };
}

impl Drop for NodeBase {
    fn drop(&mut self) {
        let nodes: Vec<Arc<dyn Node>> =
            std::mem::take(&mut self.next_edges).into_iter().filter_map(|e| e.function).collect();
        if nodes.is_empty() {
            return;
        }
        // Only nodes that this drop would free need the iterative treatment.
        let mut nodes = Some(nodes);
        let queued = DROP_QUEUE
            .try_with(|q| {
                let mut q = q.borrow_mut();
                match q.as_mut() {
                    Some(list) => {
                        list.extend(nodes.take().into_iter().flatten());
                        true
                    }
                    None => {
                        *q = nodes.take();
                        false
                    }
                }
            })
            .ok();
        match queued {
            // Another drop on this thread is draining the list; it will free our nodes.
            Some(true) => {}
            // We are the outermost drop: drain.
            Some(false) => {
                loop {
                    let next = DROP_QUEUE.with(|q| q.borrow_mut().as_mut().and_then(Vec::pop));
                    match next {
                        Some(n) => drop(n),
                        None => break,
                    }
                }
                DROP_QUEUE.with(|q| *q.borrow_mut() = None);
            }
            // Thread-local storage is being torn down: drop normally.
            None => drop(nodes),
        }
    }
}
