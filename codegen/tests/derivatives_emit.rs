//! What the autograd emitter generates from derivatives.yaml: a snapshot of one node and its
//! kernels, what nodes save, the in-place, out=, view and not-implemented kernels, and the
//! repository's own derivatives.yaml.

use expect_test::expect;
use oxten_codegen::emit::{generate_from_file, generate_from_strs};

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
- func: exp(Tensor self) -> Tensor
  dispatch:
    CPU: exp
- func: exp_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU: exp_
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: sum
- func: view(Tensor(a) self, SymInt[] size) -> Tensor(a)
  dispatch:
    CompositeExplicitAutograd: view
- func: erf(Tensor self) -> Tensor
  dispatch:
    CPU: erf
- func: erf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: erf_out
- func: reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
  dispatch:
    CompositeImplicitAutograd: reshape
- func: eq.Tensor(Tensor self, Tensor other) -> Tensor
  dispatch:
    CPU: eq
- func: cat(Tensor[] tensors, int dim=0) -> Tensor
  dispatch:
    CPU: cat
";

const DERIVATIVES: &str = "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&other)?
  other: grad.try_mul(&self)?
  result: self_t.try_mul(&other_p)?.try_add(&other_t.try_mul(&self_p)?)?
- name: exp(Tensor self) -> Tensor
  self: grad.try_mul(&result)?
- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  self: grad.try_expand(&self.sizes())?
- name: view(Tensor(a) self, SymInt[] size) -> Tensor(a)
  self: grad.try_reshape(&self.sizes())?
- name: eq.Tensor(Tensor self, Tensor other) -> Tensor
  output_differentiability: [False]
";

fn generated() -> String {
    let g = generate_from_strs(NATIVE, "native_functions.yaml", Some((DERIVATIVES, "derivatives.yaml")))
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    g.get("autograd.rs").to_string()
}

/// The top-level items (with their doc comments) of a generated file that contain one of the
/// needles (separated by `|`).
fn items(text: &str, needles: &str) -> String {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for line in text.lines() {
        current.push(line);
        let ends =
            line == "}" || line == "];" || (line.ends_with(';') && !line.starts_with(' ') && !line.starts_with("///"));
        if ends {
            let item = current.join("\n");
            if needles.split('|').any(|n| item.contains(n)) {
                out.push(item);
            }
            current.clear();
        }
    }
    out.join("\n")
}

#[test]
fn snapshot_of_a_node() {
    expect![[r#"
        /// Backward of `mul.Tensor(Tensor self, Tensor other) -> Tensor` (derivatives.yaml line 1).
        ///
        /// - `self`: `grad.try_mul(&other)?`
        /// - `other`: `grad.try_mul(&self)?`
        pub struct MulBackward0 {
            /// What every node has: next edges, input metadata, sequence number, hooks.
            pub base: NodeBase,
            /// `self`, saved before the op ran.
            pub self_: SavedVariable,
            /// `other`, saved before the op ran.
            pub other: SavedVariable,
        }
        impl Node for MulBackward0 {
            fn base(&self) -> &NodeBase {
                &self.base
            }
            fn name(&self) -> String {
                "MulBackward0".to_string()
            }
            fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
                let mut grad_inputs: Vec<Option<Tensor>> = vec![None; 2];
                let Some(grads) = materialize_grads(grads, &self.base)? else {
                    return Ok(grad_inputs);
                };
                if self.base.should_compute_output(0) {
                    let grad = grads[0].clone();
                    let other = self.other.unpack(self)?;
                    grad_inputs[0] = Some(grad.try_mul(&other)?); // derivatives.yaml:2
                }
                if self.base.should_compute_output(1) {
                    let grad = grads[0].clone();
                    let self_ = self.self_.unpack(self)?;
                    grad_inputs[1] = Some(grad.try_mul(&self_)?); // derivatives.yaml:3
                }
                Ok(grad_inputs)
            }
            fn release_variables(&self) {
                self.self_.reset();
                self.other.reset();
            }
            fn visit_saved(&self, f: &mut dyn FnMut(&str, &SavedVariable)) {
                f("self", &self.self_);
                f("other", &self.other);
            }
        }"#]]
    .assert_eq(&items(&generated(), "struct MulBackward0 {|for MulBackward0 {"));
}

#[test]
fn snapshot_of_the_functional_and_in_place_kernels() {
    expect![[r#"
        /// Autograd kernel of `mul.Tensor(Tensor self, Tensor other) -> Tensor`: records [`MulBackward0`] when an input requires grad.
        ///
        /// Only floating outputs carry gradients (a cast to an integer dtype records nothing).
        fn mul_autograd(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            let requires_grad = compute_requires_grad(&[Some(self_), Some(other)]);
            let grad_fn = if requires_grad {
                Some(MulBackward0 {
                    base: NodeBase::new(collect_next_edges(&[Some(self_), Some(other)])),
                    self_: SavedVariable::new(self_, false)?,
                    other: SavedVariable::new(other, false)?,
                })
            } else {
                None
            };
            let result = {
                let _below_autograd = ExcludeGuard::new(KeySet::AUTOGRAD);
                ops::mul::call(self_, other)
            }?;
            if forward_ad::is_active() {
                for level in forward_ad::levels_of(&[Some(self_), Some(other)]) {
                    let _hidden = forward_ad::HideLevel::new(level);
                    if result.dtype().is_floating_point() {
                        let tangent = {
                            let other_p = other.clone();
                            let other_t = forward_ad::tangent_or_zeros(other, level)?;
                            let self_p = self_.clone();
                            let self_t = forward_ad::tangent_or_zeros(self_, level)?;
                            self_t.try_mul(&other_p)?.try_add(&other_t.try_mul(&self_p)?)?
                        };
                        forward_ad::set_tangent(&result, level, tangent)?;
                    }
                }
            }
            if let Some(grad_fn) = grad_fn.filter(|_| result.dtype().is_floating_point()) {
                set_history(&[&result], Arc::new(grad_fn));
            }
            Ok(result)
        }
        /// Autograd kernel of `mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)`: records [`MulBackward0`] when an input requires grad.
        ///
        /// The formulas use `self` as it was before the write, so the node saves a clone taken first.
        ///
        /// Redispatches below autograd without the typed entry point, whose version bump follows
        /// when this kernel returns; outputs are saved after `rebase_history` and expect that bump.
        fn mul_inplace_autograd(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            let requires_grad = compute_requires_grad(&[Some(self_), Some(other)]);
            check_inplace(self_, requires_grad)?;
            let fw_levels = if forward_ad::is_active() {
                forward_ad::levels_of(&[Some(self_), Some(other)])
            } else {
                Vec::new()
            };
            let mut fw_tangents: Vec<(u64, Tensor)> = Vec::new();
            for &level in &fw_levels {
                let _hidden = forward_ad::HideLevel::new(level);
                let tangent = {
                    let other_p = other.clone();
                    let other_t = forward_ad::tangent_or_zeros(other, level)?;
                    let self_p = self_.clone();
                    let self_t = forward_ad::tangent_or_zeros(self_, level)?;
                    self_t.try_mul(&other_p)?.try_add(&other_t.try_mul(&self_p)?)?
                };
                fw_tangents.push((level, tangent));
            }
            let grad_fn = if requires_grad {
                let original_self = oxten_runtime::ops::deep_clone::call(self_, None)?;
                Some(MulBackward0 {
                    base: NodeBase::new(collect_next_edges(&[Some(self_), Some(other)])),
                    self_: SavedVariable::new(&original_self, false)?,
                    other: SavedVariable::new(other, false)?,
                })
            } else {
                None
            };
            let result = redispatch(
                &ops::mul_::OP,
                KeySet::EMPTY.union(self_.key_set()).union(other.key_set()),
                |kernel| kernel(self_, other),
                || vec![self_.into_ivalue(), other.into_ivalue()],
                1,
            )?;
            for (level, tangent) in fw_tangents {
                forward_ad::set_tangent_inplace(self_, level, tangent)?;
            }
            if let Some(grad_fn) = grad_fn {
                rebase_history(self_, Arc::new(grad_fn));
            }
            Ok(result)
        }
        /// Autograd kernel of `mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)`: out= variants are not differentiable.
        fn mul_out_autograd(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
            refuse_out_differentiation("mul.out", &[Some(self_), Some(other), Some(out)])?;
            redispatch(
                &ops::mul_out::OP,
                KeySet::EMPTY.union(self_.key_set()).union(other.key_set()).union(out.key_set()),
                |kernel| kernel(self_, other, out),
                || vec![self_.into_ivalue(), other.into_ivalue(), out.into_ivalue()],
                1,
            )
        }"#]]
    .assert_eq(&items(&generated(), "fn mul_"));
}

#[test]
fn outputs_are_saved_after_their_history_is_set() {
    let g = generated();
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let exp = squash(&items(&g, "fn exp_inplace_autograd"));
    assert!(
        exp.contains(
            "rebase_history(self_, grad_fn.clone()); let _ = grad_fn.result_.set(SavedVariable::new(&result, true)?);"
        ),
        "{exp}"
    );
    let node = squash(&items(&g, "struct ExpBackward0 {|for ExpBackward0 {"));
    assert!(node.contains("pub result_: OnceLock<SavedVariable>,"), "{node}");
    assert!(node.contains("let result = unpack_output(&self.result_, self)?;"), "{node}");
}

#[test]
fn metadata_only_tensors_are_not_saved() {
    let g = generated();
    let node = items(&g, "struct SumBackward0 {|for SumBackward0 {");
    assert!(node.contains("pub self_sizes: DimVec,"), "{node}");
    assert!(!node.contains("SavedVariable,"), "{node}");
    assert!(node.contains("let self_sizes = &self.self_sizes;"), "{node}");
    assert!(node.contains("grad.try_expand(self_sizes)?"), "{node}");
    let kernel = items(&g, "fn sum_autograd");
    assert!(kernel.contains("self_sizes: self_.sizes(),"), "{kernel}");
}

#[test]
fn views_out_variants_and_missing_formulas() {
    let g = generated();
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    // View ops link the view to its base, also when nothing requires grad.
    let view = squash(&items(&g, "fn view_autograd"));
    assert!(view.ends_with("} make_view(&result, self_); Ok(result) }"), "{view}");
    // out= variants of differentiable ops refuse inputs that require grad.
    let out = squash(&items(&g, "fn mul_out_autograd"));
    assert!(out.contains("refuse_out_differentiation(\"mul.out\", &[Some(self_), Some(other), Some(out)])?;"), "{out}");
    // A differentiable op with a kernel but no entry records NotImplementedBackward, and is listed.
    let erf = squash(&items(&g, "fn erf_autograd"));
    assert!(erf.contains("Some(NotImplementedBackward::new(\"erf\", collect_next_edges(&[Some(self_)])))"), "{erf}");
    assert!(
        g.contains("pub const NOT_IMPLEMENTED: &[&str] = &[\"erf\", \"cat\"];"),
        "{}",
        items(&g, "NOT_IMPLEMENTED")
    );
    // Tensor-list inputs are spread into their elements.
    let cat = squash(&items(&g, "fn cat_autograd"));
    assert!(
        cat.contains("compute_requires_grad( &[].into_iter().chain(tensors.iter().map(Some)).collect::<Vec<_>>(), )"),
        "{cat}"
    );
    assert!(g.contains("/// - `erf`"));
    assert!(g.contains("ops::erf_out::OP.register(DispatchKey::Autograd, erf_out_autograd);"));
    // Ops with no differentiable output, and pure composites, get no kernel.
    assert!(!g.contains("fn eq_autograd"));
    assert!(!g.contains("fn reshape_autograd"));
    assert!(!g.contains("EqBackward0 {"));
    // Registration and the exported table.
    assert!(g.contains("ops::mul_::OP.register(DispatchKey::Autograd, mul_inplace_autograd);"));
    let table = squash(&items(&g, "DERIVATIVES"));
    assert!(table.contains("DerivativeEntry { op: \"eq.Tensor\", schema: \"eq.Tensor(Tensor self, Tensor other) -> Tensor\", node: None, inputs: &[], line: 11, }"), "{table}");
    assert!(table.contains("DerivativeEntry { op: \"mul.Tensor\", schema: \"mul.Tensor(Tensor self, Tensor other) -> Tensor\", node: Some(\"MulBackward0\"), inputs: &[\"self\", \"other\"], line: 1, }"), "{table}");
}

#[test]
fn self_is_renamed_and_shadowing_respected() {
    let d = "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: '{ let self_sizes = other.sizes(); grad.try_mul(&other)?.try_reshape(&self_sizes)? }'
  other: 'vec![self.clone()].into_iter().map(|grad| grad.try_neg()).next().unwrap()?.try_mul(&grad)?'
";
    let g = generate_from_strs(NATIVE, "native_functions.yaml", Some((d, "derivatives.yaml"))).unwrap();
    let node = items(g.get("autograd.rs"), "struct MulBackward0 {|for MulBackward0 {");
    let squash = node.split_whitespace().collect::<Vec<_>>().join(" ");
    // `other` is used whole in one formula and for metadata in the other: saved whole.
    assert!(squash.contains("pub other: SavedVariable,"), "{node}");
    assert!(squash.contains("let self_sizes = other.sizes();"), "{node}");
    // Inside a macro and a closure: `self` renamed; the closure's `grad` is its own.
    assert!(squash.contains("vec![self_.clone()]"), "{node}");
    assert!(squash.contains(".map(|grad| grad.try_neg())"), "{node}");
}

#[test]
fn tensor_saved_whole_is_unpacked_for_a_metadata_only_formula() {
    // `self` is saved whole for `other`'s formula; `self`'s own formula reads only its sizes,
    // so it must unpack the saved tensor too (mm's formulas have this shape).
    let d = "\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad.try_mul(&other)?.try_reshape(&self.sizes())?
  other: grad.try_mul(&self)?
";
    let g = generate_from_strs(NATIVE, "native_functions.yaml", Some((d, "derivatives.yaml"))).unwrap();
    let node = items(g.get("autograd.rs"), "struct MulBackward0 {|for MulBackward0 {");
    let squash = node.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(squash.contains("pub self_: SavedVariable,"), "{node}");
    assert!(!squash.contains("self_sizes"), "{node}");
    let first = squash.split("if self.base.should_compute_output(1)").next().unwrap();
    assert!(first.contains("let self_ = self.self_.unpack(self)?;"), "{node}");
    assert!(first.contains(".try_reshape(&self_.sizes())?"), "{node}");
}

#[test]
fn repository_derivatives_generate_deterministically() {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../native_functions.yaml"));
    let a = generate_from_file(path).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let b = generate_from_file(path).unwrap();
    assert_eq!(a, b);
    let g = a.get("autograd.rs");
    // Every differentiable operator of the repository has a formula (the normalization backward
    // kernels included: their closed-form double backward is in derivatives.yaml), except those
    // whose derivative PyTorch does not implement either.
    let list = g.split("pub const NOT_IMPLEMENTED: &[&str] = &[").nth(1).and_then(|r| r.split("];").next());
    let names: Vec<&str> =
        list.unwrap_or("").split(',').map(|n| n.trim().trim_matches('"')).filter(|n| !n.is_empty()).collect();
    assert_eq!(
        names,
        [
            "heaviside",
            "heaviside_",
            "_ctc_loss_backward",
            "scatter.reduce",
            "scatter_.reduce",
            "scatter.value_reduce",
            "scatter_.value_reduce",
            "embedding_renorm_",
            "histogram.bins_tensor",
            "histogram.bin_ct",
            "_histogramdd_from_bin_cts",
            "_histogramdd_from_bin_tensors",
            "_thnn_fused_lstm_cell_backward_impl",
            "geqrf",
            "linalg_ldl_factor_ex",
            "linalg_ldl_solve",
            "special_zeta.other_scalar"
        ],
        "{}",
        items(g, "NOT_IMPLEMENTED")
    );
    for node in ["AddBackward0", "AddBackward1", "SumBackward1", "MaxBackward0", "CopyBackward0", "ToCopyBackward0"] {
        assert!(g.contains(&format!("pub struct {node} {{")), "missing {node}");
    }
}

/// Tensor-list inputs: a `Tensor[]` input gives one edge per element (its formula returns one
/// gradient per element, and the node records how many there are), its metadata is saved per
/// element, and a `Tensor?[]` input used by a formula is saved element by element.
#[test]
fn tensor_list_inputs_get_one_edge_per_element() {
    let native = format!(
        "{NATIVE}- func: index.Tensor(Tensor self, Tensor?[] indices) -> Tensor\n  dispatch:\n    CPU: index\n"
    );
    let derivatives = "\
- name: cat(Tensor[] tensors, int dim=0) -> Tensor
  tensors: cat_tensors_backward(&grad, &tensors.sizes(), dim)?
- name: index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
  self: index_backward(&grad, &self.sizes(), &indices)?
";
    let g = generate_from_strs(&native, "native_functions.yaml", Some((derivatives, "derivatives.yaml")))
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let code = g.get("autograd.rs");
    for needle in [
        "pub tensors_edges: usize,",
        "pub tensors_sizes: Vec<DimVec>,",
        "vec![None; self.tensors_edges]",
        "(0..self.tensors_edges).any(|k| self.base.should_compute_output(k))",
        "for (k, g) in list_grads.into_iter().enumerate().take(self.tensors_edges)",
        "tensors_edges: tensors.len(),",
        "tensors_sizes: tensors.iter().map(|t| t.sizes()).collect::<Vec<_>>(),",
        "&[tensors.iter().map(Some).collect::<Vec<_>>()].concat()",
        "pub indices: Vec<SavedVariable>,",
        "indices.iter().map(|t| SavedVariable::new_opt(t.as_ref(), false)).collect::<Result<Vec<_>>>()?",
        ".map(|v| v.unpack_opt(self))",
    ] {
        let squashed: String = code.split_whitespace().collect();
        let want: String = needle.split_whitespace().collect();
        assert!(squashed.contains(&want), "generated autograd.rs lacks `{needle}`");
    }
}

/// Every line of a formula's statement ends with the `derivatives.yaml` line it came from, so a
/// type error that rustc reports inside generated code shows where to fix it.
#[test]
fn formula_lines_name_their_derivatives_yaml_line() {
    let code = generated();
    assert!(!code.contains("@source"), "a source marker was left in the generated code");
    // mul.Tensor's two formulas are on lines 2 and 3 of DERIVATIVES.
    assert!(code.contains("grad_inputs[0] = Some(grad.try_mul(&other)?); // derivatives.yaml:2\n"), "{code}");
    assert!(code.contains("grad_inputs[1] = Some(grad.try_mul(&self_)?); // derivatives.yaml:3\n"), "{code}");
    // A formula long enough to be split over lines carries the comment on each of them.
    let long = "- name: exp(Tensor self) -> Tensor\n  self: grad.try_mul(&result)?.try_mul(&result)?.try_mul(&result)?.try_mul(&result)?.try_mul(&result)?\n";
    let g = generate_from_strs(NATIVE, "native_functions.yaml", Some((long, "derivatives.yaml")))
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let code = g.get("autograd.rs");
    let start = code.find("grad_inputs[0] = Some(").unwrap();
    let lines: Vec<&str> = code[start..].lines().take_while(|l| !l.trim_start().starts_with('}')).collect();
    assert!(lines.len() > 1, "expected the formula to be split over lines: {lines:#?}");
    assert!(lines.iter().all(|l| l.ends_with("// derivatives.yaml:2")), "{lines:#?}");
}

#[test]
fn foreach_ops_differentiate_through_their_per_tensor_op() {
    let native = format!(
        "{NATIVE}\
- func: _foreach_mul_.List(Tensor(a!)[] self, Tensor[] other) -> ()
  dispatch:
    CPU: foreach_mul_list_
- func: _foreach_exp(Tensor[] self) -> Tensor[]
  dispatch:
    CPU: foreach_exp
- func: _foreach_total.Scalar(Tensor[] self, *, ScalarType? dtype=None) -> Tensor[]
  per_tensor: sum
  dispatch:
    CPU: foreach_total
"
    );
    let g = generate_from_strs(&native, "native_functions.yaml", Some((DERIVATIVES, "derivatives.yaml")))
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let text = g.get("autograd.rs");
    let squash = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // In place: lists checked, every write checked before the first, then mul_'s own kernel.
    assert!(squash.contains("fn _foreach_mul_list_inplace_autograd(self_: &[Tensor], other: &[Tensor]) -> Result<()>"));
    assert!(squash.contains("check_inplace(&self_[i], self_[i].requires_grad() || other[i].requires_grad())?;"));
    assert!(squash.contains("mul_inplace_autograd(&self_[i], &other[i])?;"), "{text}");
    // Out of place: the per-tensor kernel per index; `per_tensor:` picks `sum`, dtype by name.
    assert!(squash.contains("(0..self_.len()).map(|i| exp_autograd(&self_[i])).collect()"), "{text}");
    assert!(squash.contains("(0..self_.len()).map(|i| sum_autograd(&self_[i], dtype)).collect()"), "{text}");
    assert!(squash.contains("ops::_foreach_exp::OP.register(DispatchKey::Autograd, _foreach_exp_autograd);"));

    // No per-tensor operator that lines up: an error naming the entry and the way out.
    let bad = format!(
        "{NATIVE}\
- func: _foreach_exp.Scalar(Tensor[] self, Scalar s) -> Tensor[]
  dispatch:
    CPU: foreach_exp_scalar
"
    );
    let e = generate_from_strs(&bad, "native_functions.yaml", Some((DERIVATIVES, "derivatives.yaml"))).unwrap_err();
    expect![[r#"native_functions.yaml:39: `_foreach_exp.Scalar`: no overload of `exp` takes its arguments one tensor at a time, so its derivative cannot be derived; name the per-tensor operator with `per_tensor:`"#]]
        .assert_eq(&e.join("\n"));
}
