//! Generates the toy out-of-tree backend's kernel trait from `backends/toy_backend.yaml` and the
//! `myops` operator library from `ops_library/native_functions.yaml`, the way a downstream
//! crate's build script does, and the tests of the operators' `doc.example` code.
fn main() {
    let yaml = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("backends/toy_backend.yaml");
    println!("cargo:rerun-if-changed={}", yaml.display());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    if let Err(e) = oxten_codegen::backend::generate(&yaml, &out) {
        panic!("{e}");
    }
    let library = oxten_codegen::library::Library {
        namespace: "myops".into(),
        module: "crate::myops".into(),
        kernels: Some("crate::myops_kernels::MyKernels".into()),
    };
    let yaml = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ops_library/native_functions.yaml");
    println!("cargo:rerun-if-changed={}", yaml.display());
    println!("cargo:rerun-if-changed={}", yaml.with_file_name("derivatives.yaml").display());
    if let Err(e) = oxten_codegen::library::generate(&library, &yaml, &out) {
        panic!("{e}");
    }
    // The `doc.example` code of oxten's own operators, as tests (`tests/yaml_examples.rs`).
    let yaml = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../native_functions.yaml");
    println!("cargo:rerun-if-changed={}", yaml.display());
    let text = std::fs::read_to_string(&yaml).unwrap_or_else(|e| panic!("{}: {e}", yaml.display()));
    match oxten_codegen::doc_examples::emit_example_tests(&text, "native_functions.yaml") {
        Ok(tests) => std::fs::write(out.join("yaml_examples.rs"), tests).expect("OUT_DIR is writable"),
        Err(es) => panic!("{}", es.join("\n")),
    }
}
