//! Emits `autocast.rs` of the `oxten` crate: one Autocast-key kernel per operator whose
//! `native_functions.yaml` entry has an `autocast:` policy, and `register_autocast()`.
//!
//! Each kernel follows PyTorch's `WrapFunction_<CastPolicy, …>` (`autocast_mode.h`):
//!
//! 1. `AutocastCall::enter` (`oxten_runtime::autocast`) reads the autocast state of the device type of the first tensor
//!    argument and excludes the Autocast key until the kernel returns;
//! 2. the policy of that device type (CPU's, or CUDA's for CUDA and PrivateUse1 tensors: an entry
//!    may give them different policies, and the kernel then branches on
//!    `AutocastCall::follows_cuda_lists`) gives the target dtype (`lower_precision_fp`: the region's dtype; `fp32`: f32;
//!    `promote`: the widest of the eligible arguments' dtypes), and every tensor argument is cast
//!    to it when eligible (floating, on that device type, not f64; the cast cache serves f32
//!    weights) — or, for `fp32_set_opt_dtype`, an unset `dtype=` becomes f32;
//! 3. the operator is called again through its typed entry point, which dispatches below
//!    autocast (to Autograd, which records the casts).
//!
//! Operators without a policy get no kernel: the Autocast key falls through for them at no cost.
//! The validation in `yaml/entry.rs` guarantees that policies sit only on functional overloads
//! with a tensor argument (and, for `fp32_set_opt_dtype`, a first `Tensor` and a `dtype`).

use super::names::TensorArg;
use super::sig::{OpSig, RustArg};
use crate::yaml::{AutocastPolicies, AutocastPolicy};
use std::fmt::Write;

/// What the kernel passes to the `ops::<op>::call` for `a` after casting.
fn forwarded(a: &RustArg, cast: bool) -> String {
    if !cast {
        return a.ident.clone();
    }
    match a.tensor_kind() {
        TensorArg::One | TensorArg::List | TensorArg::OptionalList => format!("&{}", a.ident),
        TensorArg::Optional => format!("{}.as_ref()", a.ident),
        TensorArg::No => a.ident.clone(),
    }
}

/// The statement casting tensor argument `a` to `to` (shadowing it), if it is a tensor.
fn cast_stmt(a: &RustArg) -> Option<String> {
    let helper = match a.tensor_kind() {
        TensorArg::One => "cast",
        TensorArg::Optional => "cast_opt",
        TensorArg::List => "cast_list",
        TensorArg::OptionalList => "cast_opt_list",
        TensorArg::No => return None,
    };
    Some(format!("let {0} = ac.{helper}({0}, to)?;", a.ident))
}

/// An `Option<&Tensor>` expression for the first tensor of argument `a`.
fn first_tensor(a: &RustArg) -> String {
    match a.tensor_kind() {
        TensorArg::One => format!("Some({})", a.ident),
        TensorArg::Optional => a.ident.clone(),
        TensorArg::List => format!("{}.first()", a.ident),
        _ => format!("{}.iter().flatten().next()", a.ident),
    }
}

/// Every tensor argument as one `IntoIterator<Item = &Tensor>` (for `promote`).
fn all_tensors(tensors: &[&RustArg]) -> String {
    let singles: Vec<&str> =
        tensors.iter().filter(|a| matches!(a.tensor_kind(), TensorArg::One)).map(|a| a.ident.as_str()).collect();
    let others: Vec<String> = tensors
        .iter()
        .filter_map(|a| match a.tensor_kind() {
            TensorArg::Optional => Some(a.ident.clone()),
            TensorArg::List => Some(format!("{}.iter()", a.ident)),
            TensorArg::OptionalList => Some(format!("{}.iter().flatten()", a.ident)),
            _ => None,
        })
        .collect();
    match (singles.is_empty(), others.len()) {
        (true, 1) => others[0].clone(),
        (_, 0) => format!("[{}]", singles.join(", ")),
        _ => {
            let mut e = format!("[{}].into_iter()", singles.join(", "));
            for o in others {
                let _ = write!(e, ".chain({o})");
            }
            e
        }
    }
}

/// The doc line of each policy.
fn policy_doc(p: AutocastPolicy) -> &'static str {
    match p {
        AutocastPolicy::LowerPrecisionFp => "casts its floating arguments to the region's lower-precision dtype",
        AutocastPolicy::Fp32 => "casts its floating arguments to f32",
        AutocastPolicy::Fp32SetOptDtype => "computes in f32 (sets an unset `dtype=` to f32 when `self` is eligible)",
        AutocastPolicy::Promote => {
            "casts its floating arguments to the widest of their dtypes (f32 over the region's dtype)"
        }
    }
}

/// The statements of one policy's branch, ending in the call below autocast; `None` calls the
/// operator as it is.
fn policy_body(s: &mut String, sig: &OpSig, tensors: &[&RustArg], policy: Option<AutocastPolicy>) {
    let cast =
        matches!(policy, Some(AutocastPolicy::LowerPrecisionFp | AutocastPolicy::Fp32 | AutocastPolicy::Promote));
    match policy {
        Some(AutocastPolicy::LowerPrecisionFp) => s.push_str("let to = ac.lower_precision_fp();\n"),
        Some(AutocastPolicy::Fp32) => s.push_str("let to = ac.fp32();\n"),
        Some(AutocastPolicy::Promote) => {
            let _ = writeln!(s, "let to = ac.promote({})?;", all_tensors(tensors));
        }
        Some(AutocastPolicy::Fp32SetOptDtype) => {
            let first = tensors.first().map_or("self_", |a| a.ident.as_str());
            let _ = writeln!(s, "let dtype = ac.set_opt_dtype({first}, dtype);");
        }
        None => {}
    }
    if cast {
        for a in tensors {
            if let Some(stmt) = cast_stmt(a) {
                let _ = writeln!(s, "{stmt}");
            }
        }
    }
    let args: Vec<String> = sig.args.iter().map(|a| forwarded(a, cast)).collect();
    let _ = writeln!(s, "ops::{}::call({})", sig.name, args.join(", "));
}

/// What a device type's policy does, for the kernel's doc comment.
fn device_doc(device: &str, p: Option<AutocastPolicy>) -> String {
    match p {
        Some(p) => format!("on {device} (`{p}`) it {}", policy_doc(p)),
        None => format!("on {device} it casts nothing"),
    }
}

/// One kernel; returns its name.
fn emit_kernel(s: &mut String, sig: &OpSig, policies: AutocastPolicies) -> String {
    let name = format!("{}_autocast", sig.name);
    let inputs: Vec<&RustArg> = sig.args.iter().filter(|a| !a.is_out).collect();
    let tensors: Vec<&RustArg> = inputs.iter().copied().filter(|a| !matches!(a.tensor_kind(), TensorArg::No)).collect();
    let (policy, what) = if policies.cpu == policies.cuda {
        let p = policies.cpu.expect("an entry with autocast kernels has a policy");
        (format!("policy `{p}`, "), policy_doc(p).to_string())
    } else {
        (
            String::new(),
            format!("{}; {}", device_doc("CPU", policies.cpu), device_doc("CUDA and PrivateUse1", policies.cuda)),
        )
    };
    let _ = writeln!(
        s,
        "/// Autocast kernel of `{}` ({policy}native_functions.yaml line {}):\n/// {what}, then runs the operator below autocast.",
        sig.f.func, sig.f.loc.line,
    );
    let _ = writeln!(s, "fn {name}({}) -> Result<{}> {{", sig.params(), sig.ret);
    let first = tensors.first().map_or("None".to_string(), |a| first_tensor(a));
    let _ = writeln!(s, "let ac = AutocastCall::enter({first});");
    if policies.cpu == policies.cuda {
        policy_body(s, sig, &tensors, policies.cpu);
    } else {
        s.push_str("if ac.follows_cuda_lists() {\n");
        policy_body(s, sig, &tensors, policies.cuda);
        s.push_str("} else {\n");
        policy_body(s, sig, &tensors, policies.cpu);
        s.push_str("}\n");
    }
    s.push_str("}\n");
    name
}

/// A policy as a Rust `Option<&str>` literal, for the table.
fn policy_literal(p: Option<AutocastPolicy>) -> String {
    p.map_or("None".into(), |p| format!("Some({:?})", p.name()))
}

/// Emits the whole file.
pub fn emit_autocast(sigs: &[OpSig]) -> String {
    let mut s = String::new();
    s.push_str(
        "#[allow(unused_imports)] use oxten_runtime::{DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor};\n\
         #[allow(unused_imports)] use oxten_runtime::Generator;\n\
         #[allow(unused_imports)] use oxten_runtime::autocast::AutocastCall;\n\
         #[allow(unused_imports)] use oxten_runtime::dispatch::DispatchKey;\n\
         #[allow(unused_imports)] use oxten_runtime::ops;\n",
    );
    let mut regs = String::new();
    let mut table = String::new();
    for sig in sigs {
        let policies = sig.f.autocast;
        if policies.is_empty() {
            continue;
        }
        let name = emit_kernel(&mut s, sig, policies);
        let _ = writeln!(regs, "ops::{}::OP.register(DispatchKey::Autocast, {name});", sig.name);
        let _ = writeln!(
            table,
            "AutocastEntry {{ op: {:?}, cpu: {}, cuda: {}, line: {} }},",
            sig.schema_name,
            policy_literal(policies.cpu),
            policy_literal(policies.cuda),
            sig.f.loc.line
        );
    }
    let _ = writeln!(
        s,
        "/// Registers the Autocast kernel of every operator with an `autocast:` policy; every other\n/// operator falls through the Autocast key.\npub fn register_autocast() {{\n{regs}}}"
    );
    s.push_str("/// One operator with an autocast policy, for tests and tooling.\n#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub struct AutocastEntry {\n/// The operator (`mm`, `conv2d.padding`).\npub op: &'static str,\n/// Its policy on CPU as written in native_functions.yaml (`lower_precision_fp`, `fp32`, `fp32_set_opt_dtype`, `promote`).\npub cpu: Option<&'static str>,\n/// Its policy on CUDA (and PrivateUse1).\npub cuda: Option<&'static str>,\n/// The line of its entry in native_functions.yaml.\npub line: usize,\n}\n");
    let _ = writeln!(
        s,
        "/// Every operator with an autocast policy, in file order.\npub const AUTOCAST_OPS: &[AutocastEntry] = &[\n{table}];"
    );
    s
}
