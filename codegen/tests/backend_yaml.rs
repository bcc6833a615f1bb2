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
    let text = "backend: Toy\ndispatch_key: CUDA\nfallback: gpu\nsupported:\n  - add.Tensor\n  - ad.Tensor\n  - add\n  - add.Tensor\nfull_codegen:\n  - relu\nextra: 1\n";
    let errors = parse_backend_yaml(text, "toy.yaml", &fns()).unwrap_err();
    expect![[r#"
        toy.yaml:11: entry `extra`: unknown key (expected backend, dispatch_key, fallback, supported, autograd or full_codegen)
        toy.yaml:2: entry `dispatch_key`: `CUDA` cannot host an out-of-tree backend; use PrivateUse1
        toy.yaml:3: entry `fallback`: `gpu` is not `error` or `cpu`
        toy.yaml:9: entry `full_codegen`: is not supported by this generator yet; leave it empty
        toy.yaml:6: entry `supported`: `ad.Tensor` is not an operator of oxten's native_functions.yaml
        toy.yaml:7: entry `supported`: `add` is not an operator of oxten's native_functions.yaml (overloads: `add.Tensor`, `add_.Tensor`, `add.out`, `add.Scalar`, `add_.Scalar`, `add.Scalar_out`)
        toy.yaml:8: entry `supported`: `add.Tensor` is listed twice"#]]
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
