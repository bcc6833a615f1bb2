//! A check that the functions and `try_` methods a formula calls exist, run by `oxten-codegen
//! check` before code generation. A misspelt call otherwise fails only in rustc, inside the
//! generated autograd code; this names the derivatives.yaml line instead.
//!
//! Functions must be autograd helpers (the `pub fn`s under `gen/src/autograd/helpers`) or
//! operator free functions; `try_` methods must be generated `Tensor` methods or hand-written
//! ones (`pub fn try_*` in an `impl Tensor` block of the runtime). Other method names (`len`,
//! `sizes`, `unwrap_or` …) belong to types the check does not track, and are left to rustc.

use super::Derivative;
use crate::emit::names::rust_name;
use crate::yaml::{NativeFunction, Variant};
use std::collections::BTreeSet;
use syn::visit::Visit;

/// What formulas may call.
#[derive(Clone, Debug, Default)]
pub struct Vocabulary {
    pub functions: BTreeSet<String>,
    pub tensor_methods: BTreeSet<String>,
}

impl Vocabulary {
    /// The operators' free functions and `Tensor` methods (both forms), plus `helpers` (free
    /// functions) and `methods` (hand-written `Tensor` methods).
    pub fn new(fns: &[NativeFunction], helpers: BTreeSet<String>, methods: BTreeSet<String>) -> Vocabulary {
        let mut v = Vocabulary { functions: helpers, tensor_methods: methods };
        for f in fns {
            let n = rust_name(&f.func.name);
            if f.variants.contains(&Variant::Function) {
                v.functions.extend([format!("try_{n}"), n.clone()]);
            }
            if f.variants.contains(&Variant::Method) {
                v.tensor_methods.extend([format!("try_{n}"), n]);
            }
        }
        v
    }
}

/// The `pub fn` names of the Rust files under `dir`, top-level or in inline modules (`helpers`),
/// and separately the `pub fn` names inside `impl Tensor` blocks (`methods`).
pub fn scan_rust(dir: &std::path::Path) -> Result<(BTreeSet<String>, BTreeSet<String>), String> {
    let (mut fns, mut methods) = (BTreeSet::new(), BTreeSet::new());
    for (_, file) in crate::locate::parse_rs_files(dir)? {
        scan_items(&file.items, &mut fns, &mut methods);
    }
    Ok((fns, methods))
}

fn scan_items(items: &[syn::Item], fns: &mut BTreeSet<String>, methods: &mut BTreeSet<String>) {
    for item in items {
        match item {
            syn::Item::Fn(f) if matches!(f.vis, syn::Visibility::Public(_)) => {
                fns.insert(f.sig.ident.to_string());
            }
            syn::Item::Impl(i) if i.trait_.is_none() => {
                let is_tensor = matches!(&*i.self_ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Tensor"));
                if is_tensor {
                    for it in &i.items {
                        if let syn::ImplItem::Fn(m) = it {
                            methods.insert(m.sig.ident.to_string());
                        }
                    }
                }
            }
            // `pub use other::helper;` re-exports a function under its name.
            syn::Item::Use(u) if matches!(u.vis, syn::Visibility::Public(_)) => use_names(&u.tree, fns),
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    scan_items(items, fns, methods);
                }
            }
            _ => {}
        }
    }
}

fn use_names(tree: &syn::UseTree, out: &mut BTreeSet<String>) {
    match tree {
        syn::UseTree::Path(p) => use_names(&p.tree, out),
        syn::UseTree::Name(n) => {
            out.insert(n.ident.to_string());
        }
        syn::UseTree::Rename(r) => {
            out.insert(r.rename.to_string());
        }
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_names(t, out)),
        syn::UseTree::Glob(_) => {}
    }
}

struct Calls<'a> {
    vocab: &'a Vocabulary,
    unknown: Vec<String>,
    /// Names bound by the formula itself (closures, `let`): calls through them are not checked.
    bound: BTreeSet<String>,
}

impl<'ast> Visit<'ast> for Calls<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.bound.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*c.func {
            // Only plain names (`sum_to(..)`): paths like `Tensor::scalar` or `Some` are not ours.
            if let (Some(id), true) = (p.path.get_ident(), p.qself.is_none()) {
                let name = id.to_string();
                let is_ctor = name.chars().next().is_some_and(char::is_uppercase);
                if !is_ctor && !self.vocab.functions.contains(&name) {
                    self.unknown.push(format!("function `{name}`"));
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        if name.starts_with("try_") && !self.vocab.tensor_methods.contains(&name) {
            self.unknown.push(format!("method `{name}`"));
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

/// The calls of unknown functions and `try_` methods in the formulas, as
/// `file:line: in `entry`: …` errors.
pub fn unknown_calls(ds: &[Derivative], file: &str, vocab: &Vocabulary) -> Vec<String> {
    let mut errors = Vec::new();
    for d in ds {
        for f in &d.formulas {
            let Ok(expr) = syn::parse_str::<syn::Expr>(&f.code) else { continue };
            let mut calls = Calls { vocab, unknown: Vec::new(), bound: BTreeSet::new() };
            calls.visit_expr(&expr);
            for u in calls.unknown {
                // Closures bound in the formula (`let f = |x| …; f(a)`) are callable names too.
                if calls.bound.iter().any(|b| u == format!("function `{b}`")) {
                    continue;
                }
                errors.push(format!(
                    "{file}:{}: in `{}`: the formula calls the unknown {u}: no autograd helper, operator \
                     function or Tensor method has that name",
                    f.line, d.name
                ));
            }
        }
    }
    errors
}
