//! Generated kernel declarations turn a missing or mistyped kernel into a compile error that
//! names the operator.
#[test]
fn kernel_declarations_are_checked_at_compile_time() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
