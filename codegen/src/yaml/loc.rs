//! Source locations, recovered from the raw YAML text.
//!
//! `serde_norway::Value` carries no positions, so line numbers come from the
//! text itself: the k-th top-level entry starts on the k-th line that begins
//! with `- ` (or is exactly `-`), and a key of that entry sits on the first
//! line of the entry's range that reads `key:` after an optional `- ` and
//! indentation.

use std::fmt;

/// A position in a YAML file: the file path as given, and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc {
    /// The file path, exactly as passed to the loader.
    pub file: String,
    /// The 1-based line number.
    pub line: usize,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Line lookups for the top-level entries of one YAML text.
#[derive(Clone, Debug)]
pub(crate) struct LineIndex<'a> {
    lines: Vec<&'a str>,
    /// 0-based line index of each top-level `- ` item.
    entry_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let lines: Vec<&str> = text.lines().collect();
        let entry_starts = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("- ") || l.trim_end() == "-")
            .map(|(i, _)| i)
            .collect();
        LineIndex { lines, entry_starts }
    }

    /// The 0-based line range `[start, end)` of entry `index` (0-based).
    /// Falls back to the last known entry when the text has fewer `- ` lines
    /// than the YAML has entries (e.g. a flow-style sequence).
    fn range(&self, index: usize) -> (usize, usize) {
        let Some(last) = self.entry_starts.len().checked_sub(1) else {
            return (0, self.lines.len());
        };
        let i = index.min(last);
        let start = self.entry_starts[i];
        let end = self.entry_starts.get(i + 1).copied().unwrap_or(self.lines.len());
        (start, end)
    }

    /// The 1-based line where entry `index` (0-based) starts.
    pub fn entry_line(&self, index: usize) -> usize {
        self.range(index).0 + 1
    }

    /// The 1-based line of `key:` inside entry `index`, or the entry's line.
    ///
    /// A quoted key (`"CPU, CUDA":`) is found as well.
    pub fn key_line(&self, index: usize, key: &str) -> usize {
        let (start, end) = self.range(index);
        let found = (start..end.max(start)).find(|&i| {
            let line = self.lines.get(i).copied().unwrap_or("");
            let body = line.strip_prefix("- ").unwrap_or(line).trim_start();
            [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
                .iter()
                .any(|k| body.strip_prefix(k.as_str()).is_some_and(|r| r.starts_with(':')))
        });
        found.unwrap_or(start) + 1
    }

    /// The 0-based index of the entry containing 1-based `line`, if any.
    pub fn entry_at_line(&self, line: usize) -> Option<usize> {
        let zero = line.checked_sub(1)?;
        self.entry_starts.iter().rposition(|&s| s <= zero)
    }
}
