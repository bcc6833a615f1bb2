//! The emitters: deterministic output, the naming rule, and errors for YAML the generator cannot
//! turn into Rust.

use expect_test::expect;
use oxten_codegen::emit::{generate_from_str, stubs};
use oxten_codegen::yaml::parse_native_functions;

const REPO_YAML: &str = include_str!("../../native_functions.yaml");

#[test]
fn generation_is_deterministic() {
    let a = generate_from_str(REPO_YAML, "native_functions.yaml").unwrap();
    let b = generate_from_str(REPO_YAML, "native_functions.yaml").unwrap();
    assert_eq!(a, b);
    assert_eq!(
        a.files.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "autocast.rs",
            "autograd.rs",
            "decls.rs",
            "decls_composite_explicit_autograd.rs",
            "decls_composite_implicit_autograd.rs",
            "decls_cpu.rs",
            "decls_cuda.rs",
            "decls_meta.rs",
            "ops.rs",
            "pointwise.rs",
            "pointwise_cuda.rs",
            "register.rs",
            "register_composite_explicit_autograd.rs",
            "register_composite_implicit_autograd.rs",
            "register_cpu.rs",
            "register_cuda.rs",
            "register_meta.rs",
        ]
    );
}

#[test]
fn generated_api_reads_like_hand_written_code() {
    let g = generate_from_str(REPO_YAML, "native_functions.yaml").unwrap();
    // Compare with whitespace collapsed: the layout is prettyplease's business.
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let ops = squash(g.get("ops.rs"));
    // Typed entry point and handle of add.Tensor.
    assert!(ops.contains("pub static OP: Op<Sig> = Op::new( \"aten::add.Tensor\""));
    assert!(ops.contains("pub type Sig = fn(&Tensor, &Tensor, Scalar) -> Result<Tensor>;"));
    // Methods: fallible, panicking, and the options forms; self dropped from the method.
    for needle in [
        "pub fn try_add(&self, other: &Tensor) -> Result<Tensor>",
        "pub fn add(&self, other: &Tensor) -> Tensor",
        "pub fn try_add_with(&self, other: &Tensor, opts: AddOpts) -> Result<Tensor>",
        "pub fn add_with_(&self, other: &Tensor, opts: AddInplaceOpts) -> Tensor",
        "pub fn try_add_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor>",
        // `positional_defaults: 1`: keepdim is positional, dtype stays in the options struct.
        "pub fn sum_dim_intlist(&self, dim: Option<&[i64]>, keepdim: bool) -> Tensor",
        "pub fn sum_dim_intlist_with( &self, dim: Option<&[i64]>, keepdim: bool, opts: SumDimIntlistOpts, ) -> Tensor",
        "pub fn cat(tensors: &[impl AsRef<Tensor>], dim: i64) -> Tensor",
        "pub fn deep_clone(&self) -> Tensor",
        "pub fn where_self(&self, condition: &Tensor, other: &Tensor) -> Tensor",
    ] {
        assert!(ops.contains(needle), "missing `{needle}`");
    }
    // Options structs carry the schema's defaults.
    assert!(ops.contains("pub struct SumDimIntlistOpts { /// `ScalarType? dtype=None` pub dtype: Option<DType>, }"));
    // An operator whose defaults are all positional has no options struct and no `_with` form.
    assert!(!ops.contains("pub struct CatOpts") && !ops.contains("pub fn cat_with("));
    // Rustdoc from the `doc:` key, shared by the overloads written without one (`add_`), with
    // PyTorch's names, the schema, the arguments and (on the panicking form) the example.
    for needle in [
        "/// Adds `other`, scaled by `alpha`, to `self`",
        "/// PyTorch: `torch.add`, `Tensor.add` (`aten::add.Tensor`). Schema:",
        "/// - `Scalar alpha=1` (in [`AddOpts`]): the multiplier of `other`",
        "/// PyTorch: `torch.add_`, `Tensor.add_` (`aten::add_.Tensor`)",
        "/// # Example /// ```ignore /// # use oxten::*; /// let x = tensor![1., 2., 3.];",
    ] {
        assert!(ops.contains(needle), "missing `{needle}`");
    }
    // Operators without a `doc:` still say what they are.
    assert!(ops.contains(
        "/// The sine of each element (in radians). /// /// PyTorch: `torch.sin`, `Tensor.sin` (`aten::sin`)."
    ));
    let bare =
        generate_from_str("- func: foo(Tensor self) -> Tensor\n  variants: function, method\n", "x.yaml").unwrap();
    assert!(squash(bare.get("ops.rs"))
        .contains("/// The `foo` operator. /// /// PyTorch: `torch.foo`, `Tensor.foo` (`aten::foo`)."));
    // Out ops have no method form.
    assert!(!ops.contains("pub fn add_out(&self"));
}

fn errors(yaml: &str) -> String {
    match generate_from_str(yaml, "native_functions.yaml") {
        Ok(_) => "ok".into(),
        Err(e) => e.join("\n"),
    }
}

#[test]
fn rust_name_collisions_are_reported() {
    let yaml = "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n- func: foo.int(Tensor self, int x) -> Tensor\n  dispatch:\n    CPU: foo_int\n";
    expect![[r#"native_functions.yaml:4: in `foo.int`: its Rust name `foo` is also the name of `foo` (native_functions.yaml:1)"#]]
        .assert_eq(&errors(yaml));
}

#[test]
fn structured_ops_need_a_kernel_and_pointwise_needs_the_iterator() {
    let yaml = "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n";
    expect![[r#"native_functions.yaml:1: in `foo.out`: a structured op needs a `pointwise:` expression or a CPU kernel in `dispatch`"#]]
        .assert_eq(&errors(yaml));
    let yaml =
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  pointwise: exp(self)\n";
    expect![[
        r#"native_functions.yaml:1: in `foo.out`: a `pointwise:` op must declare `structured_inherits: TensorIterator`"#
    ]]
    .assert_eq(&errors(yaml));
}

#[test]
fn bad_pointwise_expressions_name_the_entry() {
    let yaml = "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  structured_inherits: TensorIterator\n  pointwise: exp(selff)\n";
    let e = errors(yaml);
    assert!(
        e.starts_with(
            "native_functions.yaml:1: in `foo.out`: pointwise expression `exp(selff)`: column 5: unknown name `selff`"
        ),
        "{e}"
    );
}

#[test]
fn unsupported_types_are_reported_not_miscompiled() {
    let yaml = "- func: foo(Tensor self, Dimname? d=None) -> Tensor\n  dispatch:\n    CPU: foo\n";
    expect![[r#"native_functions.yaml:1: in `foo`: argument `d`: type `Dimname` has no Rust mapping yet"#]]
        .assert_eq(&errors(yaml));
}

#[test]
fn stubs_show_what_a_kernel_author_writes() {
    let fns = parse_native_functions(REPO_YAML, "native_functions.yaml").unwrap();
    let s = stubs(&fns, "gelu").unwrap();
    assert!(s.contains("impl GeluOutMetaFn for Meta {\n    fn gelu_out(outs: &mut StructuredOutputs, self_: &Tensor, approximate: &str) -> Result<TensorIterator>"), "{s}");
    assert!(s.contains("impl GeluOutCpu for Cpu {\n    fn gelu_out(iter: &TensorIterator, self_: &Tensor, approximate: &str) -> Result<()>"), "{s}");
    let s = stubs(&fns, "exp").unwrap();
    assert!(s.contains("generated from `pointwise: exp(self)`; nothing to write"), "{s}");
    assert!(stubs(&fns, "nonexistent").unwrap_err().contains("no operator named `nonexistent`"));
}

#[test]
fn autocast_kernels_follow_the_policy() {
    let yaml = "\
- func: linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
  autocast: lower_precision_fp
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  variants: function, method
  autocast: fp32_set_opt_dtype
- func: index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor
  autocast: promote
- func: cat(Tensor[] tensors, int dim=0) -> Tensor
  autocast: promote
- func: mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor
  autocast: fp32
- func: relu(Tensor self) -> Tensor
- func: prod(Tensor self, *, ScalarType? dtype=None) -> Tensor
  autocast: {CPU: fp32, CUDA: fp32_set_opt_dtype}
- func: exp(Tensor self) -> Tensor
  autocast: {CUDA: fp32}
";
    let g = generate_from_str(yaml, "native_functions.yaml").unwrap();
    expect![[r#"
        /// Autocast kernel of `linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor` (policy `lower_precision_fp`, native_functions.yaml line 1):
        /// casts its floating arguments to the region's lower-precision dtype, then runs the operator below autocast.
        fn linear_autocast(
            input: &Tensor,
            weight: &Tensor,
            bias: Option<&Tensor>,
        ) -> Result<Tensor> {
            let ac = AutocastCall::enter(Some(input));
            let to = ac.lower_precision_fp();
            let input = ac.cast(input, to)?;
            let weight = ac.cast(weight, to)?;
            let bias = ac.cast_opt(bias, to)?;
            ops::linear::call(&input, &weight, bias.as_ref())
        }
        /// Autocast kernel of `sum(Tensor self, *, ScalarType? dtype=None) -> Tensor` (policy `fp32_set_opt_dtype`, native_functions.yaml line 3):
        /// computes in f32 (sets an unset `dtype=` to f32 when `self` is eligible), then runs the operator below autocast.
        fn sum_autocast(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
            let ac = AutocastCall::enter(Some(self_));
            let dtype = ac.set_opt_dtype(self_, dtype);
            ops::sum::call(self_, dtype)
        }
        /// Autocast kernel of `index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor` (policy `promote`, native_functions.yaml line 6):
        /// casts its floating arguments to the widest of their dtypes (f32 over the region's dtype), then runs the operator below autocast.
        fn index_copy_autocast(
            self_: &Tensor,
            dim: i64,
            index: &Tensor,
            source: &Tensor,
        ) -> Result<Tensor> {
            let ac = AutocastCall::enter(Some(self_));
            let to = ac.promote([self_, index, source])?;
            let self_ = ac.cast(self_, to)?;
            let index = ac.cast(index, to)?;
            let source = ac.cast(source, to)?;
            ops::index_copy::call(&self_, dim, &index, &source)
        }
        /// Autocast kernel of `cat(Tensor[] tensors, int dim=0) -> Tensor` (policy `promote`, native_functions.yaml line 8):
        /// casts its floating arguments to the widest of their dtypes (f32 over the region's dtype), then runs the operator below autocast.
        fn cat_autocast(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
            let ac = AutocastCall::enter(tensors.first());
            let to = ac.promote(tensors.iter())?;
            let tensors = ac.cast_list(tensors, to)?;
            ops::cat::call(&tensors, dim)
        }
        /// Autocast kernel of `mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor` (policy `fp32`, native_functions.yaml line 10):
        /// casts its floating arguments to f32, then runs the operator below autocast.
        fn mse_loss_autocast(self_: &Tensor, target: &Tensor, reduction: i64) -> Result<Tensor> {
            let ac = AutocastCall::enter(Some(self_));
            let to = ac.fp32();
            let self_ = ac.cast(self_, to)?;
            let target = ac.cast(target, to)?;
            ops::mse_loss::call(&self_, &target, reduction)
        }
        /// Autocast kernel of `prod(Tensor self, *, ScalarType? dtype=None) -> Tensor` (native_functions.yaml line 13):
        /// on CPU (`fp32`) it casts its floating arguments to f32; on CUDA and PrivateUse1 (`fp32_set_opt_dtype`) it computes in f32 (sets an unset `dtype=` to f32 when `self` is eligible), then runs the operator below autocast.
        fn prod_autocast(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
            let ac = AutocastCall::enter(Some(self_));
            if ac.follows_cuda_lists() {
                let dtype = ac.set_opt_dtype(self_, dtype);
                ops::prod::call(self_, dtype)
            } else {
                let to = ac.fp32();
                let self_ = ac.cast(self_, to)?;
                ops::prod::call(&self_, dtype)
            }
        }
        /// Autocast kernel of `exp(Tensor self) -> Tensor` (native_functions.yaml line 15):
        /// on CPU it casts nothing; on CUDA and PrivateUse1 (`fp32`) it casts its floating arguments to f32, then runs the operator below autocast.
        fn exp_autocast(self_: &Tensor) -> Result<Tensor> {
            let ac = AutocastCall::enter(Some(self_));
            if ac.follows_cuda_lists() {
                let to = ac.fp32();
                let self_ = ac.cast(self_, to)?;
                ops::exp::call(&self_)
            } else {
                ops::exp::call(self_)
            }
        }
    "#]]
    .assert_eq(kernels_of(g.get("autocast.rs")));
    // Every policy is registered; operators without one (relu) get no kernel.
    let regs = g.get("autocast.rs").split("pub fn register_autocast").nth(1).unwrap();
    for op in ["linear", "sum", "index_copy", "cat", "mse_loss"] {
        assert!(regs.contains(&format!("ops::{op}::OP.register(DispatchKey::Autocast, {op}_autocast);")), "{op}");
    }
    assert!(!g.get("autocast.rs").contains("relu"));
}

/// The kernels of a generated autocast.rs: from the first kernel to the registration function.
fn kernels_of(file: &str) -> &str {
    let start = file.find("/// Autocast kernel").unwrap();
    let end = file.find("/// Registers the Autocast kernel").unwrap();
    &file[start..end]
}

#[test]
fn each_backend_gets_its_own_declarations_and_registrations_cuda_under_its_feature() {
    let yaml = "\
- func: foo(Tensor self) -> Tensor
  dispatch:
    CPU: foo_cpu
    CUDA: foo_cuda
    Meta: foo_meta
- func: bar(Tensor self) -> Tensor
  structured_delegate: bar.out
- func: bar.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: bar_out_cpu
    CUDA: bar_out_cuda
";
    let g = generate_from_str(yaml, "native_functions.yaml").unwrap();
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    // Every file says it is generated.
    for (name, text) in &g.files {
        assert!(text.starts_with("// @generated by oxten-codegen"), "{name}");
    }
    // CUDA's traits and registrations live in their own files, compiled under the feature.
    let root = squash(g.get("decls.rs"));
    assert!(root.contains("pub trait BarOutMetaFn"), "meta functions are shared: {root}");
    assert!(root.contains(r#"#[cfg(feature = "cuda")] pub mod cuda { include!(concat!(env!("OUT_DIR"), "/decls_cuda.rs")); } #[cfg(feature = "cuda")] #[allow(unused_imports)] pub use cuda::*;"#), "{root}");
    let cuda = squash(g.get("decls_cuda.rs"));
    assert!(cuda.contains("pub trait FooCudaCuda { /// CUDA kernel of `foo(Tensor self) -> Tensor`. fn foo_cuda(self_: &Tensor) -> Result<Tensor>;"), "{cuda}");
    assert!(cuda.contains("pub trait BarOutCudaCuda"), "{cuda}");
    assert!(!cuda.contains("FooCpu") && !squash(g.get("decls_cpu.rs")).contains("Cuda"));
    let register = squash(g.get("register.rs"));
    assert!(register.contains(r#"#[cfg(feature = "cuda")] cuda::register();"#), "{register}");
    let nows = |s: &str| s.split_whitespace().collect::<String>();
    let cuda = nows(g.get("register_cuda.rs"));
    for needle in [
        "ops::foo::OP.register(RegistrationKey::Key(DispatchKey::Cuda), <::oxten_kernels::Cuda as ::oxten_kernels::generated::decls::FooCudaCuda>::foo_cuda,);",
        "fn bar_cuda(self_: &Tensor) -> Result<Tensor>",
        "<::oxten_kernels::Cuda as ::oxten_kernels::generated::decls::BarOutCudaCuda>::bar_out_cuda(",
        "ops::bar::OP.register(RegistrationKey::Key(DispatchKey::Cuda), bar_cuda);",
        "ops::bar_out::OP.register(RegistrationKey::Key(DispatchKey::Cuda), bar_out_cuda);",
    ] {
        assert!(cuda.contains(&nows(needle)), "missing `{needle}` in {cuda}");
    }
    // The Meta file registers the hand-written Meta kernel and the structured op's meta wrappers.
    let meta = squash(g.get("register_meta.rs"));
    assert!(
        meta.contains("FooMetaMeta>::foo_meta")
            && meta.contains("ops::bar::OP.register(RegistrationKey::Key(DispatchKey::Meta), bar_meta);"),
        "{meta}"
    );
}

#[test]
fn every_dispatch_entry_of_the_repository_yaml_is_registered() {
    use oxten_codegen::backend::in_tree_backends;
    let fns = parse_native_functions(REPO_YAML, "native_functions.yaml").unwrap();
    let g = generate_from_str(REPO_YAML, "native_functions.yaml").unwrap();
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let mut checked = 0;
    for b in in_tree_backends(&fns) {
        let file = squash(g.get(&format!("register_{}.rs", b.key.module())));
        for f in &fns {
            let Some(m) = b.get(f) else { continue };
            let rust = oxten_codegen::emit::sig::OpSig::new(f).unwrap().name;
            // Structured impls are registered through their wrappers; every other kernel directly.
            let needle = if m.structured {
                format!("ops::{rust}::OP.register({},{rust}_{}", b.key.registration_key(), b.key.module())
            } else {
                format!("ops::{rust}::OP.register({},", b.key.registration_key())
            };
            assert!(file.contains(&squash(&needle)), "`{}` at {} is not registered", f.func.name, b.key);
            checked += 1;
        }
    }
    assert!(checked > 250, "{checked}");
}

#[test]
fn where_lists_every_place_an_operator_lives() {
    let fns = parse_native_functions(REPO_YAML, "native_functions.yaml").unwrap();
    let ds =
        oxten_codegen::derivatives::parse_derivatives(include_str!("../../derivatives.yaml"), "derivatives.yaml", &fns)
            .unwrap();
    let g = oxten_codegen::emit::generate_with_derivatives(&fns, &ds).unwrap();
    let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/src");
    let report = oxten_codegen::locate::locate("gelu", &fns, &ds, &g, &kernels).unwrap();
    for needle in [
        "gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out) -> Tensor(a!)  [structured; CPU: gelu_out, CUDA: gelu_out]",
        "-> GeluBackward0",
        "pub struct GeluBackward0 {",
        "decls.rs:",
        "pub trait GeluOutMetaFn {",
        "decls_cpu.rs:",
        "pub trait GeluOutCpu {",
        "register_cpu.rs:",
        "ops::gelu_::OP.register(RegistrationKey::Key(DispatchKey::Meta), gelu__meta);",
        "pub fn try_gelu(",
        "impl GeluOutCpu for Cpu",
        "impl GeluOutCuda for Cuda",
        "impl GeluOutMetaFn for Meta",
    ] {
        assert!(report.contains(needle), "missing `{needle}` in\n{report}");
    }
    // Line numbers point at the generated text.
    let line = report.lines().find(|l| l.contains("pub trait GeluOutCpu")).unwrap();
    let n: usize = line.trim().split_once(':').unwrap().1.split_whitespace().next().unwrap().parse().unwrap();
    assert!(g.get("decls_cpu.rs").lines().nth(n - 1).unwrap().contains("pub trait GeluOutCpu"));
    assert!(oxten_codegen::locate::locate("nope", &fns, &ds, &g, &kernels).unwrap_err().contains("no operator named"));
}

/// The CUDA impls of pointwise ops: the expression spelled in CUDA C over the kernel's locals,
/// with the dtype rules the launcher needs, one per `pointwise:` op.
#[test]
fn pointwise_ops_get_cuda_impls_from_their_expression() {
    let g = generate_from_str(REPO_YAML, "native_functions.yaml").unwrap();
    let cuda = &g.files["pointwise_cuda.rs"];
    let cpu = &g.files["pointwise.rs"];
    // One CUDA impl per pointwise op (each has one meta function).
    assert_eq!(cuda.matches("\npub fn ").count(), cpu.matches("\npub fn ").count() / 2);
    for op in ["add_out", "exp_out", "softplus_out", "eq_tensor_out", "threshold_backward_grad_input"] {
        assert!(cuda.contains(&format!("pub fn {op}_cuda(")), "{op}");
    }
    let start = cuda.find("/// CUDA impl of `add.out").unwrap();
    let end = cuda[start..].find("\n}\n").unwrap() + start + 2;
    expect![[r#"
        /// CUDA impl of `add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)` (generated from `pointwise: self + alpha * other`).
        #[allow(unused_variables)]
        pub fn add_out_cuda(
            iter: &TensorIterator,
            self_: &Tensor,
            other: &Tensor,
            alpha: Scalar,
        ) -> Result<()> {
            static KERNEL: PointwiseKernel = PointwiseKernel {
                op: "add.out",
                expr: "T(a1 + T(c0 * a2))",
                arity: 2,
                float_only: false,
                int_only: false,
                bool_ok: true,
            };
            crate::support::check_alpha(iter.common_dtype(), alpha)?;
            launch_pointwise(iter, &KERNEL, &[alpha])
        }"#]]
    .assert_eq(&cuda[start..end]);
    assert!(cuda.contains(r#"expr: "ox_where((T(a1 * a2) > a3), a1, T(ox_log1p(ox_exp(T(a1 * a2))) / a2))""#));
    // Registered at the CUDA key next to the CPU's wrappers.
    assert!(g.files["register_cuda.rs"].contains("::oxten_kernels::generated::pointwise_cuda::add_out_cuda("));
    assert!(g.files["register_cuda.rs"]
        .contains("ops::add::OP.register(RegistrationKey::Key(DispatchKey::Cuda), add_cuda);"));
}
