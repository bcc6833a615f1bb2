//! Selective builds in the generator: the allowlist, the closure of what the listed operators
//! need, and registrations for the kept operators only.

use oxten_codegen::derivatives::parse_derivatives;
use oxten_codegen::emit::generate_selected;
use oxten_codegen::selective::{closure, parse_allowlist, Sources};
use oxten_codegen::yaml::parse_native_functions;
use std::collections::BTreeSet;
use std::path::Path;

const REPO_YAML: &str = include_str!("../../native_functions.yaml");
const REPO_DERIVATIVES: &str = include_str!("../../derivatives.yaml");

fn repo() -> (Vec<oxten_codegen::yaml::NativeFunction>, Vec<oxten_codegen::derivatives::Derivative>) {
    let fns = parse_native_functions(REPO_YAML, "native_functions.yaml").unwrap();
    let ds = parse_derivatives(REPO_DERIVATIVES, "derivatives.yaml", &fns).unwrap();
    (fns, ds)
}

fn keep(list: &str) -> BTreeSet<String> {
    let (fns, ds) = repo();
    let selected = parse_allowlist(list, "ops.yaml", &fns).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    closure(&selected, &fns, &ds, &Sources::in_repo(&root)).unwrap()
}

#[test]
fn allowlist_mistakes_name_the_file_and_line() {
    let (fns, _) = repo();
    let e = parse_allowlist("# ops\n- relu\n- relu.Tensor\nconv2d\n", "ops.yaml", &fns).unwrap_err();
    assert_eq!(
        e,
        "ops.yaml:3: `relu.Tensor` is not an operator of native_functions.yaml\n\
         ops.yaml:4: expected a list item `- <operator>`, found `conv2d`"
    );
    let ok = parse_allowlist("- relu  # the activation\n\n- add.Tensor\n", "ops.yaml", &fns).unwrap();
    assert_eq!(ok.into_iter().collect::<Vec<_>>(), ["add.Tensor", "relu"]);
}

#[test]
fn the_closure_keeps_what_the_listed_operators_need() {
    let k = keep("- relu\n- add.Tensor\n- linear\n");
    for op in [
        "relu",
        "add.Tensor",
        // add.Tensor's wrappers run add.out's meta function and impl.
        "add.out",
        // relu's formula calls threshold_backward.
        "threshold_backward",
        // linear (CompositeImplicitAutograd) decomposes into matmul and addmm; matmul into mm.
        "matmul",
        "addmm",
        "mm",
        // The runtime converts dtypes and copies on its own.
        "copy_",
        "_to_copy",
    ] {
        assert!(k.contains(op), "{op} not kept: {k:?}");
    }
    // Operators nothing reaches are left out.
    for op in ["conv2d", "max_pool2d", "embedding", "nll_loss_forward"] {
        assert!(!k.contains(op), "{op} kept: {k:?}");
    }
}

#[test]
fn a_selected_build_registers_only_what_it_keeps_and_marks_the_rest() {
    let (fns, ds) = repo();
    let k = keep("- relu\n");
    let g = generate_selected(&fns, &ds, Some(&k)).unwrap();
    let cpu = g.get("register_cpu.rs");
    assert!(cpu.contains("ops::relu::OP"), "relu is registered");
    assert!(!cpu.contains("ops::conv2d::OP") && !cpu.contains("ops::max_pool2d"), "conv2d is not");
    let root = g.get("register.rs");
    assert!(root.contains("oxten_runtime::ops::conv2d::OP.set_selected(false);"));
    assert!(!root.contains("oxten_runtime::ops::relu::OP.set_selected"));
    let autograd = g.get("autograd.rs");
    assert!(autograd.contains("pub struct ReluBackward0") && !autograd.contains("pub struct ConvolutionBackward0"));
    // The operator layer and the kernel declarations stay whole.
    let full = generate_selected(&fns, &ds, None).unwrap();
    for file in ["ops.rs", "decls.rs", "decls_cpu.rs"] {
        assert_eq!(g.get(file), full.get(file), "{file}");
    }
    assert!(g.get("pointwise.rs").len() < full.get("pointwise.rs").len());
}
