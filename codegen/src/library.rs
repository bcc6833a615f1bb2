//! Operators declared in a downstream crate's own YAML (PyTorch's custom operator libraries).
//!
//! A crate that depends on `oxten` writes a `native_functions.yaml` (and, for gradients, a
//! `derivatives.yaml` next to it) in the same format as oxten's, and its `build.rs` calls
//! [`generate`]. The result is one Rust file for `include!`, with everything oxten generates for
//! its own operators, in the library's namespace (`myops::scaled_tanh`):
//!
//! - `ops::<name>` — dispatcher handle, typed entry point, boxed entry point;
//! - `functions` (free functions), `options` (the defaulted arguments' structs) and `TensorExt`,
//!   an extension trait with the method forms (an inherent `impl Tensor` is only possible in
//!   oxten's runtime crate): `try_` forms, panicking forms and `_with` forms;
//! - `pointwise:` operators' meta functions and CPU kernels (and CUDA kernels, compiled when the
//!   library crate has a `cuda` feature forwarding to `oxten/cuda`), with their functional,
//!   in-place and out= wrappers;
//! - one trait per `dispatch:` kernel, which the library's kernels type implements (a missing or
//!   mistyped kernel is a compile error naming it);
//! - autograd nodes and Autograd kernels from the formulas, Autocast kernels from `autocast:`;
//! - `register()`, which puts all of it into oxten's dispatcher. Every `call` runs it first (a
//!   `Once`), so a library needs no start-up code.
//!
//! The emitters are oxten's own; they write paths for the crate they were written for
//! (`oxten_runtime::…`, `crate::iter` …), which [`relocate`] maps to the paths a downstream crate
//! sees through `oxten` (`::oxten::runtime::…`).

use crate::backend::{BackendIndex, DispatchKey};
use crate::emit::{self, decls, located, ops::OpsConfig, pointwise, register, GENERATED_HEADER};
use crate::yaml::{parse_native_functions, NativeFunction};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// A downstream operator library: where its generated code goes and what implements its kernels.
#[derive(Clone, Debug)]
pub struct Library {
    /// The operators' namespace (`myops`): their names in the dispatcher and in errors are
    /// `myops::name`.
    pub namespace: String,
    /// The Rust path of the module the generated file is included in (`crate::myops`).
    pub module: String,
    /// The Rust path of the type implementing the kernel traits of the `dispatch:` entries
    /// (`crate::MyKernels`); `None` when every operator is `pointwise:` or has no kernel.
    pub kernels: Option<String>,
}

/// The dispatch keys a library may name in `dispatch:`.
const LIBRARY_KEYS: [DispatchKey; 5] = [
    DispatchKey::Cpu,
    DispatchKey::Cuda,
    DispatchKey::Meta,
    DispatchKey::CompositeExplicitAutograd,
    DispatchKey::CompositeImplicitAutograd,
];

/// For a downstream `build.rs`: reads `native_functions` (and the `derivatives.yaml` next to
/// it, if there is one), writes `<namespace>.rs` into `out_dir` and returns its path. Errors
/// name the YAML file, line and entry. A build script also prints `cargo:rerun-if-changed=` for
/// both files.
///
/// ```no_run
/// // build.rs of a crate with `src/ops/native_functions.yaml`
/// let lib = oxten_codegen::library::Library {
///     namespace: "myops".into(),
///     module: "crate::myops".into(),
///     kernels: Some("crate::MyKernels".into()),
/// };
/// println!("cargo:rerun-if-changed=src/ops/native_functions.yaml");
/// println!("cargo:rerun-if-changed=src/ops/derivatives.yaml");
/// let out = std::env::var("OUT_DIR").unwrap();
/// oxten_codegen::library::generate(&lib, "src/ops/native_functions.yaml".as_ref(), out.as_ref())
///     .unwrap_or_else(|e| panic!("{e}"));
/// ```
pub fn generate(lib: &Library, native_functions: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let text = read(native_functions)?;
    let dpath = emit::derivatives_path(native_functions);
    let dtext = if dpath.exists() { Some(read(&dpath)?) } else { None };
    let dname = dpath.display().to_string();
    let code = emit_library(lib, &text, &native_functions.display().to_string(), dtext.as_deref().zip(Some(&*dname)))
        .map_err(|es| es.join("\n"))?;
    let path = out_dir.join(format!("{}.rs", lib.namespace));
    std::fs::write(&path, code).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The library's generated file from the YAML texts (`native_file` and the derivatives file
/// name are for messages).
pub fn emit_library(
    lib: &Library,
    native: &str,
    native_file: &str,
    derivatives: Option<(&str, &str)>,
) -> Result<String, Vec<String>> {
    check_library(lib)?;
    let fns = parse_native_functions(native, native_file)
        .map_err(|es| es.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    check_entries(lib, &fns)?;
    let ds = match derivatives {
        Some((text, file)) => crate::derivatives::parse_derivatives(text, file, &fns)?,
        None => Vec::new(),
    };
    let (sigs, structured) = emit::prepare(&fns)?;
    let backends: Vec<BackendIndex> =
        LIBRARY_KEYS.into_iter().map(|k| BackendIndex::for_library(k, &lib.module, &fns)).collect();
    let decl_list = decls::collect(&sigs, &structured, &backends).map_err(|e| vec![e])?;
    let m = &lib.module;

    let mut s = String::new();
    // Operator layer: handles, entry points, options, free functions, the extension trait.
    let cfg = OpsConfig {
        runtime: "::oxten::runtime".into(),
        ops: format!("{m}::ops"),
        namespace: lib.namespace.clone(),
        call_prologue: format!("{m}::register();\n"),
        // An `include!`d file cannot carry inner attributes: the lints oxten's runtime allows
        // crate-wide for its generated operator layer are allowed on each module.
        module_attrs: "#[allow(clippy::too_many_arguments, clippy::derivable_impls, non_snake_case)]\n".into(),
    };
    let ops_text = emit::ops::emit_ops_with(&sigs, &cfg, false);
    s.push_str(&extension_trait(&ops_text).map_err(|e| vec![e])?);
    // The kernels type under each key's marker name, for the generated trait paths.
    if let Some(k) = &lib.kernels {
        let mut named = std::collections::BTreeSet::new();
        for b in backends.iter().filter(|b| named.insert(b.impl_type.clone())) {
            let _ = writeln!(s, "{} #[doc(hidden)] pub type {} = {k};", b.cfg_attr(), b.impl_type);
        }
    }
    // Kernel declarations and the generated pointwise kernels.
    let mut gen = String::new();
    let mut traits = String::new();
    for d in &decl_list {
        decls::write_trait(&mut traits, d);
    }
    let _ = writeln!(
        gen,
        "/// One trait per kernel named in `dispatch:`: the library's kernels type implements them.\n#[allow(clippy::too_many_arguments, non_snake_case)] pub mod decls {{ {}{traits} }}",
        emit::RUNTIME_IMPORTS
    );
    let _ = writeln!(
        gen,
        "/// Meta functions and CPU kernels of the `pointwise:` operators.\n#[allow(clippy::too_many_arguments, clippy::needless_lifetimes)] pub mod pointwise {{ {} }}",
        pointwise::emit_pointwise_file(&structured).map_err(|e| vec![e])?
    );
    let _ = writeln!(
        gen,
        "/// CUDA kernels of the `pointwise:` operators.\n#[cfg(feature = \"cuda\")] #[allow(clippy::too_many_arguments, clippy::needless_lifetimes)] pub mod pointwise_cuda {{ {} }}",
        pointwise::emit_pointwise_cuda_file(&structured).map_err(|e| vec![e])?
    );
    let _ = writeln!(s, "/// Generated kernels and their declarations.\n#[doc(hidden)] pub mod generated {{ {gen} }}");
    // Registrations, autograd and autocast.
    let mut calls = String::new();
    for b in &backends {
        let (cfg_attr, km) = (b.cfg_attr(), b.key.module());
        let _ = writeln!(
            s,
            "{cfg_attr} #[allow(clippy::too_many_arguments, unused_variables, non_snake_case)] mod register_{km} {{ {} }}",
            register::emit_backend_register(&sigs, &structured, b)
        );
        let _ = writeln!(calls, "{cfg_attr} register_{km}::register();");
    }
    let ag = emit::autograd::emit_autograd(&fns, &ds).map_err(|e| vec![e])?;
    let _ = writeln!(
        s,
        "/// Autograd: backward nodes from the library's formulas.\n#[allow(clippy::too_many_arguments, clippy::needless_lifetimes, unused_variables, non_snake_case)] pub mod autograd {{ {ag} }}"
    );
    let _ = writeln!(
        s,
        "/// Autocast kernels of the operators with an `autocast:` policy.\n#[allow(clippy::too_many_arguments)] pub mod autocast {{ {} }}",
        emit::autocast::emit_autocast(&sigs)
    );
    let _ = writeln!(
        s,
        "/// Registers the library's kernels (every backend, autograd, autocast) with oxten's dispatcher,\n/// and its boxed entry points with the CPU fallback of out-of-tree backends.\n/// Runs once; every operator call runs it first.\npub fn register() {{\nstatic ONCE: std::sync::Once = std::sync::Once::new();\nONCE.call_once(|| {{\n::oxten::init();\n{calls}autograd::register_autograd();\nautocast::register_autocast();\n::oxten::backend::register_op_infos(ops::operator_infos());\n}});\n}}"
    );
    let code = relocate(&s, m);
    let text = emit::format_rust(&code).map_err(|e| vec![format!("the generated library does not parse: {e}")])?;
    // An `include!`d file may not carry inner doc comments: a plain comment says what it is.
    Ok(format!(
        "{GENERATED_HEADER}// The operators of the `{}` library, from `{}`.\n{text}",
        lib.namespace,
        Path::new(native_file).file_name().map_or(native_file.into(), |n| n.to_string_lossy())
    ))
}

/// The namespace and paths must be usable as Rust paths, and the namespace is not oxten's.
fn check_library(lib: &Library) -> Result<(), Vec<String>> {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let path = |s: &str| s.split("::").all(ident);
    let mut errors = Vec::new();
    if !ident(&lib.namespace) || lib.namespace == "aten" {
        errors.push(format!("library namespace `{}` must be an identifier other than `aten`", lib.namespace));
    }
    if !lib.module.starts_with("crate") || !path(&lib.module) {
        errors.push(format!("library module `{}` must be a path from the crate root (`crate::myops`)", lib.module));
    }
    if let Some(k) = &lib.kernels {
        if !path(k.trim_start_matches("::")) {
            errors.push(format!("library kernels type `{k}` must be a Rust path (`crate::MyKernels`)"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Library entries may name kernels at the keys a library can serve, and only with a kernels
/// type to implement them.
fn check_entries(lib: &Library, fns: &[NativeFunction]) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    for f in fns.iter().filter(|f| f.generated_from.is_none()) {
        for key in f.dispatch.keys() {
            if !LIBRARY_KEYS.contains(key) {
                errors.push(located(f, format!("`dispatch: {key}` is not available to an operator library")));
            } else if lib.kernels.is_none() {
                errors.push(located(
                    f,
                    format!(
                        "`dispatch: {key}` names a kernel, so the library needs a kernels type (`Library::kernels`)"
                    ),
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Maps the paths oxten's emitters write for its own crates to the ones a downstream crate
/// reaches through `oxten`.
fn relocate(code: &str, module: &str) -> String {
    let table: [(&str, String); 9] = [
        ("use oxten_runtime::ops;", format!("use {module}::ops;")),
        ("oxten_runtime::", "::oxten::runtime::".into()),
        ("crate::iter::*", "::oxten::iter::*".into()),
        ("crate::math", "::oxten::kernels::math".into()),
        ("crate::support::check_alpha", "::oxten::kernels::support::check_alpha".into()),
        ("crate::support::", "::oxten::backend::".into()),
        ("super::helpers::*", "::oxten::autograd::helpers::*".into()),
        ("crate::cuda::pointwise::", "::oxten::kernels::cuda::pointwise::".into()),
        ("<crate::Meta as crate::generated::decls::", format!("<{module}::Meta as {module}::generated::decls::")),
    ];
    let mut out = code.to_string();
    for (from, to) in &table {
        out = out.replace(from, to);
    }
    out
}

/// Turns the operator layer's `impl TensorMethods for Tensor` block into the `TensorExt` trait
/// (declarations with the docs) and its implementation for `Tensor`.
fn extension_trait(ops_text: &str) -> Result<String, String> {
    let mut file = syn::parse_file(ops_text).map_err(|e| format!("generated operator layer does not parse: {e}"))?;
    let pos = file
        .items
        .iter()
        .position(|i| matches!(i, syn::Item::Impl(im) if im.trait_.is_some()))
        .ok_or("no method block in the generated operator layer")?;
    let syn::Item::Impl(mut imp) = file.items.remove(pos) else { unreachable!("position found an impl") };
    let mut decls = Vec::new();
    for item in &mut imp.items {
        if let syn::ImplItem::Fn(f) = item {
            f.vis = syn::Visibility::Inherited;
            let docs: Vec<&syn::Attribute> = f.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
            let sig = &f.sig;
            decls.push(quote::quote! { #(#docs)* #sig; });
        }
    }
    imp.trait_ = Some((None, syn::parse_quote!(TensorExt), Default::default()));
    let rest = &file.items;
    let tokens = quote::quote! {
        #(#rest)*
        /// The library's operators as methods of [`Tensor`]: bring the trait into scope
        /// (`use mylib::myops::TensorExt as _;`).
        #[allow(clippy::too_many_arguments)]
        pub trait TensorExt {
            #(#decls)*
        }
        #[allow(clippy::too_many_arguments)]
        #imp
    };
    Ok(tokens.to_string())
}
