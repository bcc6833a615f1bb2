//! [`parse_native_functions`]: the entry point that loads and validates a
//! whole `native_functions.yaml` text.

use serde_norway::Value;

use super::autogen;
use super::checks;
use super::entry::{parse_entry, Reporter};
use super::error::YamlError;
use super::function::NativeFunction;
use super::loc::{LineIndex, Loc};

/// Parses and validates `text`, the contents of the YAML file at `file`
/// (used only in locations).
///
/// The top level must be a sequence of mappings, one per operator. On
/// success the functions come back in file order. Otherwise every problem
/// found is returned, sorted by line (problems on one line keep the order
/// they were found in). Entries whose `func` is missing or invalid are left
/// out of the cross-entry checks.
pub fn parse_native_functions(text: &str, file: &str) -> Result<Vec<NativeFunction>, Vec<YamlError>> {
    let lines = LineIndex::new(text);
    let value: Value = match serde_norway::from_str(text) {
        Ok(v) => v,
        Err(e) => return Err(vec![syntax_error(&e, file, &lines)]),
    };
    let entries = match value {
        Value::Sequence(entries) => entries,
        Value::Null => Vec::new(),
        other => {
            return Err(vec![YamlError {
                loc: Loc { file: file.to_string(), line: 1 },
                entry: "<document>".to_string(),
                message: format!(
                    "the top level must be a list of entries (`- func: ...`), found {}",
                    super::values::describe(&other)
                ),
            }]);
        }
    };
    let mut errors = Vec::new();
    let mut fns: Vec<(usize, NativeFunction)> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let (nf, errs) = parse_entry(entry, file, &lines, index);
        errors.extend(errs);
        if let Some(nf) = nf {
            // `autogen:` entries follow the entry they derive from, located at it.
            let derived = autogen::derive(&nf);
            fns.push((index, nf));
            match derived {
                Ok(derived) => fns.extend(derived.into_iter().map(|d| (index, d))),
                Err(msg) => {
                    let mut r = Reporter::new(file, &lines, index);
                    r.entry = fns[fns.len() - 1].1.func.name.to_string();
                    r.at_key("autogen", msg);
                    errors.extend(r.errors);
                }
            }
        }
    }
    errors.extend(checks::check_all(&fns, file, &lines));
    if errors.is_empty() {
        let mut fns: Vec<NativeFunction> = fns.into_iter().map(|(_, nf)| nf).collect();
        share_docs(&mut fns);
        Ok(fns)
    } else {
        errors.sort_by_key(|e| e.loc.line);
        Err(errors)
    }
}

/// A YAML syntax error, located by serde_norway when it can say where.
fn syntax_error(e: &serde_norway::Error, file: &str, lines: &LineIndex<'_>) -> YamlError {
    let line = e.location().map_or(1, |l| l.line());
    let entry = match lines.entry_at_line(line) {
        Some(i) => format!("<entry {}>", i + 1),
        None => "<document>".to_string(),
    };
    YamlError { loc: Loc { file: file.to_string(), line }, entry, message: format!("invalid YAML: {e}") }
}

/// Gives each entry without a `doc:` the doc of the first entry of the same operator (base name,
/// ignoring the in-place `_` and the overload) that has one: a doc is written once per operator.
fn share_docs(fns: &mut [NativeFunction]) {
    let mut docs = std::collections::HashMap::new();
    for f in fns.iter() {
        if let Some(doc) = &f.doc {
            docs.entry(f.func.name.name.base.clone()).or_insert_with(|| (f.func.name.to_string(), doc.clone()));
        }
    }
    for f in fns.iter_mut().filter(|f| f.doc.is_none()) {
        if let Some((from, doc)) = docs.get(&f.func.name.name.base) {
            f.doc = Some(super::function::OpDoc { inherited_from: Some(from.clone()), ..doc.clone() });
        }
    }
}
