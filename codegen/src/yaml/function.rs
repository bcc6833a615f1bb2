//! [`NativeFunction`]: one validated entry of `native_functions.yaml`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::backend::DispatchKey;
use crate::model::{FunctionSchema, OperatorName};

use super::loc::Loc;

/// How an operator is exposed in the generated API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// A free function, `oxten::add(&a, &b)`.
    Function,
    /// A `Tensor` method, `a.add(&b)`; `self` is the receiver.
    Method,
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Variant::Function => "function",
            Variant::Method => "method",
        })
    }
}

/// Whether generated code checks that all Tensor arguments share a device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceCheck {
    /// All Tensor arguments must be on the same device (the default).
    #[default]
    ExactSame,
    /// No check (e.g. TensorIterator ops, which check for themselves).
    NoCheck,
}

impl fmt::Display for DeviceCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceCheck::ExactSame => "ExactSame",
            DeviceCheck::NoCheck => "NoCheck",
        })
    }
}

/// `autocast:`, the cast policy of an operator's Autocast kernel (PyTorch's `CastPolicy`, whose
/// per-operator lists live in `autocast_mode.cpp`; here they are a field of the entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AutocastPolicy {
    /// Cast floating arguments to the region's lower-precision dtype (bf16 / f16).
    LowerPrecisionFp,
    /// Cast floating arguments to f32.
    Fp32,
    /// Set the `dtype=` argument to f32 when it is unset and the first argument is eligible.
    Fp32SetOptDtype,
    /// Cast floating arguments to the widest of their dtypes (f32 over lower precision).
    Promote,
}

impl AutocastPolicy {
    /// Every policy, in the order messages list them.
    pub const ALL: [AutocastPolicy; 4] = [
        AutocastPolicy::LowerPrecisionFp,
        AutocastPolicy::Fp32,
        AutocastPolicy::Fp32SetOptDtype,
        AutocastPolicy::Promote,
    ];

    /// The spelling in `native_functions.yaml` (PyTorch's `CastPolicy` names).
    pub fn name(self) -> &'static str {
        match self {
            AutocastPolicy::LowerPrecisionFp => "lower_precision_fp",
            AutocastPolicy::Fp32 => "fp32",
            AutocastPolicy::Fp32SetOptDtype => "fp32_set_opt_dtype",
            AutocastPolicy::Promote => "promote",
        }
    }

    /// The policy spelled `name`, if any.
    pub fn from_name(name: &str) -> Option<AutocastPolicy> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for AutocastPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `autocast:` of one entry: a policy per device type, as PyTorch keeps one list per device
/// type (`autocast: fp32` sets both; `autocast: {CUDA: fp32}` only CUDA's). Out-of-tree
/// (PrivateUse1) backends follow the CUDA lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AutocastPolicies {
    /// The policy on CPU tensors.
    pub cpu: Option<AutocastPolicy>,
    /// The policy on CUDA (and PrivateUse1) tensors.
    pub cuda: Option<AutocastPolicy>,
}

impl AutocastPolicies {
    /// The device types an entry may name, in order.
    pub const DEVICE_TYPES: [&'static str; 2] = ["CPU", "CUDA"];

    /// The same policy on every device type.
    pub fn everywhere(p: AutocastPolicy) -> AutocastPolicies {
        AutocastPolicies { cpu: Some(p), cuda: Some(p) }
    }

    /// Whether no device type has a policy (the Autocast key falls through).
    pub fn is_empty(&self) -> bool {
        self.cpu.is_none() && self.cuda.is_none()
    }

    /// The policy of device type `name` (`CPU` or `CUDA`).
    pub fn get(&self, name: &str) -> Option<AutocastPolicy> {
        match name {
            "CPU" => self.cpu,
            "CUDA" => self.cuda,
            _ => None,
        }
    }

    /// Sets the policy of device type `name`; false for an unknown name.
    pub fn set(&mut self, name: &str, p: AutocastPolicy) -> bool {
        match name {
            "CPU" => self.cpu = Some(p),
            "CUDA" => self.cuda = Some(p),
            _ => return false,
        }
        true
    }

    /// The policies that are set, with their device type.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, AutocastPolicy)> + '_ {
        Self::DEVICE_TYPES.into_iter().filter_map(|d| self.get(d).map(|p| (d, p)))
    }
}

/// One operator entry of `native_functions.yaml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeFunction {
    /// The parsed `func:` schema.
    pub func: FunctionSchema,
    /// Where the entry starts.
    pub loc: Loc,
    /// `variants:`; `{Function}` when absent.
    pub variants: BTreeSet<Variant>,
    /// `dispatch:` with comma lists expanded (`CPU, CUDA: k` gives `CPU -> k`
    /// and `CUDA -> k`). Holds only what the file says: an entry with no
    /// `dispatch:` has an empty map (see [`NativeFunction::has_composite_kernel`]).
    pub dispatch: BTreeMap<DispatchKey, String>,
    /// `structured: True` (only on out= overloads).
    pub structured: bool,
    /// `structured_delegate:`, the structured out= overload that implements
    /// this functional / inplace overload.
    pub structured_delegate: Option<OperatorName>,
    /// `structured_inherits:`, the base of the generated meta type
    /// (e.g. `TensorIteratorBase`).
    pub structured_inherits: Option<String>,
    /// `precomputed:` lines, as written (e.g. `kernel_size -> int kH, int kW`).
    pub precomputed: Vec<String>,
    /// `tags:`, as a list whether written as a string or a list.
    pub tags: Vec<String>,
    /// `device_check:`; `ExactSame` when absent.
    pub device_check: DeviceCheck,
    /// `pointwise:`, an expression string carried verbatim.
    pub pointwise: Option<String>,
    /// `pointwise_check:`, a hand-written argument check that the generated meta function of a
    /// pointwise op runs first (e.g. `sub` rejecting bool tensors).
    pub pointwise_check: Option<String>,
    /// `pointwise_operands:`, the order in which a pointwise op's operands enter its
    /// TensorIterator (schema order when absent). The first operand's layout decides the
    /// output's when input layouts differ, so this follows the order of PyTorch's meta function
    /// (e.g. `threshold_backward` builds from `self`, then `grad_output`).
    pub pointwise_operands: Option<Vec<String>>,
    /// `pointwise_constants:`, scalar arguments that are per-call constants of a pointwise op's
    /// loop, converted to the compute dtype, rather than operands that take part in type
    /// promotion (PyTorch's `addcmul` casts `value` to the tensors' dtype). `alpha` always is one.
    pub pointwise_constants: Vec<String>,
    /// `autocast:`, the operator's cast policy under autocast per device type; none (the
    /// default) makes the Autocast key a fallthrough for it.
    pub autocast: AutocastPolicies,
    /// `positional_defaults:`, how many of the leading defaulted positional arguments the short
    /// API forms take positionally (`cat(tensors, dim)`); the rest go in the options struct.
    pub positional_defaults: usize,
    /// `per_tensor:`, for a `_foreach_*` operator, the per-tensor operator its autograd applies
    /// at each index when it is not `_foreach_` stripped from its name (`_foreach_norm.Scalar`
    /// → `linalg_vector_norm`); see [`crate::emit::foreach_autograd`].
    pub per_tensor: Option<OperatorName>,
    /// `doc:`, the operator's documentation, shared by its overloads and variants that have none.
    pub doc: Option<OpDoc>,
    /// `autogen:`, the out= overloads the generator derives from this functional entry (with a
    /// generated `CompositeExplicitAutograd` kernel; see [`super::autogen`]).
    pub autogen: Vec<OperatorName>,
    /// On an entry `autogen:` derived, the functional entry it was derived from; its
    /// `CompositeExplicitAutograd` kernel is then generated, not hand-written.
    pub generated_from: Option<OperatorName>,
}

/// `doc:`, an operator's documentation as the generated rustdoc shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpDoc {
    /// `summary:`, one line.
    pub summary: String,
    /// `args:`, one line per argument, in the order written.
    pub args: Vec<(String, String)>,
    /// `example:`, Rust code run by the tests (`tests/tests/yaml_examples.rs`).
    pub example: Option<String>,
    /// The overload the doc was written on, when this entry shares another's (`add_.Tensor`
    /// shows `add.Tensor`'s doc); `None` where it is written.
    pub inherited_from: Option<String>,
}

impl NativeFunction {
    /// Whether this operator has a `CompositeImplicitAutograd` kernel: one
    /// listed in `dispatch:`, or the implicit one an entry gets when it has no
    /// `dispatch:` and is neither `structured` nor a structured delegate.
    pub fn has_composite_implicit_kernel(&self) -> bool {
        self.dispatch.contains_key(&DispatchKey::CompositeImplicitAutograd)
            || (self.dispatch.is_empty() && !self.is_structured_group_member())
    }

    /// Whether `dispatch:` lists a `CompositeExplicitAutograd` kernel.
    pub fn has_composite_explicit_kernel(&self) -> bool {
        self.dispatch.contains_key(&DispatchKey::CompositeExplicitAutograd)
    }

    /// Whether the operator has a composite kernel, implicit or explicit
    /// (see [`NativeFunction::has_composite_implicit_kernel`]).
    pub fn has_composite_kernel(&self) -> bool {
        self.has_composite_implicit_kernel() || self.has_composite_explicit_kernel()
    }

    /// Whether the entry takes part in a structured group: it is
    /// `structured: True` or has a `structured_delegate`.
    pub fn is_structured_group_member(&self) -> bool {
        self.structured || self.structured_delegate.is_some()
    }
}
