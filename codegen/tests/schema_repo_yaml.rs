//! The repository's own `native_functions.yaml` loads, validates and
//! round-trips.

use oxten_codegen::model::FunctionSchema;
use oxten_codegen::yaml::{group_native_functions, parse_native_functions};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../native_functions.yaml");

#[test]
fn roundtrip_repo_yaml() {
    let text = std::fs::read_to_string(PATH).unwrap_or_else(|e| panic!("cannot read {PATH}: {e}"));
    let fns = parse_native_functions(&text, "native_functions.yaml").unwrap_or_else(|errors| {
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        panic!("native_functions.yaml has errors:\n{}", text.join("\n"))
    });
    assert!(!fns.is_empty(), "native_functions.yaml has no entries");

    // Every `func:` string, as written in the file, prints back identically.
    let written: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("- ").unwrap_or(l).trim_start().strip_prefix("func:"))
        // Drop a trailing `# comment`; schemas never contain `#`.
        .map(|s| s.split('#').next().unwrap_or("").trim())
        .collect();
    // (The entries `autogen:` derives have no line of their own.)
    let declared: Vec<_> = fns.iter().filter(|f| f.generated_from.is_none()).collect();
    assert_eq!(written.len(), declared.len(), "one `func:` line per entry");
    for (line, nf) in written.iter().zip(declared) {
        assert_eq!(&nf.func.to_string(), line, "at {}", nf.loc);
        assert_eq!(FunctionSchema::parse(line).as_ref(), Ok(&nf.func));
        let first_line = text.lines().nth(nf.loc.line - 1).unwrap_or("");
        assert!(first_line.starts_with("- "), "{} does not start an entry", nf.loc);
    }

    // Every function lands in exactly one group.
    let groups = group_native_functions(&fns);
    let members: usize = groups.iter().map(|g| g.members().len()).sum();
    assert_eq!(members, fns.len());
}
