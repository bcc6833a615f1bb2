//! Conversions from raw YAML values to the typed fields of an entry.
//!
//! Each function takes one key's `serde_norway::Value` and returns the typed
//! field or a message saying what was expected. The caller attaches the
//! location.

use std::collections::{BTreeMap, BTreeSet};

use serde_norway::Value;

use super::function::{AutocastPolicies, AutocastPolicy, DeviceCheck, OpDoc, Variant};
use crate::backend::DispatchKey;

/// A short description of a value's YAML kind, for "found ..." messages.
pub(crate) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A boolean: YAML `true`/`True`/`false`/`False`.
pub(crate) fn boolean(key: &str, v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "True" || s == "true" => Ok(true),
        Value::String(s) if s == "False" || s == "false" => Ok(false),
        other => Err(format!("`{key}` must be True or False, found {}", describe(other))),
    }
}

/// A string scalar.
pub(crate) fn string<'v>(key: &str, v: &'v Value) -> Result<&'v str, String> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(format!("`{key}` must be a string, found {}", describe(other))),
    }
}

/// A list of strings, also accepting one comma-separated string
/// (`tags: core, pointwise` or `tags: [core, pointwise]`).
pub(crate) fn string_list(key: &str, v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::String(s) => Ok(s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_string).collect()),
        Value::Sequence(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!("`{key}` entries must be strings, found {}", describe(other))),
            })
            .collect(),
        other => Err(format!("`{key}` must be a string or a list of strings, found {}", describe(other))),
    }
}

/// A list of raw lines (`precomputed:`), each kept exactly as written.
pub(crate) fn lines(key: &str, v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::Sequence(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!("`{key}` entries must be strings, found {}", describe(other))),
            })
            .collect(),
        other => Err(format!("`{key}` must be a list of lines, found {}", describe(other))),
    }
}

/// `variants: function, method` (a string or a list).
pub(crate) fn variants(v: &Value) -> Result<BTreeSet<Variant>, String> {
    let names = string_list("variants", v)?;
    if names.is_empty() {
        return Err("`variants` must name at least one of `function`, `method`".to_string());
    }
    names
        .iter()
        .map(|n| match n.as_str() {
            "function" => Ok(Variant::Function),
            "method" => Ok(Variant::Method),
            other => Err(format!("unknown variant `{other}` (expected `function` or `method`)")),
        })
        .collect()
}

/// `device_check: NoCheck | ExactSame`.
pub(crate) fn device_check(v: &Value) -> Result<DeviceCheck, String> {
    match string("device_check", v)? {
        "ExactSame" => Ok(DeviceCheck::ExactSame),
        "NoCheck" => Ok(DeviceCheck::NoCheck),
        other => Err(format!("unknown device_check `{other}` (expected `NoCheck` or `ExactSame`)")),
    }
}

/// One policy name: `lower_precision_fp | fp32 | fp32_set_opt_dtype | promote`.
fn autocast_policy(v: &Value) -> Result<AutocastPolicy, String> {
    let name = string("autocast", v)?;
    AutocastPolicy::from_name(name).ok_or_else(|| {
        let all: Vec<String> = AutocastPolicy::ALL.iter().map(|p| format!("`{p}`")).collect();
        format!("unknown autocast policy `{name}` (expected one of {})", all.join(", "))
    })
}

/// `autocast: <policy>` (every device type) or a mapping from device types to policies
/// (`{CPU: fp32, CUDA: fp32_set_opt_dtype}`; keys may list several types, `CPU, CUDA: fp32`).
pub(crate) fn autocast_policies(v: &Value) -> Result<AutocastPolicies, String> {
    let Some(map) = v.as_mapping() else {
        return autocast_policy(v).map(AutocastPolicies::everywhere);
    };
    let mut out = AutocastPolicies::default();
    for (k, pv) in map {
        let keys = k.as_str().ok_or("the keys of `autocast` must be device types (`CPU`, `CUDA`)")?;
        let p = autocast_policy(pv)?;
        for d in keys.split(',').map(str::trim) {
            if out.get(d).is_some() {
                return Err(format!("`autocast` gives device type `{d}` twice"));
            }
            if !out.set(d, p) {
                return Err(format!(
                    "unknown autocast device type `{d}` (expected {})",
                    AutocastPolicies::DEVICE_TYPES.map(|d| format!("`{d}`")).join(" or ")
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("`autocast` names no device type".into());
    }
    Ok(out)
}

/// One problem in a `dispatch:` block: the key as written (to find its
/// line) and the message.
pub(crate) struct DispatchProblem {
    /// The mapping key as written, e.g. `CPU, CUDA`; `None` for problems with
    /// the block as a whole.
    pub raw_key: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// `dispatch:` with comma lists expanded. Returns the map built from the
/// valid parts, plus every problem found.
pub(crate) fn dispatch(v: &Value) -> (BTreeMap<DispatchKey, String>, Vec<DispatchProblem>) {
    let mut map = BTreeMap::new();
    let mut problems = Vec::new();
    let Value::Mapping(m) = v else {
        problems.push(DispatchProblem {
            raw_key: None,
            message: format!("`dispatch` must be a mapping from dispatch keys to kernel names, found {}", describe(v)),
        });
        return (map, problems);
    };
    for (k, kernel) in m {
        let Value::String(raw) = k else {
            problems.push(DispatchProblem {
                raw_key: None,
                message: format!("dispatch keys must be strings, found {}", describe(k)),
            });
            continue;
        };
        let mut problem = |message: String| problems.push(DispatchProblem { raw_key: Some(raw.clone()), message });
        let kernel = match kernel {
            Value::String(s) if !s.trim().is_empty() => s.clone(),
            other => {
                problem(format!("the kernel for `{raw}` must be a kernel name, found {}", describe(other)));
                continue;
            }
        };
        for key in raw.split(',').map(str::trim) {
            match DispatchKey::parse(key) {
                None => {
                    let legal: Vec<&str> =
                        DispatchKey::ALL.iter().filter(|k| **k != DispatchKey::PrivateUse1).map(|k| k.name()).collect();
                    problem(format!("unknown dispatch key `{key}` (legal keys: {})", legal.join(", ")));
                }
                // Every key accepted here is emitted; an out-of-tree backend's kernels are not
                // oxten's to declare.
                Some(DispatchKey::PrivateUse1) => problem(
                    "`PrivateUse1` kernels belong to an out-of-tree backend and are declared in that backend's \
                     own YAML, not in native_functions.yaml (see ARCHITECTURE.md, \"Adding a backend\")"
                        .into(),
                ),
                Some(k) => {
                    if map.insert(k, kernel.clone()).is_some() {
                        problem(format!("dispatch key `{key}` is listed more than once"));
                    }
                }
            }
        }
    }
    (map, problems)
}

/// A non-negative integer.
pub(crate) fn count(key: &str, v: &Value) -> Result<usize, String> {
    match v.as_u64() {
        Some(n) => usize::try_from(n).map_err(|_| format!("`{key}` is too large")),
        None => Err(format!("`{key}` must be a non-negative integer, found {}", describe(v))),
    }
}

/// `doc:`: a mapping with `summary:` (one line, required), `args:` (argument name to one line)
/// and `example:` (Rust code).
pub(crate) fn op_doc(v: &Value) -> Result<OpDoc, String> {
    let Value::Mapping(map) = v else {
        return Err(format!("`doc` must be a mapping with `summary`, `args` and `example`, found {}", describe(v)));
    };
    let mut doc = OpDoc::default();
    let mut summary = None;
    for (k, v) in map {
        match k.as_str() {
            Some("summary") => {
                let s = string("doc.summary", v)?.trim();
                if s.is_empty() || s.contains('\n') {
                    return Err("`doc.summary` must be one non-empty line".into());
                }
                summary = Some(s.to_string());
            }
            Some("args") => {
                let Value::Mapping(args) = v else {
                    return Err(format!("`doc.args` must map argument names to one line each, found {}", describe(v)));
                };
                for (name, text) in args {
                    let name = string("doc.args", name)?;
                    let text = string(&format!("doc.args.{name}"), text)?.trim();
                    doc.args.push((name.to_string(), text.to_string()));
                }
            }
            Some("example") => doc.example = Some(string("doc.example", v)?.trim_end().to_string()),
            _ => {
                return Err(format!(
                    "unknown key {} in `doc` (allowed: summary, args, example)",
                    serde_norway::to_string(k).unwrap_or_default().trim()
                ))
            }
        }
    }
    doc.summary = summary.ok_or("`doc` needs a one-line `summary`")?;
    Ok(doc)
}
