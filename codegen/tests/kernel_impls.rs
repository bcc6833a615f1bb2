//! `oxten-codegen check` finds `dispatch:` kernels that kernels/src does not implement, and names
//! the YAML entry instead of leaving rustc to fail inside generated code.

use oxten_codegen::backend::in_tree_backends;
use oxten_codegen::kernel_impls::{missing_kernels, trait_impls};
use oxten_codegen::yaml::parse_native_functions;

const YAML: &str = "\
- func: frob(Tensor self) -> Tensor
  dispatch:
    CPU: frob_cpu
    Meta: frob_meta
- func: twiddle(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: twiddle
";

fn kernels_dir(name: &str, src: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("oxten-kernel-impls-{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    std::fs::write(dir.join("nested/lib.rs"), src).unwrap();
    dir
}

#[test]
fn a_missing_impl_names_the_yaml_entry() {
    let fns = parse_native_functions(YAML, "mine.yaml").unwrap();
    // `frob_meta` and `twiddle` are implemented (one inside an inline module); `frob_cpu` is not.
    let dir = kernels_dir(
        "missing",
        "impl FrobMetaMeta for Meta {}\nmod inner { impl crate::decls::TwiddleCompositeExplicit for Composite {} }\n\
         impl FrobCpuCpu for Meta {}\n",
    );
    let impls = trait_impls(&dir).unwrap();
    let errors = missing_kernels(&fns, &in_tree_backends(&fns), &impls);
    assert_eq!(
        errors,
        ["mine.yaml:1: entry `frob`: the CPU kernel `frob_cpu` is not implemented: kernels/src has no `impl \
          FrobCpuCpu for Cpu` (the trait is generated in `oxten_kernels::generated::decls`)"]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_repository_kernels_implement_every_dispatch_entry() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("native_functions.yaml")).unwrap();
    let fns = parse_native_functions(&text, "native_functions.yaml").unwrap();
    let impls = trait_impls(&root.join("kernels/src")).unwrap();
    assert_eq!(missing_kernels(&fns, &in_tree_backends(&fns), &impls), Vec::<String>::new());
    assert!(impls.len() > 200);
}

#[test]
fn unparsable_kernel_sources_are_an_error_naming_the_file() {
    let dir = kernels_dir("broken", "impl {");
    let e = trait_impls(&dir).unwrap_err();
    assert!(e.contains("nested/lib.rs"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}
