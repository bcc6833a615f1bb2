//! derivatives.yaml validation: every error names the file, the line and the entry, and says
//! what is wrong (and what would be right).

use expect_test::{expect, Expect};
use oxten_codegen::emit::generate_from_strs;

/// A small native_functions.yaml: a binary op with in-place and out= variants, a reduction, an
/// op with a non-tensor argument, a view and a pure composite.
const NATIVE: &str = "\
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul
- func: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method
  dispatch:
    CPU: mul_
- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: mul_out
- func: scale(Tensor self, float factor) -> Tensor
  dispatch:
    CPU: scale
- func: pick(Tensor self, Tensor index) -> (Tensor values, Tensor indices)
  dispatch:
    CPU: pick
- func: reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
  dispatch:
    CompositeImplicitAutograd: reshape
- func: cat(Tensor[] tensors, int dim=0) -> Tensor
  dispatch:
    CPU: cat
- func: index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
  dispatch:
    CPU: index
";

fn check(derivatives: &str, expected: Expect) {
    let got = match generate_from_strs(NATIVE, "native_functions.yaml", Some((derivatives, "derivatives.yaml"))) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.join("\n"),
    };
    expected.assert_eq(&got);
}

#[test]
fn a_valid_file_generates() {
    check(
        "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&other)?
  other: grad.try_mul(&self)?
",
        expect!["ok"],
    );
}

#[test]
fn unknown_names_list_the_names_in_scope() {
    check(
        "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&othr)?
  other: grad.try_mul(&self)?
",
        expect!["derivatives.yaml:2: in `mul.Tensor`: formula for `self`: unknown name `othr`; names in scope: grad, grad_input_mask, grads, other, result, self"],
    );
}

#[test]
fn locals_shadow_and_functions_are_not_names() {
    check(
        "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: '{ let o = other.try_neg()?; grad.try_mul(&helper(&o)?)? }'
  other: 'grad.try_mul(&[self.clone()].iter().map(|t| t.clone()).next().unwrap())?'
",
        expect!["ok"],
    );
}

#[test]
fn formulas_for_non_tensor_arguments_are_rejected() {
    check(
        "\
- name: scale(Tensor self, float factor) -> Tensor
  self: grad.try_mul_scalar(factor)?
  factor: grad.try_sum()?
",
        expect![
            "derivatives.yaml:3: in `scale`: `factor` is a `float`, not a tensor: only tensor arguments have gradients"
        ],
    );
}

#[test]
fn tensor_list_inputs() {
    // A `Tensor[]` input is differentiable, one edge per element; its metadata can be saved
    // element by element (`tensors.sizes()`).
    check(
        "\
- name: cat(Tensor[] tensors, int dim=0) -> Tensor
  tensors: cat_tensors_backward(&grad, &tensors.sizes(), dim)?
",
        expect!["ok"],
    );
    // A list needs a formula of its own, and a `Tensor?[]` (indices) is never differentiable.
    check(
        "\
- name: cat(Tensor[] tensors, int dim=0) -> Tensor
  tensors, dim: grad
- name: index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
  self: index_backward(&grad, &self.sizes(), &indices)?
  indices: grad
",
        expect![[r#"
            derivatives.yaml:1: in `cat`: the differentiable input `tensors` has no formula; write one or mark it `tensors: non_differentiable`
            derivatives.yaml:2: in `cat`: `tensors` is a `Tensor[]`: a tensor list needs a formula of its own
            derivatives.yaml:2: in `cat`: `dim` is a `int`, not a tensor: only tensor arguments have gradients
            derivatives.yaml:5: in `index.Tensor`: `indices` is a `Tensor?[]`: only `Tensor[]` lists can be differentiable"#]],
    );
    check(
        "\
- name: index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
  self: index_backward(&grad, &self.sizes(), &indices)?
  indices: non_differentiable
",
        expect!["ok"],
    );
}

#[test]
fn unknown_inputs_are_rejected() {
    check(
        "\
- name: scale(Tensor self, float factor) -> Tensor
  self: grad.try_mul_scalar(factor)?
  input: grad
  result: auto_element_wise
",
        expect![[
            r#"derivatives.yaml:3: in `scale`: `input` is not an argument of `scale` (its arguments: self, factor; outputs take forward formulas: result)"#
        ]],
    );
}

#[test]
fn forward_formulas_are_checked() {
    // Unknown names (with the names in scope), a tangent of a non-differentiable input,
    // `auto_element_wise` with two differentiable inputs, a non-differentiable output.
    check(
        "\
- name: scale(Tensor self, float factor) -> Tensor
  self: grad.try_mul_scalar(factor)?
  result: self_t.try_mul_scalar(factr)?
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&other)?
  other: grad.try_mul(&self)?
  result: auto_element_wise
- name: pick(Tensor self, Tensor index) -> (Tensor values, Tensor indices)
  self: grad
  index: non_differentiable
  output_differentiability: [True, False]
  result0: self_t.try_mul(&index_t)?
  result1: auto_linear
",
        expect![[r#"
            derivatives.yaml:3: in `scale`: forward formula for `result`: unknown name `factr`; names in scope: factor, result, self_p, self_t
            derivatives.yaml:7: in `mul.Tensor`: `auto_element_wise` needs exactly one differentiable tensor input, and `mul.Tensor` has 2 (self, other); write the formula
            derivatives.yaml:12: in `pick`: forward formula for `result0` uses the tangent `index_t` of an input that is not differentiable
            derivatives.yaml:13: in `pick`: `result1` is not a differentiable output: it has no tangent"#]],
    );
}

#[test]
fn schemas_must_match_an_operator_exactly() {
    check(
        "\
- name: mul.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: grad
- name: div.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad
",
        expect![[r#"
            derivatives.yaml:1: in `mul.Tensor`: `mul.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor` matches no operator in native_functions.yaml (the schema of `mul.Tensor` there is `mul.Tensor(Tensor self, Tensor other) -> Tensor`)
            derivatives.yaml:3: in `div.Tensor`: `div.Tensor(Tensor self, Tensor other) -> Tensor` matches no operator in native_functions.yaml"#]],
    );
}

#[test]
fn unparseable_rust_is_reported_with_the_parser_error() {
    check(
        "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&other)? +
  other: grad.try_mul(&self)?)
",
        expect![[r#"
            derivatives.yaml:2: in `mul.Tensor`: formula for `self`: cannot parse `grad.try_mul(&other)? +` as a Rust expression: unexpected end of input, expected an expression
            derivatives.yaml:3: in `mul.Tensor`: formula for `other`: cannot parse `grad.try_mul(&self)?)` as a Rust expression: unbalanced delimiters"#]],
    );
}

#[test]
fn every_differentiable_input_needs_a_formula_or_non_differentiable() {
    check(
        "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&other)?
",
        expect!["derivatives.yaml:1: in `mul.Tensor`: the differentiable input `other` has no formula; write one or mark it `other: non_differentiable`"],
    );
    check(
        "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&other)?
  other: non_differentiable
",
        expect!["ok"],
    );
}

#[test]
fn out_inplace_composite_and_duplicate_entries_are_rejected() {
    check(
        "\
- name: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  self: grad
- name: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  self: grad
- name: reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
  self: grad
- name: scale(Tensor self, float factor) -> Tensor
  self: grad
- name: scale(Tensor self, float factor) -> Tensor
  self: grad
",
        expect![[r#"
            derivatives.yaml:1: in `mul.out`: out= overloads are never differentiable; write the entry for the functional overload
            derivatives.yaml:3: in `mul_.Tensor`: an in-place variant inherits the formulas of its functional variant; write the entry for `mul.Tensor` instead
            derivatives.yaml:5: in `reshape`: the operator has only a CompositeImplicitAutograd kernel: its gradient comes from the operators it calls, so it takes no entry
            derivatives.yaml:9: in `scale`: a second entry for this operator (the first is on line 7)"#]],
    );
}

#[test]
fn output_differentiability_and_output_names() {
    check(
        "\
- name: pick(Tensor self, Tensor index) -> (Tensor values, Tensor indices)
  self: grad_indices
  index: non_differentiable
  output_differentiability: [True, False, True]
",
        expect![[r#"
            derivatives.yaml:2: in `pick`: formula for `self`: unknown name `grad_indices`; names in scope: grad, grad_input_mask, grad_values, grads, index, indices, result0, result1, self, values
            derivatives.yaml:4: in `pick`: `output_differentiability` has 3 entries but the operator has 2 returns"#]],
    );
}

#[test]
fn yaml_shape_errors() {
    check("name: mul.Tensor\n", expect!["derivatives.yaml:1: in `<document>`: the top level must be a list of entries (`- name: ...`), found a mapping"]);
    check(
        "- self: grad\n- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: [1]\n  other: grad\n",
        expect![[r#"
            derivatives.yaml:1: in `<entry 1>`: the entry has no `name:` key
            derivatives.yaml:3: in `mul.Tensor`: the formula for `self` must be a string (a Rust expression), found a list"#]],
    );
}
