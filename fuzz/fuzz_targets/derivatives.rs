//! The derivatives.yaml front end (YAML, schema matching, formula parsing and name resolution)
//! never panics on any text, checked against the repository's operators.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxten_codegen::yaml::{parse_native_functions, NativeFunction};
use std::sync::OnceLock;

fn operators() -> &'static [NativeFunction] {
    static FNS: OnceLock<Vec<NativeFunction>> = OnceLock::new();
    FNS.get_or_init(|| {
        parse_native_functions(include_str!("../../native_functions.yaml"), "native_functions.yaml")
            .expect("the repository YAML loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let _ = oxten_codegen::derivatives::parse_derivatives(s, "derivatives.yaml", operators());
});
