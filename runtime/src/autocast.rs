//! Autocast: automatic mixed precision for regions of code (`torch.autocast`).
//!
//! Inside an autocast region for a device type, the operators that `native_functions.yaml` marks
//! with an `autocast:` policy for that device type cast their floating-point arguments before
//! running. The policies are PyTorch 2.15's lists, per device type, for the operators oxten has
//! (CUDA's serve out-of-tree PrivateUse1 devices too):
//!
//! | policy | what the kernel does | CPU | CUDA (also) |
//! |---|---|---|---|
//! | `lower_precision_fp` | casts f32/f16/bf16 arguments to the region's dtype | `mm`, `bmm`, `addmm`, `baddbmm`, `addbmm`, `matmul`, `linear`, `conv1d`, `conv2d`, `conv_transpose2d`, `scaled_dot_product_attention` | `mv`, `einsum`, `convolution` |
//! | `fp32` | casts them to f32 | `cross_entropy_loss`, `nll_loss`, `mse_loss`, `binary_cross_entropy_with_logits`, `prod` | `exp`, `log`, `log1p`, `expm1`, `erfinv`, `rsqrt`, `pow`, `softplus`, `layer_norm`, `group_norm`, `cosine_similarity`, `logsumexp`, the upsampling ops (and not `prod`) |
//! | `fp32_set_opt_dtype` | sets an unset `dtype=` to f32 when the first argument is eligible | none | `sum`, `softmax`, `log_softmax`, `cumsum`, `prod`, `linalg_vector_norm` |
//! | `promote` | casts them to the widest of their dtypes (f32 over the region's dtype) | `cat`, `stack` | `addcmul`, `addcdiv`, `atan2`, `cross`, `dot`, `index_put`, `scatter_add` |
//!
//! Eligible arguments are floating-point tensors on the region's device type, except f64, which
//! is never cast. Every other operator runs in the dtypes it is given (so `sum` of a bf16 tensor
//! stays bf16 on CPU), and so do in-place and out= variants. An explicit `dtype=` is respected.
//!
//! How it works, as in PyTorch: tensors carry the [`DispatchKey::Autocast`] key, which every
//! thread excludes until an autocast region removes it from the exclude set ("enabled" means "the
//! key is not excluded"). The generated kernels at that key (from the `autocast:` field, see
//! `codegen/src/emit/autocast.rs`) cast the arguments, exclude the key, and call the operator
//! again, which reaches Autograd next: the casts are differentiated, and Autograd saves the
//! low-precision tensors. Operators without an autocast kernel fall through for free (their
//! Autocast bit is masked out of the key set before the dispatcher picks a kernel).
//!
//! The state is thread-local and per device type: whether autocast is enabled, its dtype
//! (bf16 on CPU, f16 on CUDA and PrivateUse1 by default), whether casts are cached, and the
//! nesting depth of regions. [`ThreadLocalState`](crate::autograd::ThreadLocalState) carries the
//! enabled flags and dtypes into other threads where PyTorch's `ThreadLocalState` does (the
//! autograd engine's threads; not rayon workers inside kernels, like `at::parallel_for`).
//!
//! The cast cache: casts of f32 *weights* (leaves that require grad and are not views) to the
//! region's dtype are made once per region and reused, so a weight used by several operators is
//! cast once. Entries hold the source weakly (its address is the key, and the weak reference
//! keeps the address from being reused); the cache is cleared when the outermost region exits.
//!
//! ```ignore
//! let _g = oxten::autocast::AutocastGuard::new(Device::Cpu, DType::BF16);
//! let y = x.mm(&w);                      // bf16
//! let s = y.sum();                       // bf16: `sum` has no CPU policy
//! let z = oxten::autocast::disabled(Device::Cpu, || x.mm(&w));   // f32
//! ```

use crate::device::Device;
use crate::dispatch::{is_excluded, set_excluded, DispatchKey, ExcludeGuard};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::{Tensor, WeakTensor};
use std::cell::Cell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The device types with autocast state, in the order of [`AutocastState`]'s arrays.
const DEVICE_TYPES: [&str; 3] = ["CPU", "CUDA", "PrivateUse1"];

/// The index of `device`'s type in the state arrays; `None` for Meta, which autocast never serves.
fn slot(device: Device) -> Option<usize> {
    match device {
        Device::Cpu => Some(0),
        Device::Cuda(_) => Some(1),
        Device::PrivateUse1(_) => Some(2),
        Device::Meta => None,
    }
}

fn slot_or_err(device: Device) -> Result<usize> {
    slot(device).ok_or_else(|| {
        Error::value(format!(
            "User specified an unsupported autocast device_type '{device}': autocast serves {}",
            DEVICE_TYPES.join(", ")
        ))
    })
}

/// The autocast flags and dtypes of one thread, per device type (CPU, CUDA, PrivateUse1): what
/// [`ThreadLocalState`](crate::autograd::ThreadLocalState) carries into other threads, together
/// with the dispatcher's exclude set (which holds the Autocast key whenever no device type has
/// autocast enabled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutocastState {
    enabled: [bool; 3],
    dtype: [DType; 3],
}

impl AutocastState {
    /// A new thread's state: disabled everywhere; bf16 on CPU, f16 on CUDA and PrivateUse1.
    pub const DEFAULT: AutocastState =
        AutocastState { enabled: [false; 3], dtype: [DType::BF16, DType::F16, DType::F16] };

    /// This thread's state.
    pub fn current() -> AutocastState {
        STATE.with(Cell::get)
    }

    /// Installs `self` on this thread (the caller also installs the matching exclude set) and
    /// returns the state it replaces.
    pub(crate) fn replace(self) -> AutocastState {
        STATE.with(|c| c.replace(self))
    }
}

thread_local! {
    static STATE: Cell<AutocastState> = const { Cell::new(AutocastState::DEFAULT) };
    static CACHE_ENABLED: Cell<bool> = const { Cell::new(true) };
    static NESTING: Cell<u32> = const { Cell::new(0) };
}

/// Whether autocast is enabled for `device`'s type on this thread
/// (`torch.is_autocast_enabled(device_type)`): its flag is set and the Autocast key is not
/// excluded (inside an autocast kernel, which excludes the key, this is false).
pub fn is_autocast_enabled(device: Device) -> bool {
    slot(device).is_some_and(|i| AutocastState::current().enabled[i]) && !is_excluded(DispatchKey::Autocast)
}

/// Turns autocast on or off for `device`'s type on this thread, with no guard (prefer
/// [`AutocastGuard`]); the Autocast key is excluded exactly when no device type has it on.
pub fn set_autocast_enabled(device: Device, enabled: bool) -> Result<()> {
    let i = slot_or_err(device)?;
    let mut s = AutocastState::current();
    s.enabled[i] = enabled;
    s.replace();
    set_excluded(DispatchKey::Autocast, !s.enabled.iter().any(|&e| e));
    Ok(())
}

/// The lower-precision dtype of `device`'s type on this thread (`torch.get_autocast_dtype`);
/// bf16 on CPU unless set. Meta has none and answers f32.
pub fn get_autocast_dtype(device: Device) -> DType {
    slot(device).map_or(DType::F32, |i| AutocastState::current().dtype[i])
}

/// Sets the lower-precision dtype of `device`'s type on this thread, with no guard (prefer
/// [`AutocastGuard`]).
pub fn set_autocast_dtype(device: Device, dtype: DType) -> Result<()> {
    let i = slot_or_err(device)?;
    let mut s = AutocastState::current();
    s.dtype[i] = dtype;
    s.replace();
    Ok(())
}

/// Whether casts of weights are cached on this thread (`torch.is_autocast_cache_enabled()`).
pub fn is_autocast_cache_enabled() -> bool {
    CACHE_ENABLED.with(Cell::get)
}

/// Turns the cast cache on or off on this thread, with no guard (prefer [`AutocastOpts`]).
pub fn set_autocast_cache_enabled(enabled: bool) {
    CACHE_ENABLED.with(|c| c.set(enabled));
}

/// Enters one autocast region level on this thread; returns the new depth
/// (`torch.autocast_increment_nesting()`). [`AutocastGuard`] does this.
pub fn increment_nesting() -> u32 {
    NESTING.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

/// Leaves one autocast region level on this thread; returns the new depth
/// (`torch.autocast_decrement_nesting()`). At 0, the caller clears the cache.
pub fn decrement_nesting() -> u32 {
    NESTING.with(|c| {
        c.set(c.get().saturating_sub(1));
        c.get()
    })
}

/// The autocast region depth on this thread (0 outside every region).
pub fn nesting() -> u32 {
    NESTING.with(Cell::get)
}

// ----- the cast cache -----

/// One cached cast: the source, held weakly (its address is the key, and the weak reference
/// keeps that address from being reused by another tensor), and its cast.
struct CacheEntry {
    source: WeakTensor,
    cast: Tensor,
}

/// The cast cache, shared by all threads like PyTorch's (`cached_casts`, behind a mutex).
fn cache() -> MutexGuard<'static, HashMap<usize, CacheEntry>> {
    static CACHE: OnceLock<Mutex<HashMap<usize, CacheEntry>>> = OnceLock::new();
    CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// Empties the cast cache (`torch.clear_autocast_cache()`); the outermost region's exit does it.
pub fn clear_cache() {
    // Drop the entries after releasing the lock: dropping a cast may drop its autograd graph.
    let entries = std::mem::take(&mut *cache());
    drop(entries);
}

/// The number of cached casts (for tests and diagnostics).
pub fn cache_len() -> usize {
    cache().len()
}

// ----- regions -----

/// Options of an autocast region (`torch.autocast(device_type, dtype=None, enabled=True,
/// cache_enabled=None)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutocastOpts {
    /// The lower-precision dtype; `None` keeps the thread's current one (bf16 on CPU by default).
    pub dtype: Option<DType>,
    /// `false` makes a region with autocast off (nested inside an enabled one, say).
    pub enabled: bool,
    /// Whether to cache casts of weights; `None` keeps the thread's current setting.
    pub cache_enabled: Option<bool>,
}

impl Default for AutocastOpts {
    fn default() -> Self {
        AutocastOpts { dtype: None, enabled: true, cache_enabled: None }
    }
}

/// An autocast region until dropped: turns autocast on (or off) for a device type with a dtype,
/// and restores the previous state when dropped (also on early return, error and panic). When the
/// outermost region on the thread exits, the cast cache is cleared.
///
/// ```ignore
/// {
///     let _amp = AutocastGuard::new(Device::Cpu, DType::BF16);
///     let logits = net.forward(&x)?;               // matmuls and convolutions in bf16
///     let loss = oxten::try_cross_entropy_loss(&logits, &y)?;   // f32 (policy fp32)
/// }
/// loss.backward();                                 // outside the region, as in PyTorch
/// ```
#[must_use = "the previous autocast state is restored when the guard is dropped"]
pub struct AutocastGuard {
    slot: usize,
    prev_enabled: bool,
    prev_excluded: bool,
    prev_dtype: DType,
    prev_cache_enabled: bool,
    /// Thread-local state must be restored on the thread that set it.
    _not_send: PhantomData<*const ()>,
}

impl AutocastGuard {
    /// Autocast on for `device`'s type with `dtype` (`with torch.autocast(device, dtype=dtype):`).
    ///
    /// # Panics
    /// When the device type has no autocast (Meta) or the dtype is not a lower-precision
    /// floating dtype it supports; [`AutocastGuard::try_new`] returns the error instead.
    #[track_caller]
    pub fn new(device: Device, dtype: DType) -> Self {
        crate::ops_support::unwrap_op(Self::try_new(device, dtype))
    }

    /// Like [`AutocastGuard::new`], returning an error for an unsupported device type or dtype.
    pub fn try_new(device: Device, dtype: DType) -> Result<Self> {
        Self::with_opts(device, AutocastOpts { dtype: Some(dtype), ..Default::default() })
    }

    /// Autocast off for `device`'s type (`with torch.autocast(device, enabled=False):`), e.g.
    /// around code that must run in f32 inside an autocast region. Tensors made in low precision
    /// before it stay low precision: cast them yourself where needed.
    ///
    /// # Panics
    /// For a device type without autocast (Meta).
    #[track_caller]
    pub fn disabled(device: Device) -> Self {
        crate::ops_support::unwrap_op(Self::with_opts(device, AutocastOpts { enabled: false, ..Default::default() }))
    }

    /// A region with every option of `torch.autocast`.
    ///
    /// Unlike PyTorch, which warns and turns autocast off, an unsupported dtype is an error: CPU
    /// supports bf16 and f16, CUDA and PrivateUse1 f16 and bf16.
    pub fn with_opts(device: Device, opts: AutocastOpts) -> Result<Self> {
        let slot = slot_or_err(device)?;
        let dtype = opts.dtype.unwrap_or_else(|| get_autocast_dtype(device));
        if opts.enabled && !matches!(dtype, DType::BF16 | DType::F16) {
            let name = DEVICE_TYPES[slot];
            return Err(Error::value(format!(
                "In {name} autocast, but the target dtype is not supported: {name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently (got {dtype:?})"
            )));
        }
        let guard = AutocastGuard {
            slot,
            prev_enabled: AutocastState::current().enabled[slot],
            prev_excluded: is_excluded(DispatchKey::Autocast),
            prev_dtype: AutocastState::current().dtype[slot],
            prev_cache_enabled: is_autocast_cache_enabled(),
            _not_send: PhantomData,
        };
        set_autocast_enabled(device, opts.enabled)?;
        set_autocast_dtype(device, dtype)?;
        increment_nesting();
        if let Some(c) = opts.cache_enabled {
            set_autocast_cache_enabled(c);
        }
        Ok(guard)
    }
}

impl Drop for AutocastGuard {
    fn drop(&mut self) {
        // Leaving the outermost region: the weights may change before the next one.
        if decrement_nesting() == 0 {
            clear_cache();
        }
        let mut s = AutocastState::current();
        s.enabled[self.slot] = self.prev_enabled;
        s.dtype[self.slot] = self.prev_dtype;
        s.replace();
        set_excluded(DispatchKey::Autocast, self.prev_excluded);
        set_autocast_cache_enabled(self.prev_cache_enabled);
    }
}

/// Runs `f` in an autocast region for `device`'s type with `dtype`.
///
/// # Panics
/// Like [`AutocastGuard::new`].
#[track_caller]
pub fn region<R>(device: Device, dtype: DType, f: impl FnOnce() -> R) -> R {
    let _g = AutocastGuard::new(device, dtype);
    f()
}

/// Runs `f` in an autocast region with every option of `torch.autocast`; errors like
/// [`AutocastGuard::with_opts`].
pub fn try_region<R>(device: Device, opts: AutocastOpts, f: impl FnOnce() -> R) -> Result<R> {
    let _g = AutocastGuard::with_opts(device, opts)?;
    Ok(f())
}

/// Runs `f` with autocast off for `device`'s type (`torch.autocast(device, enabled=False)`).
///
/// # Panics
/// For a device type without autocast (Meta).
#[track_caller]
pub fn disabled<R>(device: Device, f: impl FnOnce() -> R) -> R {
    let _g = AutocastGuard::disabled(device);
    f()
}

// ----- what the generated kernels call -----

/// Whether autocast may cast `t` for `device`'s type: a floating-point tensor on that device
/// type, other than f64 (`at::autocast::is_eligible`).
pub fn is_eligible(t: &Tensor, device: Device) -> bool {
    let dt = t.dtype();
    slot(t.device()).is_some() && slot(t.device()) == slot(device) && dt.is_floating_point() && dt != DType::F64
}

/// One call of a generated autocast kernel (see `codegen/src/emit/autocast.rs`).
///
/// [`AutocastCall::enter`] reads the autocast state of the device type of the call's first
/// tensor argument, then excludes the Autocast key until the value is dropped: the casts and the
/// redispatched operator run below autocast (next comes Autograd, which records the casts). When
/// autocast is off for that device type (it is on for another one), every helper leaves the
/// arguments as they are.
pub struct AutocastCall {
    /// The device type and its lower-precision dtype, when autocast is on for it.
    active: Option<(Device, DType)>,
    _below_autocast: ExcludeGuard,
}

impl AutocastCall {
    /// Starts a kernel call; `first` is the first tensor argument.
    pub fn enter(first: Option<&Tensor>) -> AutocastCall {
        let active = first.map(Tensor::device).filter(|&d| is_autocast_enabled(d)).map(|d| (d, get_autocast_dtype(d)));
        AutocastCall { active, _below_autocast: ExcludeGuard::new(DispatchKey::Autocast) }
    }

    /// Whether the call takes the CUDA lists of policies: its first tensor is on a CUDA or
    /// PrivateUse1 device with autocast on (CPU tensors, and calls with autocast off, take CPU's).
    pub fn follows_cuda_lists(&self) -> bool {
        matches!(self.active, Some((Device::Cuda(_) | Device::PrivateUse1(_), _)))
    }

    /// The target of the `lower_precision_fp` policy: the region's dtype.
    pub fn lower_precision_fp(&self) -> Option<DType> {
        self.active.map(|(_, lower)| lower)
    }

    /// The target of the `fp32` policy.
    pub fn fp32(&self) -> Option<DType> {
        self.active.map(|_| DType::F32)
    }

    /// The target of the `promote` policy: the widest dtype of the eligible `tensors`, starting
    /// from the region's dtype (f32 wins over it; f64 tensors are skipped and stay f64). Two
    /// different lower-precision dtypes (f16 arguments in a bf16 region) are an error, as in
    /// PyTorch.
    pub fn promote<'t>(&self, tensors: impl IntoIterator<Item = &'t Tensor>) -> Result<Option<DType>> {
        let Some((device, lower)) = self.active else { return Ok(None) };
        let mut current = lower;
        for t in tensors.into_iter().filter(|t| is_eligible(t, device)) {
            let next = t.dtype();
            if current == DType::F32 || next == DType::F32 {
                current = DType::F32;
            } else if next != lower {
                return Err(Error::dtype(format!(
                    "Unexpected floating ScalarType in at::autocast::prioritize: cannot promote {next:?} in a {lower:?} autocast region"
                )));
            }
        }
        Ok(Some(current))
    }

    /// The `dtype=` argument under the `fp32_set_opt_dtype` policy: f32 when the caller gave
    /// none and `first` is eligible; otherwise the caller's (an explicit dtype is respected).
    pub fn set_opt_dtype(&self, first: &Tensor, dtype: Option<DType>) -> Option<DType> {
        match self.active {
            Some((device, _)) if dtype.is_none() && is_eligible(first, device) => Some(DType::F32),
            _ => dtype,
        }
    }

    /// `t` cast to `to` if it is eligible and of another dtype, else `t` itself
    /// (`at::autocast::cached_cast`). Casts of f32 weights to the region's dtype go through the
    /// cache.
    pub fn cast(&self, t: &Tensor, to: Option<DType>) -> Result<Tensor> {
        let (Some((device, lower)), Some(to)) = (self.active, to) else { return Ok(t.clone()) };
        if !is_eligible(t, device) || t.dtype() == to {
            return Ok(t.clone());
        }
        let cacheable = to == lower
            && t.dtype() == DType::F32
            && is_autocast_cache_enabled()
            && t.requires_grad()
            && t.is_leaf()
            && !t.is_view();
        if !cacheable {
            return t.try_to_dtype(to);
        }
        let mut cache = cache();
        if let Some(e) = cache.get(&t.impl_id()) {
            if e.source.upgrade().is_some_and(|s| s.is_same(t)) && e.cast.dtype() == to {
                return Ok(e.cast.clone());
            }
        }
        let cast = t.try_to_dtype(to)?;
        cache.insert(t.impl_id(), CacheEntry { source: t.downgrade(), cast: cast.clone() });
        Ok(cast)
    }

    /// [`AutocastCall::cast`] for an optional tensor argument.
    pub fn cast_opt(&self, t: Option<&Tensor>, to: Option<DType>) -> Result<Option<Tensor>> {
        t.map(|t| self.cast(t, to)).transpose()
    }

    /// [`AutocastCall::cast`] for each tensor of a `Tensor[]` argument.
    pub fn cast_list(&self, ts: &[Tensor], to: Option<DType>) -> Result<Vec<Tensor>> {
        ts.iter().map(|t| self.cast(t, to)).collect()
    }

    /// [`AutocastCall::cast`] for each tensor of a `Tensor?[]` argument.
    pub fn cast_opt_list(&self, ts: &[Option<Tensor>], to: Option<DType>) -> Result<Vec<Option<Tensor>>> {
        ts.iter().map(|t| self.cast_opt(t.as_ref(), to)).collect()
    }
}
