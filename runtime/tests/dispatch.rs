//! Dispatcher behaviour: priority, union of key sets, thread-local include/exclude sets and their
//! guards, fallthrough, boxed fallbacks, alias keys, run-time registration, and errors.
//!
//! Each test declares its own operators so tests do not share dispatch state.

use oxten_runtime::autocast::AutocastGuard;
use oxten_runtime::dispatch::{
    define_op, local_keys, BoxedKernel, DispatchKey, ExcludeGuard, IValue, IncludeGuard, KeySet, Op, RegistrationKey,
    Resolved,
};
use oxten_runtime::{DType, Device, DeviceType, Result, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};

type Unary = fn(&Tensor) -> Result<Tensor>;

/// Calls a test operator the way generated entry points do.
fn call(op: &'static Op<Unary>, keys: KeySet, t: &Tensor) -> Result<Tensor> {
    match op.resolve(keys)? {
        Resolved::Unboxed(f) => f(t),
        Resolved::Boxed(k, _) => {
            let mut stack = vec![IValue::Tensor(t.clone())];
            k.call(op, &mut stack)?;
            match stack.pop() {
                Some(IValue::Tensor(t)) => Ok(t),
                other => panic!("unexpected boxed return {other:?}"),
            }
        }
    }
}

fn cpu(v: f32) -> Tensor {
    Tensor::from_vec(vec![v], &[1]).unwrap()
}
/// PrivateUse1 tensors here live in host memory: the host allocator serves that device too.
fn host_memory_pu1() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| oxten_runtime::alloc::register_allocator(DeviceType::PrivateUse1, oxten_runtime::alloc::host()));
}
fn pu1(v: f32) -> Tensor {
    host_memory_pu1();
    cpu(v).storage_copy_to(Device::PrivateUse1(0)).unwrap()
}
fn val(t: &Tensor) -> f32 {
    t.storage_copy_to(Device::Cpu).unwrap().to_vec::<f32>().unwrap()[0]
}

fn mark(v: f32) -> Tensor {
    cpu(v)
}

#[test]
fn highest_priority_backend_wins_in_either_order() {
    static OP: Op<fn(&Tensor, &Tensor) -> Result<Tensor>> =
        Op::new("test::binary_priority", "binary_priority(Tensor a, Tensor b) -> Tensor");
    OP.register(DispatchKey::Cpu, |_, _| Ok(mark(1.0)));
    OP.register(DispatchKey::PrivateUse1, |_, _| Ok(mark(2.0)));
    let (a, b) = (cpu(0.0), pu1(0.0));
    for (x, y) in [(&a, &b), (&b, &a)] {
        let Resolved::Unboxed(f) = OP.resolve(x.key_set().union(y.key_set())).unwrap() else { panic!() };
        assert_eq!(val(&f(x, y).unwrap()), 2.0);
    }
    let Resolved::Unboxed(f) = OP.resolve(a.key_set()).unwrap() else { panic!() };
    assert_eq!(val(&f(&a, &a).unwrap()), 1.0);
}

#[test]
fn fallthrough_layers_cost_nothing_and_are_transparent() {
    static OP: Op<Unary> = Op::new("test::fallthrough", "fallthrough(Tensor a) -> Tensor");
    OP.register(DispatchKey::Cpu, |t| Ok(t.clone()));
    let t = cpu(3.0);
    // Tensors carry Autograd and Autocast; with autocast enabled (its key no longer excluded),
    // both fall through to CPU.
    let _g = AutocastGuard::new(Device::Cpu, DType::BF16);
    assert!(!local_keys().1.contains(DispatchKey::Autocast));
    assert!(t.key_set().contains(DispatchKey::Autograd) && t.key_set().contains(DispatchKey::Autocast));
    assert_eq!(OP.dispatch_key(t.key_set()).unwrap(), DispatchKey::Cpu);
    assert!(call(&OP, t.key_set(), &t).unwrap().is_same(&t));
}

#[test]
fn layer_kernel_runs_then_redispatches_below_itself() {
    static OP: Op<Unary> = Op::new("test::layer", "layer(Tensor a) -> Tensor");
    static LAYER_CALLS: AtomicUsize = AtomicUsize::new(0);
    OP.register(DispatchKey::Cpu, |_| Ok(mark(10.0)));
    OP.register(DispatchKey::Autocast, |t| {
        LAYER_CALLS.fetch_add(1, Ordering::SeqCst);
        let _below = ExcludeGuard::new(DispatchKey::Autocast);
        let r = call(&OP, t.key_set(), t)?;
        Ok(mark(val(&r) + 1.0))
    });
    let t = cpu(0.0);
    // Excluded (autocast off, the default): the Autocast kernel does not run.
    assert!(local_keys().1.contains(DispatchKey::Autocast));
    assert_eq!(val(&call(&OP, t.key_set(), &t).unwrap()), 10.0);
    assert_eq!(LAYER_CALLS.load(Ordering::SeqCst), 0);
    let _g = AutocastGuard::new(Device::Cpu, DType::BF16);
    assert_eq!(val(&call(&OP, t.key_set(), &t).unwrap()), 11.0);
    assert_eq!(LAYER_CALLS.load(Ordering::SeqCst), 1);
    // The exclude guard inside the kernel was dropped on return.
    assert!(!local_keys().1.contains(DispatchKey::Autocast));
}

#[test]
fn guards_restore_on_error_and_panic_and_are_per_thread() {
    let before = local_keys();
    fn failing_kernel() -> Result<()> {
        let _g = ExcludeGuard::new(DispatchKey::Autograd);
        let _h = IncludeGuard::new(DispatchKey::Autocast);
        Err(oxten_runtime::Error::value("boom"))
    }
    let r = failing_kernel();
    assert!(r.is_err());
    assert_eq!(local_keys(), before);
    let p = std::panic::catch_unwind(|| {
        let _g = ExcludeGuard::new(DispatchKey::Autograd);
        panic!("kernel panicked");
    });
    assert!(p.is_err());
    assert_eq!(local_keys(), before);
    let _g = IncludeGuard::new(DispatchKey::Autocast);
    assert!(local_keys().0.contains(DispatchKey::Autocast));
    let other = std::thread::spawn(local_keys).join().unwrap();
    assert_eq!(other, (KeySet::EMPTY, KeySet::DEFAULT_EXCLUDED), "modes must not leak into other threads");
}

#[test]
fn boxed_fallback_serves_ops_without_kernels_but_direct_kernels_win() {
    static A: Op<Unary> = Op::new("test::fb_a", "fb_a(Tensor a) -> Tensor");
    static B: Op<Unary> = Op::new("test::fb_b", "fb_b(Tensor a) -> Tensor");
    static FALLBACK_CALLS: AtomicUsize = AtomicUsize::new(0);
    A.register(DispatchKey::Cpu, |_| Ok(mark(1.0)));
    B.register(DispatchKey::Cpu, |_| Ok(mark(1.0)));
    B.register(DispatchKey::PrivateUse1, |_| Ok(mark(5.0)));
    let t = pu1(0.0);
    let err = call(&A, t.key_set(), &t).unwrap_err();
    assert_eq!(
        err.to_string(),
        "test::fb_a: could not run 'test::fb_a' with arguments from the 'PrivateUse1' backend: no kernel is registered for it. Registered keys: [CPU]"
    );
    // A "run it on the CPU" fallback: move tensors to CPU, call the CPU kernel, move back.
    oxten_runtime::dispatch::register_fallback(
        DispatchKey::PrivateUse1,
        BoxedKernel::new(|op, stack| {
            FALLBACK_CALLS.fetch_add(1, Ordering::SeqCst);
            assert!(op.name().starts_with("test::fb_"));
            for v in stack.iter_mut() {
                if let IValue::Tensor(t) = v {
                    *t = t.storage_copy_to(Device::Cpu)?;
                }
            }
            let _cpu_only = ExcludeGuard::new(DispatchKey::PrivateUse1);
            let IValue::Tensor(t) = stack.pop().unwrap() else { unreachable!() };
            let r = call(&A, t.key_set(), &t)?;
            stack.push(IValue::Tensor(r.storage_copy_to(Device::PrivateUse1(0))?));
            Ok(())
        }),
    );
    let r = call(&A, t.key_set(), &t).unwrap();
    assert_eq!(r.device(), Device::PrivateUse1(0));
    assert_eq!(val(&r), 1.0);
    assert_eq!(FALLBACK_CALLS.load(Ordering::SeqCst), 1);
    // The direct kernel beats the fallback.
    assert_eq!(val(&call(&B, t.key_set(), &t).unwrap()), 5.0);
    assert_eq!(FALLBACK_CALLS.load(Ordering::SeqCst), 1);
    oxten_runtime::dispatch::clear_fallback(DispatchKey::PrivateUse1);
}

#[test]
fn composite_kernels_fill_backend_slots_and_direct_kernels_win() {
    static CIA: Op<Unary> = Op::new("test::cia", "cia(Tensor a) -> Tensor");
    static CEA: Op<Unary> = Op::new("test::cea", "cea(Tensor a) -> Tensor");
    CIA.register(RegistrationKey::CompositeImplicitAutograd, |_| Ok(mark(1.0)));
    CEA.register(RegistrationKey::CompositeExplicitAutograd, |_| Ok(mark(2.0)));
    CEA.register(RegistrationKey::CompositeImplicitAutograd, |_| Ok(mark(3.0)));
    let (c, p) = (cpu(0.0), pu1(0.0));
    // A pure implicit composite serves every backend and runs above autograd.
    assert_eq!(CIA.dispatch_key(c.key_set()).unwrap(), DispatchKey::Autograd);
    {
        let _inference = ExcludeGuard::new(DispatchKey::Autograd);
        assert_eq!(val(&call(&CIA, p.key_set(), &p).unwrap()), 1.0);
        // Explicit beats implicit for backends.
        assert_eq!(val(&call(&CEA, c.key_set(), &c).unwrap()), 2.0);
    }
    // An explicit composite runs below autograd: Autograd falls through for it.
    assert_eq!(CEA.dispatch_key(c.key_set()).unwrap(), DispatchKey::Cpu);
    // A direct kernel wins over the composite for its backend only.
    CIA.register(DispatchKey::PrivateUse1, |_| Ok(mark(9.0)));
    let _inference = ExcludeGuard::new(DispatchKey::Autograd);
    assert_eq!(val(&call(&CIA, p.key_set(), &p).unwrap()), 9.0);
    assert_eq!(val(&call(&CIA, c.key_set(), &c).unwrap()), 1.0);
}

#[test]
fn reregistering_replaces_deterministically() {
    static OP: Op<Unary> = Op::new("test::rereg", "rereg(Tensor a) -> Tensor");
    OP.register(DispatchKey::Cpu, |_| Ok(mark(1.0)));
    OP.register(DispatchKey::Cpu, |_| Ok(mark(2.0)));
    let t = cpu(0.0);
    assert_eq!(val(&call(&OP, t.key_set(), &t).unwrap()), 2.0);
}

#[test]
fn operators_defined_at_run_time_take_boxed_kernels() {
    let op = define_op("myns::double(Tensor self) -> Tensor").unwrap();
    assert_eq!(
        oxten_runtime::dispatch::find_op("myns::double").unwrap().schema(),
        "myns::double(Tensor self) -> Tensor"
    );
    op.register_kernel(
        RegistrationKey::Key(DispatchKey::Cpu),
        oxten_runtime::dispatch::Kernel::Boxed(BoxedKernel::new(|_, stack| {
            let Some(IValue::Tensor(t)) = stack.pop() else { panic!("expected a tensor") };
            let v = t.to_vec::<f32>()?;
            stack.push(IValue::Tensor(Tensor::from_vec(v.iter().map(|x| x * 2.0).collect(), &[v.len() as i64])?));
            Ok(())
        })),
    );
    let mut stack = vec![IValue::Tensor(Tensor::from_vec(vec![1.0f32, 2.5], &[2]).unwrap())];
    op.call_boxed(&mut stack, KeySet::EMPTY).unwrap();
    let Some(IValue::Tensor(r)) = stack.pop() else { panic!() };
    assert_eq!(r.to_vec::<f32>().unwrap(), [2.0, 5.0]);
    assert!(define_op("myns::double(Tensor self) -> Tensor").unwrap_err().to_string().contains("already defined"));
    assert!(define_op("nonamespace(Tensor self) -> Tensor").is_err());
}

#[test]
fn empty_key_set_is_a_clear_error() {
    static OP: Op<Unary> = Op::new("test::excluded", "excluded(Tensor a) -> Tensor");
    OP.register(DispatchKey::Cpu, |t| Ok(t.clone()));
    let t = cpu(0.0);
    let _g = ExcludeGuard::new(KeySet::for_device(Device::Cpu));
    let err = call(&OP, t.key_set(), &t).unwrap_err();
    assert!(err.to_string().contains("no dispatch key to run operator 'test::excluded'"), "{err}");
}
