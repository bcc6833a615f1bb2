//! `oxten-codegen check` names the derivatives.yaml line of a formula that calls a function or a
//! `try_` method that does not exist, instead of leaving rustc to fail in generated code.

use oxten_codegen::derivatives::{parse_derivatives, scan_rust, unknown_calls, Vocabulary};
use oxten_codegen::yaml::parse_native_functions;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn check(derivatives: &str) -> Vec<String> {
    let fns =
        parse_native_functions(&std::fs::read_to_string(root().join("native_functions.yaml")).unwrap(), "nf.yaml")
            .unwrap();
    let ds = parse_derivatives(derivatives, "derivatives.yaml", &fns).unwrap();
    let (helpers, _) = scan_rust(&root().join("gen/src/autograd/helpers")).unwrap();
    let (_, mut methods) = scan_rust(&root().join("runtime/src")).unwrap();
    methods.extend(scan_rust(&root().join("gen/src")).unwrap().1);
    unknown_calls(&ds, "derivatives.yaml", &Vocabulary::new(&fns, helpers, methods))
}

#[test]
fn every_call_in_the_repository_formulas_exists() {
    assert_eq!(check(&std::fs::read_to_string(root().join("derivatives.yaml")).unwrap()), Vec::<String>::new());
}

#[test]
fn misspelt_calls_name_the_line() {
    let text = std::fs::read_to_string(root().join("derivatives.yaml")).unwrap();
    let line_of = |needle: &str| text.lines().position(|l| l == needle).expect("the formula is in the file") + 1;
    let (mul, add) = (line_of("  self: grad.try_mul(&other)?"), line_of("  other: maybe_multiply(&grad, alpha)?"));
    let broken = text.replace("  self: grad.try_mul(&other)?\n", "  self: grad.try_mull(&other)?\n").replacen(
        "  other: maybe_multiply(&grad, alpha)?\n",
        "  other: maybe_multiplyy(&grad, alpha)?\n",
        1,
    );
    let errors = check(&broken);
    assert_eq!(
        errors,
        [
            format!(
                "derivatives.yaml:{add}: in `add.Tensor`: the formula calls the unknown function `maybe_multiplyy`: no \
                 autograd helper, operator function or Tensor method has that name"
            ),
            format!(
                "derivatives.yaml:{mul}: in `mul.Tensor`: the formula calls the unknown method `try_mull`: no autograd \
                 helper, operator function or Tensor method has that name"
            ),
        ]
    );
}
