//! The global operator registry: operators by name, backend fallbacks, and operators defined at
//! run time (from other crates).

use super::key::{DispatchKey, NUM_KEYS};
use super::op::{BoxedKernel, Kernel, OperatorEntry, RegistrationKey};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

struct Registry {
    ops: HashMap<&'static str, &'static OperatorEntry>,
    fallbacks: [Option<Kernel>; NUM_KEYS],
}

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        let mut fallbacks: [Option<Kernel>; NUM_KEYS] = Default::default();
        // Layers that have nothing to do for an op pass straight through.
        fallbacks[DispatchKey::Autograd.index()] = Some(Kernel::Fallthrough);
        fallbacks[DispatchKey::AutogradPrivateUse1.index()] = Some(Kernel::Fallthrough);
        fallbacks[DispatchKey::Autocast.index()] = Some(Kernel::Fallthrough);
        Mutex::new(Registry { ops: HashMap::new(), fallbacks })
    })
}

fn lock() -> std::sync::MutexGuard<'static, Registry> {
    registry().lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes an operator findable by name (idempotent).
pub fn list(op: &'static OperatorEntry) {
    let new = lock().ops.insert(op.name(), op).is_none();
    if new {
        op.recompute();
    }
}

/// The backend fallback registered for `key`, if any.
pub(crate) fn fallback(key: DispatchKey) -> Option<Kernel> {
    lock().fallbacks[key.index()].clone()
}

/// Looks an operator up by qualified name (`"aten::add.Tensor"`).
pub fn find_op(name: &str) -> Option<&'static OperatorEntry> {
    lock().ops.get(name).copied()
}

/// All listed operator names, sorted.
pub fn op_names() -> Vec<&'static str> {
    let mut v: Vec<_> = lock().ops.keys().copied().collect();
    v.sort_unstable();
    v
}

/// Registers a boxed fallback for every operator at `key` (e.g. a "copy to CPU, run, copy back"
/// fallback for a new backend). Direct kernels and composite kernels still win over it.
pub fn register_fallback(key: DispatchKey, kernel: BoxedKernel) {
    set_fallback(key, Some(Kernel::Boxed(kernel)));
}

/// Makes `key` a fallthrough for every operator without its own kernel there.
pub fn register_fallthrough_fallback(key: DispatchKey) {
    set_fallback(key, Some(Kernel::Fallthrough));
}

/// Removes the fallback at `key`.
pub fn clear_fallback(key: DispatchKey) {
    set_fallback(key, None);
}

fn set_fallback(key: DispatchKey, k: Option<Kernel>) {
    let ops: Vec<&'static OperatorEntry> = {
        let mut r = lock();
        r.fallbacks[key.index()] = k;
        r.ops.values().copied().collect()
    };
    for op in ops {
        op.recompute();
    }
}

/// Defines a new operator at run time from its schema string (`"myns::foo(Tensor self) -> Tensor"`).
/// Its kernels are boxed; call it with [`OperatorEntry::call_boxed`].
pub fn define_op(schema: &str) -> Result<&'static OperatorEntry> {
    let name_end = schema.find('(').ok_or_else(|| Error::value(format!("schema '{schema}' has no argument list")))?;
    let name = schema[..name_end].trim();
    if name.is_empty() || !name.contains("::") {
        return Err(Error::value(format!("operator name '{name}' must be namespaced, like 'myns::{name}'")));
    }
    if find_op(name).is_some() {
        return Err(Error::value(format!("operator '{name}' is already defined")));
    }
    let name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let schema: &'static str = Box::leak(schema.to_string().into_boxed_str());
    let op: &'static OperatorEntry = Box::leak(Box::new(OperatorEntry::new(name, schema)));
    list(op);
    Ok(op)
}

/// Registers a boxed kernel for any listed operator by name.
pub fn register_boxed(op_name: &str, key: RegistrationKey, kernel: BoxedKernel) -> Result<()> {
    let op = find_op(op_name).ok_or_else(|| Error::value(format!("no operator named '{op_name}'")))?;
    op.register_kernel(key, Kernel::Boxed(kernel));
    Ok(())
}

static INIT_HOOK: OnceLock<fn()> = OnceLock::new();
static INIT_RAN: std::sync::Once = std::sync::Once::new();

/// Sets the function that registers the in-tree kernels. The `oxten` crate sets it when the
/// program loads; the dispatcher runs it (once, on any thread, others waiting) the first time a
/// lookup finds no kernel.
pub fn set_init_hook(f: fn()) {
    let _ = INIT_HOOK.set(f);
}

/// Makes sure the init hook, if there is one, has run to completion (threads that arrive while
/// another thread runs it wait for it). Returns whether there is a hook, i.e. whether a lookup
/// that missed is worth retrying: a miss may have raced with registration on another thread, and
/// retrying a real miss only costs a second lookup on an error path.
pub(crate) fn run_init_hook() -> bool {
    let Some(hook) = INIT_HOOK.get() else { return false };
    INIT_RAN.call_once(hook);
    true
}
