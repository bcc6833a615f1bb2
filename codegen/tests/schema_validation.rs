//! `native_functions.yaml` loading: one test per validation rule, with the
//! full error text as an inline snapshot, plus the happy path and grouping.

use expect_test::{expect, Expect};
use oxten_codegen::backend::DispatchKey;
use oxten_codegen::model::OperatorName;
use oxten_codegen::yaml::{
    group_native_functions, parse_native_functions, AutocastPolicies, AutocastPolicy, DeviceCheck, NativeFunction,
    Variant,
};

const FILE: &str = "native_functions.yaml";

/// Parses `yaml`, expects failure, and compares all errors, one per line.
fn check(yaml: &str, expected: Expect) {
    match parse_native_functions(yaml, FILE) {
        Ok(fns) => panic!("expected errors, parsed {} entries", fns.len()),
        Err(errors) => {
            let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
            expected.assert_eq(&text.join("\n"));
        }
    }
}

fn parse_ok(yaml: &str) -> Vec<NativeFunction> {
    parse_native_functions(yaml, FILE).unwrap_or_else(|errors| {
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        panic!("unexpected errors:\n{}", text.join("\n"))
    })
}

/// A well-formed structured trio used as a base by several tests.
const ADD: &str = "\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  device_check: NoCheck   # TensorIterator
  structured_delegate: add.out
  variants: function, method
  tags: [core, pointwise]

- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  device_check: NoCheck   # TensorIterator
  variants: method
  structured_delegate: add.out
  tags: pointwise

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  device_check: NoCheck   # TensorIterator
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU, CUDA: add_out
";

#[test]
fn valid_file_parses() {
    let fns = parse_ok(ADD);
    assert_eq!(fns.len(), 3);
    let [add, add_, out] = &fns[..] else { unreachable!() };
    assert_eq!(add.func.name.to_string(), "add.Tensor");
    assert_eq!(add.loc.to_string(), "native_functions.yaml:1");
    assert_eq!(add_.loc.line, 7);
    assert_eq!(out.loc.line, 13);
    assert_eq!(add.variants, [Variant::Function, Variant::Method].into());
    assert_eq!(add_.variants, [Variant::Method].into());
    assert_eq!(add.device_check, DeviceCheck::NoCheck);
    assert_eq!(add.structured_delegate, Some(OperatorName::parse("add.out").unwrap()));
    assert_eq!(add.tags, ["core", "pointwise"]);
    assert_eq!(add_.tags, ["pointwise"]);
    assert!(out.structured);
    assert_eq!(out.structured_inherits.as_deref(), Some("TensorIteratorBase"));
    let dispatch: Vec<String> = out.dispatch.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    assert_eq!(dispatch, ["CPU: add_out", "CUDA: add_out"]);
    assert!(fns.iter().all(NativeFunction::is_structured_group_member));
    assert!(!out.has_composite_kernel());
}

#[test]
fn defaults_and_ignored_keys() {
    let fns = parse_ok(
        "\
- func: to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
  variants: method
  device_guard: False
  manual_cpp_binding: True
  python_module: nn
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: sum
- func: avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  precomputed:
  - kernel_size -> int kH, int kW
  - stride -> int dH, int dW
",
    );
    let [to, sum, pool] = &fns[..] else { unreachable!() };
    assert_eq!(to.device_check, DeviceCheck::ExactSame);
    assert!(to.dispatch.is_empty());
    assert!(to.has_composite_implicit_kernel(), "no dispatch means implicit CompositeImplicitAutograd");
    assert!(to.has_composite_kernel());
    assert!(!sum.has_composite_implicit_kernel());
    assert!(sum.has_composite_explicit_kernel());
    assert!(sum.has_composite_kernel());
    assert_eq!(sum.variants, [Variant::Function].into());
    assert!(sum.tags.is_empty());
    assert_eq!(pool.precomputed, ["kernel_size -> int kH, int kW", "stride -> int dH, int dW"]);
    assert!(!pool.has_composite_kernel());
}

#[test]
fn grouping() {
    let mut yaml = ADD.to_string();
    yaml.push_str(
        "\
- func: relu(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CPU, CUDA: relu
- func: relu_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU, CUDA: relu_
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: sum
- func: _native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
  dispatch:
    CPU: batch_norm_cpu
- func: _native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) -> (Tensor(d!), Tensor(e!), Tensor(f!))
  dispatch:
    CPU: batch_norm_cpu_out
",
    );
    let groups = group_native_functions(&parse_ok(&yaml));
    let summary: Vec<String> = groups
        .iter()
        .map(|g| {
            let names: Vec<String> = g.members().iter().map(|f| f.func.name.to_string()).collect();
            format!("{} structured={} [{}]", g.root_name(), g.structured(), names.join(", "))
        })
        .collect();
    expect![[r#"
        add structured=true [add.Tensor, add_.Tensor, add.out]
        relu structured=false [relu, relu_]
        sum structured=false [sum]
        _native_batch_norm_legit structured=false [_native_batch_norm_legit, _native_batch_norm_legit.out]"#]]
    .assert_eq(&summary.join("\n"));
    assert_eq!(groups[0].out_fn().map(|f| f.func.name.to_string()).as_deref(), Some("add.out"));
    assert!(groups[0].inplace.is_some() && groups[0].functional.is_some());
    assert!(groups[3].mutable.is_some());
    assert!(groups[1].out_fn().is_none());
}

#[test]
fn yaml_syntax_error() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  dispatch: [CPU: relu
- func: sum(Tensor self) -> Tensor
",
        expect!["native_functions.yaml:3: in `<entry 2>`: invalid YAML: did not find expected ',' or ']' at line 3 column 7, while parsing a flow sequence at line 2 column 13"],
    );
}

#[test]
fn top_level_not_a_list() {
    check(
        "func: relu(Tensor self) -> Tensor\n",
        expect!["native_functions.yaml:1: in `<document>`: the top level must be a list of entries (`- func: ...`), found a mapping"],
    );
}

#[test]
fn entry_not_a_mapping() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
- relu(Tensor self) -> Tensor
",
        expect!["native_functions.yaml:2: in `<entry 2>`: an entry must be a mapping of keys such as `func:`, found a string"],
    );
}

#[test]
fn missing_func() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
- variants: function
  dispatch:
    CPU: relu
",
        expect!["native_functions.yaml:2: in `<entry 2>`: missing `func` key (the operator schema)"],
    );
}

#[test]
fn schema_parse_error() {
    check(
        "\
- func: relu(Tensor self) -> Tensr
  variants: function
",
        expect!["native_functions.yaml:1: in `relu`: invalid schema `relu(Tensor self) -> Tensr`: column 22: unknown type `Tensr` (known types: Tensor, int, SymInt, float, bool, str, Scalar, ScalarType, Layout, Device, MemoryFormat, Generator, Dimname, Stream, Storage)"],
    );
}

#[test]
fn inplace_annotation_error_from_schema() {
    check(
        "\
- func: relu_(Tensor self) -> Tensor
",
        expect!["native_functions.yaml:1: in `relu_`: invalid schema `relu_(Tensor self) -> Tensor`: column 7: inplace operator `relu_` must take `Tensor(a!) self` as its first argument"],
    );
}

#[test]
fn out_annotation_error_from_schema() {
    check(
        "\
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(b!)
",
        expect!["native_functions.yaml:1: in `relu.out`: invalid schema `relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(b!)`: column 45: an out= schema must return its out arguments in order: expected `Tensor(a!)`, found `Tensor(b!)`"],
    );
}

#[test]
fn unknown_key() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  variants: function
  dispatchh:
    CPU: relu
",
        expect!["native_functions.yaml:3: in `relu`: unknown key `dispatchh` (allowed keys: func, variants, dispatch, structured, structured_delegate, structured_inherits, precomputed, tags, device_check, device_guard, pointwise, pointwise_check, pointwise_operands, pointwise_constants, autogen, python_module, manual_cpp_binding, autocast, positional_defaults, per_tensor, doc)"],
    );
}

#[test]
fn pointwise_operands_must_list_each_loop_operand_once() {
    check(
        "\
- func: threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *, Tensor(a!) grad_input) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIterator
  pointwise: where(self <= threshold, 0, grad_output)
  pointwise_operands: [self, grad_output, self]
",
        expect![[r#"native_functions.yaml:5: in `threshold_backward.grad_input`: `pointwise_operands` must list the loop operands ["grad_output", "self", "threshold"] once each, got ["self", "grad_output", "self"]"#]],
    );
    check(
        "\
- func: f.out(Tensor self, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIterator
  pointwise_operands: [self]
",
        expect!["native_functions.yaml:4: in `f.out`: `pointwise_operands` needs a `pointwise` expression on the same entry"],
    );
}

#[test]
fn pointwise_constants_must_be_scalar_arguments() {
    check(
        "\
- func: addcmul.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIterator
  pointwise: self + value * tensor1 * tensor2
  pointwise_constants: [tensor1]
",
        expect!["native_functions.yaml:5: in `addcmul.out`: `pointwise_constants` names `tensor1`, which is not a `Scalar` argument of `addcmul.out`"],
    );
    // A constant is not a loop operand, so `pointwise_operands` must leave it out.
    check(
        "\
- func: lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIterator
  pointwise: self + weight * (end - self)
  pointwise_constants: [weight]
  pointwise_operands: [end, self, weight]
",
        expect![[
            r#"native_functions.yaml:6: in `lerp.Scalar_out`: `pointwise_operands` must list the loop operands ["end", "self"] once each, got ["end", "self", "weight"]"#
        ]],
    );
}

#[test]
fn structured_on_non_out() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  structured: True
",
        expect!["native_functions.yaml:2: in `relu`: `structured: True` is only allowed on an out= overload, but `relu` is a functional overload"],
    );
}

#[test]
fn structured_delegate_on_out() {
    check(
        "\
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
- func: relu.out_alt(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured_delegate: relu.out
",
        expect!["native_functions.yaml:4: in `relu.out_alt`: `structured_delegate` is not allowed on the out= overload `relu.out_alt`; mark it `structured: True` instead"],
    );
}

#[test]
fn structured_and_structured_delegate() {
    check(
        "\
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
- func: relu_.out(Tensor(a!) self) -> Tensor(a!)
  structured: True
  structured_delegate: relu.out
",
        expect![[r#"
            native_functions.yaml:4: in `relu_.out`: `structured: True` is only allowed on an out= overload, but `relu_.out` is an inplace overload
            native_functions.yaml:5: in `relu_.out`: `structured` and `structured_delegate` cannot both be set: an entry is either the structured out= kernel or delegates to one"#]],
    );
}

#[test]
fn structured_inherits_without_structured() {
    check(
        "\
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured_inherits: TensorIteratorBase
",
        expect!["native_functions.yaml:2: in `relu.out`: `structured_inherits` requires `structured: True`"],
    );
}

#[test]
fn precomputed_without_structured() {
    check(
        "\
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: relu_out
  precomputed:
  - self -> int n
",
        expect!["native_functions.yaml:4: in `relu.out`: `precomputed` requires `structured: True`"],
    );
}

#[test]
fn structured_delegate_missing_target() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  structured_delegate: relu.outt
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
",
        expect!["native_functions.yaml:2: in `relu`: `structured_delegate` names `relu.outt`, which is not defined in this file"],
    );
}

#[test]
fn structured_delegate_target_not_structured() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  structured_delegate: relu.out
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: relu_out
",
        expect!["native_functions.yaml:2: in `relu`: `structured_delegate` names `relu.out` (at native_functions.yaml:3), which is not `structured: True`"],
    );
}

#[test]
fn structured_delegate_with_backend_dispatch() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  structured_delegate: relu.out
  dispatch:
    CompositeExplicitAutograd: relu_composite
    CPU, Meta: relu_cpu
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
",
        expect!["native_functions.yaml:3: in `relu`: `relu` delegates to `relu.out`, which provides its CPU/CUDA/Meta kernels; remove `CPU`, `Meta` from `dispatch`"],
    );
}

#[test]
fn autogen_derives_out_overloads_with_generated_kernels() {
    let fns = parse_ok(
        "\
- func: kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
  variants: function, method
  dispatch:
    CPU: kthvalue
  tags: core
  autogen: kthvalue.values
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: sum
",
    );
    let names: Vec<String> = fns.iter().map(|f| f.func.name.to_string()).collect();
    assert_eq!(names, ["kthvalue", "kthvalue.values", "sum"]);
    let out = &fns[1];
    assert_eq!(
        out.func.to_string(),
        "kthvalue.values(Tensor self, int k, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) \
         -> (Tensor(a!) values, Tensor(b!) indices)"
    );
    assert_eq!(out.generated_from, Some(OperatorName::parse("kthvalue").unwrap()));
    assert_eq!(out.dispatch.get(&DispatchKey::CompositeExplicitAutograd).map(String::as_str), Some("kthvalue_values"));
    assert_eq!(out.variants, [Variant::Function].into(), "out= overloads are functions only");
    assert_eq!(
        (out.loc.line, out.tags.clone()),
        (1, vec!["core".to_string()]),
        "located at and tagged as its functional"
    );
    assert!(fns[0].generated_from.is_none() && fns[2].generated_from.is_none());
}

#[test]
fn autogen_drops_a_factory_s_tensor_options_whatever_their_defaults() {
    let fns = parse_ok(
        "\
- func: tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CPU: tril_indices
  autogen: tril_indices.out
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: sum
  autogen: sum.out
",
    );
    assert_eq!(
        fns[1].func.to_string(),
        "tril_indices.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)"
    );
    // `dtype` alone is not a factory's TensorOptions: `sum.out` keeps it.
    assert_eq!(
        fns[3].func.to_string(),
        "sum.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)"
    );
}

#[test]
fn autogen_errors_name_the_entry_and_line() {
    check(
        "\
- func: sum(Tensor self) -> Tensor
  autogen: sum.out
- func: sum.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
- func: t(Tensor(a) self) -> Tensor(a)
  variants: method
  autogen: t.out
- func: split(Tensor self, int size) -> Tensor[]
  autogen: [split.out]
- func: take(Tensor self, Tensor index) -> Tensor
  autogen: put.out, take.out
",
        expect![[r#"
            native_functions.yaml:3: in `sum.out`: overload name `out` of `sum` is already used by the entry at native_functions.yaml:1 (its `autogen:`); overload names must be unique
            native_functions.yaml:6: in `t`: `autogen`: `t` has arguments with alias annotations (a view has no out= form)
            native_functions.yaml:8: in `split`: `autogen` needs every return of `split` to be a `Tensor`
            native_functions.yaml:10: in `take`: `autogen` name `put.out` must be `take.<overload>`"#]],
    );
}

#[test]
fn duplicate_overload_name() {
    check(
        "\
- func: add.Tensor(Tensor self, Tensor other) -> Tensor
- func: add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
- func: add.Tensor(Tensor self, Scalar other) -> Tensor
- func: sum(Tensor self) -> Tensor
- func: sum(Tensor self) -> Tensor
",
        expect![[r#"
            native_functions.yaml:3: in `add.Tensor`: overload name `Tensor` of `add` is already used by the entry at native_functions.yaml:1; overload names must be unique
            native_functions.yaml:5: in `sum`: `sum` without an overload name is already used by the entry at native_functions.yaml:4; overload names must be unique"#]],
    );
}

#[test]
fn structured_and_pointwise_ops_take_only_the_keys_they_emit() {
    check(
        "\
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: relu_out
    Meta: relu_meta
    CompositeExplicitAutograd: relu_any
- func: exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  pointwise: exp(self)
  dispatch:
    CPU: exp_out
- func: neg(Tensor self) -> Tensor
  dispatch:
    PrivateUse1: neg_pu1
",
        expect![[r#"
            native_functions.yaml:3: in `relu.out`: a structured op lists only backend impls (CPU, CUDA) in `dispatch`: its meta function serves Meta and it has no composite kernel; remove `Meta`, `CompositeExplicitAutograd`
            native_functions.yaml:11: in `exp.out`: a `pointwise:` op's kernels are generated from its expression on every backend; remove `dispatch`
            native_functions.yaml:15: in `neg`: `PrivateUse1` kernels belong to an out-of-tree backend and are declared in that backend's own YAML, not in native_functions.yaml (see ARCHITECTURE.md, "Adding a backend")"#]],
    );
}

#[test]
fn unknown_dispatch_key() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  dispatch:
    CPU: relu_cpu
    CUDA, XLA: relu_cuda
",
        expect!["native_functions.yaml:4: in `relu`: unknown dispatch key `XLA` (legal keys: CPU, CUDA, Meta, CompositeImplicitAutograd, CompositeExplicitAutograd)"],
    );
}

#[test]
fn bad_variant() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  variants: function, methods
",
        expect!["native_functions.yaml:2: in `relu`: unknown variant `methods` (expected `function` or `method`)"],
    );
}

#[test]
fn method_without_self() {
    check(
        "\
- func: zeros(SymInt[] size, *, ScalarType? dtype=None) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: zeros
",
        expect!["native_functions.yaml:2: in `zeros`: a method variant needs a positional `Tensor self` argument, which `zeros` lacks"],
    );
}

#[test]
fn out_with_method_variant() {
    check(
        "\
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  variants: function, method
  dispatch:
    CPU: relu_out
",
        expect!["native_functions.yaml:2: in `relu.out`: out= overload `relu.out` cannot be a method; use `variants: function`"],
    );
}

#[test]
fn pointwise_not_on_structured_out() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  pointwise: max(self, 0)
- func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  pointwise: max(self, 0)
  dispatch:
    CPU: relu_out
",
        expect![[r#"
            native_functions.yaml:2: in `relu`: `pointwise` is only allowed on a `structured: True` out= overload, but `relu` is a functional overload
            native_functions.yaml:4: in `relu.out`: `pointwise` is only allowed on a `structured: True` out= overload, but `relu.out` is not structured
            native_functions.yaml:5: in `relu.out`: a `pointwise:` op's kernels are generated from its expression on every backend; remove `dispatch`"#]],
    );
}

#[test]
fn bad_device_check() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  device_check: SameDevice
",
        expect![
            "native_functions.yaml:2: in `relu`: unknown device_check `SameDevice` (expected `NoCheck` or `ExactSame`)"
        ],
    );
}

#[test]
fn wrongly_typed_values() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  structured: yes
  device_guard: 0
  tags: {core: 1}
  dispatch:
    CPU: [relu]
",
        expect![[r#"
            native_functions.yaml:2: in `relu`: `structured` must be True or False, found a string
            native_functions.yaml:3: in `relu`: `device_guard` must be True or False, found a number
            native_functions.yaml:4: in `relu`: `tags` must be a string or a list of strings, found a mapping
            native_functions.yaml:6: in `relu`: the kernel for `CPU` must be a kernel name, found a list"#]],
    );
}

#[test]
fn all_errors_are_collected_and_sorted() {
    check(
        "\
- func: b(Tensor self) -> Tensor
  structured_delegate: missing.out
- func: a(Tensor self) -> Tensor
  colour: blue
- func: c(Tensor self) -> Tensr
- func: b(Tensor self) -> Tensor
",
        expect![[r#"
            native_functions.yaml:2: in `b`: `structured_delegate` names `missing.out`, which is not defined in this file
            native_functions.yaml:4: in `a`: unknown key `colour` (allowed keys: func, variants, dispatch, structured, structured_delegate, structured_inherits, precomputed, tags, device_check, device_guard, pointwise, pointwise_check, pointwise_operands, pointwise_constants, autogen, python_module, manual_cpp_binding, autocast, positional_defaults, per_tensor, doc)
            native_functions.yaml:5: in `c`: invalid schema `c(Tensor self) -> Tensr`: column 19: unknown type `Tensr` (known types: Tensor, int, SymInt, float, bool, str, Scalar, ScalarType, Layout, Device, MemoryFormat, Generator, Dimname, Stream, Storage)
            native_functions.yaml:6: in `b`: `b` without an overload name is already used by the entry at native_functions.yaml:1; overload names must be unique"#]],
    );
}

#[test]
fn empty_file_is_empty() {
    assert_eq!(parse_native_functions("", FILE), Ok(vec![]));
    assert_eq!(parse_native_functions("# only a comment\n", FILE), Ok(vec![]));
}

#[test]
fn autocast_policies_parse() {
    let fns = parse_ok(
        "\
- func: mm(Tensor self, Tensor mat2) -> Tensor
  autocast: lower_precision_fp
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  autocast: fp32_set_opt_dtype
- func: cat(Tensor[] tensors, int dim=0) -> Tensor
  autocast: promote
- func: relu(Tensor self) -> Tensor
- func: exp(Tensor self) -> Tensor
  autocast: {CUDA: fp32}
- func: prod(Tensor self, *, ScalarType? dtype=None) -> Tensor
  autocast:
    CPU: fp32
    CUDA: fp32_set_opt_dtype
- func: dot(Tensor self, Tensor tensor) -> Tensor
  autocast:
    CPU, CUDA: promote
",
    );
    let policies: Vec<AutocastPolicies> = fns.iter().map(|f| f.autocast).collect();
    use AutocastPolicy::*;
    let both = |p| AutocastPolicies { cpu: Some(p), cuda: Some(p) };
    assert_eq!(
        policies,
        [
            both(LowerPrecisionFp),
            both(Fp32SetOptDtype),
            both(Promote),
            AutocastPolicies::default(),
            AutocastPolicies { cpu: None, cuda: Some(Fp32) },
            AutocastPolicies { cpu: Some(Fp32), cuda: Some(Fp32SetOptDtype) },
            both(Promote),
        ]
    );
}

#[test]
fn autocast_device_types_are_checked() {
    check(
        "\
- func: mm(Tensor self, Tensor mat2) -> Tensor
  autocast: {XLA: fp32}
- func: bmm(Tensor self, Tensor mat2) -> Tensor
  autocast:
    CUDA: fp32
    CPU, CUDA: promote
- func: dot(Tensor self, Tensor tensor) -> Tensor
  autocast: {}
- func: exp(Tensor self) -> Tensor
  autocast: {CUDA: f16}
- func: sum(Tensor self) -> Tensor
  autocast: {CPU: fp32, CUDA: fp32_set_opt_dtype}
",
        expect![[r#"
            native_functions.yaml:2: in `mm`: unknown autocast device type `XLA` (expected `CPU` or `CUDA`)
            native_functions.yaml:4: in `bmm`: `autocast` gives device type `CUDA` twice
            native_functions.yaml:8: in `dot`: `autocast` names no device type
            native_functions.yaml:10: in `exp`: unknown autocast policy `f16` (expected one of `lower_precision_fp`, `fp32`, `fp32_set_opt_dtype`, `promote`)
            native_functions.yaml:12: in `sum`: `autocast: fp32_set_opt_dtype` needs a first `Tensor` argument and a `ScalarType? dtype` argument, which `sum` lacks"#]],
    );
}

#[test]
fn autocast_bad_policy() {
    check(
        "\
- func: mm(Tensor self, Tensor mat2) -> Tensor
  autocast: bf16
- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
  autocast: [fp32]
",
        expect![[r#"
            native_functions.yaml:2: in `mm`: unknown autocast policy `bf16` (expected one of `lower_precision_fp`, `fp32`, `fp32_set_opt_dtype`, `promote`)
            native_functions.yaml:4: in `mm.out`: `autocast` must be a string, found a list"#]],
    );
}

#[test]
fn autocast_only_on_functional_ops_with_tensors() {
    check(
        "\
- func: addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)
  variants: method
  autocast: lower_precision_fp
- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
  autocast: lower_precision_fp
- func: zeros(int[] size) -> Tensor
  autocast: fp32
- func: prod(Tensor self) -> Tensor
  autocast: fp32_set_opt_dtype
- func: cat(Tensor[] tensors, *, ScalarType? dtype=None) -> Tensor
  autocast: fp32_set_opt_dtype
",
        expect![[r#"
            native_functions.yaml:3: in `addmm_`: `autocast` is only allowed on a functional overload (in-place and out= variants run in the dtypes they are given), but `addmm_` is an inplace overload
            native_functions.yaml:5: in `mm.out`: `autocast` is only allowed on a functional overload (in-place and out= variants run in the dtypes they are given), but `mm.out` is an out= overload
            native_functions.yaml:7: in `zeros`: `autocast` needs a Tensor argument to cast, which `zeros` lacks
            native_functions.yaml:9: in `prod`: `autocast: fp32_set_opt_dtype` needs a first `Tensor` argument and a `ScalarType? dtype` argument, which `prod` lacks
            native_functions.yaml:11: in `cat`: `autocast: fp32_set_opt_dtype` needs a first `Tensor` argument and a `ScalarType? dtype` argument, which `cat` lacks"#]],
    );
}

#[test]
fn positional_defaults_name_only_positional_defaulted_arguments() {
    check(
        "\
- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
  positional_defaults: 2
- func: cat(Tensor[] tensors, int dim=0) -> Tensor
  positional_defaults: many
",
        expect![[r#"
            native_functions.yaml:2: in `sum.dim_IntList`: `positional_defaults: 2` but `sum.dim_IntList` has only 1 defaulted positional argument(s) (keyword-only arguments after `*` stay in the options struct)
            native_functions.yaml:4: in `cat`: `positional_defaults` must be a non-negative integer, found a string"#]],
    );
}

#[test]
fn docs_are_checked() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  doc:
    summary: Zeroes the negative elements.
    args:
      input: not an argument
- func: exp(Tensor self) -> Tensor
  doc:
    args:
      self: the input
- func: sin(Tensor self) -> Tensor
  doc:
    summary: Sine.
    examples: oops
- func: cos(Tensor self) -> Tensor
  doc: Cosine.
",
        expect![[r#"
            native_functions.yaml:2: in `relu`: `doc.args` documents `input`, which is not an argument of `relu` (arguments: self)
            native_functions.yaml:7: in `exp`: `doc` needs a one-line `summary`
            native_functions.yaml:11: in `sin`: unknown key examples in `doc` (allowed: summary, args, example)
            native_functions.yaml:15: in `cos`: `doc` must be a mapping with `summary`, `args` and `example`, found a string"#]],
    );
}

#[test]
fn docs_are_shared_by_the_overloads_without_one() {
    let fns = parse_ok(
        "\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  doc:
    summary: Adds.
    example: |
      let x = 1;
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
- func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  doc:
    summary: Adds a number.
- func: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
",
    );
    let doc = |i: usize| fns[i].doc.as_ref();
    assert_eq!(doc(0).unwrap().inherited_from, None);
    assert_eq!(doc(0).unwrap().example.as_deref(), Some("let x = 1;"));
    assert_eq!(doc(1).unwrap().summary, "Adds.");
    assert_eq!(doc(1).unwrap().inherited_from.as_deref(), Some("add.Tensor"));
    assert_eq!(doc(2).unwrap().summary, "Adds a number.");
    assert!(doc(3).is_none());
}

#[test]
fn per_tensor_is_only_for_foreach_ops() {
    check(
        "\
- func: relu(Tensor self) -> Tensor
  per_tensor: sigmoid
  dispatch:
    CPU: relu
",
        expect!["native_functions.yaml:2: in `relu`: `per_tensor` names the per-tensor operator of a `_foreach_*` operator, and `relu` is not one"],
    );
}
