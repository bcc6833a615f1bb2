//! [`YamlError`]: one problem found while loading `native_functions.yaml`.

use std::fmt;

use super::loc::Loc;

/// A located problem in a YAML entry.
///
/// Displays as ``{file}:{line}: in `{entry}`: {message}``.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct YamlError {
    /// Where the problem is: the offending key's line when there is one,
    /// otherwise the entry's first line.
    pub loc: Loc,
    /// The entry's operator name (`add.Tensor`); `<entry N>` (1-based) when
    /// the name is not known, `<document>` for problems outside any entry.
    pub entry: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: in `{}`: {}", self.loc.file, self.loc.line, self.entry, self.message)
    }
}

impl std::error::Error for YamlError {}
