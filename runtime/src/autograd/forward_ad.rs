//! Forward-mode automatic differentiation: dual tensors.
//!
//! Inside [`dual_level`], [`make_dual`] attaches a *tangent* to a tensor; every differentiable
//! operator then computes its output's tangent from its inputs' primals and tangents with the
//! forward formula of its `derivatives.yaml` entry (`result:`), so the tangent of a function's
//! output is its Jacobian-vector product. [`unpack_dual`] reads it back. This is PyTorch's
//! `torch.autograd.forward_ad`.
//!
//! - Levels nest: each [`dual_level`] is a new level with its own tangents, and a tangent may
//!   itself carry tangents of outer levels (forward-over-forward). Levels belong to the thread
//!   that opened them. Leaving a level drops every tangent of that level.
//! - Tangents live in the tensor's autograd metadata, one per level. A view's tangent is the
//!   same view of its base's tangent; an in-place operator updates its tensor's tangent in place
//!   (so views of it see the change).
//! - Forward and reverse mode compose: the operators a backward pass runs propagate tangents
//!   too, so the tangent of a gradient computed with `create_graph` is a Hessian-vector product.
//! - While an operator computes a tangent for level `L`, level `L` is hidden: the formula's own
//!   operators do not propagate tangents of `L` (PyTorch computes on primal views instead).

use super::meta::AutogradMeta;
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::{Tensor, WeakTensor};
use std::cell::RefCell;

/// One open dual level.
struct Level {
    id: u64,
    /// Tensors given a tangent at this level, to clear on exit.
    holders: Vec<WeakTensor>,
}

#[derive(Default)]
struct State {
    /// Open levels, outermost first.
    levels: Vec<Level>,
    /// Levels whose tangents are being computed (not propagated by the operators that do it).
    hidden: Vec<u64>,
    next_id: u64,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State { next_id: 1, ..Default::default() });
}

/// Runs `f` inside a new dual level (PyTorch's `with fwAD.dual_level():`); the level's tangents
/// are dropped when `f` returns.
pub fn dual_level<R>(f: impl FnOnce() -> R) -> R {
    let _level = DualLevelGuard::enter();
    f()
}

/// An open dual level; leaving it (dropping the guard) drops its tangents.
pub struct DualLevelGuard {
    id: u64,
}

impl DualLevelGuard {
    /// Opens a new innermost level.
    pub fn enter() -> DualLevelGuard {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            let id = s.next_id;
            s.next_id += 1;
            s.levels.push(Level { id, holders: Vec::new() });
            DualLevelGuard { id }
        })
    }

    /// The level's id.
    pub fn level(&self) -> u64 {
        self.id
    }
}

impl Drop for DualLevelGuard {
    fn drop(&mut self) {
        let level = STATE.with(|s| {
            let mut s = s.borrow_mut();
            let at = s.levels.iter().position(|l| l.id == self.id)?;
            // Levels close innermost first; a guard dropped out of order closes the inner ones too.
            Some(s.levels.drain(at..).collect::<Vec<Level>>())
        });
        for l in level.into_iter().flatten() {
            for w in l.holders {
                if let Some(t) = w.upgrade() {
                    if let Some(mut m) = t.ag_meta() {
                        m.fw_grads.retain(|(id, _)| *id != l.id);
                    }
                }
            }
        }
    }
}

/// Whether this thread has an open dual level (one thread-local read: the operators' fast path).
#[inline]
pub fn is_active() -> bool {
    STATE.with(|s| !s.borrow().levels.is_empty())
}

/// The innermost open level, if any.
pub fn current_level() -> Option<u64> {
    STATE.with(|s| s.borrow().levels.last().map(|l| l.id))
}

/// The open, visible levels (outermost first) at which one of `inputs` has a tangent: those an
/// operator with these inputs computes an output tangent for.
pub fn levels_of(inputs: &[Option<&Tensor>]) -> Vec<u64> {
    STATE.with(|s| {
        let s = s.borrow();
        s.levels
            .iter()
            .map(|l| l.id)
            .filter(|id| !s.hidden.contains(id))
            .filter(|&id| inputs.iter().flatten().any(|t| tangent(t, id).is_some()))
            .collect()
    })
}

/// [`levels_of`] over tensor lists.
pub fn levels_of_lists(lists: &[&[Tensor]]) -> Vec<u64> {
    let all: Vec<Option<&Tensor>> = lists.iter().flat_map(|l| l.iter().map(Some)).collect();
    levels_of(&all)
}

/// Hides `level` while a tangent for it is computed (see the module docs).
pub struct HideLevel {
    level: u64,
}

impl HideLevel {
    /// Hides `level` until the guard drops.
    pub fn new(level: u64) -> HideLevel {
        STATE.with(|s| s.borrow_mut().hidden.push(level));
        HideLevel { level }
    }
}

impl Drop for HideLevel {
    fn drop(&mut self) {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(i) = s.hidden.iter().rposition(|&l| l == self.level) {
                s.hidden.remove(i);
            }
        });
    }
}

fn find(m: &AutogradMeta, level: u64) -> Option<Tensor> {
    m.fw_grads.iter().find(|(id, _)| *id == level).map(|(_, t)| t.clone())
}

/// The tangent of `t` at `level`.
pub fn tangent(t: &Tensor, level: u64) -> Option<Tensor> {
    t.ag_meta().and_then(|m| find(&m, level))
}

/// The tangent of `t` at `level`, or zeros shaped like `t` (an input without a tangent).
pub fn tangent_or_zeros(t: &Tensor, level: u64) -> Result<Tensor> {
    match tangent(t, level) {
        Some(x) => Ok(x),
        None => ops::zeros_like::call(t, None, None, None, None, None),
    }
}

/// [`tangent_or_zeros`] of an optional tensor.
pub fn tangent_opt(t: Option<&Tensor>, level: u64) -> Result<Option<Tensor>> {
    t.map(|t| tangent_or_zeros(t, level)).transpose()
}

/// [`tangent_or_zeros`] of each tensor of a list.
pub fn tangent_list(ts: &[Tensor], level: u64) -> Result<Vec<Tensor>> {
    ts.iter().map(|t| tangent_or_zeros(t, level)).collect()
}

fn check_tangent(op: &str, primal: &Tensor, t: &Tensor) -> Result<()> {
    if primal.sizes() != t.sizes() {
        return Err(Error::value(format!(
            "{op}: Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size {:?} while the given forward gradient is of size {:?}.",
            &primal.sizes()[..],
            &t.sizes()[..]
        )));
    }
    if !t.dtype().is_floating_point() || !primal.dtype().is_floating_point() {
        return Err(Error::dtype(format!(
            "{op}: Expected both tensor and its forward grad to be floating point or complex, got {} and {}",
            primal.dtype(),
            t.dtype()
        )));
    }
    if primal.device() != t.device() {
        return Err(Error::device(format!(
            "{op}: Expected tensor and its forward grad on the same device, got {} and {}",
            primal.device(),
            t.device()
        )));
    }
    Ok(())
}

fn store(t: &Tensor, level: u64, tangent: Tensor) {
    {
        let mut m = t.ag_meta_mut();
        m.fw_grads.retain(|(id, _)| *id != level);
        m.fw_grads.push((level, tangent));
    }
    STATE.with(|s| {
        if let Some(l) = s.borrow_mut().levels.iter_mut().find(|l| l.id == level) {
            l.holders.push(t.downgrade());
        }
    });
}

/// Sets the tangent of the output `t` of an operator at `level` (generated code).
pub fn set_tangent(t: &Tensor, level: u64, tangent: Tensor) -> Result<()> {
    check_tangent("forward AD", t, &tangent)?;
    // A tangent of another dtype (a formula computed in higher precision) takes the output's.
    let tangent = if tangent.dtype() != t.dtype() {
        ops::to_dtype::call(&tangent, t.dtype(), false, false, None)?
    } else {
        tangent
    };
    // A view's tangent stays the same view of its base's (in-place updates must reach both).
    let tangent = if t.view_info().is_some() { tangent } else { with_layout_of(t, tangent)? };
    store(t, level, tangent);
    Ok(())
}

/// `tangent` laid out as `t` is, when `t` is dense and `tangent` is not strided alike (a
/// transposed formula result, a user's tangent): a copy, as PyTorch's `set_fw_grad` makes. The
/// views that formulas take of a tangent (`reshape` as a `view`) then see the layout that the
/// primal's view saw.
fn with_layout_of(t: &Tensor, tangent: Tensor) -> Result<Tensor> {
    if tangent.strides() == t.strides() || !t.is_non_overlapping_and_dense() {
        return Ok(tangent);
    }
    let dense = Tensor::empty_strided(&t.sizes(), &t.strides(), t.dtype(), t.device())?;
    ops::copy_::call(&dense, &tangent, false)?;
    Ok(dense)
}

/// After an in-place operator wrote `t`: its tangent at `level` becomes `new` — written into
/// the existing tangent (or the base's, for a view without one), so that the views sharing it
/// see the update, as PyTorch does.
pub fn set_tangent_inplace(t: &Tensor, level: u64, new: Tensor) -> Result<()> {
    let _hidden = HideLevel::new(level);
    if let Some(old) = tangent(t, level) {
        ops::copy_::call(&old, &new, false)?;
        return Ok(());
    }
    if let Some(view) = t.view_info() {
        let base = view.base;
        let base_t = match tangent(&base, level) {
            Some(b) => b,
            None => {
                let z = ops::zeros_like::call(&base, None, None, None, None, None)?;
                store(&base, level, z.clone());
                z
            }
        };
        // The view's tangent is the same view of the base's tangent.
        let offset = t.storage_offset() - base.storage_offset() + base_t.storage_offset();
        let view_t = if base_t.strides() == base.strides() {
            base_t.alias_with_layout(&t.sizes(), &t.strides(), offset)?
        } else {
            return set_tangent(t, level, new);
        };
        ops::copy_::call(&view_t, &new, false)?;
        store(t, level, view_t);
        return Ok(());
    }
    set_tangent(t, level, new)
}

/// `primal` as a dual tensor with tangent `tangent` at the innermost level: a view of `primal`
/// (gradients flow back to it) whose tangent is `tangent`. An error outside [`dual_level`].
pub fn make_dual(primal: &Tensor, tangent: &Tensor) -> Result<Tensor> {
    let Some(level) = current_level() else {
        return Err(Error::runtime(
            "make_dual: to create a dual Tensor, open a dual level first (forward_ad::dual_level)",
        ));
    };
    check_tangent("make_dual", primal, tangent)?;
    let dual = {
        let _hidden = HideLevel::new(level);
        ops::alias::call(primal)?
    };
    let tangent = {
        let _hidden = HideLevel::new(level);
        with_layout_of(&dual, tangent.clone())?
    };
    store(&dual, level, tangent);
    Ok(dual)
}

/// The primal (a view of `t` without its tangent at the innermost level) and that tangent, if
/// any. Outside [`dual_level`] the tangent is `None`.
pub fn unpack_dual(t: &Tensor) -> Result<(Tensor, Option<Tensor>)> {
    let Some(level) = current_level() else {
        return Ok((t.clone(), None));
    };
    let tangent = tangent(t, level);
    let primal = {
        let _hidden = HideLevel::new(level);
        ops::alias::call(t)?
    };
    // The alias keeps the tangents of the outer levels.
    if let Some(m) = t.ag_meta() {
        let outer: Vec<(u64, Tensor)> = m.fw_grads.iter().filter(|(id, _)| *id != level).cloned().collect();
        drop(m);
        for (id, x) in outer {
            store(&primal, id, x);
        }
    }
    Ok((primal, tangent))
}

/// Gives `to` (an alias or detached copy of `from`) the tangents `from` has at every open
/// level: a saved output, so that a backward pass that unpacks it propagates them
/// (forward-over-reverse), or a fresh leaf standing in for `from` (`oxten::func`).
pub fn copy_tangents(from: &Tensor, to: &Tensor) {
    // Tangents only matter inside a level; outside one, unpacking saved outputs in a backward
    // pass (a hot path) takes no lock here.
    if !is_active() {
        return;
    }
    let grads: Vec<(u64, Tensor)> = match from.ag_meta() {
        Some(m) if !m.fw_grads.is_empty() => m.fw_grads.clone(),
        _ => return,
    };
    for (id, x) in grads {
        store(to, id, x);
    }
}

/// The error of an operator that has no forward formula, when an input has a tangent.
pub fn not_implemented(op: &str) -> Error {
    Error::runtime(format!(
        "Trying to use forward AD with {op} that does not support it because it has not been implemented yet."
    ))
}
