//! Backend YAML (out-of-tree backends): validation errors name the file, line and key; a valid
//! file gives a trait with oxten's kernel signatures and a `register` with the fallback asked for.

use expect_test::expect;
use oxten_codegen::backend::{emit_backend, parse_backend_yaml, Fallback, NATIVE_FUNCTIONS_YAML};
use oxten_codegen::yaml::parse_native_functions;

fn fns() -> Vec<oxten_codegen::yaml::NativeFunction> {
    parse_native_functions(NATIVE_FUNCTIONS_YAML, "native_functions.yaml").unwrap()
}

#[test]
fn mistakes_are_reported_with_file_line_and_key() {
    let text = "backend: Toy\ndispatch_key: CUDA\nfallback: gpu\nsupported:\n  - add.Tensor\n  - ad.Tensor\n  - add\n  - add.Tensor\nfull_codegen:\n  - relu\n  - add.Tensor\nextra: 1\n";
    let errors = parse_backend_yaml(text, "toy.yaml", &fns()).unwrap_err();
    expect![[r#"
        toy.yaml:12: entry `extra`: unknown key (expected backend, dispatch_key, fallback, supported, autograd or full_codegen)
        toy.yaml:2: entry `dispatch_key`: `CUDA` cannot host an out-of-tree backend; use PrivateUse1
        toy.yaml:3: entry `fallback`: `gpu` is not `error` or `cpu`
        toy.yaml:6: entry `supported`: `ad.Tensor` is not an operator of oxten's native_functions.yaml
        toy.yaml:7: entry `supported`: `add` is not an operator of oxten's native_functions.yaml (overloads: `add.Tensor`, `add_.Tensor`, `add.out`, `add.Scalar`, `add_.Scalar`, `add.Scalar_out`)
        toy.yaml:8: entry `supported`: `add.Tensor` is listed twice
        toy.yaml:11: entry `full_codegen`: `add.Tensor` is also in `supported:`; a kernel either computes or records"#]]
    .assert_eq(&errors.join("\n"));
    let e = parse_backend_yaml("backend: toy\n", "t.yaml", &fns()).unwrap_err();
    assert_eq!(e, ["t.yaml:1: entry `backend`: `toy` is not a name in CamelCase (letters and digits)"]);
    let e = parse_backend_yaml("supported: [relu]\n", "t.yaml", &fns()).unwrap_err();
    assert!(e[0].contains("entry `backend`: missing"), "{e:?}");
    let e = parse_backend_yaml("backend: Toy\nautograd:\n  - mul.out\n  - mull\n", "t.yaml", &fns()).unwrap_err();
    assert_eq!(
        e,
        [
            "t.yaml:4: entry `autograd`: `mull` is not an operator of oxten's native_functions.yaml",
            "t.yaml:3: entry `autograd`: `mul.out` is an out= variant, which has no Autograd kernel"
        ]
    );
    let e = parse_backend_yaml("backend: [", "t.yaml", &fns()).unwrap_err();
    assert!(e[0].starts_with("t.yaml:") && e[0].contains("not valid YAML"), "{e:?}");
}

#[test]
fn a_backend_gets_a_trait_of_typed_kernels_and_a_register_function() {
    let fns = fns();
    let b = parse_backend_yaml(
        "backend: Lazy\nfallback: cpu\nsupported:\n  - relu\n  - mul.Tensor\nautograd: [relu]\n",
        "lazy.yaml",
        &fns,
    )
    .unwrap();
    assert_eq!((b.fallback, b.supported.len(), b.autograd.len()), (Fallback::Cpu, 2, 1));
    let code = emit_backend(&b, &fns, "lazy.yaml").unwrap();
    let start = code.find("pub trait LazyKernels").unwrap();
    expect![[r#"
        pub trait LazyKernels {
            /// `relu(Tensor self) -> Tensor`
            fn relu(self_: &Tensor) -> Result<Tensor>;
            /// `mul.Tensor(Tensor self, Tensor other) -> Tensor`
            fn mul(self_: &Tensor, other: &Tensor) -> Result<Tensor>;
            /// The Autograd kernel of `relu(Tensor self) -> Tensor` for this backend's tensors: runs instead of oxten's generated one, so it records the history itself (and computes below autograd, with `KeySet::AUTOGRAD` excluded).
            fn relu_autograd(self_: &Tensor) -> Result<Tensor>;
        }
        /// Registers `B`'s kernels at `PrivateUse1`, with the CPU fallback for every other operator, names the device `lazy` in printing and errors, and runs `oxten::init` first. An error when another backend already named the device.
        pub fn register<B: LazyKernels>() -> Result<()> {
            ::oxten::init();
            ::oxten::backend::rename_privateuse1_backend("lazy")?;
            ::oxten::ops::relu::OP
                .register(::oxten::dispatch::DispatchKey::PrivateUse1, B::relu);
            ::oxten::ops::mul::OP.register(::oxten::dispatch::DispatchKey::PrivateUse1, B::mul);
            ::oxten::ops::relu::OP
                .register(::oxten::dispatch::DispatchKey::AutogradPrivateUse1, B::relu_autograd);
            ::oxten::backend::register_cpu_fallback(::oxten::dispatch::DispatchKey::PrivateUse1);
            Ok(())
        }
    "#]]
    .assert_eq(&code[start..code.find("/// The operators").unwrap()]);
    // Without `fallback: cpu` nothing else is registered: other operators are the dispatcher's
    // error naming the operator and the key.
    let b = parse_backend_yaml("backend: Lazy\nsupported: [relu]\n", "lazy.yaml", &fns).unwrap();
    assert!(!emit_backend(&b, &fns, "lazy.yaml").unwrap().contains("fallback"));
}

#[test]
fn full_codegen_entries_are_checked() {
    let text =
        "backend: Lazy\nfull_codegen:\n  - linear\n  - add.out\n  - bernoulli\n  - zeros\n  - max.dim\n  - relu\n";
    let errors = parse_backend_yaml(text, "lazy.yaml", &fns()).unwrap_err();
    expect![[r#"
        lazy.yaml:3: entry `full_codegen`: `linear` is a composite that decomposes before any backend sees it; list the operators it calls
        lazy.yaml:4: entry `full_codegen`: `add.out` writes into its arguments; list its functional or in-place form (out= variants run through the fallback)
        lazy.yaml:5: entry `full_codegen`: `bernoulli`: argument `generator` draws random numbers, which a graph cannot replay with the generator's state at capture time
        lazy.yaml:6: entry `full_codegen`: `zeros` has no tensor operand (factories are the backend's `supported:` kernels)
        lazy.yaml:7: entry `full_codegen`: `max.dim` does not return one tensor, which is what an IR node produces"#]]
    .assert_eq(&errors.join("\n"));
}

#[test]
fn full_codegen_operators_get_ir_nodes_and_recording_kernels() {
    let fns = fns();
    let b = parse_backend_yaml(
        "backend: Lazy\nfallback: cpu\nsupported: [copy_]\nfull_codegen:\n  - add_.Tensor\n  - sum.dim_IntList\n",
        "lazy.yaml",
        &fns,
    )
    .unwrap();
    let code = emit_backend(&b, &fns, "lazy.yaml").unwrap();
    // The trait gains the graph's value type and the two hooks the recording kernels call.
    for item in ["type Value: Clone + std::fmt::Debug;", "fn lazy_value(op: &str, t: &Tensor) -> Result<Self::Value>;"]
    {
        assert!(code.contains(item), "{item}");
    }
    // The in-place operator records its functional sibling's node.
    let node = &code[code.find("/// The node of `add.Tensor").unwrap()..code.find("/// The node of `sum").unwrap()];
    expect![[r#"
        /// The node of `add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.
            #[derive(Clone, Debug)]
            pub struct AddTensor<V> {
                /// `Tensor self`
                pub self_: V,
                /// `Tensor other`
                pub other: V,
                /// `Scalar alpha=1`
                pub alpha: Scalar,
            }
            "#]]
    .assert_eq(node);
    let lower = &code[code.find("pub fn lower").unwrap()..];
    let lower = &lower[..lower.find("\n    }\n").unwrap()];
    expect![[r#"
        pub fn lower(
                    &self,
                    input: &mut dyn FnMut(&V) -> Result<Tensor>,
                ) -> Result<Tensor> {
                    match self {
                        Node::AddTensor(n) => {
                            let self_ = input(&n.self_)?;
                            let other = input(&n.other)?;
                            ::oxten::ops::add::call(&self_, &other, n.alpha)
                        }
                        Node::SumDimIntList(n) => {
                            let self_ = input(&n.self_)?;
                            ::oxten::ops::sum_dim_intlist::call(
                                &self_,
                                n.dim.as_deref(),
                                n.keepdim,
                                n.dtype,
                            )
                        }
                    }
                }"#]]
    .assert_eq(lower);
    let kernel = &code[code.find("fn add__lazy").unwrap()..code.find("/// Records `sum").unwrap()];
    expect![[r#"
        fn add__lazy<B: LazyKernels>(
            self_: &Tensor,
            other: &Tensor,
            alpha: Scalar,
        ) -> Result<Tensor> {
            const OP: &str = "add_.Tensor";
            let metas = ::oxten::backend::MetaArgs::default();
            let meta_self_ = metas.like(self_)?;
            let meta_other = metas.like(other)?;
            ::oxten::ops::add_::call(&meta_self_, &meta_other, alpha)?;
            let meta = ::oxten::ops::add::call(&meta_self_, &meta_other, alpha)?;
            let value = B::lazy_tensor(
                ir::Node::AddTensor(ir::AddTensor {
                    self_: B::lazy_value(OP, self_)?,
                    other: B::lazy_value(OP, other)?,
                    alpha,
                }),
                &meta,
            )?;
            ::oxten::ops::copy_::call(self_, &value, false)?;
            Ok(self_.clone())
        }
    "#]]
    .assert_eq(kernel);
    assert!(code.contains(
        "::oxten::ops::add_::OP\n        .register(::oxten::dispatch::DispatchKey::PrivateUse1, add__lazy::<B>);"
    ));
}
