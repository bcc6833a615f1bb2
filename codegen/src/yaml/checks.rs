//! Rules that relate several entries of one file: unique overload names and
//! valid `structured_delegate` targets.

use std::collections::HashMap;

use crate::model::{BaseOperatorName, OperatorName};

use super::entry::Reporter;
use super::error::YamlError;
use super::function::NativeFunction;
use super::loc::LineIndex;

/// Checks the parsed entries against each other. `fns` pairs each function
/// with its 0-based entry index, in file order.
pub(crate) fn check_all(fns: &[(usize, NativeFunction)], file: &str, lines: &LineIndex<'_>) -> Vec<YamlError> {
    let mut errors = Vec::new();
    let reporter = |index: usize, nf: &NativeFunction| {
        let mut r = Reporter::new(file, lines, index);
        r.entry = nf.func.name.to_string();
        r
    };

    // Overload names are unique per base name; the first entry wins.
    let mut seen: HashMap<(&BaseOperatorName, &str), &NativeFunction> = HashMap::new();
    for (index, nf) in fns {
        let name = &nf.func.name;
        let key = (&name.name, name.overload.as_str());
        if let Some(first) = seen.get(&key) {
            let mut r = reporter(*index, nf);
            let what = if name.overload.is_empty() {
                format!("`{}` without an overload name", name.name)
            } else {
                format!("overload name `{}` of `{}`", name.overload, name.name)
            };
            let by = if first.generated_from.is_some() { " (its `autogen:`)" } else { "" };
            r.at_entry(format!(
                "{what} is already used by the entry at {}{by}; overload names must be unique",
                first.loc
            ));
            errors.extend(r.errors);
        } else {
            seen.insert(key, nf);
        }
    }

    // A delegate must name an existing `structured: True` entry.
    let by_name: HashMap<&OperatorName, &NativeFunction> =
        fns.iter().rev().map(|(_, nf)| (&nf.func.name, nf)).collect();
    for (index, nf) in fns {
        let Some(delegate) = &nf.structured_delegate else {
            continue;
        };
        let message = match by_name.get(delegate) {
            None => format!("`structured_delegate` names `{delegate}`, which is not defined in this file"),
            Some(target) if !target.structured => {
                format!("`structured_delegate` names `{delegate}` (at {}), which is not `structured: True`", target.loc)
            }
            Some(_) => continue,
        };
        let mut r = reporter(*index, nf);
        r.at_key("structured_delegate", message);
        errors.extend(r.errors);
    }
    errors
}
