//! PyTorch's OpInfo samples, replayed: every case recorded by `scripts/opinfo_golden.py` from
//! PyTorch's own `sample_inputs`, `reference_inputs`, non-contiguous samples, gradients and
//! `error_inputs` is called through oxten's boxed operator table by its schema name (see
//! `oxten_tests::opinfo`). A failure not covered by a line of `tests/golden/opinfo/skips.txt`
//! fails the test, and so does a skip line that no longer matches a failure.

use oxten_tests::opinfo::{self, Report};
use std::path::Path;

#[test]
fn opinfo_samples_match_pytorch() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/opinfo");
    let golden = opinfo::load(&dir);
    let skips = opinfo::skips(&std::fs::read_to_string(dir.join("skips.txt")).expect("skips.txt"));
    let report: Report = opinfo::replay(&golden, &skips);
    let s = &golden.summary;
    println!(
        "oxten runs {} of PyTorch's {} OpInfo operator names; {} of their {} samples pass \
         ({} recorded cases: {} passed, {} skipped with a reason, {} failed; {} not recorded: {})",
        s["names_covered"],
        s["opinfo_names"],
        report.passed,
        s["samples"],
        golden.cases.len(),
        report.passed,
        report.skipped.values().sum::<usize>(),
        report.failed.len(),
        s["samples"].as_u64().unwrap_or(0) as usize - golden.cases.len(),
        s["not_recorded"]
    );
    for (kind, (n, ok)) in &report.by_kind {
        println!("  {kind}: {ok} of {n} pass");
    }
    for skip in &skips {
        println!("  skipped {} × {} ({})", report.skipped.get(&skip.line).unwrap_or(&0), skip.pattern, skip.reason);
    }
    let stale: Vec<String> = skips
        .iter()
        .filter(|s| !report.skipped.contains_key(&s.line))
        .map(|s| format!("skips.txt line {}: `{}` matches no failing case; remove it", s.line, s.pattern))
        .collect();
    let failed: Vec<String> = report.failed.iter().map(|(id, msg)| format!("{id}: {msg}")).collect();
    assert!(
        failed.is_empty() && stale.is_empty(),
        "{} OpInfo cases differ from PyTorch:\n{}\n{}",
        failed.len(),
        failed.join("\n"),
        stale.join("\n")
    );
    assert!(golden.cases.len() > 10_000, "the golden index holds {} cases", golden.cases.len());
}
