//! Generates the toy out-of-tree backend's kernel trait from `backends/toy_backend.yaml`, the
//! way a downstream backend crate's build script does.
fn main() {
    let yaml = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("backends/toy_backend.yaml");
    println!("cargo:rerun-if-changed={}", yaml.display());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    if let Err(e) = oxten_codegen::backend::generate(&yaml, &out) {
        panic!("{e}");
    }
}
