//! `autogen:`: out= overloads the generator derives from a functional entry, as torchgen's
//! `native_function_generation` does.
//!
//! ```yaml
//! - func: kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
//!   dispatch:
//!     CPU: kthvalue
//!   autogen: kthvalue.values
//! ```
//!
//! adds the entry `kthvalue.values(Tensor self, int k, int dim=-1, bool keepdim=False, *,
//! Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)`, with a
//! `CompositeExplicitAutograd` kernel that the registration emitter writes: the functional
//! operator's results, written into the out= tensors (`oxten::backend::write_autogen_out`:
//! resized as `resize_output` resizes, after the out= checks of PyTorch's structured kernels).
//!
//! The out= arguments are named `out` for one return, after the returns where several returns
//! all have names (as PyTorch names its hand-written ones: `values`, `indices`; `min`, `max`),
//! and `out0`, `out1` … otherwise (torchgen's names). A factory's TensorOptions arguments
//! (`dtype`, `layout`, `device`, `pin_memory`) are dropped: `zeros.out(int[] size, *, Tensor(a!)
//! out)` creates in `out`'s dtype and on its device. Only functional operators whose returns are
//! all `Tensor`, and whose arguments carry no alias annotations, have such a form.

use super::function::{NativeFunction, Variant};
use crate::backend::DispatchKey;
use crate::model::{Argument, BaseTy, FunctionSchema, OperatorName, Return, SchemaKind, Type};

/// A factory's TensorOptions arguments (type and name; the dtype's default may be a dtype, as
/// `tril_indices`' `dtype=long`), which its out= form drops (the kernel passes `out`'s dtype and
/// device instead).
pub const TENSOR_OPTIONS: [&str; 4] = ["ScalarType? dtype", "Layout? layout", "Device? device", "bool? pin_memory"];

/// Whether `a` is one of the [`TENSOR_OPTIONS`] (whatever its default).
fn is_tensor_option(a: &Argument) -> bool {
    let printed = a.to_string();
    let declared = printed.split('=').next().unwrap_or_default();
    TENSOR_OPTIONS.contains(&declared)
}

/// The out= schema named `name` derived from the functional schema `f`.
pub fn out_schema(f: &FunctionSchema, name: &OperatorName) -> Result<FunctionSchema, String> {
    if f.kind() != SchemaKind::Functional {
        return Err(format!("`autogen` derives out= overloads from functional operators; `{}` is not one", f.name));
    }
    if name.name.base != f.name.name.base || name.name.inplace || name.overload.is_empty() {
        return Err(format!("`autogen` name `{name}` must be `{}.<overload>`", f.name.name.base));
    }
    if f.returns.is_empty() || f.returns.iter().any(|r| r.ty != Type::Base(BaseTy::Tensor)) {
        return Err(format!("`autogen` needs every return of `{}` to be a `Tensor`", f.name));
    }
    if f.arguments.flat_all().iter().any(|a| a.annotation.is_some()) {
        return Err(format!("`autogen`: `{}` has arguments with alias annotations (a view has no out= form)", f.name));
    }
    if f.returns.len() > 26 {
        return Err(format!("`autogen`: `{}` has more returns than alias sets", f.name));
    }
    let named = f.returns.len() > 1 && f.returns.iter().all(|r| r.name.is_some());
    let mut arguments = f.arguments.clone();
    if arguments.kwarg_only.iter().filter(|a| is_tensor_option(a)).count() == TENSOR_OPTIONS.len() {
        // A factory's out= form takes its dtype, layout and device from `out` (torchgen drops
        // the TensorOptions arguments).
        arguments.kwarg_only.retain(|a| !is_tensor_option(a));
    }
    let mut returns = Vec::new();
    for (i, r) in f.returns.iter().enumerate() {
        let set = char::from(b'a' + i as u8);
        let arg = match (&r.name, f.returns.len()) {
            (_, 1) => "out".to_string(),
            (Some(n), _) if named => n.clone(),
            _ => format!("out{i}"),
        };
        arguments.out.push(Argument::parse(&format!("Tensor({set}!) {arg}"))?);
        let ret = if named { format!("Tensor({set}!) {arg}") } else { format!("Tensor({set}!)") };
        returns.push(Return::parse(&ret)?);
    }
    // Printed and parsed again, so that the schema's invariants (unique argument names …) hold.
    FunctionSchema::parse(&FunctionSchema { name: name.clone(), arguments, returns }.to_string())
}

/// The entries `f`'s `autogen:` derives.
pub fn derive(f: &NativeFunction) -> Result<Vec<NativeFunction>, String> {
    f.autogen
        .iter()
        .map(|name| {
            let func = out_schema(&f.func, name)?;
            let kernel = format!("{}_{}", name.name.base, name.overload);
            Ok(NativeFunction {
                func,
                loc: f.loc.clone(),
                variants: [Variant::Function].into(),
                dispatch: [(DispatchKey::CompositeExplicitAutograd, kernel)].into(),
                structured: false,
                structured_delegate: None,
                structured_inherits: None,
                precomputed: Vec::new(),
                tags: f.tags.clone(),
                device_check: f.device_check,
                pointwise: None,
                pointwise_check: None,
                pointwise_operands: None,
                pointwise_constants: Vec::new(),
                autocast: Default::default(),
                positional_defaults: f.positional_defaults,
                per_tensor: None,
                doc: None,
                autogen: Vec::new(),
                generated_from: Some(f.func.name.clone()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derived(func: &str, name: &str) -> Result<String, String> {
        let f = FunctionSchema::parse(func).unwrap();
        out_schema(&f, &OperatorName::parse(name).unwrap()).map(|s| s.to_string())
    }

    #[test]
    fn out_arguments_are_named_as_pytorch_names_them() {
        assert_eq!(
            derived("take(Tensor self, Tensor index) -> Tensor", "take.out").unwrap(),
            "take.out(Tensor self, Tensor index, *, Tensor(a!) out) -> Tensor(a!)"
        );
        assert_eq!(
            derived("kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)", "kthvalue.values")
                .unwrap(),
            "kthvalue.values(Tensor self, int k, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)"
        );
        assert_eq!(
            derived(
                "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
                "zeros_like.out"
            )
            .unwrap(),
            "zeros_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)"
        );
        assert_eq!(
            derived(
                "var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
                "var_mean.correction_out"
            )
            .unwrap(),
            "var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))"
        );
    }

    #[test]
    fn forms_without_an_out_variant_are_refused() {
        let e = derived("take(Tensor self, Tensor index) -> Tensor", "put.out").unwrap_err();
        assert!(e.contains("must be `take.<overload>`"), "{e}");
        let e =
            derived("split(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]", "split.out").unwrap_err();
        assert!(e.contains("to be a `Tensor`"), "{e}");
        let e = derived("t(Tensor(a) self) -> Tensor(a)", "t.out").unwrap_err();
        assert!(e.contains("alias annotations"), "{e}");
        let e = derived("abs_(Tensor(a!) self) -> Tensor(a!)", "abs_.out").unwrap_err();
        assert!(e.contains("not one"), "{e}");
        let e = derived("take(Tensor self, Tensor out) -> Tensor", "take.out").unwrap_err();
        assert!(e.contains("out"), "{e}");
    }
}
