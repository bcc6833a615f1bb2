//! Thread-local autograd modes: grad mode (`no_grad` / `enable_grad`), inference mode and
//! anomaly detection, with RAII guards that restore the previous state when dropped (also on
//! early return, error and panic), and [`ThreadLocalState`] to carry all of them (plus the
//! dispatcher's include/exclude sets and the autocast flags and dtypes) into another thread.

use crate::autocast::AutocastState;
use crate::dispatch::{local_keys, KeySet, LocalKeysGuard};
use std::cell::Cell;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
    static INFERENCE_MODE: Cell<bool> = const { Cell::new(false) };
    static ANOMALY_MODE: Cell<bool> = const { Cell::new(false) };
}

/// Whether operations on this thread record autograd history (`torch.is_grad_enabled()`).
#[inline]
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(Cell::get)
}

/// Sets grad mode on this thread (prefer the guards, which restore it).
pub fn set_grad_enabled(enabled: bool) {
    GRAD_ENABLED.with(|c| c.set(enabled));
}

/// Whether inference mode is on for this thread (`torch.is_inference_mode_enabled()`).
#[inline]
pub fn is_inference_mode_enabled() -> bool {
    INFERENCE_MODE.with(Cell::get)
}

/// Whether anomaly detection is on for this thread (`torch.is_anomaly_enabled()`).
#[inline]
pub fn is_anomaly_enabled() -> bool {
    ANOMALY_MODE.with(Cell::get)
}

/// Sets grad mode to a value until dropped (`torch.set_grad_enabled(mode)` as a context).
#[must_use = "grad mode is restored when the guard is dropped"]
pub struct GradModeGuard {
    prev: bool,
}

impl GradModeGuard {
    pub fn new(enabled: bool) -> Self {
        GradModeGuard { prev: GRAD_ENABLED.with(|c| c.replace(enabled)) }
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        GRAD_ENABLED.with(|c| c.set(self.prev));
    }
}

/// Turns grad mode off until dropped (`with torch.no_grad():`).
#[must_use = "grad mode is restored when the guard is dropped"]
pub struct NoGradGuard(#[allow(dead_code)] GradModeGuard);

impl NoGradGuard {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        NoGradGuard(GradModeGuard::new(false))
    }
}

/// Turns grad mode on until dropped (`with torch.enable_grad():`).
#[must_use = "grad mode is restored when the guard is dropped"]
pub struct EnableGradGuard(#[allow(dead_code)] GradModeGuard);

impl EnableGradGuard {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        EnableGradGuard(GradModeGuard::new(true))
    }
}

/// Runs `f` with grad mode off.
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    let _g = NoGradGuard::new();
    f()
}

/// Runs `f` with grad mode on.
pub fn enable_grad<R>(f: impl FnOnce() -> R) -> R {
    let _g = EnableGradGuard::new();
    f()
}

/// Inference mode until dropped (`with torch.inference_mode():`): grad mode off and the Autograd
/// key excluded on this thread, so no autograd kernel runs (no history, no view tracking);
/// tensors allocated inside are *inference tensors* ([`Tensor::is_inference`](crate::Tensor::is_inference)).
/// Such tensors can never be saved for backward, and cannot be updated in place outside inference
/// mode (the Autograd kernel of the in-place op rejects them).
///
/// `InferenceModeGuard::with_enabled(false)` turns the mode off inside an enabled region
/// (grad mode on, Autograd no longer excluded), like `torch.inference_mode(False)`.
#[must_use = "inference mode is restored when the guard is dropped"]
pub struct InferenceModeGuard {
    prev_inference: bool,
    prev_grad: bool,
    _keys: LocalKeysGuard,
}

impl InferenceModeGuard {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::with_enabled(true)
    }

    pub fn with_enabled(enabled: bool) -> Self {
        let (include, exclude) = local_keys();
        let autograd = KeySet::AUTOGRAD;
        let exclude = if enabled { exclude.union(autograd) } else { exclude.remove(autograd) };
        let keys = LocalKeysGuard::set(include, exclude);
        InferenceModeGuard {
            prev_inference: INFERENCE_MODE.with(|c| c.replace(enabled)),
            prev_grad: GRAD_ENABLED.with(|c| c.replace(!enabled)),
            _keys: keys,
        }
    }
}

impl Drop for InferenceModeGuard {
    fn drop(&mut self) {
        INFERENCE_MODE.with(|c| c.set(self.prev_inference));
        GRAD_ENABLED.with(|c| c.set(self.prev_grad));
        // `_keys` restores the dispatch sets when it drops, right after this.
    }
}

/// Runs `f` in inference mode.
pub fn inference_mode<R>(f: impl FnOnce() -> R) -> R {
    let _g = InferenceModeGuard::new();
    f()
}

/// Anomaly detection until dropped (`torch.autograd.detect_anomaly()`): every node records a
/// backtrace of its creation, the engine checks every gradient a node returns for NaN, and errors
/// raised in backward name the node and show where its forward op was called.
#[must_use = "anomaly mode is restored when the guard is dropped"]
pub struct AnomalyModeGuard {
    prev: bool,
}

impl AnomalyModeGuard {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::with_enabled(true)
    }
    pub fn with_enabled(enabled: bool) -> Self {
        AnomalyModeGuard { prev: ANOMALY_MODE.with(|c| c.replace(enabled)) }
    }
}

impl Drop for AnomalyModeGuard {
    fn drop(&mut self) {
        ANOMALY_MODE.with(|c| c.set(self.prev));
    }
}

/// Runs `f` with anomaly detection on.
pub fn detect_anomaly<R>(f: impl FnOnce() -> R) -> R {
    let _g = AnomalyModeGuard::new();
    f()
}

/// A snapshot of this thread's modes — grad mode, inference mode, anomaly mode, the
/// dispatcher's include/exclude sets and the autocast state (whether autocast is enabled and its
/// dtype, per device type) — to install on another thread (a rayon task, a worker thread) with
/// [`ThreadLocalState::enter`]. Modes are thread-local: a spawned thread starts with grad mode on
/// and autocast off whatever its parent had.
///
/// As in PyTorch's `at::ThreadLocalState`, the autocast cache setting and region depth are not
/// carried (the receiving thread keeps its own), and oxten's kernels do not install the state on
/// the rayon workers they split loops over (`at::parallel_for` does not either): that code runs
/// below every mode. The autograd engine installs it on the threads it runs backward on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadLocalState {
    pub grad_enabled: bool,
    pub inference_mode: bool,
    pub anomaly_enabled: bool,
    pub include: KeySet,
    pub exclude: KeySet,
    /// Autocast's enabled flags and dtypes (the Autocast key's exclusion is in `exclude`).
    pub autocast: AutocastState,
}

impl ThreadLocalState {
    /// The current thread's state.
    pub fn capture() -> Self {
        let (include, exclude) = local_keys();
        ThreadLocalState {
            grad_enabled: is_grad_enabled(),
            inference_mode: is_inference_mode_enabled(),
            anomaly_enabled: is_anomaly_enabled(),
            include,
            exclude,
            autocast: AutocastState::current(),
        }
    }

    /// Installs this state on the current thread until the guard drops.
    pub fn install(&self) -> ThreadLocalStateGuard {
        ThreadLocalStateGuard {
            prev_grad: GRAD_ENABLED.with(|c| c.replace(self.grad_enabled)),
            prev_inference: INFERENCE_MODE.with(|c| c.replace(self.inference_mode)),
            prev_anomaly: ANOMALY_MODE.with(|c| c.replace(self.anomaly_enabled)),
            prev_autocast: self.autocast.replace(),
            _keys: LocalKeysGuard::set(self.include, self.exclude),
        }
    }

    /// Runs `f` with this state installed, restoring the thread's own state afterwards.
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        let _g = self.install();
        f()
    }
}

/// Restores the previous thread-local state when dropped ([`ThreadLocalState::install`]).
#[must_use = "the previous state is restored when the guard is dropped"]
pub struct ThreadLocalStateGuard {
    prev_grad: bool,
    prev_inference: bool,
    prev_anomaly: bool,
    prev_autocast: AutocastState,
    _keys: LocalKeysGuard,
}

impl Drop for ThreadLocalStateGuard {
    fn drop(&mut self) {
        GRAD_ENABLED.with(|c| c.set(self.prev_grad));
        INFERENCE_MODE.with(|c| c.set(self.prev_inference));
        ANOMALY_MODE.with(|c| c.set(self.prev_anomaly));
        self.prev_autocast.replace();
    }
}
