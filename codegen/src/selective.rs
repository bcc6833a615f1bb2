//! Selective build (PyTorch's `selected_operators.yaml`): keep only the operators a program uses.
//!
//! The allowlist is a YAML list of operator names (`- add.Tensor`), given to the build in
//! `OXTEN_SELECTED_OPS`; a program run with `OXTEN_TRACE_OPS=<path>` writes one. [`closure`]
//! extends it with what the listed operators need: their structured group (the impl their
//! wrappers call), the operators their hand-written kernels' files call, the operators and autograd
//! helpers their derivative formulas call, and what the runtime calls itself (conversions,
//! autocast casts, the autograd engine's sums). The search is by name and file, so it keeps more
//! than it must, never less than a static reading of the sources shows.

use crate::derivatives::Derivative;
use crate::emit::names::rust_name;
use crate::yaml::NativeFunction;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Reads an allowlist: a YAML list of operator names with their overloads. Unknown names are
/// errors naming the file and line.
pub fn read_allowlist(path: &Path, fns: &[NativeFunction]) -> Result<BTreeSet<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_allowlist(&text, &path.display().to_string(), fns)
}

/// [`read_allowlist`] of a text (`file` names it in errors).
pub fn parse_allowlist(text: &str, file: &str, fns: &[NativeFunction]) -> Result<BTreeSet<String>, String> {
    let known: BTreeSet<String> = fns.iter().map(|f| f.func.name.to_string()).collect();
    let mut ops = BTreeSet::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.split('#').next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        let Some(name) = t.strip_prefix("- ").map(str::trim) else {
            errors.push(format!("{file}:{}: expected a list item `- <operator>`, found `{t}`", i + 1));
            continue;
        };
        if known.contains(name) {
            ops.insert(name.to_string());
        } else {
            errors.push(format!("{file}:{}: `{name}` is not an operator of native_functions.yaml", i + 1));
        }
    }
    if errors.is_empty() {
        Ok(ops)
    } else {
        Err(errors.join("\n"))
    }
}

/// Where the closure looks for the operators that code calls.
#[derive(Clone, Debug)]
pub struct Sources {
    /// The kernels crate's sources (hand-written kernels, one trait impl per kernel).
    pub kernels: PathBuf,
    /// The autograd helpers the formulas call.
    pub autograd_helpers: PathBuf,
    /// Code that calls operators whatever the program does (the runtime's sources).
    pub always: Vec<PathBuf>,
}

impl Sources {
    /// The repository's layout, from the workspace root.
    pub fn in_repo(root: &Path) -> Sources {
        Sources {
            kernels: root.join("kernels/src"),
            autograd_helpers: root.join("gen/src/autograd/helpers"),
            always: vec![
                root.join("runtime/src"),
                root.join("gen/src/autograd/mod.rs"),
                root.join("gen/src/support.rs"),
            ],
        }
    }
}

/// The names a piece of code calls that could be operators: `ops::NAME::…` paths, and the
/// fallible functions and methods `try_NAME` and `try_NAME_with` (reduced to `NAME`). oxten's
/// library code calls operators only these ways (the panicking forms are for users), so
/// `.sum()` of an iterator or `.max()` of two integers are not taken for operators.
#[derive(Default)]
struct Calls {
    /// Names that may be operators.
    names: BTreeSet<String>,
    /// Every function called by a path (`foo(…)`, `module::foo(…)`): where to look next.
    fns: BTreeSet<String>,
}

impl Calls {
    fn add_callee(&mut self, ident: &str) {
        let Some(n) = ident.strip_prefix("try_") else { return };
        // `add_with_` is the in-place `add_`; `add_with` is `add`.
        let name = match (n.strip_suffix("_with_"), n.strip_suffix("_with")) {
            (Some(base), _) => format!("{base}_"),
            (None, Some(base)) => base.to_string(),
            _ => n.to_string(),
        };
        self.names.insert(name);
    }
}

impl<'ast> Visit<'ast> for Calls {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        for w in segs.windows(2) {
            if w[0] == "ops" {
                self.names.insert(w[1].clone());
            }
        }
        if let Some(last) = segs.last() {
            self.add_callee(last);
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*c.func {
            if let Some(last) = p.path.segments.last() {
                self.fns.insert(last.ident.to_string());
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        self.add_callee(&m.method.to_string());
        syn::visit::visit_expr_method_call(self, m);
    }
}

/// The names called by every Rust file under `path` (a file or a folder).
fn calls_in(path: &Path) -> Result<BTreeSet<String>, String> {
    let mut calls = Calls::default();
    for (_, file) in crate::locate::parse_rs_files(path)? {
        calls.visit_file(&file);
    }
    Ok(calls.names)
}

/// For each file under `dir`: the traits it implements (last path segment) and the pub
/// functions it defines, and the names it calls.
struct FileIndex {
    files: Vec<(BTreeSet<String>, Calls)>,
}

impl FileIndex {
    fn new(dir: &Path) -> Result<FileIndex, String> {
        let mut files = Vec::new();
        for (_, file) in crate::locate::parse_rs_files(dir)? {
            let mut defined = BTreeSet::new();
            collect_defined(&file.items, &mut defined);
            let mut calls = Calls::default();
            calls.visit_file(&file);
            files.push((defined, calls));
        }
        Ok(FileIndex { files })
    }

    /// The names that may be operators called in the files that define or implement any of
    /// `items`, following the functions those files call into the files defining them. Names
    /// that several files define (`new`, `check`) are methods of unrelated types more often than
    /// shared helpers, and are not followed.
    fn calls_of(&self, items: &BTreeSet<String>) -> BTreeSet<String> {
        let mut definers: BTreeMap<&str, usize> = BTreeMap::new();
        for (defined, _) in &self.files {
            for d in defined {
                *definers.entry(d.as_str()).or_default() += 1;
            }
        }
        let mut out = BTreeSet::new();
        let mut wanted = items.clone();
        let mut seen = vec![false; self.files.len()];
        loop {
            let mut more = BTreeSet::new();
            for (i, (defined, calls)) in self.files.iter().enumerate() {
                if !seen[i] && defined.iter().any(|d| wanted.contains(d)) {
                    seen[i] = true;
                    out.extend(calls.names.iter().cloned());
                    more.extend(calls.fns.iter().filter(|f| definers.get(f.as_str()) == Some(&1)).cloned());
                }
            }
            if more.is_subset(&wanted) {
                return out;
            }
            wanted.extend(more);
        }
    }
}

fn collect_defined(items: &[syn::Item], out: &mut BTreeSet<String>) {
    for item in items {
        match item {
            syn::Item::Impl(im) => {
                if let Some((_, path, _)) = &im.trait_ {
                    if let Some(seg) = path.segments.last() {
                        out.insert(seg.ident.to_string());
                    }
                }
            }
            syn::Item::Fn(f) => {
                out.insert(f.sig.ident.to_string());
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_defined(items, out);
                }
            }
            _ => {}
        }
    }
}

/// The kernel traits of `f` (the names its hand-written kernels implement).
fn kernel_traits(f: &NativeFunction) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if f.generated_from.is_some() {
        // `autogen:` kernels are generated: no trait, no file.
        return out;
    }
    for (key, kernel) in &f.dispatch {
        out.insert(format!("{}{}", crate::emit::names::camel(kernel), key.trait_suffix()));
    }
    if f.structured {
        // The meta function's trait.
        out.insert(format!("{}MetaFn", crate::emit::names::camel(&rust_name(&f.func.name))));
    }
    out
}

/// `selected` and everything it needs (see the module docs), as operator names.
pub fn closure(
    selected: &BTreeSet<String>,
    fns: &[NativeFunction],
    derivatives: &[Derivative],
    sources: &Sources,
) -> Result<BTreeSet<String>, String> {
    // Operators by the Rust names code calls them by (several overloads share one).
    let mut by_rust: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in fns {
        by_rust.entry(rust_name(&f.func.name)).or_default().push(f.func.name.to_string());
        by_rust.entry(f.func.name.name.base.clone()).or_default().push(f.func.name.to_string());
    }
    let kernels = FileIndex::new(&sources.kernels)?;
    let helpers = FileIndex::new(&sources.autograd_helpers)?;
    let mut names: BTreeSet<String> = BTreeSet::new();
    for p in &sources.always {
        names.extend(calls_in(p)?);
    }
    let mut keep: BTreeSet<String> = selected.clone();
    for n in &names {
        keep.extend(by_rust.get(n).into_iter().flatten().cloned());
    }
    // To a fixed point: each newly kept operator adds what its kernels and formulas call.
    let mut done: BTreeSet<String> = BTreeSet::new();
    loop {
        let todo: Vec<String> = keep.difference(&done).cloned().collect();
        if todo.is_empty() {
            break;
        }
        for op in todo {
            done.insert(op.clone());
            let Some(f) = fns.iter().find(|f| f.func.name.to_string() == op) else { continue };
            let mut called = BTreeSet::new();
            // The structured group: the impl and meta function the wrappers call.
            if let Some(d) = &f.structured_delegate {
                keep.insert(d.to_string());
            }
            // An `autogen:` out= kernel calls its functional operator.
            if let Some(from) = &f.generated_from {
                keep.insert(from.to_string());
            }
            called.extend(kernels.calls_of(&kernel_traits(f)));
            for d in derivatives.iter().filter(|d| d.name == op || d.func.signature() == f.func.signature()) {
                for formula in &d.formulas {
                    let mut calls = Calls::default();
                    if let Ok(e) = syn::parse_str::<syn::Expr>(&formula.code) {
                        calls.visit_expr(&e);
                    }
                    called.extend(helpers.calls_of(&calls.fns));
                    called.extend(calls.names);
                }
            }
            for n in &called {
                keep.extend(by_rust.get(n).into_iter().flatten().cloned());
            }
        }
    }
    Ok(keep)
}

/// What a build script of oxten generates: everything, or with `OXTEN_SELECTED_OPS` set (an
/// allowlist path, absolute or relative to the workspace `root`), only the selected operators'
/// closure. Tells cargo which files and variables to watch; the second value is the number of
/// operators kept, for a selective build.
pub fn generate_for_build(
    native_functions: &Path,
    derivatives: &Path,
    root: &Path,
) -> Result<(crate::emit::Generated, Option<usize>), Vec<String>> {
    println!("cargo:rerun-if-env-changed=OXTEN_SELECTED_OPS");
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| vec![format!("{}: {e}", p.display())]);
    let text = read(native_functions)?;
    let fns = crate::yaml::parse_native_functions(&text, &native_functions.display().to_string())
        .map_err(|es| es.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    let ds = if derivatives.exists() {
        crate::derivatives::parse_derivatives(&read(derivatives)?, &derivatives.display().to_string(), &fns)?
    } else {
        Vec::new()
    };
    let Some(list) = std::env::var_os("OXTEN_SELECTED_OPS").filter(|v| !v.is_empty()) else {
        return Ok((crate::emit::generate_with_derivatives(&fns, &ds)?, None));
    };
    let list = root.join(PathBuf::from(list));
    println!("cargo:rerun-if-changed={}", list.display());
    let selected = read_allowlist(&list, &fns).map_err(|e| vec![format!("OXTEN_SELECTED_OPS: {e}")])?;
    let keep = closure(&selected, &fns, &ds, &Sources::in_repo(root)).map_err(|e| vec![e])?;
    for dir in [root.join("kernels/src"), root.join("gen/src"), root.join("runtime/src")] {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
    Ok((crate::emit::generate_selected(&fns, &ds, Some(&keep))?, Some(keep.len())))
}
