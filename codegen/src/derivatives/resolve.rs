//! Checking raw entries against `native_functions.yaml` and working out each backward node:
//! its name, its differentiable inputs, what it saves and how each formula's names are bound.

use super::formula::{self, MetaMethod, Refs};
use super::load::{RawEntry, RawError, RawFormula};
use crate::emit::names::{self, TensorArg};
use crate::model::{Argument, BaseTy, FunctionSchema, SchemaKind, Type};
use crate::yaml::NativeFunction;
use std::collections::{BTreeMap, BTreeSet};

/// One differentiable input of an operator: a next edge of its node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffInput {
    /// The schema name (`self`).
    pub name: String,
    /// The Rust identifier (`self_`).
    pub ident: String,
    /// Whether the input is `Tensor?`.
    pub optional: bool,
    /// Whether the input is a `Tensor[]`: one edge per element, and its formula returns one
    /// gradient per element (a `Vec` of `Tensor` or of `Option<Tensor>`).
    pub list: bool,
}

/// One formula of an entry, ready to emit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula {
    /// The 1-based line of its key in derivatives.yaml.
    pub line: usize,
    /// The inputs it computes gradients for, as indices into [`Derivative::inputs`]. A joint
    /// formula (several inputs) returns a tuple of `Option<Tensor>`, one per input.
    pub vars: Vec<usize>,
    /// The formula as written.
    pub text: String,
    /// The Rust code after renaming `self` and substituting saved metadata.
    pub code: String,
    /// The locals the code uses, each bound in `apply` as [`Derivative::bindings`] says.
    pub locals: BTreeSet<String>,
}

/// How the tangent of one output is computed (forward mode, `result:` keys).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForwardKind {
    /// A Rust expression over `<input>_p` (primals), `<input>_t` (tangents of the differentiable
    /// inputs), the non-tensor arguments and non-differentiable tensors by name, and the outputs.
    Explicit {
        /// The code, `self` renamed.
        code: String,
        /// The names it uses.
        names: BTreeSet<String>,
    },
    /// `auto_element_wise`: the backward formula of the single differentiable input (index into
    /// [`Derivative::formulas`]) with the tangent in place of `grad`.
    ElementWise { formula: usize },
    /// `auto_linear`: the operator applied to the tangents.
    Linear,
}

/// The forward formula of one differentiable output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardFormula {
    /// The 1-based line of its key.
    pub line: usize,
    /// The output it gives the tangent of.
    pub output: usize,
    pub kind: ForwardKind,
    /// Whether it reads an output (then it runs after the operator, else before an in-place
    /// write).
    pub uses_result: bool,
}

/// How a local of a formula gets its value inside `apply`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// `grad`: the gradient of the first differentiable output.
    Grad,
    /// `grads`: the gradients of every differentiable output, a `Vec<Tensor>`.
    Grads,
    /// `grad_<name>`: the gradient of the differentiable output with this index.
    GradOf(usize),
    /// `grad_input_mask`: which inputs of the formula need a gradient.
    GradInputMask,
    /// A saved tensor input: `field.unpack(self)?` (an `Option<Tensor>` when `optional`).
    Tensor { field: String, optional: bool },
    /// A saved `Tensor[]` (or `Tensor?[]` when `optional`) input: a `Vec<Tensor>` (or
    /// `Vec<Option<Tensor>>`) unpacked element by element.
    TensorList { field: String, optional: bool },
    /// A saved output (a `OnceLock<SavedVariable>`, set after the output's history).
    Output { field: String },
    /// A saved non-tensor argument or metadata value.
    Value { field: String, by: ValueBy },
}

/// How a saved value is bound to a formula's local.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueBy {
    /// `let x = self.x;` (a `Copy` value).
    Copy,
    /// `let x = self.x.clone();` (an owned `Vec` or `String`, as formulas get lists and strings).
    Clone,
    /// `let x = &self.x;` (saved metadata such as sizes; the rewritten formula clones it).
    Ref,
}

/// Where a saved field's value comes from in the autograd kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldSource {
    /// A tensor argument, saved before the op runs.
    InputTensor { ident: String, optional: bool },
    /// A `Tensor[]` (or `Tensor?[]` when `optional`) argument, saved element by element before
    /// the op runs (a `Vec<SavedVariable>`).
    InputTensorList { ident: String, optional: bool },
    /// Output `index`, saved after the op ran and its history was set (`is_output` when it is a
    /// differentiable output, whose history is this node); the field is a `OnceLock`.
    OutputTensor { index: usize, is_output: bool },
    /// A metadata method of a tensor argument.
    InputMeta { ident: String, method: MetaMethod },
    /// A metadata method of every element of a `Tensor[]` argument (a `Vec` of its results).
    InputMetaList { ident: String, method: MetaMethod },
    /// A non-tensor argument, converted to an owned value by `conv`.
    Value { conv: String },
}

/// One field of a node struct besides its `NodeBase`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedField {
    pub name: String,
    /// The field's Rust type.
    pub ty: String,
    pub source: FieldSource,
}

/// One checked derivatives.yaml entry: everything the emitter needs for its node and kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derivative {
    /// The 1-based line of the entry.
    pub line: usize,
    /// The operator (`mul.Tensor`).
    pub name: String,
    pub func: FunctionSchema,
    /// The node type (`MulBackward0`).
    pub node: String,
    /// The differentiable inputs, in schema order (the node's next edges).
    pub inputs: Vec<DiffInput>,
    pub formulas: Vec<Formula>,
    /// One flag per return.
    pub output_differentiability: Vec<bool>,
    pub fields: Vec<SavedField>,
    /// How every local of every formula is bound.
    pub bindings: BTreeMap<String, Binding>,
    /// Whether the tensor `self` is saved in full: an in-place variant must then save a clone
    /// of `self` taken before it writes.
    pub saves_self: bool,
    /// The forward-mode formulas (`result:` keys), at most one per differentiable output.
    pub forward: Vec<ForwardFormula>,
}

impl Derivative {
    /// Whether some output is differentiable (else the op needs no autograd kernel).
    pub fn has_differentiable_output(&self) -> bool {
        self.output_differentiability.iter().any(|&d| d)
    }
    /// The indices of the differentiable outputs, in order (the node's grads).
    pub fn differentiable_outputs(&self) -> Vec<usize> {
        (0..self.output_differentiability.len()).filter(|&i| self.output_differentiability[i]).collect()
    }
    /// Whether every differentiable output has a forward formula.
    pub fn has_forward(&self) -> bool {
        self.differentiable_outputs().iter().all(|o| self.forward.iter().any(|f| f.output == *o))
    }
}

/// Whether `f` has a kernel below autograd (a backend or CompositeExplicitAutograd kernel), so
/// that its gradient needs a formula rather than coming from a decomposition.
pub fn has_backend_kernel(f: &NativeFunction) -> bool {
    f.is_structured_group_member()
        || f.dispatch.keys().any(|k| *k != crate::backend::DispatchKey::CompositeImplicitAutograd)
}

/// Whether an argument type is a tensor that can have a gradient edge.
fn single_tensor(ty: &Type) -> Option<bool> {
    match names::tensor_arg(ty) {
        TensorArg::One => Some(false),
        TensorArg::Optional => Some(true),
        _ => None,
    }
}

/// Whether an argument type is a tensor list: `Some(false)` for `Tensor[]`, `Some(true)` for
/// `Tensor?[]`.
fn tensor_list(ty: &Type) -> Option<bool> {
    match names::tensor_arg(ty) {
        TensorArg::List => Some(false),
        TensorArg::OptionalList => Some(true),
        _ => None,
    }
}

/// The name of output `i` as formulas may write it, besides a return name.
fn result_name(n: usize, i: usize) -> String {
    if n == 1 {
        "result".into()
    } else {
        format!("result{i}")
    }
}

/// An owned Rust type for a non-tensor argument, and the conversion from its kernel parameter.
fn owned_value(arg: &Argument) -> Result<(String, String), String> {
    let ident = names::arg_ident(&arg.name);
    let ty = names::arg_type(&arg.ty)?;
    Ok(match ty.as_str() {
        "&str" => ("String".into(), format!("{ident}.to_string()")),
        "Option<&str>" => ("Option<String>".into(), format!("{ident}.map(str::to_string)")),
        "Option<&Generator>" => ("Option<Generator>".into(), format!("{ident}.cloned()")),
        t if t.starts_with("&[") && t.ends_with(']') && !t.contains("Tensor") => {
            let elem = &t[2..t.len() - 1];
            (format!("Vec<{elem}>"), format!("{ident}.to_vec()"))
        }
        t if t.starts_with("Option<&[") && !t.contains("Tensor") => {
            let elem = &t[9..t.len() - 2];
            (format!("Option<Vec<{elem}>>"), format!("{ident}.map(<[{elem}]>::to_vec)"))
        }
        t if t.contains("Tensor") => return Err(format!("`{}` arguments are not supported in formulas yet", arg.ty)),
        t => (t.to_string(), ident),
    })
}

fn is_copy(ty: &str) -> bool {
    !ty.contains("Vec") && !ty.contains("String") && !ty.contains("Generator")
}

/// `mul` → `Mul`, `_to_copy` → `ToCopy`.
fn camel_base(base: &str) -> String {
    names::camel(base.trim_start_matches('_'))
}

/// Checks every entry and builds its [`Derivative`]. Errors are `(line, entry, message)`.
pub fn resolve(entries: &[RawEntry], fns: &[NativeFunction]) -> Result<Vec<Derivative>, Vec<RawError>> {
    let mut errors = Vec::new();
    let mut out = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_base: BTreeMap<String, usize> = BTreeMap::new();
    for e in entries {
        let label = e.name.split('(').next().unwrap_or("").trim().to_string();
        let mut err = |line: usize, msg: String| errors.push((line, label.clone(), msg));
        let Some(f) = fns.iter().find(|f| f.func.to_string() == e.name) else {
            let op = fns.iter().find(|f| f.func.name.to_string() == label);
            let hint = match op {
                Some(f) => format!(" (the schema of `{label}` there is `{}`)", f.func),
                None => String::new(),
            };
            err(e.line, format!("`{}` matches no operator in native_functions.yaml{hint}", e.name));
            continue;
        };
        if let Some(prev) = seen.insert(e.name.clone(), e.line) {
            err(e.line, format!("a second entry for this operator (the first is on line {prev})"));
            continue;
        }
        match f.func.kind() {
            SchemaKind::Out => {
                err(
                    e.line,
                    "out= overloads are never differentiable; write the entry for the functional overload".into(),
                );
                continue;
            }
            SchemaKind::Mutable => {
                err(e.line, "mutable (non-inplace, non-out) operators are not supported by derivatives.yaml".into());
                continue;
            }
            SchemaKind::Inplace => {
                let sig = f.func.signature();
                if let Some(func) =
                    fns.iter().find(|g| g.func.kind() == SchemaKind::Functional && g.func.signature() == sig)
                {
                    err(
                        e.line,
                        format!(
                            "an in-place variant inherits the formulas of its functional variant; write the entry for `{}` instead",
                            func.func.name
                        ),
                    );
                    continue;
                }
            }
            SchemaKind::Functional => {}
        }
        if !has_backend_kernel(f) {
            err(
                e.line,
                "the operator has only a CompositeImplicitAutograd kernel: its gradient comes from the operators it calls, so it takes no entry".into(),
            );
            continue;
        }
        let base = &f.func.name.name.base;
        let index = per_base.entry(base.clone()).or_insert(0);
        let node = format!("{}Backward{index}", camel_base(base));
        *index += 1;
        match resolve_entry(e, f, node) {
            Ok(d) => out.push(d),
            Err(es) => errors.extend(es.into_iter().map(|(l, m)| (l, label.clone(), m))),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// What a scope name refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Name {
    Grad,
    Grads,
    GradOf(usize),
    GradInputMask,
    Input(usize),
    Output(usize),
}

fn resolve_entry(e: &RawEntry, f: &NativeFunction, node: String) -> Result<Derivative, Vec<(usize, String)>> {
    let mut errors: Vec<(usize, String)> = Vec::new();
    let schema = &f.func;
    let args: Vec<&Argument> = schema.arguments.flat_non_out();
    let nret = schema.returns.len();
    let tensor_returns: Vec<bool> = schema.returns.iter().map(|r| r.ty == Type::Base(BaseTy::Tensor)).collect();
    let output_differentiability = match &e.output_differentiability {
        Some((line, flags)) => {
            if flags.len() != nret {
                errors.push((
                    *line,
                    format!(
                        "`output_differentiability` has {} entries but the operator has {nret} returns",
                        flags.len()
                    ),
                ));
            }
            (0..nret).map(|i| flags.get(i).copied().unwrap_or(false) && tensor_returns[i]).collect()
        }
        None => tensor_returns.clone(),
    };
    let diff_outputs: Vec<usize> = (0..nret).filter(|&i| output_differentiability[i]).collect();

    // Names in scope.
    let mut scope: BTreeMap<String, Name> = BTreeMap::new();
    if !diff_outputs.is_empty() {
        scope.insert("grad".into(), Name::Grad);
        scope.insert("grads".into(), Name::Grads);
    }
    scope.insert("grad_input_mask".into(), Name::GradInputMask);
    for (i, a) in args.iter().enumerate() {
        scope.insert(a.name.clone(), Name::Input(i));
    }
    for (i, r) in schema.returns.iter().enumerate() {
        scope.insert(result_name(nret, i), Name::Output(i));
        if let Some(n) = &r.name {
            scope.insert(n.clone(), Name::Output(i));
            if let Some(k) = diff_outputs.iter().position(|&o| o == i) {
                scope.insert(format!("grad_{n}"), Name::GradOf(k));
            }
        }
    }
    // Only tensor inputs (and `Tensor[]` inputs, element by element) may be saved as metadata;
    // outputs are saved whole when used.
    let is_tensor_name = |n: &Name| matches!(n, Name::Input(i) if args[*i].ty == Type::Base(BaseTy::Tensor) || tensor_list(&args[*i].ty) == Some(false));
    let tensor_scope: BTreeMap<String, bool> = scope.iter().map(|(k, v)| (k.clone(), is_tensor_name(v))).collect();
    let list_names: BTreeSet<String> =
        args.iter().filter(|a| tensor_list(&a.ty) == Some(false)).map(|a| a.name.clone()).collect();

    // Formulas per input.
    let arg_names: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
    let mut non_diff: BTreeSet<String> = BTreeSet::new();
    let mut has_formula: BTreeMap<String, usize> = BTreeMap::new();
    let mut parsed: Vec<(usize, Vec<String>, String, syn::Expr, Refs)> = Vec::new();
    let is_output = |v: &String| scope.get(v).is_some_and(|n| matches!(n, Name::Output(_)));
    let (forward_raw, backward_raw): (Vec<&RawFormula>, Vec<&RawFormula>) =
        e.formulas.iter().partition(|rf| rf.vars.iter().any(is_output));
    for rf in &backward_raw {
        let mut ok = true;
        for v in &rf.vars {
            match args.iter().find(|a| &a.name == v) {
                None => {
                    let msg = format!(
                        "`{v}` is not an argument of `{}` (its arguments: {}; outputs take forward formulas: {})",
                        schema.name,
                        arg_names.join(", "),
                        (0..nret).map(|i| result_name(nret, i)).collect::<Vec<_>>().join(", ")
                    );
                    errors.push((rf.line, msg));
                    ok = false;
                }
                Some(a) if tensor_list(&a.ty) == Some(true) && rf.text != "non_differentiable" => {
                    errors
                        .push((rf.line, format!("`{v}` is a `{}`: only `Tensor[]` lists can be differentiable", a.ty)));
                    ok = false;
                }
                Some(a) if tensor_list(&a.ty) == Some(false) && rf.vars.len() > 1 => {
                    errors.push((rf.line, format!("`{v}` is a `{}`: a tensor list needs a formula of its own", a.ty)));
                    ok = false;
                }
                Some(a) if single_tensor(&a.ty).is_none() && tensor_list(&a.ty).is_none() => {
                    let msg = if a.ty.is_tensor_like() {
                        format!("`{v}` is a `{}`: this tensor type cannot have a gradient", a.ty)
                    } else {
                        format!("`{v}` is a `{}`, not a tensor: only tensor arguments have gradients", a.ty)
                    };
                    errors.push((rf.line, msg));
                    ok = false;
                }
                Some(_) => {
                    if let Some(prev) = has_formula.insert(v.clone(), rf.line) {
                        errors.push((rf.line, format!("`{v}` already has a formula (line {prev})")));
                        ok = false;
                    }
                }
            }
        }
        if !ok {
            continue;
        }
        if rf.text == "non_differentiable" {
            non_diff.extend(rf.vars.iter().cloned());
            continue;
        }
        let what = format!("formula for `{}`", rf.vars.join(", "));
        let expr = match formula::parse(&rf.text) {
            Ok(x) => x,
            Err(m) => {
                errors.push((rf.line, format!("{what}: {m}")));
                continue;
            }
        };
        match formula::analyze(&expr, &tensor_scope) {
            Ok(refs) => parsed.push((rf.line, rf.vars.clone(), rf.text.clone(), expr, refs)),
            Err(m) => errors.push((rf.line, format!("{what}: {m}"))),
        }
    }
    if diff_outputs.is_empty() && !parsed.is_empty() {
        errors.push((e.line, "the entry has formulas but no differentiable output".into()));
    }
    // Differentiable inputs: single tensors not marked non_differentiable.
    let inputs: Vec<DiffInput> = if diff_outputs.is_empty() {
        Vec::new()
    } else {
        args.iter()
            .filter_map(|a| match (single_tensor(&a.ty), tensor_list(&a.ty)) {
                (Some(optional), _) => Some((a, optional, false)),
                (None, Some(false)) => Some((a, false, true)),
                _ => None,
            })
            .filter(|(a, _, _)| !non_diff.contains(&a.name))
            .map(|(a, optional, list)| DiffInput {
                name: a.name.clone(),
                ident: names::arg_ident(&a.name),
                optional,
                list,
            })
            .collect()
    };
    for i in &inputs {
        if !has_formula.contains_key(&i.name) {
            errors.push((
                e.line,
                format!(
                    "the differentiable input `{}` has no formula; write one or mark it `{}: non_differentiable`",
                    i.name, i.name
                ),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Which tensors are saved in full, which as metadata.
    let mut full: BTreeSet<String> = BTreeSet::new();
    let mut meta: BTreeSet<(String, MetaMethod)> = BTreeSet::new();
    for (_, _, _, _, refs) in &parsed {
        full.extend(refs.names.iter().cloned());
        meta.extend(refs.meta.iter().cloned());
    }
    let meta_only: BTreeSet<String> = meta.iter().map(|(n, _)| n.clone()).filter(|n| !full.contains(n)).collect();

    // Fields and bindings, in schema order (inputs, then outputs).
    let order = |n: &String| match &scope[n] {
        Name::Input(i) => (0, *i),
        Name::Output(i) => (1, *i),
        _ => (2, 0),
    };
    let mut full_sorted: Vec<&String> = full.iter().collect();
    full_sorted.sort_by_key(|n| order(n));
    let mut meta_sorted: Vec<&(String, MetaMethod)> = meta.iter().collect();
    meta_sorted.sort_by_key(|(n, m)| (order(n), *m));
    let mut fields: Vec<SavedField> = Vec::new();
    let mut bindings: BTreeMap<String, Binding> = BTreeMap::new();
    for name in full_sorted {
        let local = names::arg_ident(name);
        let binding = match &scope[name] {
            Name::Grad => Binding::Grad,
            Name::Grads => Binding::Grads,
            Name::GradOf(k) => Binding::GradOf(*k),
            Name::GradInputMask => Binding::GradInputMask,
            Name::Input(i) => {
                let a = args[*i];
                let ident = names::arg_ident(&a.name);
                if let Some(optional) = single_tensor(&a.ty) {
                    fields.push(SavedField {
                        name: ident.clone(),
                        ty: "SavedVariable".into(),
                        source: FieldSource::InputTensor { ident: ident.clone(), optional },
                    });
                    Binding::Tensor { field: ident, optional }
                } else if let Some(optional) = tensor_list(&a.ty) {
                    fields.push(SavedField {
                        name: ident.clone(),
                        ty: "Vec<SavedVariable>".into(),
                        source: FieldSource::InputTensorList { ident: ident.clone(), optional },
                    });
                    Binding::TensorList { field: ident, optional }
                } else {
                    let (ty, conv) = owned_value(a).map_err(|m| vec![(e.line, m)])?;
                    let by = if is_copy(&ty) { ValueBy::Copy } else { ValueBy::Clone };
                    fields.push(SavedField { name: ident.clone(), ty, source: FieldSource::Value { conv } });
                    Binding::Value { field: ident, by }
                }
            }
            Name::Output(i) => {
                let field = format!("{local}_");
                fields.push(SavedField {
                    name: field.clone(),
                    ty: "OnceLock<SavedVariable>".into(),
                    source: FieldSource::OutputTensor { index: *i, is_output: output_differentiability[*i] },
                });
                Binding::Output { field }
            }
        };
        bindings.insert(local, binding);
    }
    for (name, method) in meta_sorted {
        if !meta_only.contains(name) {
            continue;
        }
        let field = formula::meta_local(name, method.name);
        let Name::Input(i) = &scope[name] else { continue };
        let ident = names::arg_ident(&args[*i].name);
        if list_names.contains(name) {
            // One value per element, bound by reference like sizes.
            let source = FieldSource::InputMetaList { ident, method: *method };
            fields.push(SavedField { name: field.clone(), ty: format!("Vec<{}>", method.ty), source });
            bindings.insert(field.clone(), Binding::Value { field, by: ValueBy::Ref });
            continue;
        }
        let source = FieldSource::InputMeta { ident, method: *method };
        fields.push(SavedField { name: field.clone(), ty: method.ty.into(), source });
        let by = if method.copy { ValueBy::Copy } else { ValueBy::Ref };
        bindings.insert(field.clone(), Binding::Value { field, by });
    }

    // Rewrite each formula and work out its locals.
    let mut formulas = Vec::new();
    for (line, vars, text, expr, refs) in &parsed {
        let code = formula::rewrite(expr, &tensor_scope, &meta_only, &list_names).map_err(|m| vec![(*line, m)])?;
        let mut locals: BTreeSet<String> = refs.names.iter().map(|n| names::arg_ident(n)).collect();
        for (n, m) in &refs.meta {
            if meta_only.contains(n) {
                locals.insert(formula::meta_local(n, m.name));
            } else {
                // Saved whole for another formula: this one reads the metadata off the tensor.
                locals.insert(names::arg_ident(n));
            }
        }
        let vars: Vec<usize> = vars.iter().filter_map(|v| inputs.iter().position(|i| &i.name == v)).collect();
        if vars.is_empty() {
            continue;
        }
        formulas.push(Formula { line: *line, vars, text: text.clone(), code, locals });
    }
    let saves_self = full.contains("self") && matches!(scope.get("self"), Some(Name::Input(_)));
    let forward = resolve_forward(&forward_raw, &args, schema, &scope, &inputs, &formulas, &diff_outputs)?;
    Ok(Derivative {
        line: e.line,
        name: schema.name.to_string(),
        func: schema.clone(),
        node,
        inputs,
        formulas,
        output_differentiability,
        fields,
        bindings,
        saves_self,
        forward,
    })
}

/// Checks the forward formulas (`result:` keys) of an entry.
fn resolve_forward(
    raw: &[&RawFormula],
    args: &[&Argument],
    schema: &FunctionSchema,
    scope: &BTreeMap<String, Name>,
    inputs: &[DiffInput],
    formulas: &[Formula],
    diff_outputs: &[usize],
) -> Result<Vec<ForwardFormula>, Vec<(usize, String)>> {
    let mut errors = Vec::new();
    let mut out: Vec<ForwardFormula> = Vec::new();
    for rf in raw {
        let [v] = &rf.vars[..] else {
            errors.push((
                rf.line,
                format!("`{}`: a forward formula gives the tangent of one output", rf.vars.join(", ")),
            ));
            continue;
        };
        let Some(Name::Output(output)) = scope.get(v) else {
            errors.push((rf.line, format!("`{v}` mixes inputs and outputs in one key")));
            continue;
        };
        if !diff_outputs.contains(output) {
            errors.push((rf.line, format!("`{v}` is not a differentiable output: it has no tangent")));
            continue;
        }
        if let Some(prev) = out.iter().find(|f| f.output == *output) {
            errors.push((rf.line, format!("`{v}` already has a forward formula (line {})", prev.line)));
            continue;
        }
        let (kind, uses_result) = match rf.text.as_str() {
            "auto_element_wise" => {
                if inputs.len() != 1 || inputs[0].list {
                    let names: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
                    errors.push((
                        rf.line,
                        format!(
                            "`auto_element_wise` needs exactly one differentiable tensor input, and `{}` has {} ({}); write the formula",
                            schema.name,
                            inputs.len(),
                            names.join(", ")
                        ),
                    ));
                    continue;
                }
                let Some(k) = formulas.iter().position(|f| f.vars == [0]) else {
                    errors.push((rf.line, "`auto_element_wise` needs the backward formula of the input".into()));
                    continue;
                };
                let uses = formulas[k].locals.iter().any(|l| {
                    matches!(scope.get(l.trim_end_matches('_')), Some(Name::Output(_))) || l.starts_with("result")
                });
                (ForwardKind::ElementWise { formula: k }, uses)
            }
            "auto_linear" => (ForwardKind::Linear, false),
            text => {
                // Names: `x_p` / `x_t` for the differentiable inputs, others by name, outputs.
                let mut fscope: BTreeMap<String, bool> = BTreeMap::new();
                let mut tangents_of_non_diff: BTreeSet<String> = BTreeSet::new();
                for a in args {
                    let differentiable = inputs.iter().any(|i| i.name == a.name);
                    if differentiable {
                        fscope.insert(format!("{}_p", a.name), false);
                        fscope.insert(format!("{}_t", a.name), false);
                    } else {
                        fscope.insert(a.name.clone(), false);
                        if a.ty.is_tensor_like() {
                            fscope.insert(format!("{}_p", a.name), false);
                            fscope.insert(format!("{}_t", a.name), false);
                            tangents_of_non_diff.insert(format!("{}_t", a.name));
                        }
                    }
                }
                for (name, n) in scope {
                    if matches!(n, Name::Output(_)) {
                        fscope.insert(name.clone(), false);
                    }
                }
                let expr = match formula::parse(text) {
                    Ok(x) => x,
                    Err(m) => {
                        errors.push((rf.line, format!("forward formula for `{v}`: {m}")));
                        continue;
                    }
                };
                let refs = match formula::analyze(&expr, &fscope) {
                    Ok(r) => r,
                    Err(m) => {
                        errors.push((rf.line, format!("forward formula for `{v}`: {m}")));
                        continue;
                    }
                };
                if let Some(bad) = refs.names.iter().find(|n| tangents_of_non_diff.contains(*n)) {
                    errors.push((
                        rf.line,
                        format!(
                            "forward formula for `{v}` uses the tangent `{bad}` of an input that is not differentiable"
                        ),
                    ));
                    continue;
                }
                let uses = refs.names.iter().any(|n| matches!(scope.get(n), Some(Name::Output(_))));
                // A non-tensor `self` (`remainder.Scalar_Tensor`) is the kernel's `self_`.
                let none = BTreeSet::new();
                let code = match formula::rewrite(&expr, &fscope, &none, &none) {
                    Ok(c) => c,
                    Err(m) => {
                        errors.push((rf.line, format!("forward formula for `{v}`: {m}")));
                        continue;
                    }
                };
                (ForwardKind::Explicit { code, names: refs.names }, uses)
            }
        };
        out.push(ForwardFormula { line: rf.line, output: *output, kind, uses_result });
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}
