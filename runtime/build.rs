//! Generates the operator layer (typed entry points, `Tensor` methods, free functions) from
//! native_functions.yaml. Set OXTEN_NATIVE_FUNCTIONS to build from another YAML file.
fn main() {
    let yaml = std::env::var("OXTEN_NATIVE_FUNCTIONS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../native_functions.yaml").to_string());
    println!("cargo:rerun-if-changed={yaml}");
    println!("cargo:rerun-if-env-changed=OXTEN_NATIVE_FUNCTIONS");
    let gen = match oxten_codegen::emit::generate_from_file(std::path::Path::new(&yaml)) {
        Ok(g) => g,
        Err(errors) => {
            for e in &errors {
                println!("cargo:warning={e}");
            }
            panic!("native_functions.yaml has {} error(s):\n{}", errors.len(), errors.join("\n"));
        }
    };
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("ops.rs"), gen.get("ops.rs")).expect("write ops.rs");
}
