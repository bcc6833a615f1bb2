//! Generates the kernel declarations (one trait per hand-written kernel) and the kernels of
//! `pointwise:` operators from native_functions.yaml. OXTEN_NATIVE_FUNCTIONS overrides the file.
fn main() {
    let yaml = std::env::var("OXTEN_NATIVE_FUNCTIONS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../native_functions.yaml").to_string());
    println!("cargo:rerun-if-changed={yaml}");
    println!("cargo:rerun-if-env-changed=OXTEN_NATIVE_FUNCTIONS");
    // With OXTEN_SELECTED_OPS, only the selected `pointwise:` kernels are generated.
    let yaml_path = std::path::Path::new(&yaml);
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let (gen, _) = oxten_codegen::selective::generate_for_build(
        yaml_path,
        &oxten_codegen::emit::derivatives_path(yaml_path),
        root,
    )
    .unwrap_or_else(|errors| panic!("native_functions.yaml has errors:\n{}", errors.join("\n")));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // The declarations (`decls.rs` and one `decls_<key>.rs` per backend), `pointwise.rs` and
    // `pointwise_cuda.rs`.
    for (name, text) in gen.files.iter().filter(|(n, _)| n.starts_with("decls") || n.starts_with("pointwise")) {
        std::fs::write(out.join(name), text).expect("write generated file");
    }
}
