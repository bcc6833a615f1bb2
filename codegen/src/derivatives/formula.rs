//! Formulas: one Rust expression each, parsed with `syn`.
//!
//! Two passes over the syntax tree, both done by [`Walker`]:
//!
//! 1. [`analyze`] finds every name the formula uses from the entry's scope (`grad`, inputs,
//!    outputs …), tracking `let`, closure and `match` bindings so that locals shadow scope names,
//!    and notes the tensors used only as the receiver of a metadata method (`self.sizes()`), which
//!    the node can save as metadata instead of keeping the tensor alive.
//! 2. [`rewrite`] renames `self` to `self_` (Rust cannot bind `self` in the generated code) and
//!    replaces the metadata calls of tensors saved as metadata with the saved value, then prints
//!    the expression back. `Copy` metadata is bound by value (`self.dtype()` becomes
//!    `self_dtype`); sizes and strides are bound by reference, so `&self.sizes()` becomes
//!    `self_sizes` and a bare `self.sizes()` becomes `self_sizes.clone()`.

use std::collections::{BTreeMap, BTreeSet};
use syn::punctuated::Punctuated;
use syn::{Block, Expr, Pat, Stmt, Token};

/// A metadata method: calling it on a tensor that is otherwise unused saves only its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MetaMethod {
    /// The method name (`sizes`).
    pub name: &'static str,
    /// The Rust type it returns (`DimVec`).
    pub ty: &'static str,
    /// Whether the type is `Copy` (else the formula gets a clone of the saved value).
    pub copy: bool,
}

/// The metadata methods of `Tensor` that are saved instead of the tensor.
pub const METADATA_METHODS: [MetaMethod; 8] = [
    MetaMethod { name: "sizes", ty: "DimVec", copy: false },
    MetaMethod { name: "strides", ty: "DimVec", copy: false },
    MetaMethod { name: "storage_offset", ty: "i64", copy: true },
    MetaMethod { name: "dtype", ty: "DType", copy: true },
    MetaMethod { name: "device", ty: "Device", copy: true },
    MetaMethod { name: "numel", ty: "i64", copy: true },
    MetaMethod { name: "dim", ty: "usize", copy: true },
    MetaMethod { name: "is_contiguous", ty: "bool", copy: true },
];

/// Looks a metadata method up by name.
pub fn meta_method(name: &str) -> Option<MetaMethod> {
    METADATA_METHODS.iter().copied().find(|m| m.name == name)
}

/// What a formula uses from its entry's scope.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refs {
    /// Names used other than as the receiver of a metadata method.
    pub names: BTreeSet<String>,
    /// `(tensor name, metadata method)` pairs used.
    pub meta: BTreeSet<(String, MetaMethod)>,
}

/// Names Rust code may use without them being in the entry's scope.
const GLOBAL_VALUES: [&str; 6] = ["None", "Some", "Ok", "Err", "true", "false"];

/// Parses a formula as a Rust expression.
pub fn parse(text: &str) -> Result<Expr, String> {
    syn::parse_str::<Expr>(text).map_err(|e| {
        let e = e.to_string();
        // The lexer's message for unbalanced delimiters says nothing useful.
        let e = if e == "cannot parse string into token stream" { "unbalanced delimiters".to_string() } else { e };
        format!("cannot parse `{text}` as a Rust expression: {e}")
    })
}

/// Finds what `expr` uses. `scope` maps every name in scope to whether it is a single tensor
/// (whose metadata calls may be saved as metadata). Errors name the first unknown name.
pub fn analyze(expr: &Expr, scope: &BTreeMap<String, bool>) -> Result<Refs, String> {
    let none = BTreeSet::new();
    let mut w = Walker { scope, locals: Vec::new(), refs: Refs::default(), rewrite: None, lists: &none };
    let mut e = expr.clone();
    w.expr(&mut e)?;
    Ok(w.refs)
}

/// Renames `self` and replaces the metadata calls of the tensors in `meta_saved`, returning the
/// Rust code of the rewritten expression. The names in `lists` are `Tensor[]` inputs: their
/// metadata is saved as one value per element (a `Vec`), so every metadata call on them reads
/// the saved `Vec` by reference, whatever the method's type.
pub fn rewrite(
    expr: &Expr,
    scope: &BTreeMap<String, bool>,
    meta_saved: &BTreeSet<String>,
    lists: &BTreeSet<String>,
) -> Result<String, String> {
    let mut w = Walker { scope, locals: Vec::new(), refs: Refs::default(), rewrite: Some(meta_saved), lists };
    let mut e = expr.clone();
    w.expr(&mut e)?;
    Ok(print_expr(&e))
}

/// The local name a metadata value gets in `apply` (`self_sizes`).
pub fn meta_local(name: &str, method: &str) -> String {
    format!("{name}_{method}")
}

/// Prints an expression through prettyplease (syn alone cannot print without `quote`).
pub fn print_expr(e: &Expr) -> String {
    let mut file: syn::File = syn::parse_str("fn __formula() { () }").expect("a valid item");
    if let Some(syn::Item::Fn(f)) = file.items.first_mut() {
        f.block.stmts = vec![Stmt::Expr(e.clone(), None)];
    }
    let text = prettyplease::unparse(&file);
    let body = text.trim_end().strip_prefix("fn __formula() {").and_then(|s| s.strip_suffix('}')).unwrap_or(&text);
    body.lines().map(|l| l.strip_prefix("    ").unwrap_or(l)).collect::<Vec<_>>().join("\n").trim().to_string()
}

struct Walker<'a> {
    scope: &'a BTreeMap<String, bool>,
    locals: Vec<BTreeSet<String>>,
    refs: Refs,
    /// `Some(names saved as metadata)` in the rewriting pass.
    rewrite: Option<&'a BTreeSet<String>>,
    /// `Tensor[]` names, whose saved metadata is a `Vec` (never `Copy`).
    lists: &'a BTreeSet<String>,
}

type R = Result<(), String>;

impl Walker<'_> {
    fn is_local(&self, name: &str) -> bool {
        self.locals.iter().rev().any(|s| s.contains(name))
    }

    /// A plain single-identifier path (`grad`, `self`), if `p` is one.
    fn plain_ident(p: &syn::ExprPath) -> Option<String> {
        if p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1 {
            let seg = &p.path.segments[0];
            if matches!(seg.arguments, syn::PathArguments::None) {
                return Some(seg.ident.to_string());
            }
        }
        None
    }

    fn unknown(&self, name: &str) -> String {
        let valid: Vec<&str> = self.scope.keys().map(String::as_str).collect();
        format!("unknown name `{name}`; names in scope: {}", valid.join(", "))
    }

    fn path(&mut self, p: &mut syn::ExprPath) -> R {
        let Some(name) = Self::plain_ident(p) else { return Ok(()) };
        if self.is_local(&name) {
            return Ok(());
        }
        if self.scope.contains_key(&name) {
            self.refs.names.insert(name.clone());
            if name == "self" && self.rewrite.is_some() {
                let ident = &mut p.path.segments[0].ident;
                *ident = syn::Ident::new("self_", ident.span());
            }
            return Ok(());
        }
        if GLOBAL_VALUES.contains(&name.as_str()) || name.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Ok(());
        }
        Err(self.unknown(&name))
    }

    /// `x.sizes()` on a scope tensor `x` that is not shadowed: `Some((x, method))`.
    fn metadata_call(&self, m: &syn::ExprMethodCall) -> Option<(String, MetaMethod)> {
        let Expr::Path(p) = &*m.receiver else { return None };
        let name = Self::plain_ident(p)?;
        let method = meta_method(&m.method.to_string())?;
        if !m.args.is_empty() || m.turbofish.is_some() || self.is_local(&name) {
            return None;
        }
        match self.scope.get(&name) {
            Some(true) => Some((name, method)),
            _ => None,
        }
    }

    fn expr(&mut self, e: &mut Expr) -> R {
        // `&self.sizes()` of a tensor saved as metadata: the local already is a reference.
        if let (Some(saved), Expr::Reference(r)) = (self.rewrite, &*e) {
            if let Expr::MethodCall(m) = &*r.expr {
                if let Some((name, method)) = self.metadata_call(m) {
                    let copy = method.copy && !self.lists.contains(&name);
                    if r.mutability.is_none() && !copy && saved.contains(&name) {
                        let local = meta_local(&name, method.name);
                        *e = syn::parse_str::<Expr>(&local).map_err(|err| err.to_string())?;
                        return Ok(());
                    }
                }
            }
        }
        if let Expr::MethodCall(m) = e {
            if let Some((name, method)) = self.metadata_call(m) {
                match self.rewrite {
                    None => {
                        self.refs.meta.insert((name, method));
                        return Ok(());
                    }
                    Some(saved) if saved.contains(&name) => {
                        let local = meta_local(&name, method.name);
                        let copy = method.copy && !self.lists.contains(&name);
                        let code = if copy { local } else { format!("{local}.clone()") };
                        *e = syn::parse_str::<Expr>(&code).map_err(|err| err.to_string())?;
                        return Ok(());
                    }
                    Some(_) => {}
                }
                // Saved in full: the receiver is an ordinary use (and `self` still needs renaming).
                if let Expr::MethodCall(m) = e {
                    return self.expr(&mut m.receiver);
                }
            }
        }
        match e {
            Expr::Path(p) => self.path(p),
            Expr::Lit(_) => Ok(()),
            Expr::MethodCall(m) => {
                self.expr(&mut m.receiver)?;
                m.args.iter_mut().try_for_each(|a| self.expr(a))
            }
            Expr::Call(c) => {
                let callee_is_fn = match &*c.func {
                    Expr::Path(p) => match Self::plain_ident(p) {
                        Some(name) => !self.scope.contains_key(&name) || self.is_local(&name),
                        None => true,
                    },
                    _ => false,
                };
                if !callee_is_fn {
                    self.expr(&mut c.func)?;
                }
                c.args.iter_mut().try_for_each(|a| self.expr(a))
            }
            Expr::Array(a) => a.elems.iter_mut().try_for_each(|x| self.expr(x)),
            Expr::Tuple(t) => t.elems.iter_mut().try_for_each(|x| self.expr(x)),
            Expr::Binary(b) => {
                self.expr(&mut b.left)?;
                self.expr(&mut b.right)
            }
            Expr::Assign(a) => {
                self.expr(&mut a.left)?;
                self.expr(&mut a.right)
            }
            Expr::Unary(u) => self.expr(&mut u.expr),
            Expr::Reference(r) => self.expr(&mut r.expr),
            Expr::Paren(p) => self.expr(&mut p.expr),
            Expr::Group(g) => self.expr(&mut g.expr),
            Expr::Try(t) => self.expr(&mut t.expr),
            Expr::Cast(c) => self.expr(&mut c.expr),
            Expr::Field(f) => self.expr(&mut f.base),
            Expr::Index(i) => {
                self.expr(&mut i.expr)?;
                self.expr(&mut i.index)
            }
            Expr::Range(r) => {
                if let Some(s) = &mut r.start {
                    self.expr(s)?;
                }
                if let Some(s) = &mut r.end {
                    self.expr(s)?;
                }
                Ok(())
            }
            Expr::Repeat(r) => {
                self.expr(&mut r.expr)?;
                self.expr(&mut r.len)
            }
            Expr::Block(b) => self.block(&mut b.block),
            Expr::Unsafe(_) => Err("`unsafe` blocks are not allowed in formulas".into()),
            Expr::If(i) => {
                self.locals.push(BTreeSet::new());
                self.expr(&mut i.cond)?;
                self.block(&mut i.then_branch)?;
                self.locals.pop();
                if let Some((_, e)) = &mut i.else_branch {
                    self.expr(e)?;
                }
                Ok(())
            }
            Expr::Let(l) => {
                self.expr(&mut l.expr)?;
                self.bind(&l.pat);
                Ok(())
            }
            Expr::Match(m) => {
                self.expr(&mut m.expr)?;
                for arm in &mut m.arms {
                    self.locals.push(BTreeSet::new());
                    self.bind(&arm.pat);
                    if let Some((_, g)) = &mut arm.guard {
                        self.expr(g)?;
                    }
                    self.expr(&mut arm.body)?;
                    self.locals.pop();
                }
                Ok(())
            }
            Expr::Closure(c) => {
                self.locals.push(BTreeSet::new());
                for p in &c.inputs {
                    self.bind(p);
                }
                let r = self.expr(&mut c.body);
                self.locals.pop();
                r
            }
            Expr::Struct(s) => {
                for f in &mut s.fields {
                    self.expr(&mut f.expr)?;
                }
                if let Some(rest) = &mut s.rest {
                    self.expr(rest)?;
                }
                Ok(())
            }
            Expr::Macro(m) => self.mac(&mut m.mac),
            other => Err(format!("unsupported expression `{}` in a formula", print_expr(other))),
        }
    }

    fn block(&mut self, b: &mut Block) -> R {
        self.locals.push(BTreeSet::new());
        let r = b.stmts.iter_mut().try_for_each(|s| self.stmt(s));
        self.locals.pop();
        r
    }

    fn stmt(&mut self, s: &mut Stmt) -> R {
        match s {
            Stmt::Local(l) => {
                if let Some(init) = &mut l.init {
                    self.expr(&mut init.expr)?;
                    if let Some((_, e)) = &mut init.diverge {
                        self.expr(e)?;
                    }
                }
                self.bind(&l.pat);
                Ok(())
            }
            Stmt::Expr(e, _) => self.expr(e),
            Stmt::Macro(m) => self.mac(&mut m.mac),
            Stmt::Item(_) => Err("items (fn, struct, use …) are not allowed in formulas".into()),
        }
    }

    /// Macros whose body is a comma-separated list of expressions (`vec![a, b]`).
    fn mac(&mut self, mac: &mut syn::Macro) -> R {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let parsed = mac
            .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
            .map_err(|_| format!("the arguments of macro `{name}!` must be comma-separated expressions"))?;
        let mut args: Vec<Expr> = parsed.into_iter().collect();
        for a in &mut args {
            self.expr(a)?;
        }
        if self.rewrite.is_some() {
            let body: Vec<String> = args.iter().map(print_expr).collect();
            let text = format!("{name}!({})", body.join(", "));
            let new: syn::Macro = syn::parse_str(&text).map_err(|e| format!("rewriting `{name}!`: {e}"))?;
            mac.tokens = new.tokens;
        }
        Ok(())
    }

    /// Adds the names a pattern binds to the innermost local scope.
    fn bind(&mut self, p: &Pat) {
        let mut names = BTreeSet::new();
        collect_bindings(p, &mut names);
        if self.locals.is_empty() {
            self.locals.push(BTreeSet::new());
        }
        if let Some(top) = self.locals.last_mut() {
            top.extend(names);
        }
    }
}

fn collect_bindings(p: &Pat, out: &mut BTreeSet<String>) {
    match p {
        Pat::Ident(i) => {
            out.insert(i.ident.to_string());
            if let Some((_, sub)) = &i.subpat {
                collect_bindings(sub, out);
            }
        }
        Pat::Tuple(t) => t.elems.iter().for_each(|e| collect_bindings(e, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|e| collect_bindings(e, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| collect_bindings(&f.pat, out)),
        Pat::Slice(s) => s.elems.iter().for_each(|e| collect_bindings(e, out)),
        Pat::Or(o) => o.cases.iter().for_each(|e| collect_bindings(e, out)),
        Pat::Reference(r) => collect_bindings(&r.pat, out),
        Pat::Paren(p) => collect_bindings(&p.pat, out),
        Pat::Type(t) => collect_bindings(&t.pat, out),
        _ => {}
    }
}
