//! The emitters: from parsed `native_functions.yaml` entries to Rust source files.
//!
//! | file | crate | what |
//! |---|---|---|
//! | `ops.rs` | `oxten-runtime` | typed entry points, dispatcher handles, `Tensor` methods, free functions, options structs |
//! | `decls.rs` | `oxten-kernels` | one trait per hand-written kernel and meta function |
//! | `pointwise.rs` | `oxten-kernels` | meta functions and CPU impls of `pointwise:` operators |
//! | `register.rs` | `oxten` | structured wrappers and `register_all` |
//! | `autograd.rs` | `oxten` | backward nodes and Autograd kernels from `derivatives.yaml`, `register_autograd` |
//! | `autocast.rs` | `oxten` | Autocast kernels from the `autocast:` policies, `register_autocast` |
//!
//! Output is deterministic (file order, then `BTreeMap` order) and formatted with prettyplease.

pub mod autocast;
pub mod autograd;
pub mod decls;
pub mod names;
pub mod ops;
pub mod pointwise;
pub mod register;
pub mod sig;
pub mod structured;

use crate::yaml::{parse_native_functions, NativeFunction};
use sig::OpSig;
use std::collections::BTreeMap;
use structured::StructuredOp;

/// Every generated file, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub files: BTreeMap<&'static str, String>,
}

impl Generated {
    /// Writes every file into `dir` (created if missing).
    pub fn write_to(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (name, text) in &self.files {
            std::fs::write(dir.join(name), text)?;
        }
        Ok(())
    }
    pub fn get(&self, name: &str) -> &str {
        self.files.get(name).map(String::as_str).unwrap_or("")
    }
}

/// Reads and validates the YAML, then emits every file. Errors are full sentences naming the
/// file, line and entry.
pub fn generate_from_str(text: &str, file: &str) -> Result<Generated, Vec<String>> {
    let fns = parse_native_functions(text, file).map_err(|es| es.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    generate(&fns)
}

/// Like [`generate_from_str`], with the text of `derivatives.yaml` (and its file name, for
/// messages) when there is one. Without it every differentiable operator gets a
/// `NotImplementedBackward` autograd kernel.
pub fn generate_from_strs(
    native_functions: &str,
    native_file: &str,
    derivatives: Option<(&str, &str)>,
) -> Result<Generated, Vec<String>> {
    let fns = parse_native_functions(native_functions, native_file)
        .map_err(|es| es.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    let ds = match derivatives {
        Some((text, file)) => crate::derivatives::parse_derivatives(text, file, &fns)?,
        None => Vec::new(),
    };
    generate_with_derivatives(&fns, &ds)
}

/// The `derivatives.yaml` that goes with a `native_functions.yaml`: the file next to it.
pub fn derivatives_path(native_functions: &std::path::Path) -> std::path::PathBuf {
    native_functions.with_file_name("derivatives.yaml")
}

/// Reads `path` (a `native_functions.yaml`) and the `derivatives.yaml` next to it, if there is
/// one, and generates.
pub fn generate_from_file(path: &std::path::Path) -> Result<Generated, Vec<String>> {
    let derivatives = derivatives_path(path);
    generate_from_files(path, derivatives.exists().then_some(derivatives.as_path()))
}

/// Reads `native_functions` and, if given, `derivatives`, and generates.
pub fn generate_from_files(
    native_functions: &std::path::Path,
    derivatives: Option<&std::path::Path>,
) -> Result<Generated, Vec<String>> {
    let read = |p: &std::path::Path| std::fs::read_to_string(p).map_err(|e| vec![format!("{}: {e}", p.display())]);
    let text = read(native_functions)?;
    let dtext = derivatives.map(read).transpose()?;
    // Messages name the derivatives file by its file name, like the YAML loader's.
    let dname = derivatives.map(|p| p.display().to_string());
    generate_from_strs(&text, &native_functions.display().to_string(), dtext.as_deref().zip(dname.as_deref()))
}

fn located(f: &NativeFunction, msg: impl std::fmt::Display) -> String {
    format!("{}: in `{}`: {msg}", f.loc, f.func.name)
}

/// Emits every file from validated entries, without derivatives (see
/// [`generate_with_derivatives`]).
pub fn generate(fns: &[NativeFunction]) -> Result<Generated, Vec<String>> {
    generate_with_derivatives(fns, &[])
}

/// Emits every file from validated entries and the checked entries of `derivatives.yaml`.
pub fn generate_with_derivatives(
    fns: &[NativeFunction],
    derivatives: &[crate::derivatives::Derivative],
) -> Result<Generated, Vec<String>> {
    let mut errors = Vec::new();
    let mut sigs = Vec::new();
    for f in fns {
        match OpSig::new(f) {
            Ok(s) => sigs.push(s),
            Err(e) => errors.push(located(f, e)),
        }
    }
    // The naming rule must give distinct Rust names.
    let mut seen: BTreeMap<String, &NativeFunction> = BTreeMap::new();
    for s in &sigs {
        if let Some(prev) = seen.insert(s.name.clone(), s.f) {
            errors.push(located(
                s.f,
                format!("its Rust name `{}` is also the name of `{}` ({})", s.name, prev.func.name, prev.loc),
            ));
        }
    }
    let mut structured = Vec::new();
    for f in fns.iter().filter(|f| f.structured) {
        match StructuredOp::new(f) {
            Ok(st) => structured.push(st),
            Err(e) => errors.push(located(f, e)),
        }
    }
    for st in &structured {
        if st.pointwise.is_some() {
            if let Err(e) = pointwise::parse_expr(st) {
                errors.push(located(st.out.f, e));
            }
            if !st.uses_iterator {
                errors.push(located(st.out.f, "a `pointwise:` op must declare `structured_inherits: TensorIterator`"));
            }
        } else if !st.impls.iter().any(|(k, _)| k == "CPU") {
            errors.push(located(
                st.out.f,
                "a structured op needs a `pointwise:` expression or a CPU kernel in `dispatch`",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let decl_list = decls::collect(&sigs, &structured).map_err(|e| vec![e])?;
    let pw = pointwise::emit_pointwise_file(&structured).map_err(|e| vec![e])?;
    let ag = autograd::emit_autograd(fns, derivatives).map_err(|e| vec![e])?;
    let raw = [
        ("ops.rs", ops::emit_ops(&sigs)),
        ("decls.rs", decls::emit_decls(&decl_list, &structured)),
        ("pointwise.rs", pw),
        ("register.rs", register::emit_register(&sigs, &structured)),
        ("autograd.rs", ag),
        ("autocast.rs", autocast::emit_autocast(&sigs)),
    ];
    let mut files = BTreeMap::new();
    for (name, code) in raw {
        files.insert(name, format_rust(&code).map_err(|e| vec![format!("generated {name} does not parse: {e}")])?);
    }
    Ok(Generated { files })
}

/// Formats generated code with prettyplease.
pub fn format_rust(code: &str) -> Result<String, String> {
    let file = syn::parse_file(code).map_err(|e| format!("{e}\n--- unformatted code ---\n{code}"))?;
    Ok(prettyplease::unparse(&file))
}

/// The stub signatures a kernel author must implement for `op` (an operator name such as
/// `gelu.out`, or a base name such as `gelu` for its whole group): what `oxten-codegen stubs`
/// prints.
pub fn stubs(fns: &[NativeFunction], op: &str) -> Result<String, String> {
    let gen = generate(fns).map_err(|e| e.join("\n"))?;
    let wanted: Vec<&NativeFunction> =
        fns.iter().filter(|f| f.func.name.to_string() == op || f.func.name.name.base == op).collect();
    if wanted.is_empty() {
        return Err(format!("no operator named `{op}` in the YAML"));
    }
    let mut out = String::new();
    let sigs: Vec<OpSig> = wanted.iter().filter_map(|f| OpSig::new(f).ok()).collect();
    let structured: Vec<StructuredOp> =
        wanted.iter().filter(|f| f.structured).filter_map(|f| StructuredOp::new(f).ok()).collect();
    let decl_list = decls::collect(&sigs, &structured)?;
    for st in &structured {
        if st.pointwise.is_some() {
            out.push_str(&format!(
                "// `{}`: generated from `pointwise: {}`; nothing to write.\n",
                st.out.f.func,
                st.pointwise.as_deref().unwrap_or("")
            ));
        }
    }
    for d in &decl_list {
        let ty = if d.trait_name.ends_with("MetaFn") || d.trait_name.ends_with("Meta") {
            "Meta"
        } else if d.trait_name.ends_with("Cpu") {
            "Cpu"
        } else {
            "Composite"
        };
        out.push_str(&format!(
            "// {}\nimpl {} for {ty} {{\n    fn {}({}) -> Result<{}> {{\n        todo!()\n    }}\n}}\n\n",
            d.doc, d.trait_name, d.method, d.params, d.ret
        ));
    }
    let _ = gen;
    if out.is_empty() {
        out.push_str(&format!("// `{op}` has no hand-written kernels (it is a delegate of a structured op).\n"));
    }
    Ok(out)
}
