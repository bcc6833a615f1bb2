//! Out-of-tree backends (torchgen's `gen_backend_stubs.py`): a backend YAML names the operators
//! a crate outside oxten implements, and [`generate`] turns it into a trait with one typed method
//! per operator (the Rust signatures oxten's own kernels have) and a `register::<B>()` that
//! installs an implementation at the backend's dispatch key, with the fallback the YAML asks for.
//!
//! ```yaml
//! backend: Toy                 # the name in the generated items and in printed devices
//! dispatch_key: PrivateUse1    # the key out-of-tree backends register at
//! fallback: cpu                # `error` (default) or `cpu`: other operators run on the CPU
//! supported:                   # operator names with their overload, as in native_functions.yaml
//!   - empty.memory_format
//!   - add.Tensor
//!   - mm.out                   # a structured op's impl: mm and mm.out are generated from it
//! autograd:                    # operators whose Autograd kernel the backend writes itself
//!   - mul.Tensor
//! full_codegen:                # operators it records as IR nodes (a lazy backend)
//!   - relu
//! ```
//!
//! A downstream crate's `build.rs` calls [`generate`] and `include!`s the file it writes; an
//! operator in `supported:` that the implementation lacks, or implements with another
//! signature, is then a compile error naming the operator.

use super::key::DispatchKey;
use crate::emit::register::{emit_wrapper_with, meta_path_in, WrapperPaths};
use crate::emit::sig::OpSig;
use crate::emit::structured::StructuredOp;
use crate::yaml::{parse_native_functions, NativeFunction};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// oxten's operator schemas, carried by the generator so a downstream build needs no path into
/// oxten's sources.
pub const NATIVE_FUNCTIONS_YAML: &str = include_str!("../../../native_functions.yaml");

/// What runs for an operator the backend does not implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// An error naming the operator and the backend (the dispatcher's).
    Error,
    /// The arguments are copied to the CPU, the CPU kernel runs, and the results are copied
    /// back (in-place and out= arguments are written back where they live).
    Cpu,
}

/// A parsed and validated backend YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendYaml {
    /// The backend's name (`Toy`): the trait is `ToyKernels`.
    pub backend: String,
    /// The key its kernels are registered at.
    pub dispatch_key: DispatchKey,
    /// What runs for other operators.
    pub fallback: Fallback,
    /// The operators it implements, by full name (`add.Tensor`), in file order.
    pub supported: Vec<String>,
    /// The operators whose Autograd kernel it provides (registered at `AutogradPrivateUse1`,
    /// ahead of oxten's generated one for its tensors), in file order.
    pub autograd: Vec<String>,
    /// The operators the backend records as IR nodes instead of computing (a lazy backend):
    /// each gets a node struct in the generated `ir` module and a kernel that builds it.
    pub full_codegen: Vec<String>,
}

/// The 1-based line of the first line of `text` that contains `needle` after `from` (0-based).
fn line_of(text: &str, needle: &str, from: usize) -> (usize, usize) {
    for (i, l) in text.lines().enumerate().skip(from) {
        if l.contains(needle) {
            return (i + 1, i);
        }
    }
    (1, 0)
}

/// The 1-based line of list item `name` (`- name`, or `name` inside a flow list) at or after
/// line `from` (0-based), and its 0-based index.
fn item_line(text: &str, name: &str, from: usize) -> (usize, usize) {
    for (i, l) in text.lines().enumerate().skip(from) {
        let t = l.trim();
        if t == format!("- {name}") || t.trim_start_matches("- ").split([',', '[', ']', ' ']).any(|w| w == name) {
            return (i + 1, i);
        }
    }
    (from + 1, from)
}

/// Parses and checks a backend YAML against oxten's operators; errors name `file`, the line and
/// the key.
pub fn parse_backend_yaml(text: &str, file: &str, fns: &[NativeFunction]) -> Result<BackendYaml, Vec<String>> {
    let err = |line: usize, key: &str, m: String| format!("{file}:{line}: entry `{key}`: {m}");
    let value: serde_norway::Value = serde_norway::from_str(text).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line());
        vec![format!("{file}:{line}: not valid YAML: {e}")]
    })?;
    let map = value.as_mapping().ok_or_else(|| vec![format!("{file}:1: a backend YAML is a mapping of keys")])?;
    let mut errors = Vec::new();
    for k in map.keys() {
        let k = k.as_str().unwrap_or("?");
        if !["backend", "dispatch_key", "fallback", "supported", "autograd", "full_codegen"].contains(&k) {
            errors.push(err(
                line_of(text, &format!("{k}:"), 0).0,
                k,
                "unknown key (expected backend, dispatch_key, fallback, supported, autograd or full_codegen)".into(),
            ));
        }
    }
    let backend = match map.get("backend").and_then(|v| v.as_str()) {
        Some(b)
            if !b.is_empty()
                && b.chars().all(|c| c.is_ascii_alphanumeric())
                && b.starts_with(|c: char| c.is_ascii_uppercase()) =>
        {
            b.to_string()
        }
        Some(b) => {
            errors.push(err(
                line_of(text, "backend:", 0).0,
                "backend",
                format!("`{b}` is not a name in CamelCase (letters and digits)"),
            ));
            String::new()
        }
        None => {
            errors.push(format!("{file}:1: entry `backend`: missing (the backend's name, e.g. `backend: Toy`)"));
            String::new()
        }
    };
    let dispatch_key = match map.get("dispatch_key").and_then(|v| v.as_str()) {
        Some("PrivateUse1") | None => DispatchKey::PrivateUse1,
        Some(k) => {
            errors.push(err(
                line_of(text, "dispatch_key:", 0).0,
                "dispatch_key",
                format!("`{k}` cannot host an out-of-tree backend; use PrivateUse1"),
            ));
            DispatchKey::PrivateUse1
        }
    };
    let fallback = match map.get("fallback").and_then(|v| v.as_str()) {
        None | Some("error") => Fallback::Error,
        Some("cpu") => Fallback::Cpu,
        Some(f) => {
            errors.push(err(line_of(text, "fallback:", 0).0, "fallback", format!("`{f}` is not `error` or `cpu`")));
            Fallback::Error
        }
    };
    let supported = op_list(text, map, "supported", fns, &err, &mut errors);
    let autograd = op_list(text, map, "autograd", fns, &err, &mut errors);
    let full_codegen = op_list(text, map, "full_codegen", fns, &err, &mut errors);
    for name in &full_codegen {
        let line = item_line(text, name, line_of(text, "full_codegen:", 0).1).0;
        if supported.contains(name) {
            errors.push(err(
                line,
                "full_codegen",
                format!("`{name}` is also in `supported:`; a kernel either computes or records"),
            ));
        } else if let Some(f) = fns.iter().find(|f| f.func.name.to_string() == *name) {
            if let Err(e) = super::lazy_ir::check_entry(f, fns) {
                errors.push(err(line, "full_codegen", e));
            }
        }
    }
    for name in &autograd {
        let f = fns.iter().find(|f| f.func.name.to_string() == *name);
        if f.is_some_and(|f| f.func.kind() == crate::model::SchemaKind::Out) {
            let line = item_line(text, name, line_of(text, "autograd:", 0).1).0;
            errors.push(err(line, "autograd", format!("`{name}` is an out= variant, which has no Autograd kernel")));
        }
    }
    if errors.is_empty() {
        Ok(BackendYaml { backend, dispatch_key, fallback, supported, autograd, full_codegen })
    } else {
        Err(errors)
    }
}

/// The operator names listed under `key` (each an operator of `fns`, listed once), reporting
/// mistakes with their lines.
fn op_list(
    text: &str,
    map: &serde_norway::Mapping,
    key: &str,
    fns: &[NativeFunction],
    err: &dyn Fn(usize, &str, String) -> String,
    errors: &mut Vec<String>,
) -> Vec<String> {
    let mut listed: Vec<String> = Vec::new();
    let (_, start) = line_of(text, &format!("{key}:"), 0);
    match map.get(key) {
        None => {}
        Some(v) => match v.as_sequence() {
            None => errors.push(err(start + 1, key, "must be a list of operator names".into())),
            Some(items) => {
                // Items appear in file order: each is looked for after the previous one.
                let mut cursor = start;
                for item in items {
                    let Some(name) = item.as_str() else {
                        errors.push(err(start + 1, key, format!("{item:?} is not an operator name")));
                        continue;
                    };
                    let (line, at) = item_line(text, name, cursor);
                    cursor = at + 1;
                    if listed.iter().any(|s| s == name) {
                        errors.push(err(line, key, format!("`{name}` is listed twice")));
                    } else if !fns.iter().any(|f| f.func.name.to_string() == name) {
                        let base: Vec<String> = fns
                            .iter()
                            .filter(|f| f.func.name.name.base == name.split('.').next().unwrap_or(name))
                            .map(|f| format!("`{}`", f.func.name))
                            .collect();
                        let hint =
                            if base.is_empty() { String::new() } else { format!(" (overloads: {})", base.join(", ")) };
                        errors.push(err(
                            line,
                            key,
                            format!("`{name}` is not an operator of oxten's native_functions.yaml{hint}"),
                        ));
                    } else {
                        listed.push(name.to_string());
                    }
                }
            }
        },
    }
    listed
}

/// The Rust source of a backend: its kernels trait and `register`, and for a lazy backend the
/// `ir` module with the recording kernels.
pub fn emit_backend(b: &BackendYaml, fns: &[NativeFunction], yaml_file: &str) -> Result<String, String> {
    let name = &b.backend;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "#[allow(unused_imports)] use ::oxten::{{DType, Device, Generator, Layout, MemoryFormat, Result, Scalar, Tensor}};\n#[allow(unused_imports)] use ::oxten::iter::{{StructuredOutputs, TensorIterator}};"
    );
    let _ = writeln!(
        s,
        "/// The kernels of the `{name}` backend (generated from `{yaml_file}`): one method per operator in its `supported:` list, with the signature oxten's own kernels have. Implement it on a marker type and call [`register`].\n#[allow(clippy::too_many_arguments)]\npub trait {name}Kernels {{"
    );
    let mut regs = String::new();
    let mut wrappers = String::new();
    let paths = |st: &StructuredOp| WrapperPaths {
        meta: meta_path_in(st, "::oxten::kernels"),
        imp: Some(format!("B::{}", st.out.name)),
        generics: format!("<B: {name}Kernels>"),
        support: "::oxten::backend".into(),
        // `add_` gives `add__private_use1`.
        attrs: "#[allow(non_snake_case)]".into(),
    };
    for op in &b.supported {
        let f =
            fns.iter().find(|f| f.func.name.to_string() == *op).ok_or_else(|| format!("unknown operator `{op}`"))?;
        if f.structured {
            // The impl of a structured op: its functional, in-place and out= variants come from
            // oxten's meta function and this impl.
            let st = StructuredOp::new(f)?;
            let _ = writeln!(
                s,
                "/// The impl of the structured `{}`: computes the outputs its meta function set up. The functional, in-place and out= variants are generated from it.",
                f.func
            );
            let _ = writeln!(s, "fn {}({}) -> Result<()>;", st.out.name, st.impl_params());
            for m in fns
                .iter()
                .filter(|g| g.func.name == f.func.name || g.structured_delegate.as_ref() == Some(&f.func.name))
            {
                let member = OpSig::new(m)?;
                let w = emit_wrapper_with(&mut wrappers, &st, &member, b.dispatch_key, &paths(&st));
                let _ = writeln!(
                    regs,
                    "::oxten::ops::{}::OP.register(::oxten::dispatch::DispatchKey::{:?}, {w}::<B>);",
                    member.name, b.dispatch_key
                );
            }
            continue;
        }
        let sig = OpSig::new(f)?;
        let _ = writeln!(s, "/// `{}`", f.func);
        let _ = writeln!(s, "fn {}({}) -> Result<{}>;", sig.name, sig.params(), sig.ret);
        let _ = writeln!(
            regs,
            "::oxten::ops::{0}::OP.register(::oxten::dispatch::DispatchKey::{1:?}, B::{0});",
            sig.name, b.dispatch_key
        );
    }
    for op in &b.autograd {
        let f =
            fns.iter().find(|f| f.func.name.to_string() == *op).ok_or_else(|| format!("unknown operator `{op}`"))?;
        let sig = OpSig::new(f)?;
        let _ = writeln!(
            s,
            "/// The Autograd kernel of `{}` for this backend's tensors: runs instead of oxten's generated one, so it records the history itself (and computes below autograd, with `KeySet::AUTOGRAD` excluded).",
            f.func
        );
        let _ = writeln!(s, "fn {}_autograd({}) -> Result<{}>;", sig.name, sig.params(), sig.ret);
        let _ = writeln!(
            regs,
            "::oxten::ops::{0}::OP.register(::oxten::dispatch::DispatchKey::AutogradPrivateUse1, B::{0}_autograd);",
            sig.name
        );
    }
    if !b.full_codegen.is_empty() {
        s.push_str(super::lazy_ir::TRAIT_ITEMS);
    }
    s.push_str("}\n");
    s.push_str(&wrappers);
    if !b.full_codegen.is_empty() {
        s.push_str(&super::lazy_ir::emit_lazy(
            &b.full_codegen,
            fns,
            name,
            &format!("{:?}", b.dispatch_key),
            &mut regs,
        )?);
    }
    let fallback = match b.fallback {
        Fallback::Cpu => {
            format!("::oxten::backend::register_cpu_fallback(::oxten::dispatch::DispatchKey::{:?});\n", b.dispatch_key)
        }
        Fallback::Error => String::new(),
    };
    let _ = writeln!(
        s,
        "/// Registers `B`'s kernels at `{key:?}`{fb}, names the device `{lower}` in printing and errors, and runs `oxten::init` first. An error when another backend already named the device.\npub fn register<B: {name}Kernels>() -> Result<()> {{\n::oxten::init();\n::oxten::backend::rename_privateuse1_backend({lower:?})?;\n{regs}{fallback}Ok(())\n}}",
        key = b.dispatch_key,
        fb = if b.fallback == Fallback::Cpu { ", with the CPU fallback for every other operator" } else { "" },
        lower = name.to_lowercase(),
    );
    let _ = writeln!(
        s,
        "/// The operators the `{name}` backend implements, in YAML order.\npub const SUPPORTED: &[&str] = &[{}];",
        b.supported.iter().map(|o| format!("{o:?}")).collect::<Vec<_>>().join(", ")
    );
    crate::emit::format_rust(&s).map(|t| format!("// @generated by oxten-codegen from {yaml_file}. Do not edit.\n{t}"))
}

/// Reads the backend YAML at `yaml`, checks it against oxten's operators and writes
/// `<backend>_backend.rs` (snake case) into `out_dir`; returns the path written. For a
/// downstream crate's `build.rs`:
///
/// ```no_run
/// // build.rs
/// let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
/// oxten_codegen::backend::generate(std::path::Path::new("toy_backend.yaml"), &out).unwrap();
/// println!("cargo:rerun-if-changed=toy_backend.yaml");
/// // src/lib.rs: include!(concat!(env!("OUT_DIR"), "/toy_backend.rs"));
/// ```
pub fn generate(yaml: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let file = yaml.display().to_string();
    let text = std::fs::read_to_string(yaml).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let fns = parse_native_functions(NATIVE_FUNCTIONS_YAML, "native_functions.yaml")
        .map_err(|e| e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("\n"))?;
    let b = parse_backend_yaml(&text, &file, &fns).map_err(|e| e.join("\n"))?;
    let code = emit_backend(&b, &fns, yaml.file_name().and_then(|n| n.to_str()).unwrap_or(&file))?;
    let path = out_dir.join(format!("{}_backend.rs", b.backend.to_lowercase()));
    std::fs::write(&path, code).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(path)
}
