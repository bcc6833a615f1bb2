//! Materialisation: a node's pending graph is lowered to oxten's CPU operators and run, each node
//! keeping its result. Before running, a fusion pass groups chains of elementwise (`pointwise`)
//! nodes of one shape into regions that run block by block: every block of the inputs goes
//! through the whole chain while it is in cache, so the chain reads and writes memory once
//! instead of once per operator.

use crate::backend::ir;
use crate::graph::{pending_order, Geometry, Node, Op, State, Value};
use oxten::{Device, Error, Result, Tensor};
use std::cell::Cell;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Elements per block of a fused region. Each operator of a block is one call of oxten's CPU
/// kernel (a microsecond or two of dispatch and set-up), so blocks are as large as the cache
/// allows: 2^18 f32 elements are 1 MiB, which measured fastest on a 1 MiB-L2 EPYC (BENCHMARKS.md).
const BLOCK: i64 = 1 << 17;

thread_local! {
    static FUSION: Cell<bool> = const { Cell::new(true) };
}

/// Turns the fusion pass on or off for materialisations on this thread (on by default); off,
/// every node runs as its own operator.
pub fn set_fusion(enabled: bool) {
    FUSION.with(|f| f.set(enabled));
}

/// What materialisation did on this thread since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Nodes run as one operator each.
    pub nodes_run: usize,
    /// Fused regions run.
    pub regions: usize,
    /// Nodes run inside fused regions.
    pub nodes_fused: usize,
}

thread_local! {
    static STATS: Cell<Stats> = Cell::new(Stats::default());
}

/// This thread's [`Stats`].
pub fn stats() -> Stats {
    STATS.with(|s| s.get())
}

fn count(f: impl FnOnce(&mut Stats)) {
    STATS.with(|s| {
        let mut v = s.get();
        f(&mut v);
        s.set(v);
    });
}

/// The CPU tensor of `v`: its node's result seen through its view.
pub(crate) fn materialize(v: &Value) -> Result<Tensor> {
    let base = compute(&v.node)?;
    if v.is_whole() {
        return Ok(base);
    }
    base.alias_with_layout(&v.view.sizes, &v.view.strides, base.storage_offset() + v.view.offset)
}

/// Runs `root`'s pending graph and returns its result.
pub(crate) fn compute(root: &Arc<Node>) -> Result<Tensor> {
    if let Some(t) = root.result() {
        return Ok(t);
    }
    let order = pending_order(root);
    let regions = if FUSION.with(Cell::get) { plan(&order, root) } else { HashMap::new() };
    let fused: HashSet<u64> = regions.values().flatten().map(|m| m.id).collect();
    let _below = oxten::autograd::NoGradGuard::new();
    for n in &order {
        if fused.contains(&n.id) {
            // Computed inside its region's blocks, never on its own.
            continue;
        }
        let result = match regions.get(&n.id) {
            Some(region) => run_region(n, region)?,
            None => run_node(n)?,
        };
        *n.state() = State::Done(result);
    }
    root.result().ok_or_else(|| Error::runtime("lazy: the graph ran but its root has no result"))
}

/// A result laid out as `g` says (a kernel may pick other strides than the meta function).
fn with_geometry(t: Tensor, g: &Geometry) -> Result<Tensor> {
    if t.sizes() == g.sizes.as_slice() && t.strides() == g.strides.as_slice() && t.dtype() == g.dtype {
        return Ok(t);
    }
    if t.sizes() != g.sizes.as_slice() || t.dtype() != g.dtype {
        return Err(Error::runtime(format!(
            "lazy: the meta function promised {:?} {}, the CPU kernel gave {:?} {}",
            g.sizes,
            g.dtype,
            t.sizes(),
            t.dtype()
        )));
    }
    let out = Tensor::empty_strided(&g.sizes, &g.strides, g.dtype, Device::Cpu)?;
    out.try_copy_(&t)?;
    Ok(out)
}

/// Runs one node as its own operator.
fn run_node(n: &Arc<Node>) -> Result<Tensor> {
    count(|s| s.nodes_run += 1);
    let g = &n.geometry;
    let state = n.state();
    let State::Pending(op) = &*state else { unreachable!("only pending nodes are run") };
    match op {
        Op::Ir(node) => {
            let result = node.lower(&mut materialize)?;
            drop(state);
            with_geometry(result, g)
        }
        Op::Zeros => Tensor::empty_strided(&g.sizes, &g.strides, g.dtype, Device::Cpu)?.try_zero_(),
        Op::Write { base, view, src } => {
            let out = Tensor::empty_strided(&g.sizes, &g.strides, g.dtype, Device::Cpu)?;
            if let Some(b) = base {
                out.try_copy_(&materialize(b)?)?;
            }
            out.alias_with_layout(&view.sizes, &view.strides, view.offset)?.try_copy_(&materialize(src)?)?;
            Ok(out)
        }
    }
}

/// Whether `n` is a pending elementwise node laid out contiguously.
fn elementwise(n: &Node) -> bool {
    matches!(&*n.state(), State::Pending(Op::Ir(op)) if op.is_pointwise()) && contiguous(&n.geometry)
}

fn contiguous(g: &Geometry) -> bool {
    let mut expect = 1;
    for (&size, &stride) in g.sizes.iter().zip(&g.strides).rev() {
        if size != 1 && stride != expect {
            return false;
        }
        expect *= size;
    }
    true
}

/// The fusion pass: for each elementwise node, from the consumers back, the region of
/// elementwise producers it can absorb — nodes of its shape used only inside the region, each
/// listed after its inputs — keyed by the region's root.
fn plan(order: &[Arc<Node>], root: &Arc<Node>) -> HashMap<u64, Vec<Arc<Node>>> {
    let mut uses: HashMap<u64, usize> = HashMap::new();
    for n in order {
        for v in n.inputs() {
            *uses.entry(v.node.id).or_default() += 1;
        }
    }
    let mut regions = HashMap::new();
    let mut absorbed = HashSet::new();
    for n in order.iter().rev() {
        if absorbed.contains(&n.id) || !elementwise(n) {
            continue;
        }
        let mut members = Vec::new();
        if !grow(n, &n.geometry.sizes, &uses, root, &mut members) || members.is_empty() {
            continue;
        }
        absorbed.extend(members.iter().map(|m| m.id));
        regions.insert(n.id, members);
    }
    regions
}

/// Adds to `members` the producers of `n` that can run inside the region (after their own);
/// false when `n` reads something that cannot be cut into the region's blocks.
fn grow(
    n: &Arc<Node>,
    sizes: &[i64],
    uses: &HashMap<u64, usize>,
    root: &Arc<Node>,
    members: &mut Vec<Arc<Node>>,
) -> bool {
    for v in n.inputs() {
        let p = &v.node;
        let absorbable = v.is_whole()
            && !Arc::ptr_eq(p, root)
            && uses.get(&p.id) == Some(&1)
            && p.geometry.sizes == sizes
            && elementwise(p);
        if absorbable {
            let mut sub = Vec::new();
            if grow(p, sizes, uses, root, &mut sub) {
                members.extend(sub);
                members.push(p.clone());
                continue;
            }
            // `p` runs on its own; the region reads its result like any input of this shape.
        } else if !(v.view.sizes == sizes || v.view.sizes.is_empty()) {
            return false;
        }
    }
    true
}

/// Runs `root`'s region: inputs are cut into blocks of [`BLOCK`] elements (0-dim inputs are
/// used whole), each block goes through every member and the root, and the root's block lands
/// in the output.
fn run_region(root: &Arc<Node>, members: &[Arc<Node>]) -> Result<Tensor> {
    count(|s| {
        s.regions += 1;
        s.nodes_fused += members.len() + 1;
    });
    let chain: Vec<Arc<Node>> = members.iter().cloned().chain([root.clone()]).collect();
    let inside: HashSet<u64> = chain.iter().map(|m| m.id).collect();
    // The region's inputs, flattened (contiguous copies where a view is strided).
    let mut inputs: HashMap<(u64, String), Tensor> = HashMap::new();
    for m in &chain {
        for v in m.inputs() {
            if inside.contains(&v.node.id) {
                continue;
            }
            if let Entry::Vacant(slot) = inputs.entry((v.node.id, format!("{:?}", v.view))) {
                let t = materialize(&v)?;
                slot.insert(if t.dim() == 0 { t } else { t.try_contiguous()?.try_reshape(&[-1])? });
            }
        }
    }
    // The operators, out of their nodes' locks so that blocks run them in parallel.
    let ops: Vec<(u64, ir::Node<Value>)> = chain
        .iter()
        .map(|m| match &*m.state() {
            State::Pending(Op::Ir(op)) => (m.id, (**op).clone()),
            _ => unreachable!("regions hold pending IR nodes"),
        })
        .collect();
    let g = &root.geometry;
    let numel = g.numel();
    let out = Tensor::empty(&[numel], g.dtype, Device::Cpu, oxten::MemoryFormat::Contiguous)?;
    let blocks = (numel + BLOCK - 1) / BLOCK;
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let run_block = |b: usize| -> Result<()> {
        let start = b as i64 * BLOCK;
        let len = BLOCK.min(numel - start);
        let mut done: HashMap<u64, Tensor> = HashMap::new();
        for (id, op) in &ops {
            let mut input = |v: &Value| -> Result<Tensor> {
                if let Some(t) = done.get(&v.node.id) {
                    return Ok(t.clone());
                }
                let t = &inputs[&(v.node.id, format!("{:?}", v.view))];
                if t.dim() == 0 {
                    Ok(t.clone())
                } else {
                    t.try_narrow(0, start, len)
                }
            };
            let r = op.lower(&mut input)?;
            done.insert(*id, r);
        }
        out.try_narrow(0, start, len)?.try_copy_(&done[&root.id])?;
        Ok(())
    };
    oxten::runtime::parallel::for_each(blocks as usize, |b| {
        if let Err(e) = run_block(b) {
            first_error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
        }
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    with_geometry(out.try_reshape(&g.sizes)?, g)
}
