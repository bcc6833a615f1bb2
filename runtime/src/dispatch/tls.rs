//! Thread-local include and exclude key sets, with scoped guards.
//!
//! A call's key set is `(tensor keys ∪ include) − exclude`. Guards restore the previous sets when
//! dropped, so they are restored on early return, on error and on panic.
//!
//! Every thread starts with an empty include set and the exclude set
//! [`KeySet::DEFAULT_EXCLUDED`] (the Autocast key: autocast is off until a region turns it on).

use super::key::{DispatchKey, KeySet};
use std::cell::Cell;

thread_local! {
    static INCLUDE: Cell<KeySet> = const { Cell::new(KeySet::EMPTY) };
    static EXCLUDE: Cell<KeySet> = const { Cell::new(KeySet::DEFAULT_EXCLUDED) };
}

/// The current thread's `(include, exclude)` sets.
#[inline]
pub fn local_keys() -> (KeySet, KeySet) {
    (INCLUDE.with(Cell::get), EXCLUDE.with(Cell::get))
}

/// Whether `key` is in this thread's exclude set (`c10::impl::tls_is_dispatch_key_excluded`).
#[inline]
pub fn is_excluded(key: DispatchKey) -> bool {
    EXCLUDE.with(Cell::get).contains(key)
}

/// Adds `key` to this thread's exclude set or removes it, with no guard
/// (`c10::impl::tls_set_dispatch_key_excluded`): for mode setters that restore the previous value
/// themselves, such as [`crate::autocast::set_autocast_enabled`].
pub fn set_excluded(key: DispatchKey, excluded: bool) {
    EXCLUDE.with(|c| {
        let k = KeySet::of(key);
        c.set(if excluded { c.get().union(k) } else { c.get().remove(k) })
    });
}

/// Adds keys to this thread's include set until dropped.
#[must_use = "the keys are removed again when the guard is dropped"]
pub struct IncludeGuard {
    prev: KeySet,
}

impl IncludeGuard {
    pub fn new(keys: impl Into<KeySet>) -> Self {
        let prev = INCLUDE.with(|c| c.replace(c.get().union(keys.into())));
        IncludeGuard { prev }
    }
}
impl Drop for IncludeGuard {
    fn drop(&mut self) {
        INCLUDE.with(|c| c.set(self.prev));
    }
}

/// Adds keys to this thread's exclude set until dropped (how a layer kernel redispatches below
/// itself).
#[must_use = "the keys are re-enabled when the guard is dropped"]
pub struct ExcludeGuard {
    prev: KeySet,
}

impl ExcludeGuard {
    pub fn new(keys: impl Into<KeySet>) -> Self {
        let prev = EXCLUDE.with(|c| c.replace(c.get().union(keys.into())));
        ExcludeGuard { prev }
    }
}
impl Drop for ExcludeGuard {
    fn drop(&mut self) {
        EXCLUDE.with(|c| c.set(self.prev));
    }
}

/// Runs `f` with `keys` excluded on this thread.
pub fn with_excluded<R>(keys: impl Into<KeySet>, f: impl FnOnce() -> R) -> R {
    let _g = ExcludeGuard::new(keys);
    f()
}

/// Runs `f` with `keys` included on this thread.
pub fn with_included<R>(keys: impl Into<KeySet>, f: impl FnOnce() -> R) -> R {
    let _g = IncludeGuard::new(keys);
    f()
}

/// Replaces this thread's include and exclude sets (both) until dropped: how captured
/// thread-local state is installed on another thread (`autograd::ThreadLocalState`) and how
/// inference mode removes keys from the exclude set.
#[must_use = "the previous sets are restored when the guard is dropped"]
pub struct LocalKeysGuard {
    prev: (KeySet, KeySet),
}

impl LocalKeysGuard {
    pub fn set(include: KeySet, exclude: KeySet) -> Self {
        let prev = (INCLUDE.with(|c| c.replace(include)), EXCLUDE.with(|c| c.replace(exclude)));
        LocalKeysGuard { prev }
    }
}
impl Drop for LocalKeysGuard {
    fn drop(&mut self) {
        INCLUDE.with(|c| c.set(self.prev.0));
        EXCLUDE.with(|c| c.set(self.prev.1));
    }
}
