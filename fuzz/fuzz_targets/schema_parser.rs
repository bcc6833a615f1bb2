//! The schema parser never panics, and a schema it accepts prints back to a string that parses
//! to the same schema.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxten_codegen::model::FunctionSchema;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(schema) = FunctionSchema::parse(s) {
        let printed = schema.to_string();
        let again = FunctionSchema::parse(&printed).expect("a printed schema parses");
        assert_eq!(again, schema, "round trip of {s:?} through {printed:?}");
    }
});
