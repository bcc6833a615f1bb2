//! Hook lists and removable handles.

use crate::error::Result;
use crate::tensor::Tensor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A tensor hook: sees the gradient of a tensor before it is accumulated or passed on; returning
/// `Some(g)` replaces it.
pub type TensorHook = Arc<dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync>;
/// A node pre-hook: sees the gradients arriving at a node; `Some(grads)` replaces them.
pub type PreHook = Arc<dyn Fn(&[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync>;
/// A node post-hook: sees `(grad_inputs, grad_outputs)`; `Some(grads)` replaces `grad_inputs`.
pub type PostHook =
    Arc<dyn Fn(&[Option<Tensor>], &[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync>;

static NEXT_HOOK_ID: AtomicU64 = AtomicU64::new(0);

/// Hooks in registration order, each with an id for removal.
pub struct HookList<T> {
    items: Mutex<Vec<(u64, T)>>,
}

impl<T> Default for HookList<T> {
    fn default() -> Self {
        HookList { items: Mutex::new(Vec::new()) }
    }
}

impl<T: Clone + Send + 'static> HookList<T> {
    /// Adds a hook and returns its handle.
    pub fn add(list: &Arc<HookList<T>>, item: T) -> HookHandle {
        let id = NEXT_HOOK_ID.fetch_add(1, Ordering::Relaxed);
        list.items.lock().unwrap_or_else(|e| e.into_inner()).push((id, item));
        let weak: Weak<dyn RemoveHook> = Arc::downgrade(list) as Weak<dyn RemoveHook>;
        HookHandle { list: weak, id }
    }
    /// A copy of the current hooks (so they run without the lock held).
    pub fn snapshot(&self) -> Vec<T> {
        self.items.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|(_, h)| h.clone()).collect()
    }
    pub fn is_empty(&self) -> bool {
        self.items.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }
}

trait RemoveHook: Send + Sync {
    fn remove(&self, id: u64) -> bool;
}

impl<T: Send> RemoveHook for HookList<T> {
    fn remove(&self, id: u64) -> bool {
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        let before = items.len();
        items.retain(|(i, _)| *i != id);
        items.len() != before
    }
}

/// Returned by hook registration; [`HookHandle::remove`] unregisters the hook. Dropping the
/// handle keeps the hook registered (like PyTorch's `RemovableHandle`).
pub struct HookHandle {
    list: Weak<dyn RemoveHook>,
    id: u64,
}

impl HookHandle {
    /// Unregisters the hook; returns whether it was still registered.
    pub fn remove(&self) -> bool {
        self.list.upgrade().is_some_and(|l| l.remove(self.id))
    }
}

impl std::fmt::Debug for HookHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HookHandle({})", self.id)
    }
}
