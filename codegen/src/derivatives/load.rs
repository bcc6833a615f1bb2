//! Reading `derivatives.yaml` into raw entries: the YAML shape only, with a line number for every
//! key. What the entries mean is checked in [`super::resolve`].

use serde_norway::Value;

/// One `- name: ...` entry as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawEntry {
    /// The 1-based line of `- name:`.
    pub line: usize,
    /// The schema string after `name:`.
    pub name: String,
    /// `input[, input…]: formula` keys, in file order.
    pub formulas: Vec<RawFormula>,
    /// `output_differentiability: [True, False]`, if given.
    pub output_differentiability: Option<(usize, Vec<bool>)>,
}

/// One formula key of an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawFormula {
    /// The 1-based line of the key.
    pub line: usize,
    /// The input names of the key (`input, weight, bias` gives three).
    pub vars: Vec<String>,
    /// The formula text, or `non_differentiable`.
    pub text: String,
}

/// A located problem: `(line, entry name, message)`.
pub type RawError = (usize, String, String);

/// Finds the lines of entries and keys in the text (serde_norway keeps no positions): entry `k`
/// starts on the `k`-th line that begins with `- `, and a key sits on the first line of its entry
/// that reads `key:` after an optional `- ` and indentation.
struct Lines<'a> {
    lines: Vec<&'a str>,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let lines: Vec<&str> = text.lines().collect();
        let starts = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("- ") || l.trim_end() == "-")
            .map(|(i, _)| i)
            .collect();
        Lines { lines, starts }
    }
    fn range(&self, entry: usize) -> (usize, usize) {
        match self.starts.len().checked_sub(1) {
            None => (0, self.lines.len()),
            Some(last) => {
                let i = entry.min(last);
                (self.starts[i], self.starts.get(i + 1).copied().unwrap_or(self.lines.len()))
            }
        }
    }
    fn entry_line(&self, entry: usize) -> usize {
        self.range(entry).0 + 1
    }
    fn key_line(&self, entry: usize, key: &str) -> usize {
        let (start, end) = self.range(entry);
        (start..end)
            .find(|&i| {
                let l = self.lines[i];
                let body = l.strip_prefix("- ").unwrap_or(l).trim_start();
                [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
                    .iter()
                    .any(|k| body.strip_prefix(k.as_str()).is_some_and(|r| r.starts_with(':')))
            })
            .unwrap_or(start)
            + 1
    }
}

fn describe(v: &Value) -> &'static str {
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

/// Parses the YAML text into raw entries, collecting every shape error.
pub fn load(text: &str) -> Result<Vec<RawEntry>, Vec<RawError>> {
    let lines = Lines::new(text);
    let value: Value = serde_norway::from_str(text).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line());
        vec![(line, "<document>".to_string(), format!("invalid YAML: {e}"))]
    })?;
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Sequence(items) => items,
        other => {
            return Err(vec![(
                1,
                "<document>".into(),
                format!("the top level must be a list of entries (`- name: ...`), found {}", describe(&other)),
            )])
        }
    };
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let entry_line = lines.entry_line(index);
        let Value::Mapping(map) = item else {
            errors.push((
                entry_line,
                format!("<entry {}>", index + 1),
                format!("an entry must be a mapping with a `name:` key, found {}", describe(item)),
            ));
            continue;
        };
        let name = match map.get("name") {
            Some(Value::String(s)) => s.trim().to_string(),
            Some(other) => {
                errors.push((
                    entry_line,
                    format!("<entry {}>", index + 1),
                    format!("`name` must be a schema string, found {}", describe(other)),
                ));
                continue;
            }
            None => {
                errors.push((entry_line, format!("<entry {}>", index + 1), "the entry has no `name:` key".into()));
                continue;
            }
        };
        let label = name.split('(').next().unwrap_or("").to_string();
        let mut entry = RawEntry { line: entry_line, name, formulas: Vec::new(), output_differentiability: None };
        for (k, v) in map {
            let Value::String(key) = k else {
                errors.push((entry_line, label.clone(), format!("keys must be strings, found {}", describe(k))));
                continue;
            };
            let line = lines.key_line(index, key);
            match key.as_str() {
                "name" => {}
                "output_differentiability" => match v {
                    Value::Sequence(flags) => {
                        let mut out = Vec::new();
                        for f in flags {
                            match f {
                                Value::Bool(b) => out.push(*b),
                                Value::String(s) if s == "True" || s == "true" => out.push(true),
                                Value::String(s) if s == "False" || s == "false" => out.push(false),
                                other => errors.push((
                                    line,
                                    label.clone(),
                                    format!("`output_differentiability` entries must be True or False, found {}", describe(other)),
                                )),
                            }
                        }
                        entry.output_differentiability = Some((line, out));
                    }
                    other => errors.push((
                        line,
                        label.clone(),
                        format!("`output_differentiability` must be a list such as [True, False], found {}", describe(other)),
                    )),
                },
                "dispatch" => errors.push((
                    line,
                    label.clone(),
                    "per-dispatch-key formulas (`dispatch:`) are not supported; write the formulas directly under the entry".into(),
                )),
                _ => {
                    let text = match v {
                        Value::String(s) => s.trim().to_string(),
                        other => {
                            errors.push((
                                line,
                                label.clone(),
                                format!("the formula for `{key}` must be a string (a Rust expression), found {}", describe(other)),
                            ));
                            continue;
                        }
                    };
                    let vars: Vec<String> = key.split(',').map(|s| s.trim().to_string()).collect();
                    if vars.iter().any(String::is_empty) {
                        errors.push((line, label.clone(), format!("`{key}` is not a list of input names")));
                        continue;
                    }
                    entry.formulas.push(RawFormula { line, vars, text });
                }
            }
        }
        entries.push(entry);
    }
    if errors.is_empty() {
        Ok(entries)
    } else {
        Err(errors)
    }
}
