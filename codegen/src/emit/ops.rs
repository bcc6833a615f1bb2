//! Emits the operator layer of the runtime crate: one module per operator with its typed entry
//! point (`ops::add::call`) and dispatcher handle (`ops::add::OP`), the `Tensor` methods, the free
//! functions and the options structs for defaulted arguments.

use super::names::TensorArg;
use super::sig::{OpSig, RustArg};
use crate::model::SchemaKind;
use std::fmt::Write;

/// Where the operator layer lives: oxten's runtime crate, or a downstream operator library.
#[derive(Clone, Debug)]
pub struct OpsConfig {
    /// The runtime crate's path (`crate` in the runtime itself, `::oxten::runtime` elsewhere).
    pub runtime: String,
    /// The path of the emitted `ops` module (`crate::ops`).
    pub ops: String,
    /// The namespace of the operators' names (`aten`, a library's own).
    pub namespace: String,
    /// Statements every `call` runs first (a library registers its kernels there).
    pub call_prologue: String,
    /// Attributes on the `ops`, `options` and `functions` modules (an `include!`d file cannot
    /// carry the crate-level `allow`s the runtime has).
    pub module_attrs: String,
}

impl OpsConfig {
    /// oxten's own operators, emitted into the runtime crate.
    pub fn in_tree() -> OpsConfig {
        OpsConfig {
            runtime: "crate".into(),
            ops: "crate::ops".into(),
            namespace: "aten".into(),
            call_prologue: String::new(),
            module_attrs: String::new(),
        }
    }
}

/// The generated operator layer (one Rust file) of oxten's runtime crate.
pub fn emit_ops(sigs: &[OpSig]) -> String {
    emit_ops_with(sigs, &OpsConfig::in_tree(), true)
}

/// The operator layer for `cfg`. The method forms are an inherent `impl Tensor` block when
/// `inherent` (only the runtime crate may write one); otherwise the caller turns them into an
/// extension trait.
pub fn emit_ops_with(sigs: &[OpSig], cfg: &OpsConfig, inherent: bool) -> String {
    let text = emit_ops_text(sigs, cfg, inherent);
    if cfg.runtime == "crate" {
        return text;
    }
    // The emitters below write the runtime's paths as `crate::…` (they were written for the
    // runtime crate); elsewhere the operator modules are `cfg.ops` and the rest the runtime's.
    const OPS: &str = "/*ops*/";
    text.replace("crate::ops::", OPS)
        .replace("crate::", &format!("{}::", cfg.runtime))
        .replace(OPS, &format!("{}::", cfg.ops))
        .replace(CALL_PROLOGUE, &cfg.call_prologue)
}

/// Where `call` runs [`OpsConfig::call_prologue`] (put in after the paths are rewritten).
const CALL_PROLOGUE: &str = "/*call prologue*/";

fn emit_ops_text(sigs: &[OpSig], cfg: &OpsConfig, inherent: bool) -> String {
    let mut s = String::new();
    s.push_str("/// One module per operator: its dispatcher handle `OP`, its kernel type `Sig` and its typed\n/// entry point `call`, which takes every argument explicitly.\n");
    s.push_str(&cfg.module_attrs);
    s.push_str("pub mod ops {\n");
    for sig in sigs {
        s.push_str(&emit_op_module(sig, cfg));
    }
    s.push_str("\n/// Every generated operator handle, for registries and tooling.\npub fn all_operators() -> Vec<&'static crate::dispatch::OperatorEntry> {\n vec![");
    for sig in sigs {
        let _ = write!(s, "&{}::OP,", sig.name);
    }
    s.push_str("]}\n");
    s.push_str("/// Every generated operator with its arguments and boxed entry point, in YAML order: what\n/// generic callers (the fuzz test, bindings) walk.\npub fn operator_infos() -> Vec<crate::dispatch::OpInfo> {\n vec![");
    for sig in sigs {
        let n = &sig.name;
        let _ = write!(
            s,
            "crate::dispatch::OpInfo {{ entry: &{n}::OP, name: {n}::NAME, args: {n}::ARGS, returns: {}, call_boxed: {n}::call_boxed }},",
            sig.nret
        );
    }
    s.push_str("]}\n}\n");
    s.push_str("/// Options structs: the defaulted arguments of an operator, for its `*_with` forms.\n");
    s.push_str(&cfg.module_attrs);
    s.push_str("pub mod options {\n#[allow(unused_imports)] use crate::{DType, Device, Layout, MemoryFormat, Scalar, Tensor};\n");
    s.push_str("#[allow(unused_imports)] use crate::Generator;\n");
    for sig in sigs.iter().filter(|s| !s.defaulted().is_empty()) {
        s.push_str(&emit_options(sig));
    }
    s.push_str("}\n");
    s.push_str("#[allow(unused_imports)] use crate::{DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor};\n");
    s.push_str("#[allow(unused_imports)] use self::options::*;\n");
    s.push_str("#[allow(unused_imports)] use crate::Generator;\n");
    s.push_str(if inherent { "impl Tensor {\n" } else { "impl TensorMethods for Tensor {\n" });
    for sig in sigs.iter().filter(|s| s.has_method()) {
        s.push_str(&emit_api(sig, true));
    }
    s.push_str("}\n");
    s.push_str("/// Free-function forms of the operators (`oxten::add(&a, &b)`).\n");
    s.push_str(&cfg.module_attrs);
    s.push_str("pub mod functions {\n#[allow(unused_imports)] use crate::{DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor};\n#[allow(unused_imports)] use super::options::*;\n");
    s.push_str("#[allow(unused_imports)] use crate::Generator;\n");
    for sig in sigs.iter().filter(|s| s.has_function()) {
        s.push_str(&emit_api(sig, false));
    }
    s.push_str("}\n");
    s
}

/// The rustdoc of an operator's user-facing forms: the YAML `doc:` summary (or the schema name),
/// PyTorch's names, the schema, then one line per argument. The example goes only on the short
/// panicking form (`example`).
fn api_doc(sig: &OpSig, method: bool, example: bool) -> String {
    let f = sig.f;
    let doc = f.doc.as_ref();
    let mut s = String::new();
    match doc {
        Some(d) => {
            let _ = writeln!(s, "/// {}", d.summary);
        }
        None => {
            let _ = writeln!(s, "/// The `{}` operator.", sig.schema_name);
        }
    }
    let name = &f.func.name;
    let py = format!("{}{}", name.name.base, if name.name.inplace { "_" } else { "" });
    let mut forms = Vec::new();
    if f.func.kind() == SchemaKind::Out {
        forms.push(format!("`torch.{py}(…, out=…)`"));
    } else {
        if sig.has_function() {
            forms.push(format!("`torch.{py}`"));
        }
        if sig.has_method() {
            forms.push(format!("`Tensor.{py}`"));
        }
    }
    let _ =
        writeln!(s, "///\n/// PyTorch: {} (`aten::{}`). Schema:\n/// `{}`", forms.join(", "), sig.schema_name, f.func);
    let self_idx = if method { sig.args.iter().position(|a| a.name == "self") } else { None };
    let lines: Vec<String> = sig
        .args
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != self_idx)
        .map(|(_, a)| {
            let text = doc.and_then(|d| d.args.iter().find(|(n, _)| *n == a.name)).map(|(_, t)| t.as_str());
            let place = if a.in_opts() { format!(" (in [`{}`])", sig.opts_name()) } else { String::new() };
            match text {
                Some(t) => format!("/// - `{}`{place}: {t}", a.text),
                None => format!("/// - `{}`{place}", a.text),
            }
        })
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(s, "///\n/// # Arguments\n{}", lines.join("\n"));
    }
    if let (true, Some(code)) = (example, doc.and_then(|d| d.example.as_deref())) {
        // `ignore`: rustdoc runs a crate's doctests against that crate alone, and these need
        // oxten's kernels; `tests/tests/yaml_examples.rs` compiles and runs them instead.
        let _ = writeln!(s, "///\n/// # Example\n/// ```ignore\n/// # use oxten::*;");
        for line in code.lines() {
            let _ = writeln!(s, "/// {line}");
        }
        s.push_str("/// ```\n");
    }
    // prettyplease keeps `///` lines verbatim; trailing spaces from empty example lines are not
    // wanted in them.
    s.lines().map(|l| format!("{}\n", l.trim_end())).collect()
}

fn emit_op_module(sig: &OpSig, cfg: &OpsConfig) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "/// `{}`", sig.f.func);
    let _ = writeln!(s, "pub mod {} {{", sig.name);
    s.push_str(
        "#[allow(unused_imports)] use crate::dispatch::{IntoIValue, KeySet, Op, Resolved, Stack, pop_returns};\n",
    );
    s.push_str("#[allow(unused_imports)] use crate::{DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor};\n");
    s.push_str("#[allow(unused_imports)] use crate::Generator;\n");
    let _ = writeln!(s, "/// The type every kernel of this operator has.\npub type Sig = {};", sig.fn_type());
    let _ = writeln!(
        s,
        "/// The operator's name as the dispatcher and errors show it.\npub const NAME: &str = \"{}\";",
        // oxten's own operators go by their bare names, as PyTorch's `aten` ones do in errors.
        if cfg.namespace == "aten" {
            sig.schema_name.clone()
        } else {
            format!("{}::{}", cfg.namespace, sig.schema_name)
        }
    );
    let _ = writeln!(
        s,
        "/// The operator's dispatcher handle: register kernels here.\npub static OP: Op<Sig> = Op::new(\"{}::{}\", {:?});",
        cfg.namespace,
        sig.schema_name,
        sig.f.func.to_string()
    );
    let _ = writeln!(s, "/// Calls the operator through the dispatcher, every argument explicit.\n#[inline]\npub fn call({}) -> Result<{}> {{", sig.params(), sig.ret);
    if !cfg.call_prologue.is_empty() {
        s.push_str(CALL_PROLOGUE);
    }
    // Key set: the union of tensor keys, or the device's keys for factories.
    let tensors = sig.tensor_args();
    if tensors.is_empty() {
        let dev = sig.args.iter().find(|a| a.name == "device");
        match dev {
            Some(d) if d.ty.starts_with("Option") => {
                let _ = writeln!(s, "let keys = KeySet::for_device({}.unwrap_or_default());", d.ident);
            }
            Some(d) => {
                let _ = writeln!(s, "let keys = KeySet::for_device({});", d.ident);
            }
            None => s.push_str("let keys = KeySet::for_device(Device::Cpu);\n"),
        }
    } else {
        s.push_str("let keys = KeySet::EMPTY");
        for a in &tensors {
            if let TensorArg::One = a.tensor_kind() {
                let _ = write!(s, ".union({}.key_set())", a.ident);
            }
        }
        s.push_str(";\n");
        for a in &tensors {
            match a.tensor_kind() {
                TensorArg::Optional => {
                    let _ = writeln!(s, "let keys = {}.map_or(keys, |t| keys.union(t.key_set()));", a.ident);
                }
                TensorArg::List => {
                    let _ = writeln!(s, "let keys = {}.iter().fold(keys, |k, t| k.union(t.key_set()));", a.ident);
                }
                TensorArg::OptionalList => {
                    let _ =
                        writeln!(s, "let keys = {}.iter().flatten().fold(keys, |k, t| k.union(t.key_set()));", a.ident);
                }
                _ => {}
            }
        }
    }
    let singles: Vec<&&RustArg> = tensors.iter().filter(|a| matches!(a.tensor_kind(), TensorArg::One)).collect();
    // Tensors only in lists (`cat`, `stack`): an empty list leaves nothing to dispatch on.
    if singles.is_empty() {
        if let Some(list) = tensors.iter().find(|a| matches!(a.tensor_kind(), TensorArg::List)) {
            let _ = writeln!(
                s,
                "if keys.is_empty() {{\n return Err(crate::Error::value(\"expected a non-empty list of Tensors for argument '{}'\").in_op(NAME));\n}}",
                list.name
            );
        }
    }
    if sig.f.device_check == crate::yaml::DeviceCheck::ExactSame && singles.len() > 1 {
        let list: Vec<&str> = singles.iter().map(|a| a.ident.as_str()).collect();
        let _ = writeln!(s, "crate::ops_support::check_same_device(NAME, &[{}])?;", list.join(", "));
    }
    let push: Vec<String> = sig.args.iter().map(|a| format!("{}.into_ivalue()", a.ident)).collect();
    let _ = writeln!(
        s,
        "// `outcome`, not `result`: an out= argument may be named `result` (`linalg_solve_ex.out`).\nlet outcome = match OP.resolve(keys) {{\n Ok(Resolved::Unboxed(f)) => f({}),\n Ok(Resolved::Boxed(boxed, _)) => {{ let mut stack: Stack = vec![{}]; boxed.call(&OP, &mut stack).and_then(|()| pop_returns(&mut stack, {})) }}\n Err(e) => Err(e),\n}};",
        sig.arg_idents(),
        push.join(", "),
        sig.nret
    );
    // In-place and out= ops record the mutation on the version counter shared with views.
    let written: Vec<&RustArg> =
        sig.args.iter().filter(|a| a.is_write && matches!(a.tensor_kind(), TensorArg::One | TensorArg::List)).collect();
    if !written.is_empty() && matches!(sig.kind(), SchemaKind::Inplace | SchemaKind::Out | SchemaKind::Mutable) {
        s.push_str("if outcome.is_ok() {\n");
        for a in written {
            if matches!(a.tensor_kind(), TensorArg::List) {
                // `_foreach_*_` ops write every tensor of the list.
                let _ = writeln!(s, "for t in {} {{ t.bump_version(); }}", a.ident);
            } else {
                let _ = writeln!(s, "{}.bump_version();", a.ident);
            }
        }
        s.push_str("}\n");
    }
    s.push_str("outcome.map_err(|e| e.in_op(NAME))\n}\n");
    s.push_str(&emit_boxed_entry(sig));
    s.push_str("}\n");
    s
}

/// The operator's argument table and boxed entry point (`ARGS`, `call_boxed`).
fn emit_boxed_entry(sig: &OpSig) -> String {
    let mut s = String::new();
    let schema = &sig.f.func.arguments;
    s.push_str("/// The arguments as the schema declares them.\npub static ARGS: &[crate::dispatch::ArgInfo] = &[\n");
    for a in schema.flat_all() {
        let _ = writeln!(
            s,
            "crate::dispatch::ArgInfo {{ name: {:?}, ty: {:?}, default: {:?}, kwarg_only: {}, out: {}, write: {} }},",
            a.name,
            a.ty.to_string(),
            a.default,
            !schema.positional.iter().any(|p| p.name == a.name),
            schema.out.iter().any(|o| o.name == a.name),
            a.is_write()
        );
    }
    s.push_str("];\n");
    let _ = writeln!(
        s,
        "/// Calls [`call`] with boxed arguments: pops one value per argument (pushed in schema\n/// order) and pushes one value per return.\npub fn call_boxed(stack: &mut Stack) -> Result<()> {{"
    );
    let binding = if sig.args.is_empty() { "_args" } else { "mut args" };
    let _ = writeln!(s, "let {binding} = crate::dispatch::take_args(stack, NAME, ARGS.len())?;");
    let mut pass = Vec::new();
    for (i, a) in sig.args.iter().enumerate() {
        let (owned, borrow) = owned_arg(&a.ty, &format!("a{i}"));
        let _ = writeln!(s, "let a{i}: {owned} = crate::dispatch::arg(&mut args, NAME, &ARGS[{i}])?;");
        pass.push(borrow);
    }
    let call = format!("call({})?", pass.join(", "));
    match sig.nret {
        0 => {
            let _ = writeln!(s, "{call};");
        }
        1 => {
            let _ = writeln!(s, "stack.push({call}.into_ivalue());");
        }
        n => {
            let names: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
            let _ = writeln!(s, "let ({}) = {call};", names.join(", "));
            for r in names {
                let _ = writeln!(s, "stack.push({r}.into_ivalue());");
            }
        }
    }
    s.push_str("Ok(())\n}\n");
    s
}

/// The owned type a boxed argument converts to, and the expression that lends it to `call` as
/// the kernel signature's (possibly borrowed) type.
fn owned_arg(ty: &str, v: &str) -> (String, String) {
    if let Some(inner) = ty.strip_prefix("&[").and_then(|t| t.strip_suffix(']')) {
        return (format!("Vec<{inner}>"), format!("&{v}"));
    }
    if let Some(inner) = ty.strip_prefix("Option<&[").and_then(|t| t.strip_suffix("]>")) {
        return (format!("Option<Vec<{inner}>>"), format!("{v}.as_deref()"));
    }
    match ty {
        "&Tensor" => ("Tensor".into(), format!("&{v}")),
        "&str" => ("String".into(), format!("&{v}")),
        "Option<&Tensor>" => ("Option<Tensor>".into(), format!("{v}.as_ref()")),
        "Option<&Generator>" => ("Option<Generator>".into(), format!("{v}.as_ref()")),
        "Option<&str>" => ("Option<String>".into(), format!("{v}.as_deref()")),
        _ => (ty.to_string(), v.to_string()),
    }
}

fn emit_options(sig: &OpSig) -> String {
    let mut s = String::new();
    let lt = if sig.opts_lifetime() { "<'a>" } else { "" };
    let _ = writeln!(s, "/// The defaulted arguments of `{}`; `Default` gives the schema's defaults.", sig.schema_name);
    let _ = writeln!(s, "#[derive(Clone, Debug)]\npub struct {}{lt} {{", sig.opts_name());
    for a in sig.defaulted() {
        let ty = if sig.opts_lifetime() { a.ty.replace('&', "&'a ") } else { a.ty.clone() };
        let _ = writeln!(s, "/// `{}`\npub {}: {ty},", a.text, a.ident);
    }
    s.push_str("}\n");
    let lt_impl = if sig.opts_lifetime() { "<'_>" } else { "" };
    let _ = writeln!(
        s,
        "impl Default for {}{lt_impl} {{\nfn default() -> Self {{\n{} {{",
        sig.opts_name(),
        sig.opts_name()
    );
    for a in sig.defaulted() {
        let _ = writeln!(s, "{}: {},", a.ident, a.default.as_deref().unwrap_or_default());
    }
    s.push_str("}\n}\n}\n");
    s
}

/// The four user-facing forms of one operator: `try_x`, `x`, and with options `try_x_with`,
/// `x_with`. As methods (`self` taken from the receiver) or as free functions.
fn emit_api(sig: &OpSig, method: bool) -> String {
    let mut s = String::new();
    let self_idx = if method { sig.args.iter().position(|a| a.name == "self") } else { None };
    let visible: Vec<&RustArg> =
        sig.args.iter().enumerate().filter(|(i, a)| Some(*i) != self_idx && !a.in_opts()).map(|(_, a)| a).collect();
    let has_opts = !sig.defaulted().is_empty();
    let recv = if method { "&self, " } else { "" };
    let params: Vec<String> = visible.iter().map(|a| format!("{}: {}", a.ident, a.api_ty())).collect();
    let params = params.join(", ");
    let call_args = |opts: bool| -> String {
        sig.args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if Some(i) == self_idx {
                    "self".to_string()
                } else if a.in_opts() {
                    if opts {
                        format!("opts.{}", a.ident)
                    } else {
                        a.default.clone().unwrap_or_default()
                    }
                } else {
                    a.api_conv()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pass: Vec<String> = visible.iter().map(|a| a.ident.clone()).collect();
    let pass = pass.join(", ");
    let (callee_prefix, sep) = if method { ("self.", "") } else { ("", "") };
    let doc = api_doc(sig, method, false);
    let doc_example = api_doc(sig, method, true);
    // The panicking forms return the value itself (nothing for `()`, so no `-> ()`).
    let ret = &sig.ret;
    let ret_arrow = if sig.ret == "()" { String::new() } else { format!(" -> {}", sig.ret) };
    let n = &sig.name;
    // `add` -> `add_with`; in-place `add_` -> `add_with_` (the trailing `_` still marks in-place).
    let w = match n.strip_suffix('_') {
        Some(base) => format!("{base}_with_"),
        None => format!("{n}_with"),
    };
    let _ = sep;
    // try_x
    let _ = writeln!(
        s,
        "{doc}///\n/// Returns an error naming the operator and the argument when the inputs are invalid.\n#[inline]\npub fn try_{n}({recv}{params}) -> Result<{ret}> {{\ncrate::ops::{n}::call({})\n}}",
        call_args(false)
    );
    // x
    let _ = writeln!(
        s,
        "{doc_example}///\n/// # Panics\n/// When the inputs are invalid; [`try_{n}`]({}) returns the error instead.\n#[track_caller]\npub fn {n}({recv}{params}){ret_arrow} {{\ncrate::ops_support::unwrap_op({callee_prefix}try_{n}({pass}))\n}}",
        if method { format!("Tensor::try_{n}") } else { format!("try_{n}") }
    );
    if has_opts {
        let opts_ty = sig.opts_ty();
        let sep_params = if params.is_empty() { String::new() } else { format!("{params}, ") };
        let pass_opts = if pass.is_empty() { "opts".to_string() } else { format!("{pass}, opts") };
        let _ = writeln!(
            s,
            "{doc}///\n/// Like `try_{n}`, with the defaulted arguments given in [`{}`].\n#[inline]\npub fn try_{w}({recv}{sep_params}opts: {opts_ty}) -> Result<{ret}> {{\ncrate::ops::{n}::call({})\n}}",
            sig.opts_name(),
            call_args(true)
        );
        let _ = writeln!(
            s,
            "{doc}///\n/// Like `{n}`, with the defaulted arguments given in [`{}`].\n#[track_caller]\npub fn {w}({recv}{sep_params}opts: {opts_ty}){ret_arrow} {{\ncrate::ops_support::unwrap_op({callee_prefix}try_{w}({pass_opts}))\n}}",
            sig.opts_name()
        );
    }
    s
}
