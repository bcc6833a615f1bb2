//! Generates the lazy backend's kernels trait and IR nodes from `lazy_backend.yaml`, and the
//! `lazyops` operator library from `ops/`, as any crate outside oxten does.
fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let backend = dir.join("lazy_backend.yaml");
    println!("cargo:rerun-if-changed={}", backend.display());
    if let Err(e) = oxten_codegen::backend::generate(&backend, &out) {
        panic!("{e}");
    }
    let ops = dir.join("ops/native_functions.yaml");
    println!("cargo:rerun-if-changed={}", ops.display());
    println!("cargo:rerun-if-changed={}", ops.with_file_name("derivatives.yaml").display());
    let library =
        oxten_codegen::library::Library { namespace: "lazyops".into(), module: "crate::lazyops".into(), kernels: None };
    if let Err(e) = oxten_codegen::library::generate(&library, &ops, &out) {
        panic!("{e}");
    }
}
