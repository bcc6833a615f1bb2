//! Dispatch keys and key sets.

use crate::device::Device;
use std::fmt;

/// A runtime dispatch key. A higher discriminant means a higher priority: the dispatcher runs the
/// kernel of the highest key present in a call's key set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DispatchKey {
    /// Host kernels.
    Cpu = 0,
    /// Shape-only kernels (meta functions); allocate nothing.
    Meta = 1,
    /// CUDA kernels (reserved).
    Cuda = 2,
    /// The key for one out-of-tree backend; the highest-priority backend, as in PyTorch.
    PrivateUse1 = 3,
    /// Records autograd history, then redispatches below itself.
    Autograd = 4,
    /// The out-of-tree backend's own Autograd kernels (the backend YAML's `autograd:` list),
    /// run before [`Autograd`](Self::Autograd) for tensors of that backend; a fallthrough to it
    /// for every other operator.
    AutogradPrivateUse1 = 5,
    /// Casts inputs for mixed precision, then redispatches below itself.
    Autocast = 6,
}

/// Number of runtime dispatch keys (the size of every operator's kernel table).
pub const NUM_KEYS: usize = 7;

impl DispatchKey {
    pub const ALL: [DispatchKey; NUM_KEYS] = [
        DispatchKey::Cpu,
        DispatchKey::Meta,
        DispatchKey::Cuda,
        DispatchKey::PrivateUse1,
        DispatchKey::Autograd,
        DispatchKey::AutogradPrivateUse1,
        DispatchKey::Autocast,
    ];
    /// Whether the key computes (a backend) rather than rewriting and redispatching (a layer).
    pub const fn is_backend(self) -> bool {
        (self as u8) <= DispatchKey::PrivateUse1 as u8
    }
    pub const fn index(self) -> usize {
        self as usize
    }
    pub fn from_index(i: usize) -> DispatchKey {
        Self::ALL[i]
    }
    /// The backend key serving a device.
    pub const fn for_device(d: Device) -> DispatchKey {
        match d {
            Device::Cpu => DispatchKey::Cpu,
            Device::Meta => DispatchKey::Meta,
            Device::Cuda(_) => DispatchKey::Cuda,
            Device::PrivateUse1(_) => DispatchKey::PrivateUse1,
        }
    }
    /// The name used in native_functions.yaml and in error messages.
    pub const fn name(self) -> &'static str {
        match self {
            DispatchKey::Cpu => "CPU",
            DispatchKey::Meta => "Meta",
            DispatchKey::Cuda => "CUDA",
            DispatchKey::PrivateUse1 => "PrivateUse1",
            DispatchKey::Autograd => "Autograd",
            DispatchKey::AutogradPrivateUse1 => "AutogradPrivateUse1",
            DispatchKey::Autocast => "Autocast",
        }
    }
    pub fn from_name(s: &str) -> Option<DispatchKey> {
        Self::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl fmt::Display for DispatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of dispatch keys as a bitset; the highest set bit is the key that runs.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct KeySet(pub u32);

impl KeySet {
    pub const EMPTY: KeySet = KeySet(0);
    pub const fn of(k: DispatchKey) -> KeySet {
        KeySet(1 << k as u32)
    }
    /// The keys every ordinary tensor on `device` carries: its backend, Autograd (a fallthrough
    /// until autograd kernels are registered, so it costs nothing) and, on the devices autocast
    /// serves (all but Meta), Autocast. Autocast is in every thread's exclude set
    /// ([`KeySet::DEFAULT_EXCLUDED`]) until an autocast region removes it, as in PyTorch, where
    /// "autocast is enabled" means "the Autocast key is not excluded".
    pub const fn for_device(d: Device) -> KeySet {
        let layers = match d {
            Device::Meta => Self::of(DispatchKey::Autograd).0,
            Device::PrivateUse1(_) => Self::AUTOGRAD.0 | Self::of(DispatchKey::Autocast).0,
            _ => Self::of(DispatchKey::Autograd).0 | Self::of(DispatchKey::Autocast).0,
        };
        KeySet(Self::of(DispatchKey::for_device(d)).0 | layers)
    }
    /// Every autograd key: what kernels exclude to run "below autograd" (redispatch to the
    /// backend), and what inference mode excludes.
    pub const AUTOGRAD: KeySet =
        KeySet(Self::of(DispatchKey::Autograd).0 | Self::of(DispatchKey::AutogradPrivateUse1).0);
    /// The exclude set a thread starts with: Autocast, which [`crate::autocast`] regions remove.
    pub const DEFAULT_EXCLUDED: KeySet = KeySet::of(DispatchKey::Autocast);
    #[inline]
    pub const fn union(self, o: KeySet) -> KeySet {
        KeySet(self.0 | o.0)
    }
    #[inline]
    pub const fn remove(self, o: KeySet) -> KeySet {
        KeySet(self.0 & !o.0)
    }
    #[inline]
    pub const fn contains(self, k: DispatchKey) -> bool {
        self.0 & (1 << k as u32) != 0
    }
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The highest-priority key in the set.
    #[inline]
    pub fn highest(self) -> Option<DispatchKey> {
        if self.0 == 0 {
            None
        } else {
            Some(DispatchKey::from_index(31 - self.0.leading_zeros() as usize))
        }
    }
    /// The highest-priority backend key in the set.
    pub fn highest_backend(self) -> Option<DispatchKey> {
        KeySet(self.0 & 0b1111).highest()
    }
    pub fn iter(self) -> impl Iterator<Item = DispatchKey> {
        DispatchKey::ALL.into_iter().filter(move |k| self.contains(*k))
    }
}

impl fmt::Debug for KeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl From<DispatchKey> for KeySet {
    fn from(k: DispatchKey) -> Self {
        KeySet::of(k)
    }
}
