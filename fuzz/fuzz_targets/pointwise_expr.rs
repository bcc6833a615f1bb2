//! The `pointwise:` expression parser and type checker never panic, and an accepted expression
//! can be emitted as Rust.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxten_codegen::pointwise::{ArgKind, PointwiseExpr};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let args = [("self", ArgKind::Tensor), ("other", ArgKind::Tensor), ("alpha", ArgKind::Scalar)];
    if let Ok(e) = PointwiseExpr::parse(s, &args) {
        let _ = e.emit_rust("m");
    }
});
