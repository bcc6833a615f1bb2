//! Generates the toy out-of-tree backend's kernel trait from `backends/toy_backend.yaml` and the
//! `myops` operator library from `ops_library/native_functions.yaml`, the way a downstream
//! crate's build script does.
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
}
