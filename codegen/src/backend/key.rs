//! The dispatch keys a `dispatch:` block may name, as a type.

use std::fmt;

/// A key of a `dispatch:` block: a backend (CPU, CUDA, Meta, PrivateUse1) or an alias key
/// whose kernel serves every backend (the two composites). The order is the order the
/// generator emits in and error messages list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DispatchKey {
    /// Host kernels.
    Cpu,
    /// CUDA kernels (compiled only with the `cuda` cargo feature).
    Cuda,
    /// Shape-only kernels that allocate nothing.
    Meta,
    /// An out-of-tree backend; its kernels come from that backend's own YAML.
    PrivateUse1,
    /// A decomposition into other operators that autograd differentiates through.
    CompositeImplicitAutograd,
    /// A backend-independent kernel with its own derivative formula.
    CompositeExplicitAutograd,
}

impl DispatchKey {
    /// Every key, in emission order.
    pub const ALL: [DispatchKey; 6] = [
        DispatchKey::Cpu,
        DispatchKey::Cuda,
        DispatchKey::Meta,
        DispatchKey::PrivateUse1,
        DispatchKey::CompositeImplicitAutograd,
        DispatchKey::CompositeExplicitAutograd,
    ];

    /// The backend keys whose kernels a structured delegate gets from its out= op.
    pub const STRUCTURED_BACKENDS: [DispatchKey; 3] = [DispatchKey::Cpu, DispatchKey::Cuda, DispatchKey::Meta];

    /// The name written in the YAML (`CPU`, `CompositeExplicitAutograd`, …).
    pub const fn name(self) -> &'static str {
        match self {
            DispatchKey::Cpu => "CPU",
            DispatchKey::Cuda => "CUDA",
            DispatchKey::Meta => "Meta",
            DispatchKey::PrivateUse1 => "PrivateUse1",
            DispatchKey::CompositeImplicitAutograd => "CompositeImplicitAutograd",
            DispatchKey::CompositeExplicitAutograd => "CompositeExplicitAutograd",
        }
    }

    /// The key named `name` in the YAML.
    pub fn parse(name: &str) -> Option<DispatchKey> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the key is an alias serving every backend rather than one backend.
    pub const fn is_composite(self) -> bool {
        matches!(self, DispatchKey::CompositeImplicitAutograd | DispatchKey::CompositeExplicitAutograd)
    }

    /// The suffix of the kernel traits declared for this key (`GeluOutCpu`, `ToCopyCompositeExplicit`).
    pub const fn trait_suffix(self) -> &'static str {
        match self {
            DispatchKey::Cpu => "Cpu",
            DispatchKey::Cuda => "Cuda",
            DispatchKey::Meta => "Meta",
            DispatchKey::PrivateUse1 => "PrivateUse1",
            DispatchKey::CompositeImplicitAutograd => "CompositeImplicit",
            DispatchKey::CompositeExplicitAutograd => "CompositeExplicit",
        }
    }

    /// The snake-case name of the key's generated modules and files (`cpu`, `composite_explicit_autograd`).
    pub const fn module(self) -> &'static str {
        match self {
            DispatchKey::Cpu => "cpu",
            DispatchKey::Cuda => "cuda",
            DispatchKey::Meta => "meta",
            DispatchKey::PrivateUse1 => "private_use1",
            DispatchKey::CompositeImplicitAutograd => "composite_implicit_autograd",
            DispatchKey::CompositeExplicitAutograd => "composite_explicit_autograd",
        }
    }

    /// The runtime's `RegistrationKey` expression for kernels of this key.
    pub const fn registration_key(self) -> &'static str {
        match self {
            DispatchKey::Cpu => "RegistrationKey::Key(DispatchKey::Cpu)",
            DispatchKey::Cuda => "RegistrationKey::Key(DispatchKey::Cuda)",
            DispatchKey::Meta => "RegistrationKey::Key(DispatchKey::Meta)",
            DispatchKey::PrivateUse1 => "RegistrationKey::Key(DispatchKey::PrivateUse1)",
            DispatchKey::CompositeImplicitAutograd => "RegistrationKey::CompositeImplicitAutograd",
            DispatchKey::CompositeExplicitAutograd => "RegistrationKey::CompositeExplicitAutograd",
        }
    }
}

impl fmt::Display for DispatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
