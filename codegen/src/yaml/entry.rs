//! Turning one top-level YAML entry into a [`NativeFunction`], with every
//! rule that can be checked by looking at that entry alone.
//!
//! Rules that need other entries (delegate targets, duplicate overloads) are
//! in [`super::checks`].

use serde_norway::{Mapping, Value};

use crate::model::{BaseTy, FunctionSchema, OperatorName, SchemaKind, Type};

use super::error::YamlError;
use super::function::{AutocastPolicy, NativeFunction, Variant};
use super::loc::{LineIndex, Loc};
use super::values;
use crate::backend::DispatchKey;

/// Every key an entry may have.
pub const ALLOWED_KEYS: [&str; 21] = [
    "func",
    "variants",
    "dispatch",
    "structured",
    "structured_delegate",
    "structured_inherits",
    "precomputed",
    "tags",
    "device_check",
    "device_guard",
    "pointwise",
    "pointwise_check",
    "pointwise_operands",
    "pointwise_constants",
    "autogen",
    "python_module",
    "manual_cpp_binding",
    "autocast",
    "positional_defaults",
    "per_tensor",
    "doc",
];

/// Collects errors for one entry, locating them by key.
pub(crate) struct Reporter<'a> {
    file: &'a str,
    lines: &'a LineIndex<'a>,
    index: usize,
    /// The entry's display name (operator name or `<entry N>`).
    pub entry: String,
    /// Errors found so far.
    pub errors: Vec<YamlError>,
}

impl<'a> Reporter<'a> {
    /// A reporter for entry `index` (0-based).
    pub fn new(file: &'a str, lines: &'a LineIndex<'a>, index: usize) -> Self {
        Reporter { file, lines, index, entry: format!("<entry {}>", index + 1), errors: Vec::new() }
    }

    /// An error at a given 1-based line.
    pub fn at_line(&mut self, line: usize, message: impl Into<String>) {
        self.errors.push(YamlError {
            loc: Loc { file: self.file.to_string(), line },
            entry: self.entry.clone(),
            message: message.into(),
        });
    }

    /// An error at the line of `key` in this entry.
    pub fn at_key(&mut self, key: &str, message: impl Into<String>) {
        let line = self.lines.key_line(self.index, key);
        self.at_line(line, message);
    }

    /// An error at the entry's first line.
    pub fn at_entry(&mut self, message: impl Into<String>) {
        let line = self.lines.entry_line(self.index);
        self.at_line(line, message);
    }
}

/// Parses entry `index`. Returns the function when its `func` parsed (even
/// if other keys had errors, so cross-entry checks can still run), and the
/// errors found.
pub(crate) fn parse_entry(
    value: &Value,
    file: &str,
    lines: &LineIndex<'_>,
    index: usize,
) -> (Option<NativeFunction>, Vec<YamlError>) {
    let mut r = Reporter::new(file, lines, index);
    let Value::Mapping(map) = value else {
        r.at_entry(format!("an entry must be a mapping of keys such as `func:`, found {}", values::describe(value)));
        return (None, r.errors);
    };
    let func = parse_func(map, &mut r);
    let loc = Loc { file: file.to_string(), line: lines.entry_line(index) };
    let nf = func.map(|func| {
        let mut nf = NativeFunction {
            func,
            loc,
            variants: [Variant::Function].into(),
            dispatch: Default::default(),
            structured: false,
            structured_delegate: None,
            structured_inherits: None,
            precomputed: Vec::new(),
            tags: Vec::new(),
            device_check: Default::default(),
            pointwise: None,
            pointwise_check: None,
            pointwise_operands: None,
            pointwise_constants: Vec::new(),
            autocast: Default::default(),
            positional_defaults: 0,
            per_tensor: None,
            doc: None,
            autogen: Vec::new(),
            generated_from: None,
        };
        read_keys(map, &mut nf, &mut r);
        check_entry(map, &nf, &mut r);
        nf
    });
    if nf.is_none() {
        // Still report keys that are not allowed at all.
        for key in map.keys().filter_map(Value::as_str) {
            if !ALLOWED_KEYS.contains(&key) {
                r.at_key(key, unknown_key(key));
            }
        }
    }
    (nf, r.errors)
}

fn unknown_key(key: &str) -> String {
    format!("unknown key `{key}` (allowed keys: {})", ALLOWED_KEYS.join(", "))
}

/// Reads and parses `func`, naming the reporter's entry after it.
fn parse_func(map: &Mapping, r: &mut Reporter<'_>) -> Option<FunctionSchema> {
    let Some(v) = map.get("func") else {
        r.at_entry("missing `func` key (the operator schema)");
        return None;
    };
    let text = match values::string("func", v) {
        Ok(t) => t,
        Err(msg) => {
            r.at_key("func", msg);
            return None;
        }
    };
    match FunctionSchema::parse(text) {
        Ok(schema) => {
            r.entry = schema.name.to_string();
            Some(schema)
        }
        Err(msg) => {
            let head = text.split('(').next().unwrap_or("");
            if let Ok(name) = OperatorName::parse(head) {
                r.entry = name.to_string();
            }
            r.at_key("func", format!("invalid schema `{text}`: {msg}"));
            None
        }
    }
}

/// Fills `nf` from every key except `func`, reporting bad keys and values.
fn read_keys(map: &Mapping, nf: &mut NativeFunction, r: &mut Reporter<'_>) {
    for (k, v) in map {
        let Some(key) = k.as_str() else {
            r.at_entry(format!("keys must be strings, found {}", values::describe(k)));
            continue;
        };
        let result: Result<(), String> = match key {
            "func" => Ok(()),
            "variants" => values::variants(v).map(|x| nf.variants = x),
            "dispatch" => {
                let (map, problems) = values::dispatch(v);
                nf.dispatch = map;
                for p in problems {
                    match p.raw_key {
                        Some(raw) => {
                            let line = r.lines.key_line(r.index, &raw);
                            r.at_line(line, p.message);
                        }
                        None => r.at_key("dispatch", p.message),
                    }
                }
                Ok(())
            }
            "structured" => values::boolean(key, v).map(|x| nf.structured = x),
            "structured_delegate" => values::string(key, v).and_then(|s| {
                let name = OperatorName::parse(s).map_err(|e| format!("invalid `structured_delegate` `{s}`: {e}"))?;
                nf.structured_delegate = Some(name);
                Ok(())
            }),
            "structured_inherits" => values::string(key, v).map(|s| nf.structured_inherits = Some(s.to_string())),
            "precomputed" => values::lines(key, v).map(|x| nf.precomputed = x),
            "tags" => values::string_list(key, v).map(|x| nf.tags = x),
            "device_check" => values::device_check(v).map(|x| nf.device_check = x),
            "pointwise" => values::string(key, v).map(|s| nf.pointwise = Some(s.to_string())),
            "pointwise_check" => values::string(key, v).map(|s| nf.pointwise_check = Some(s.to_string())),
            "pointwise_operands" => values::string_list(key, v).map(|x| nf.pointwise_operands = Some(x)),
            "pointwise_constants" => values::string_list(key, v).map(|x| nf.pointwise_constants = x),
            "autocast" => values::autocast_policies(v).map(|p| nf.autocast = p),
            "positional_defaults" => values::count(key, v).map(|n| nf.positional_defaults = n),
            "per_tensor" => values::string(key, v).and_then(|s| {
                let name = OperatorName::parse(s).map_err(|e| format!("invalid `per_tensor` `{s}`: {e}"))?;
                nf.per_tensor = Some(name);
                Ok(())
            }),
            "doc" => values::op_doc(v).map(|d| nf.doc = Some(d)),
            "device_guard" | "manual_cpp_binding" => values::boolean(key, v).map(drop),
            "python_module" => values::string(key, v).map(drop),
            "autogen" => values::string_list(key, v).and_then(|names| {
                for s in names {
                    let name = OperatorName::parse(&s).map_err(|e| format!("invalid `autogen` name `{s}`: {e}"))?;
                    nf.autogen.push(name);
                }
                Ok(())
            }),
            other => Err(unknown_key(other)),
        };
        if let Err(msg) = result {
            r.at_key(key, msg);
        }
    }
}

/// The rules that relate several keys of one entry.
fn check_entry(map: &Mapping, nf: &NativeFunction, r: &mut Reporter<'_>) {
    let kind = nf.func.kind();
    let name = nf.func.name.to_string();
    let kind_word = kind_word(kind);
    if nf.structured && kind != SchemaKind::Out {
        r.at_key(
            "structured",
            format!("`structured: True` is only allowed on an out= overload, but `{name}` is {kind_word}"),
        );
    }
    if let Some(delegate) = &nf.structured_delegate {
        if kind == SchemaKind::Out {
            r.at_key(
                "structured_delegate",
                format!("`structured_delegate` is not allowed on the out= overload `{name}`; mark it `structured: True` instead"),
            );
        }
        if nf.structured {
            r.at_key(
                "structured_delegate",
                "`structured` and `structured_delegate` cannot both be set: an entry is either the structured out= kernel or delegates to one",
            );
        }
        let backend: Vec<String> = DispatchKey::STRUCTURED_BACKENDS
            .into_iter()
            .filter(|k| nf.dispatch.contains_key(k))
            .map(|k| format!("`{k}`"))
            .collect();
        if !backend.is_empty() {
            let provided: Vec<&str> = DispatchKey::STRUCTURED_BACKENDS.iter().map(|k| k.name()).collect();
            let provided = provided.join("/");
            let listed = backend.join(", ");
            r.at_key(
                "dispatch",
                format!("`{name}` delegates to `{delegate}`, which provides its {provided} kernels; remove {listed} from `dispatch`"),
            );
        }
    }
    if nf.pointwise.is_some() && !nf.dispatch.is_empty() {
        r.at_key(
            "dispatch",
            "a `pointwise:` op's kernels are generated from its expression on every backend; remove `dispatch`",
        );
    } else if nf.structured {
        // A structured op's Meta kernel is its meta function, and its backend impls fill the
        // outputs that function sets: a composite key has nothing to fill.
        let wrong: Vec<String> = nf
            .dispatch
            .keys()
            .filter(|k| !matches!(k, DispatchKey::Cpu | DispatchKey::Cuda))
            .map(|k| format!("`{k}`"))
            .collect();
        if !wrong.is_empty() {
            r.at_key(
                "dispatch",
                format!(
                    "a structured op lists only backend impls (CPU, CUDA) in `dispatch`: its meta function serves Meta and it has no composite kernel; remove {}",
                    wrong.join(", ")
                ),
            );
        }
    }
    if nf.structured_inherits.is_some() && !nf.structured {
        r.at_key("structured_inherits", "`structured_inherits` requires `structured: True`");
    }
    if map.contains_key("precomputed") && !nf.structured {
        r.at_key("precomputed", "`precomputed` requires `structured: True`");
    }
    if nf.variants.contains(&Variant::Method) {
        if kind == SchemaKind::Out {
            r.at_key("variants", format!("out= overload `{name}` cannot be a method; use `variants: function`"));
        } else if nf.func.arguments.self_arg().is_none() {
            r.at_key(
                "variants",
                format!("a method variant needs a positional `Tensor self` argument, which `{name}` lacks"),
            );
        }
    }
    if nf.pointwise.is_some() && !(nf.structured && kind == SchemaKind::Out) {
        let what = if kind == SchemaKind::Out { "not structured" } else { kind_word };
        r.at_key(
            "pointwise",
            format!("`pointwise` is only allowed on a `structured: True` out= overload, but `{name}` is {what}"),
        );
    }
    if nf.pointwise_check.is_some() && nf.pointwise.is_none() {
        r.at_key("pointwise_check", "`pointwise_check` needs a `pointwise` expression on the same entry");
    }
    if let Some(order) = &nf.pointwise_operands {
        if nf.pointwise.is_none() {
            r.at_key("pointwise_operands", "`pointwise_operands` needs a `pointwise` expression on the same entry");
        }
        check_operand_order(nf, order, r);
    }
    if !nf.pointwise_constants.is_empty() {
        if nf.pointwise.is_none() {
            r.at_key("pointwise_constants", "`pointwise_constants` needs a `pointwise` expression on the same entry");
        }
        check_constants(nf, r);
    }
    if !nf.autocast.is_empty() {
        check_autocast(nf, r);
    }
    check_positional_defaults(nf, r);
    if nf.per_tensor.is_some() && !nf.func.name.name.base.starts_with("_foreach_") {
        r.at_key(
            "per_tensor",
            format!("`per_tensor` names the per-tensor operator of a `_foreach_*` operator, and `{name}` is not one"),
        );
    }
    if let Some(doc) = &nf.doc {
        let names: Vec<&str> = nf.func.arguments.flat_all().into_iter().map(|a| a.name.as_str()).collect();
        for (arg, _) in &doc.args {
            if !names.contains(&arg.as_str()) {
                r.at_key(
                    "doc",
                    format!(
                        "`doc.args` documents `{arg}`, which is not an argument of `{name}` (arguments: {})",
                        names.join(", ")
                    ),
                );
            }
        }
    }
}

/// `positional_defaults: N` may only name defaulted arguments a caller can pass positionally:
/// the defaulted ones before the schema's `*`.
fn check_positional_defaults(nf: &NativeFunction, r: &mut Reporter<'_>) {
    let n = nf.positional_defaults;
    if n == 0 {
        return;
    }
    let available = nf.func.arguments.positional.iter().filter(|a| a.default.is_some()).count();
    if n > available {
        r.at_key(
            "positional_defaults",
            format!(
                "`positional_defaults: {n}` but `{}` has only {available} defaulted positional argument(s) (keyword-only arguments after `*` stay in the options struct)",
                nf.func.name
            ),
        );
    }
}

/// `pointwise_constants:` may only name `Scalar` arguments of the op.
fn check_constants(nf: &NativeFunction, r: &mut Reporter<'_>) {
    for name in &nf.pointwise_constants {
        let is_scalar = nf
            .func
            .arguments
            .flat_non_out()
            .into_iter()
            .any(|a| a.name == *name && a.ty == crate::model::Type::Base(crate::model::BaseTy::Scalar));
        if !is_scalar {
            r.at_key(
                "pointwise_constants",
                format!("`pointwise_constants` names `{name}`, which is not a `Scalar` argument of `{}`", nf.func.name),
            );
        }
    }
}

/// `pointwise_operands:` must list each loop operand of the op (its tensor arguments and its
/// scalars other than `alpha` and the `pointwise_constants`) exactly once.
fn check_operand_order(nf: &NativeFunction, order: &[String], r: &mut Reporter<'_>) {
    let mut expected: Vec<&str> = nf
        .func
        .arguments
        .flat_non_out()
        .into_iter()
        .filter(|a| {
            let plain = |b| a.ty == crate::model::Type::Base(b);
            (plain(crate::model::BaseTy::Tensor) || plain(crate::model::BaseTy::Scalar))
                && a.name != "alpha"
                && !nf.pointwise_constants.contains(&a.name)
        })
        .map(|a| a.name.as_str())
        .collect();
    let mut given: Vec<&str> = order.iter().map(String::as_str).collect();
    expected.sort_unstable();
    given.sort_unstable();
    if expected != given {
        r.at_key(
            "pointwise_operands",
            format!("`pointwise_operands` must list the loop operands {expected:?} once each, got {order:?}"),
        );
    }
}

/// The rules of `autocast:`: only functional overloads that take a tensor are autocast (PyTorch
/// never autocasts in-place or out= variants), and `fp32_set_opt_dtype` needs a first `Tensor`
/// argument and a `ScalarType? dtype` argument to set.
fn check_autocast(nf: &NativeFunction, r: &mut Reporter<'_>) {
    let name = nf.func.name.to_string();
    let kind = nf.func.kind();
    if kind != SchemaKind::Functional {
        r.at_key(
            "autocast",
            format!(
                "`autocast` is only allowed on a functional overload (in-place and out= variants run in the dtypes they are given), but `{name}` is {}",
                kind_word(kind)
            ),
        );
        return;
    }
    let args = nf.func.arguments.flat_non_out();
    if !args.iter().any(|a| a.ty.is_tensor_like()) {
        r.at_key("autocast", format!("`autocast` needs a Tensor argument to cast, which `{name}` lacks"));
        return;
    }
    if nf.autocast.iter().any(|(_, p)| p == AutocastPolicy::Fp32SetOptDtype) {
        let first_is_tensor = args.first().is_some_and(|a| a.ty == Type::Base(BaseTy::Tensor));
        let has_dtype =
            args.iter().any(|a| a.name == "dtype" && a.ty == Type::Optional(Box::new(Type::Base(BaseTy::ScalarType))));
        if !first_is_tensor || !has_dtype {
            r.at_key(
                "autocast",
                format!("`autocast: fp32_set_opt_dtype` needs a first `Tensor` argument and a `ScalarType? dtype` argument, which `{name}` lacks"),
            );
        }
    }
}

/// "functional", "inplace", ... with an article, for messages.
fn kind_word(kind: SchemaKind) -> &'static str {
    match kind {
        SchemaKind::Functional => "a functional overload",
        SchemaKind::Inplace => "an inplace overload",
        SchemaKind::Out => "an out= overload",
        SchemaKind::Mutable => "a mutable overload",
    }
}
