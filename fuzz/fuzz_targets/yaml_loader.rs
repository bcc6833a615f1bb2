//! The native_functions.yaml loader returns entries or errors for any text, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Err(errors) = oxten_codegen::yaml::parse_native_functions(s, "fuzz.yaml") {
        // Every error names the file.
        for e in errors {
            assert!(e.to_string().starts_with("fuzz.yaml"), "{e}");
        }
    }
});
