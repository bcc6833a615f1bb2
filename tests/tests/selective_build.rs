//! Selective builds at run time: tracing the operators a program calls (`OXTEN_TRACE_OPS`, in a
//! child process so the variable is read fresh), and the error for an operator a selective build
//! left out. The generator's side (closure, filtered registrations) is tested in
//! codegen/tests/selective.rs; a whole selective build of the train example is measured in
//! BENCHMARKS.md.

use oxten::{Device, Tensor};
use std::process::Command;

const CHILD: &str = "OXTEN_TEST_TRACE_CHILD";

/// The child side: a few operator calls, nested ones among them.
#[test]
fn traced_child() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let x = Tensor::from_vec(vec![1.0f32, -2.0, 3.0], &[3]).unwrap();
    let _ = x.relu().sum();
    let _ = oxten::autograd::no_grad(|| x.mul_scalar(2.0));
    let _ = x.softmax(0);
}

#[test]
fn tracing_writes_an_allowlist_of_the_operators_called() {
    let path = std::env::temp_dir().join(format!("oxten-trace-{}.yaml", std::process::id()));
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "traced_child", "--test-threads=1"])
        .env(CHILD, "1")
        .env("OXTEN_TRACE_OPS", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let ops: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("- ")).collect();
    // Each operator once, the called ones and the ones they call (`_softmax` under `softmax.int`).
    for op in ["relu", "sum", "mul.Scalar", "softmax.int", "_softmax"] {
        assert_eq!(ops.iter().filter(|o| **o == op).count(), 1, "{op} in {ops:?}");
    }
    assert!(text.starts_with("# Operators this program called"), "{text}");
    // What is never called is not listed.
    assert!(!ops.contains(&"conv2d"), "{ops:?}");
}

#[test]
fn an_operator_left_out_of_the_build_is_an_error_saying_so() {
    oxten::init();
    // What a selective build's `register_all` leaves behind for an operator it did not keep: no
    // kernel, and the mark.
    static OP: oxten::dispatch::Op<fn(&Tensor) -> oxten::Result<Tensor>> =
        oxten::dispatch::Op::new("aten::left_out", "left_out(Tensor self) -> Tensor");
    let keys = oxten::dispatch::KeySet::for_device(Device::Cpu);
    let e = OP.resolve(keys).err().unwrap();
    assert!(e.message.contains("no kernel is registered"), "{e}");
    assert!(OP.is_selected());
    OP.set_selected(false);
    let e = OP.resolve(keys).err().unwrap();
    assert_eq!(
        e.message,
        "operator `left_out` was not selected in this build: add it to the OXTEN_SELECTED_OPS allowlist and rebuild"
    );
    // Every operator of a full build is selected.
    assert!(oxten::ops::all_operators().iter().all(|op| op.is_selected()));
}
