//! Built-in nodes: `AccumulateGrad` (the leaf sink), `GraphRoot`, `Identity`,
//! `NotImplementedBackward`, and the view + in-place machinery (`CopySlices`,
//! `AsStridedBackward0`).

use super::mode::is_grad_enabled;
use super::node::{Edge, InputMetadata, Node, NodeBase};
use super::saved::SavedVariable;
use super::utils;
use crate::error::{Error, ErrorKind, Result};
use crate::ops;
use crate::tensor::{storage_span, Tensor};
use std::sync::{Arc, Mutex};

/// The sink of a leaf tensor: adds the incoming gradient into the leaf's `.grad`.
///
/// When `.grad` is empty it steals the incoming gradient if nothing else references it or its
/// memory (a view whose base nothing else holds counts as unreferenced) and grad mode is off
/// (not `create_graph`) and it obeys the layout contract (the leaf's strides on every dimension
/// of size > 1); otherwise it stores a copy laid out like the leaf.
/// When `.grad` exists it adds in place (grad mode off) or out of place (`create_graph`, so the
/// new `.grad` has history). Tensor hooks of the leaf run (in the engine) before this.
pub struct AccumulateGrad {
    base: NodeBase,
    variable: Tensor,
    lock: Mutex<()>,
}

impl AccumulateGrad {
    pub fn new(variable: Tensor) -> AccumulateGrad {
        let base = NodeBase::with_sequence_nr(Vec::new(), u64::MAX);
        base.set_input_metadata(0, InputMetadata::of(&variable));
        AccumulateGrad { base, variable, lock: Mutex::new(()) }
    }
    /// The leaf this node accumulates into.
    pub fn variable(&self) -> &Tensor {
        &self.variable
    }

    /// Adds `new` into `variable.grad` as described on [`AccumulateGrad`]. `expected_refs` is
    /// the number of handles to `new` that are not user-visible (normally 1).
    pub fn accumulate(variable: &Tensor, new: Tensor, expected_refs: usize) -> Result<()> {
        match variable.grad() {
            None => {
                let layout_ok = obeys_layout_contract(&new, variable);
                let stealable = !is_grad_enabled()
                    && new.use_count() <= expected_refs
                    && owns_its_memory(&new)
                    && new.grad_fn().is_none()
                    && layout_ok;
                if stealable {
                    variable.set_grad(Some(new));
                } else {
                    variable.set_grad(Some(utils::clone_like(&new, variable)?));
                }
            }
            Some(g) => {
                if !is_grad_enabled() && g.sizes() == new.sizes() && g.dtype() == new.dtype() {
                    utils::add_(&g, &new)?;
                } else {
                    variable.set_grad(Some(utils::add(&g, &new)?));
                }
            }
        }
        Ok(())
    }
}

/// PyTorch's `obeys_layout_contract`: `grad` may become `variable.grad` as it is when it has the
/// variable's strides on every dimension of size > 1 (the strides of size-1 dimensions carry no
/// layout, except that a 0 stride marks a view), or is contiguous when the variable is not dense.
fn obeys_layout_contract(grad: &Tensor, variable: &Tensor) -> bool {
    if !variable.is_non_overlapping_and_dense() {
        return grad.is_contiguous();
    }
    let (sizes, strides, want) = (grad.sizes(), grad.strides(), variable.strides());
    sizes.len() == want.len()
        && sizes.iter().zip(strides.iter().zip(want.iter())).all(|(&n, (&s, &w))| if n == 1 { s != 0 } else { s == w })
}

/// Whether no tensor but `new` can reach its memory: its storage is held by `new` alone, or `new`
/// is a view (a transposed or reshaped gradient, as `mm` and `sum_to` return) whose base is held
/// only by `new`'s view record. Such a gradient can become `.grad` without a copy.
fn owns_its_memory(new: &Tensor) -> bool {
    match new.view_base() {
        None => new.storage().use_count() == 1,
        // Two handles to the base: `new`'s view record and `base` here; two to the storage:
        // the base and `new`.
        Some(base) => base.use_count() == 2 && new.storage().use_count() == 2,
    }
}

impl Node for AccumulateGrad {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "torch::autograd::AccumulateGrad".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        if grads.len() != 1 {
            return Err(Error::runtime(format!(
                "torch::autograd::AccumulateGrad: expected 1 gradient, got {}",
                grads.len()
            )));
        }
        let Some(new) = grads.into_iter().next().flatten() else { return Ok(Vec::new()) };
        if !self.variable.requires_grad() {
            return Ok(Vec::new());
        }
        let _l = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        AccumulateGrad::accumulate(&self.variable, new, 1 + self.base.has_post_hooks() as usize)?;
        Ok(Vec::new())
    }
    fn leaf_variable(&self) -> Option<&Tensor> {
        Some(&self.variable)
    }
}

/// The root of a backward pass with several outputs: hands out their gradients.
pub struct GraphRoot {
    base: NodeBase,
    outputs: Vec<Option<Tensor>>,
}

impl GraphRoot {
    pub fn new(roots: Vec<Edge>, outputs: Vec<Option<Tensor>>) -> GraphRoot {
        GraphRoot { base: NodeBase::new(roots), outputs }
    }
}

impl Node for GraphRoot {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "GraphRoot".into()
    }
    fn apply(&self, _grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Ok(self.outputs.clone())
    }
}

/// Passes gradients through unchanged.
pub struct Identity {
    base: NodeBase,
}

impl Identity {
    pub fn new(next_edges: Vec<Edge>) -> Identity {
        Identity { base: NodeBase::new(next_edges) }
    }
}

impl Node for Identity {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "Identity".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Ok(grads)
    }
}

/// The node of an op without a derivative formula: recording works, backward through it errors
/// with "the derivative for 'foo' is not implemented.".
pub struct NotImplementedBackward {
    base: NodeBase,
    op: String,
}

impl NotImplementedBackward {
    pub fn new(op: &str, next_edges: Vec<Edge>) -> NotImplementedBackward {
        NotImplementedBackward { base: NodeBase::new(next_edges), op: op.to_string() }
    }
}

impl Node for NotImplementedBackward {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "NotImplemented".into()
    }
    fn apply(&self, _grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Err(Error::new(ErrorKind::NotImplemented, format!("the derivative for '{}' is not implemented.", self.op)))
    }
}

/// Sizes, strides and storage offset of a tensor, remembered by view nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
}

impl Geometry {
    pub fn of(t: &Tensor) -> Geometry {
        let l = t.layout();
        Geometry { sizes: l.sizes.to_vec(), strides: l.strides.to_vec(), offset: l.offset }
    }
    fn end(&self) -> i64 {
        self.offset + storage_span(&self.sizes, &self.strides)
    }
}

/// Whether no two indices of the geometry address the same element.
fn is_non_overlapping(sizes: &[i64], strides: &[i64]) -> bool {
    let mut dims: Vec<(i64, i64)> =
        sizes.iter().zip(strides).filter(|(&s, _)| s > 1).map(|(&s, &st)| (s, st)).collect();
    dims.sort_by_key(|&(_, st)| st);
    let mut reach = 0i64;
    for (s, st) in dims {
        if st <= reach {
            return false;
        }
        reach += (s - 1) * st;
    }
    true
}

/// The gradient of a view with respect to its base, by geometry: how a view's `grad_fn` is
/// regenerated after its base's history changed (an in-place op on the base or on another view).
/// Dims of the view with stride 0 (expanded) are summed first; other overlapping views are not
/// supported.
pub struct AsStridedBackward {
    base: NodeBase,
    base_geometry: Geometry,
    view_geometry: Geometry,
}

impl AsStridedBackward {
    /// The node for `view` of root `base`; its next edge is the base's gradient edge.
    pub fn new(base: &Tensor, view: &Tensor) -> AsStridedBackward {
        AsStridedBackward {
            base: NodeBase::new(vec![base.gradient_edge()]),
            base_geometry: Geometry::of(base),
            view_geometry: Geometry::of(view),
        }
    }
}

/// The gradient of `base` given the gradient `grad` of a view with geometry `view` of it.
pub fn as_strided_backward(grad: &Tensor, base: &Geometry, view: &Geometry) -> Result<Tensor> {
    let mut g = grad.clone();
    let mut vsizes = view.sizes.clone();
    let expanded: Vec<i64> =
        (0..vsizes.len()).filter(|&d| view.strides[d] == 0 && vsizes[d] > 1).map(|d| d as i64).collect();
    if !expanded.is_empty() {
        g = ops::sum_dim_intlist::call(&g, Some(&expanded), true, None)?;
        for &d in &expanded {
            vsizes[d as usize] = 1;
        }
    }
    let lo = base.offset.min(view.offset);
    let n = base.end().max(view.end()) - lo;
    let flat = utils::zeros(&[n], g.dtype(), g.device())?;
    let flat = if is_non_overlapping(&vsizes, &view.strides) {
        let region = ops::as_strided::call(&flat, &vsizes, &view.strides, Some(view.offset - lo))?;
        ops::copy_::call(&region, &g, false)?;
        flat
    } else {
        // Elements the view reaches more than once sum their gradients.
        let at = storage_positions(n, &vsizes, &view.strides, view.offset - lo, g.device())?;
        ops::index_put::call(&flat, &[Some(at)], &g.try_reshape(&[-1])?, true)?
    };
    let grad = ops::as_strided::call(&flat, &base.sizes, &base.strides, Some(base.offset - lo))?;
    if is_non_overlapping(&base.sizes, &base.strides) {
        return Ok(grad);
    }
    // A base that overlaps itself shares each storage element's gradient among the elements
    // that alias it, as PyTorch's as_strided_backward divides by the count.
    let at = storage_positions(n, &base.sizes, &base.strides, base.offset - lo, g.device())?;
    let ones = ops::ones::call(&[at.numel()], Some(g.dtype()), None, Some(g.device()), None)?;
    let count = ops::index_put::call(&utils::zeros(&[n], g.dtype(), g.device())?, &[Some(at)], &ones, true)?;
    grad.try_div(&ops::as_strided::call(&count, &base.sizes, &base.strides, Some(base.offset - lo))?)
}

/// The storage index of every element of the geometry, flattened, in a storage of `n` elements.
fn storage_positions(n: i64, sizes: &[i64], strides: &[i64], offset: i64, device: crate::Device) -> Result<Tensor> {
    let all = ops::arange::call(crate::Scalar::Int(n), Some(crate::DType::I64), None, Some(device), None)?;
    ops::as_strided::call(&all, sizes, strides, Some(offset))?.try_reshape(&[-1])
}

impl Node for AsStridedBackward {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "AsStridedBackward0".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = grads.into_iter().next().flatten() else { return Ok(vec![None]) };
        if !self.base.should_compute_output(0) {
            return Ok(vec![None]);
        }
        Ok(vec![Some(as_strided_backward(&g, &self.base_geometry, &self.view_geometry)?)])
    }
}

/// Installed as the base's `grad_fn` when a view of it is modified in place: the gradient of the
/// view's region goes through the in-place op's node `fn_` (whose gradient for its `self` input
/// replaces that region), the rest of the base's gradient goes to the base's previous history,
/// and `fn_`'s other gradients go to its other inputs.
pub struct CopySlices {
    base: NodeBase,
    base_geometry: Geometry,
    view_geometry: Geometry,
    fn_: Arc<dyn Node>,
}

impl CopySlices {
    pub fn new(base: &Tensor, view: &Tensor, fn_: Arc<dyn Node>) -> CopySlices {
        let mut edges = vec![base.gradient_edge()];
        edges.extend(fn_.base().next_edges().iter().skip(1).cloned());
        let node = NodeBase::new(edges);
        node.set_input_metadata(0, InputMetadata::of(base));
        CopySlices { base: node, base_geometry: Geometry::of(base), view_geometry: Geometry::of(view), fn_ }
    }
    /// The in-place op's node.
    pub fn inner(&self) -> &Arc<dyn Node> {
        &self.fn_
    }
}

impl Node for CopySlices {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "CopySlices".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let n = self.base.num_outputs();
        let Some(g) = grads.into_iter().next().flatten() else { return Ok(vec![None; n]) };
        let (bg, vg) = (&self.base_geometry, &self.view_geometry);
        if vg.offset < bg.offset {
            return Err(Error::runtime("CopySlices: the view starts before its base in storage"));
        }
        let result = ops::empty_strided::call(&bg.sizes, &bg.strides, Some(g.dtype()), None, Some(g.device()), None)?;
        ops::copy_::call(&result, &g, false)?;
        let slice = ops::as_strided::call(&result, &vg.sizes, &vg.strides, Some(vg.offset - bg.offset))?;
        // The inner node decides what to compute from its own edges, not the running pass's
        // input mask (its edge 0 is the view's old history, which the pass never visits).
        let res = super::engine::without_exec_info(|| self.fn_.apply(vec![Some(utils::clone_contiguous(&slice)?)]))?;
        let mut out: Vec<Option<Tensor>> = vec![None; n];
        let mut res = res.into_iter();
        let first = res.next().flatten();
        if self.base.should_compute_output(0) {
            match first {
                Some(r) => ops::copy_::call(&slice, &r, false)?,
                None => ops::zero_::call(&slice)?,
            };
            out[0] = Some(result);
        }
        for (i, r) in res.enumerate() {
            if i + 1 < n {
                out[i + 1] = r;
            }
        }
        Ok(out)
    }
    fn release_variables(&self) {
        self.fn_.release_variables();
    }
    fn visit_saved(&self, f: &mut dyn FnMut(&str, &SavedVariable)) {
        self.fn_.visit_saved(f);
    }
}
