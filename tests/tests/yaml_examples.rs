//! Every `doc.example` of `native_functions.yaml`, compiled and run: the generated rustdoc shows
//! these examples, so they must stay true (tests/build.rs writes one `#[test]` per example).

include!(concat!(env!("OUT_DIR"), "/yaml_examples.rs"));
