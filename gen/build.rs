//! Generates the registrations of every in-tree kernel (and the structured wrappers) from
//! native_functions.yaml, the autograd nodes and kernels from derivatives.yaml, and the autocast
//! kernels from the `autocast:` policies of native_functions.yaml.
//! OXTEN_NATIVE_FUNCTIONS overrides the first file; OXTEN_DERIVATIVES the second, which
//! otherwise is the `derivatives.yaml` next to the native functions file, or the repository's
//! when there is none there (a scratch copy of native_functions.yaml alone).
fn main() {
    let repo = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let yaml = std::env::var("OXTEN_NATIVE_FUNCTIONS").unwrap_or_else(|_| format!("{repo}/native_functions.yaml"));
    let yaml = std::path::PathBuf::from(yaml);
    let derivatives = match std::env::var("OXTEN_DERIVATIVES") {
        Ok(p) => std::path::PathBuf::from(p),
        Err(_) => {
            let sibling = oxten_codegen::emit::derivatives_path(&yaml);
            if sibling.exists() {
                sibling
            } else {
                std::path::PathBuf::from(format!("{repo}/derivatives.yaml"))
            }
        }
    };
    println!("cargo:rerun-if-changed={}", yaml.display());
    println!("cargo:rerun-if-changed={}", derivatives.display());
    println!("cargo:rerun-if-env-changed=OXTEN_NATIVE_FUNCTIONS");
    println!("cargo:rerun-if-env-changed=OXTEN_DERIVATIVES");
    // With OXTEN_SELECTED_OPS, only the selected operators (and what they need) are registered.
    let (gen, kept) = oxten_codegen::selective::generate_for_build(&yaml, &derivatives, std::path::Path::new(repo))
        .unwrap_or_else(|errors| panic!("the operator YAML has errors:\n{}", errors.join("\n")));
    if let Some(n) = kept {
        println!("cargo:warning=selective build (OXTEN_SELECTED_OPS): {n} operators registered");
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // `register.rs` and one `register_<key>.rs` per backend, `autograd.rs`, `autocast.rs`.
    for (file, text) in gen.files.iter().filter(|(n, _)| n.starts_with("register") || n.starts_with("auto")) {
        std::fs::write(out.join(file), text).unwrap_or_else(|e| panic!("write {file}: {e}"));
    }
}
