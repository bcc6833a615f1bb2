//! Grouping the functional, inplace, mutable and out= variants of one
//! operator (e.g. `add.Tensor`, `add_.Tensor`, `add.out`) by signature.

use std::collections::HashMap;

use crate::model::{FunctionSchema, SchemaKind};

use super::function::NativeFunction;

/// The variants of one operator that share a
/// [`signature`](FunctionSchema::signature). Every slot is optional; an
/// operator with a single variant forms a group of one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NativeFunctionsGroup {
    /// The functional variant (`add.Tensor`).
    pub functional: Option<NativeFunction>,
    /// The inplace variant (`add_.Tensor`).
    pub inplace: Option<NativeFunction>,
    /// The mutable (non-inplace, non-out) variant.
    pub mutable: Option<NativeFunction>,
    /// The out= variant (`add.out`).
    pub out: Option<NativeFunction>,
}

impl NativeFunctionsGroup {
    /// The present members, in the order functional, inplace, mutable, out.
    pub fn members(&self) -> Vec<&NativeFunction> {
        [&self.functional, &self.inplace, &self.mutable, &self.out].into_iter().flatten().collect()
    }

    /// The operator's base name without inplace `_` or overload (`add`),
    /// taken from the first present member.
    pub fn root_name(&self) -> String {
        self.members().first().map(|nf| nf.func.name.name.base.clone()).unwrap_or_default()
    }

    /// Whether the group has a `structured: True` out= variant.
    pub fn structured(&self) -> bool {
        self.out.as_ref().is_some_and(|o| o.structured)
    }

    /// The out= variant, if any.
    pub fn out_fn(&self) -> Option<&NativeFunction> {
        self.out.as_ref()
    }

    /// The slot a function of `kind` goes into.
    fn slot(&mut self, kind: SchemaKind) -> &mut Option<NativeFunction> {
        match kind {
            SchemaKind::Functional => &mut self.functional,
            SchemaKind::Inplace => &mut self.inplace,
            SchemaKind::Mutable => &mut self.mutable,
            SchemaKind::Out => &mut self.out,
        }
    }
}

/// Groups functions by [`FunctionSchema::signature`], in order of each
/// group's first member in `fns`.
///
/// Each function lands in exactly one group. When a signature's group
/// already holds a function of the same kind (two overloads with identical
/// signatures), the later function goes to the next group of that signature
/// with a free slot, or starts a new one.
pub fn group_native_functions(fns: &[NativeFunction]) -> Vec<NativeFunctionsGroup> {
    let mut groups: Vec<NativeFunctionsGroup> = Vec::new();
    let mut by_signature: HashMap<FunctionSchema, Vec<usize>> = HashMap::new();
    for nf in fns {
        let kind = nf.func.kind();
        let candidates = by_signature.entry(nf.func.signature()).or_default();
        let free = candidates.iter().copied().find(|&i| groups[i].slot(kind).is_none());
        let index = free.unwrap_or_else(|| {
            groups.push(NativeFunctionsGroup::default());
            candidates.push(groups.len() - 1);
            groups.len() - 1
        });
        *groups[index].slot(kind) = Some(nf.clone());
    }
    groups
}
