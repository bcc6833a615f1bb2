//! Operator entries: the per-operator kernel table and its computation from registrations.

use super::ivalue::Stack;
use super::key::{DispatchKey, KeySet, NUM_KEYS};
use super::registry;
use super::tls::local_keys;
use crate::error::{Error, ErrorKind, Result};
use std::fmt;
use std::marker::PhantomData;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// A kernel in the boxed calling convention: pops its arguments from the stack and pushes its
/// returns. Fallbacks and run-time-defined operators use it.
pub type BoxedFn = dyn Fn(&OperatorEntry, &mut Stack) -> Result<()> + Send + Sync;

/// A boxed kernel.
#[derive(Clone)]
pub struct BoxedKernel(pub Arc<BoxedFn>);

impl BoxedKernel {
    pub fn new(f: impl Fn(&OperatorEntry, &mut Stack) -> Result<()> + Send + Sync + 'static) -> Self {
        BoxedKernel(Arc::new(f))
    }
    pub fn call(&self, op: &OperatorEntry, stack: &mut Stack) -> Result<()> {
        (self.0)(op, stack)
    }
}

/// Where a kernel is registered: a runtime key, or an alias key that the dispatcher maps onto
/// runtime keys when it computes the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegistrationKey {
    Key(DispatchKey),
    /// Serves every backend and Autograd; gradients come from the decomposition.
    CompositeImplicitAutograd,
    /// Serves every backend (below Autograd), for ops with their own derivative formula.
    CompositeExplicitAutograd,
}

impl From<DispatchKey> for RegistrationKey {
    fn from(k: DispatchKey) -> Self {
        RegistrationKey::Key(k)
    }
}

impl fmt::Display for RegistrationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistrationKey::Key(k) => write!(f, "{k}"),
            RegistrationKey::CompositeImplicitAutograd => f.write_str("CompositeImplicitAutograd"),
            RegistrationKey::CompositeExplicitAutograd => f.write_str("CompositeExplicitAutograd"),
        }
    }
}

/// A registered kernel.
#[derive(Clone)]
pub enum Kernel {
    /// A typed function pointer, erased; only [`Op::register`] stores these, with the op's type.
    Unboxed(*const ()),
    Boxed(BoxedKernel),
    /// Skip this key and go to the next one.
    Fallthrough,
}

// SAFETY: `Unboxed` holds a plain function pointer, which is freely shareable between threads.
unsafe impl Send for Kernel {}
// SAFETY: as above; boxed kernels are `Send + Sync` by their type.
unsafe impl Sync for Kernel {}

/// What the dispatcher found for a call.
pub enum Resolved<F> {
    Unboxed(F),
    Boxed(BoxedKernel, DispatchKey),
}

/// The dispatch state of one operator.
pub struct OperatorEntry {
    name: &'static str,
    schema: &'static str,
    /// Computed table: the typed kernel per key (null if none).
    unboxed: [AtomicPtr<()>; NUM_KEYS],
    /// Computed table: the boxed kernel per key (null if none). Points into `boxed_keep`.
    boxed: [AtomicPtr<BoxedKernel>; NUM_KEYS],
    /// Keys whose kernel is a fallthrough for this op: removed from the key set before picking
    /// the highest key, so a fallthrough costs nothing at call time.
    fallthrough: AtomicU32,
    registrations: Mutex<Vec<(RegistrationKey, Kernel)>>,
    /// Keeps every boxed kernel referenced by `boxed` alive as long as the entry.
    #[allow(clippy::vec_box)] // each kernel is boxed so its address survives the Vec growing
    boxed_keep: Mutex<Vec<Box<BoxedKernel>>>,
    /// False when a selective build left the operator out (its calls are an error saying so).
    selected: AtomicBool,
    /// Whether the operator was written to the `OXTEN_TRACE_OPS` file.
    traced: AtomicBool,
}

impl OperatorEntry {
    pub const fn new(name: &'static str, schema: &'static str) -> Self {
        OperatorEntry {
            name,
            schema,
            unboxed: [const { AtomicPtr::new(null_mut()) }; NUM_KEYS],
            boxed: [const { AtomicPtr::new(null_mut()) }; NUM_KEYS],
            // Until the table is computed, the layer keys fall through.
            fallthrough: AtomicU32::new(KeySet::AUTOGRAD.0 | KeySet::of(DispatchKey::Autocast).0),
            registrations: Mutex::new(Vec::new()),
            boxed_keep: Mutex::new(Vec::new()),
            selected: AtomicBool::new(true),
            traced: AtomicBool::new(false),
        }
    }
    /// Marks the operator as left out of (or kept in) a selective build.
    pub fn set_selected(&self, selected: bool) {
        self.selected.store(selected, Ordering::Relaxed);
    }
    /// Whether the build kept the operator (every operator, unless the build was selective).
    pub fn is_selected(&self) -> bool {
        self.selected.load(Ordering::Relaxed)
    }
    /// Marks the operator as traced; returns whether it already was.
    pub(crate) fn mark_traced(&self) -> bool {
        self.traced.swap(true, Ordering::Relaxed)
    }
    /// The qualified name, e.g. `aten::add.Tensor`.
    pub fn name(&self) -> &'static str {
        self.name
    }
    pub fn schema(&self) -> &'static str {
        self.schema
    }

    /// The key that runs for a call whose tensors carry `keys`.
    #[inline]
    pub fn dispatch_key(&self, keys: KeySet) -> Result<DispatchKey> {
        let (include, exclude) = local_keys();
        let ks = keys.union(include).remove(exclude).remove(KeySet(self.fallthrough.load(Ordering::Relaxed)));
        ks.highest().ok_or_else(|| {
            Error::new(
                ErrorKind::NotImplemented,
                format!(
                    "no dispatch key to run operator '{}': the call's key set is empty (tensor keys {keys:?}, excluded {exclude:?})",
                    self.name
                ),
            )
        })
    }

    /// Finds the kernel for `keys`: typed when one is registered, else boxed.
    #[inline]
    pub fn resolve_erased(&self, keys: KeySet) -> Result<Resolved<*const ()>> {
        super::trace::record(self);
        match self.lookup(keys) {
            Err(_) if registry::run_init_hook() => self.lookup(keys),
            r => r,
        }
    }

    #[inline]
    fn lookup(&self, keys: KeySet) -> Result<Resolved<*const ()>> {
        let k = self.dispatch_key(keys)?;
        let p = self.unboxed[k.index()].load(Ordering::Acquire);
        if !p.is_null() {
            return Ok(Resolved::Unboxed(p as *const ()));
        }
        let b = self.boxed[k.index()].load(Ordering::Acquire);
        if !b.is_null() {
            // SAFETY: non-null pointers in `boxed` point into `boxed_keep`, which only grows and
            // lives as long as `self`.
            return Ok(Resolved::Boxed(unsafe { (*b).clone() }, k));
        }
        Err(self.missing_kernel(k))
    }

    fn missing_kernel(&self, k: DispatchKey) -> Error {
        if !self.is_selected() {
            return Error::new(
                ErrorKind::NotImplemented,
                format!(
                    "operator `{}` was not selected in this build: add it to the OXTEN_SELECTED_OPS allowlist and rebuild",
                    self.name.strip_prefix("aten::").unwrap_or(self.name)
                ),
            );
        }
        let regs = self.registrations.lock().unwrap_or_else(|e| e.into_inner());
        let keys: Vec<String> = regs.iter().map(|(k, _)| k.to_string()).collect();
        // An out-of-tree backend that named itself is named too (`'toy' (PrivateUse1)`).
        let name = crate::device::privateuse1_name();
        let backend = if k == DispatchKey::PrivateUse1 && name != "privateuseone" {
            format!("'{name}' ({k})")
        } else {
            format!("'{k}'")
        };
        Error::new(
            ErrorKind::NotImplemented,
            format!(
                "could not run '{}' with arguments from the {backend} backend: no kernel is registered for it. Registered keys: [{}]",
                self.name,
                keys.join(", ")
            ),
        )
        .in_op(self.name)
    }

    /// Calls the operator with boxed arguments. The key set comes from the tensors on the stack
    /// and `extra_keys` (the backend of a factory op's `device`).
    pub fn call_boxed(&self, stack: &mut Stack, extra_keys: KeySet) -> Result<()> {
        let keys = stack.iter().flat_map(|v| v.tensors()).fold(extra_keys, |ks, t| ks.union(t.key_set()));
        match self.resolve_erased(keys)? {
            Resolved::Boxed(k, _) => k.call(self, stack),
            Resolved::Unboxed(_) => Err(Error::runtime(format!(
                "operator '{}' has a typed kernel; call it through its typed entry point",
                self.name
            ))),
        }
    }

    /// Registers a kernel. A second registration at the same key replaces the first (the
    /// latest wins, deterministically).
    pub fn register_kernel(&'static self, key: RegistrationKey, kernel: Kernel) {
        registry::list(self);
        {
            let mut regs = self.registrations.lock().unwrap_or_else(|e| e.into_inner());
            regs.retain(|(k, _)| *k != key);
            regs.push((key, kernel));
        }
        self.recompute();
    }

    /// Whether a kernel (not counting fallbacks) is registered at `key`.
    pub fn has_kernel(&self, key: RegistrationKey) -> bool {
        self.registrations.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|(k, _)| *k == key)
    }

    /// Recomputes the dispatch table from registrations, alias keys and backend fallbacks.
    pub(crate) fn recompute(&self) {
        let regs = self.registrations.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let find = |key: RegistrationKey| regs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone());
        let cea = find(RegistrationKey::CompositeExplicitAutograd);
        let cia = find(RegistrationKey::CompositeImplicitAutograd);
        let any_backend_kernel =
            DispatchKey::ALL.iter().any(|k| k.is_backend() && find(RegistrationKey::Key(*k)).is_some());
        let mut mask = 0u32;
        let mut keep = self.boxed_keep.lock().unwrap_or_else(|e| e.into_inner());
        for key in DispatchKey::ALL {
            let chosen = find(RegistrationKey::Key(key)).or_else(|| {
                if key.is_backend() {
                    cea.clone().or_else(|| cia.clone())
                } else if key == DispatchKey::Autograd && !any_backend_kernel && cea.is_none() {
                    // A pure composite decomposes above autograd, so its gradient comes from
                    // the ops it calls.
                    cia.clone()
                } else {
                    None
                }
            });
            let chosen = chosen.or_else(|| registry::fallback(key));
            let (u, b): (*mut (), *mut BoxedKernel) = match chosen {
                Some(Kernel::Unboxed(p)) => (p as *mut (), null_mut()),
                Some(Kernel::Boxed(bk)) => {
                    let boxed = Box::new(bk);
                    let p = &*boxed as *const BoxedKernel as *mut BoxedKernel;
                    keep.push(boxed);
                    (null_mut(), p)
                }
                Some(Kernel::Fallthrough) => {
                    mask |= KeySet::of(key).0;
                    (null_mut(), null_mut())
                }
                None => (null_mut(), null_mut()),
            };
            self.unboxed[key.index()].store(u, Ordering::Release);
            self.boxed[key.index()].store(b, Ordering::Release);
        }
        self.fallthrough.store(mask, Ordering::Relaxed);
    }
}

impl fmt::Debug for OperatorEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OperatorEntry({})", self.name)
    }
}

/// A typed operator handle: an [`OperatorEntry`] whose typed kernels all have type `F`
/// (a function-pointer type). The generator emits one `static` per operator.
pub struct Op<F> {
    entry: OperatorEntry,
    _f: PhantomData<F>,
}

// SAFETY: `F` is only a marker for the function-pointer type; the entry itself is Sync.
unsafe impl<F> Sync for Op<F> {}
// SAFETY: as above.
unsafe impl<F> Send for Op<F> {}

impl<F: Copy> Op<F> {
    pub const fn new(name: &'static str, schema: &'static str) -> Self {
        Op { entry: OperatorEntry::new(name, schema), _f: PhantomData }
    }

    /// Registers a typed kernel.
    pub fn register(&'static self, key: impl Into<RegistrationKey>, f: F) {
        assert_eq!(
            std::mem::size_of::<F>(),
            std::mem::size_of::<*const ()>(),
            "Op<F> requires F to be a function pointer type"
        );
        // SAFETY: F is a function pointer (size checked above), so it converts to an untyped
        // pointer losslessly; `resolve` converts it back to the same F.
        let p: *const () = unsafe { std::mem::transmute_copy(&f) };
        self.entry.register_kernel(key.into(), Kernel::Unboxed(p));
    }

    /// Registers a boxed kernel for this operator (e.g. for a backend written against stacks).
    pub fn register_boxed(&'static self, key: impl Into<RegistrationKey>, k: BoxedKernel) {
        self.entry.register_kernel(key.into(), Kernel::Boxed(k));
    }

    /// Marks `key` as a fallthrough for this operator.
    pub fn register_fallthrough(&'static self, key: DispatchKey) {
        self.entry.register_kernel(RegistrationKey::Key(key), Kernel::Fallthrough);
    }

    /// Finds the kernel to run for a call whose tensors carry `keys`.
    #[inline]
    pub fn resolve(&self, keys: KeySet) -> Result<Resolved<F>> {
        Ok(match self.entry.resolve_erased(keys)? {
            // SAFETY: typed pointers in this entry's table were stored by `register` from an F.
            Resolved::Unboxed(p) => Resolved::Unboxed(unsafe { std::mem::transmute_copy::<*const (), F>(&p) }),
            Resolved::Boxed(k, key) => Resolved::Boxed(k, key),
        })
    }
}

impl<F> std::ops::Deref for Op<F> {
    type Target = OperatorEntry;
    fn deref(&self) -> &OperatorEntry {
        &self.entry
    }
}
