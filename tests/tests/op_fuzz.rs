//! The short, seeded run of the schema-driven operator fuzzer (the long run is the `op_fuzz`
//! binary: `cargo run --release -p oxten-tests --bin op_fuzz -- --calls 1000000 --seed N`), and
//! checks that the fuzzer itself reports what it is meant to find.

use oxten::dispatch::{ArgInfo, IValue, OpInfo, Stack};
use oxten::{DType, Tensor};
use oxten_tests::op_fuzz::{fuzz_call, install_quiet_panic_hook, operators, run, summary, Config, Outcome};

/// Seeds are fixed so that a failure reproduces; change the seed to explore further.
const SEED: u64 = 20_261_127;

#[test]
fn no_operator_panics_or_disagrees_with_its_meta_function() {
    install_quiet_panic_hook();
    let cfg = Config { seed: SEED, calls: 1_000_000, only: None, call: None };
    let ops = operators(None);
    let report = run(&cfg);
    let text = summary(&cfg, &report, ops.len());
    println!("{text}");
    assert!(report.failures.is_empty(), "{text}");
    assert_eq!(report.calls, cfg.calls);
    // The draws get past the argument checks of almost every operator (the ones they never get
    // past need hand-made samples: convolutions and pools with matching kernel shapes).
    let ok_ops = ops.iter().filter(|o| report.ok_by_op.contains_key(o.name)).count();
    assert!(ok_ops * 100 >= ops.len() * 90, "only {ok_ops} of {} operators ever returned Ok\n{text}", ops.len());
    assert!(report.meta_checked * 2 >= report.ok, "most Ok calls are compared with Meta\n{text}");
    assert!(report.backward_runs > 1000, "{text}");
}

/// Every generated operator is in the table the fuzzer walks, with its schema's arguments.
#[test]
fn the_fuzzer_walks_every_generated_operator() {
    let ops = operators(None);
    assert_eq!(ops.len(), oxten::ops::all_operators().len());
    let add = ops.iter().find(|o| o.name == "add.Tensor").expect("add.Tensor is listed");
    let names: Vec<&str> = add.args.iter().map(|a| a.name).collect();
    assert_eq!(names, ["self", "other", "alpha"]);
    assert_eq!(add.args[2].ty, "Scalar");
    assert_eq!(add.args[2].default, Some("1"));
    assert!(add.args[2].kwarg_only && !add.args[0].kwarg_only);
    let out = ops.iter().find(|o| o.name == "add.out").expect("add.out is listed");
    assert!(out.args[3].out && out.args[3].write);
}

/// The boxed entry point converts arguments, calls the operator and pushes its returns; a
/// wrong argument type is an error naming the argument.
#[test]
fn boxed_entry_points_call_the_operator() {
    oxten::init();
    let add = operators(Some("add.Tensor"))[0];
    let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let mut stack: Stack = vec![IValue::Tensor(a.clone()), IValue::Tensor(a), IValue::Scalar(2.into())];
    (add.call_boxed)(&mut stack).unwrap();
    match stack.as_slice() {
        [IValue::Tensor(r)] => assert_eq!(r.to_vec::<f32>().unwrap(), [3.0, 6.0]),
        other => panic!("expected one tensor, got {other:?}"),
    }
    let mut bad: Stack = vec![IValue::Int(1), IValue::Int(2), IValue::Scalar(1.into())];
    let e = (add.call_boxed)(&mut bad).unwrap_err();
    assert_eq!(e.to_string(), "add.Tensor: argument 'self' must be Tensor, got int");
}

static ONE_TENSOR: [ArgInfo; 1] =
    [ArgInfo { name: "self", ty: "Tensor", default: None, kwarg_only: false, out: false, write: false }];

fn fake_op(call_boxed: fn(&mut Stack) -> oxten::Result<()>) -> OpInfo {
    let any = operators(None)[0];
    OpInfo { entry: any.entry, name: "fake", args: &ONE_TENSOR, returns: 1, call_boxed }
}

#[test]
fn the_fuzzer_reports_a_panic() {
    oxten::init();
    install_quiet_panic_hook();
    let op = fake_op(|_| panic!("kernel bug"));
    let (outcome, args, _, _) = fuzz_call(&op, 1, false);
    match outcome {
        Outcome::Fail(what) => assert!(what.starts_with("panicked: kernel bug at "), "{what}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(args.starts_with("self="), "{args}");
}

#[test]
fn the_fuzzer_reports_a_shape_that_disagrees_with_meta() {
    oxten::init();
    // One element on the CPU, two on Meta.
    let op = fake_op(|stack| {
        let Some(IValue::Tensor(t)) = stack.pop() else { unreachable!() };
        let n = if t.is_meta() { 2 } else { 1 };
        stack.push(IValue::Tensor(Tensor::empty(&[n], DType::F32, t.device(), Default::default())?));
        Ok(())
    });
    let (outcome, ..) = fuzz_call(&op, 7, false);
    match outcome {
        Outcome::Fail(what) => {
            assert_eq!(what, "disagrees with its meta function: return 0: CPU float32[1] vs Meta float32[2]")
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}
