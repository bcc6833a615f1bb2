//! A schema-driven fuzzer over every operator.
//!
//! It walks the generated operator table ([`oxten::ops::operator_infos`], so a new operator in
//! the YAML is covered without touching this file), draws arguments for each call from the
//! schema types ([`values`]), calls the operator's boxed entry point under `catch_unwind`, and
//! checks three things:
//! - no call panics (an error is fine: that is what bad input should give);
//! - an Ok call's returns have the shapes and dtypes that the same call on Meta tensors gives
//!   (the meta functions are the shape oracle);
//! - backward through an Ok result does not panic either.
//!
//! Every call is reproducible from `(seed, call index)`; failures print the command that reruns
//! exactly that call.

pub mod values;

use oxten::dispatch::{IValue, OpInfo, Stack};
use oxten::{Device, ErrorKind, Tensor};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use values::{CallPlan, Rng};

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    /// Calls in total, spread round-robin over the operators.
    pub calls: u64,
    /// Only operators whose name contains this.
    pub only: Option<String>,
    /// Run just this call index (to reproduce a failure).
    pub call: Option<u64>,
}

/// The outcome of one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The operator returned an error (the expected answer to most random input).
    Err(ErrorKind, String),
    /// The arguments did not fit the operator's types (a schema type the fuzzer cannot draw).
    Skipped,
    /// A failure: a panic, a shape/dtype disagreement with the meta function, or a panic in
    /// backward.
    Fail(String),
}

/// One failing call.
#[derive(Clone, Debug)]
pub struct Failure {
    pub op: &'static str,
    pub call: u64,
    pub what: String,
    pub args: String,
}

/// Counts over a run.
#[derive(Debug, Default)]
pub struct Report {
    pub calls: u64,
    pub ok: u64,
    pub errors: u64,
    pub skipped: u64,
    /// Ok calls whose shapes were checked against Meta.
    pub meta_checked: u64,
    pub backward_runs: u64,
    pub failures: Vec<Failure>,
    /// Ok calls per operator (to spot operators the fuzzer never gets past the checks of).
    pub ok_by_op: BTreeMap<&'static str, u64>,
    /// The first error message per operator.
    pub first_error: BTreeMap<&'static str, String>,
    /// The slowest calls: seconds, operator, call index.
    pub slowest: Vec<(f64, &'static str, u64)>,
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs a panic hook that records the message and location instead of printing them, so a
/// run reports panics as failures without flooding the output. Panics on other threads (a
/// pool worker) are recorded on that thread and re-raised on the caller by the pool.
pub fn install_quiet_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "non-string panic payload".to_string()
        };
        let loc = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{loc}")));
    }));
}

fn take_panic(payload: Box<dyn std::any::Any + Send>) -> String {
    LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

/// The seed of call `i` of a run seeded with `seed`.
pub fn call_seed(seed: u64, i: u64) -> u64 {
    Rng::new(seed ^ i.wrapping_mul(0x2545_f491_4f6c_dd1d)).next_u64()
}

/// The operators the fuzzer calls: all, or the one named by `only` (`add.Tensor`), or those
/// starting with its prefix (`add*`).
pub fn operators(only: Option<&str>) -> Vec<OpInfo> {
    let selected = |name: &str| match only {
        None => true,
        Some(s) => name == s || (s.ends_with('*') && name.starts_with(s.trim_end_matches('*'))),
    };
    oxten::ops::operator_infos().into_iter().filter(|o| selected(o.name)).collect()
}

/// Runs the configured calls.
pub fn run(cfg: &Config) -> Report {
    oxten::init();
    let ops = operators(cfg.only.as_deref());
    let mut report = Report::default();
    if ops.is_empty() {
        return report;
    }
    let range: Box<dyn Iterator<Item = u64>> = match cfg.call {
        Some(i) => Box::new(std::iter::once(i)),
        None => Box::new(0..cfg.calls),
    };
    // Set to print each call before it runs: a crash (which no `catch_unwind` survives) then
    // names its call.
    let trace = std::env::var_os("OXTEN_FUZZ_TRACE").is_some();
    for i in range {
        let op = ops[(i % ops.len() as u64) as usize];
        if trace {
            eprintln!("call {i}: {}", op.name);
        }
        let start = std::time::Instant::now();
        let (outcome, args, meta_checked, backward) = fuzz_call(&op, call_seed(cfg.seed, i), trace);
        let secs = start.elapsed().as_secs_f64();
        if report.slowest.len() < 5 || secs > report.slowest[4].0 {
            report.slowest.push((secs, op.name, i));
            report.slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
            report.slowest.truncate(5);
        }
        report.calls += 1;
        report.meta_checked += meta_checked as u64;
        report.backward_runs += backward as u64;
        match outcome {
            Outcome::Ok => {
                report.ok += 1;
                *report.ok_by_op.entry(op.name).or_default() += 1;
            }
            Outcome::Err(_, msg) => {
                report.errors += 1;
                report.first_error.entry(op.name).or_insert(msg);
            }
            Outcome::Skipped => report.skipped += 1,
            Outcome::Fail(what) => report.failures.push(Failure { op: op.name, call: i, what, args }),
        }
    }
    report
}

/// Draws the arguments of one call.
pub fn draw_args(op: &OpInfo, rng: &mut Rng) -> Stack {
    let plan = CallPlan::draw(rng);
    let mut stack: Stack = op.args.iter().map(|a| values::draw(rng, &plan, a)).collect();
    // Sometimes an `out=` tensor is one of the inputs (PyTorch checks such overlap).
    for i in 0..stack.len() {
        if op.args[i].out && rng.chance(0.15) {
            let inputs: Vec<Tensor> = stack[..i]
                .iter()
                .filter_map(|v| if let IValue::Tensor(t) = v { Some(t.clone()) } else { None })
                .collect();
            if !inputs.is_empty() {
                stack[i] = IValue::Tensor(inputs[rng.below(inputs.len() as u64) as usize].clone());
            }
        }
    }
    stack
}

/// One call: returns the outcome, a description of the arguments, whether the shapes were
/// checked against Meta and whether backward ran.
pub fn fuzz_call(op: &OpInfo, seed: u64, trace: bool) -> (Outcome, String, bool, bool) {
    let mut rng = Rng::new(seed);
    let drawn = catch_unwind(AssertUnwindSafe(|| draw_args(op, &mut rng)));
    let Ok(stack) = drawn else {
        return (Outcome::Skipped, "(argument drawing failed)".into(), false, false);
    };
    let args = describe_stack(op, &stack);
    if trace {
        eprintln!("  {args}");
    }
    // The meta copy is made first: in-place operators change their inputs.
    let mut meta_stack: Stack = stack.iter().map(to_meta).collect();
    let mut cpu_stack = stack;
    let cpu = catch_unwind(AssertUnwindSafe(|| (op.call_boxed)(&mut cpu_stack)));
    let cpu = match cpu {
        Err(p) => return (Outcome::Fail(format!("panicked: {}", take_panic(p))), args, false, false),
        Ok(Err(e))
            if e.message.starts_with("argument '") && e.kind == ErrorKind::DType && e.message.contains(", got ") =>
        {
            return (Outcome::Skipped, args, false, false)
        }
        // The error names the operator that was called (inner ones follow in `inner`).
        Ok(Err(e)) if e.op != op.name => {
            return (
                Outcome::Fail(format!("the error names `{}`, not the called operator: {e}", e.op)),
                args,
                false,
                false,
            )
        }
        Ok(Err(e)) => return (Outcome::Err(e.kind, e.to_string()), args, false, false),
        Ok(Ok(())) => cpu_stack,
    };
    let meta = catch_unwind(AssertUnwindSafe(|| (op.call_boxed)(&mut meta_stack)));
    let mut checked = false;
    match meta {
        Err(p) => return (Outcome::Fail(format!("panicked on Meta tensors: {}", take_panic(p))), args, false, false),
        Ok(Ok(())) => {
            checked = true;
            if let Some(diff) = compare_returns(&cpu, &meta_stack) {
                return (Outcome::Fail(format!("disagrees with its meta function: {diff}")), args, true, false);
            }
        }
        // No Meta kernel (data-dependent output shapes) or a data-dependent check: not compared.
        Ok(Err(_)) => {}
    }
    // Backward through the first result that needs a gradient.
    let mut backward = false;
    let grad_out = cpu.iter().find_map(|v| match v {
        // Huge views (an expand to 2^40 elements) are fine, but reducing them takes minutes.
        IValue::Tensor(t) if t.requires_grad() && t.dtype().is_floating_point() && t.numel() <= 1 << 20 => {
            Some(t.clone())
        }
        _ => None,
    });
    if let Some(t) = grad_out {
        if rng.chance(0.5) {
            backward = true;
            let r = catch_unwind(AssertUnwindSafe(|| t.try_sum().and_then(|s| s.try_backward())));
            if let Err(p) = r {
                return (Outcome::Fail(format!("backward panicked: {}", take_panic(p))), args, checked, true);
            }
        }
    }
    (Outcome::Ok, args, checked, backward)
}

fn to_meta(v: &IValue) -> IValue {
    let meta = |t: &Tensor| t.detach().try_to_device(Device::Meta).unwrap_or_else(|_| t.detach());
    match v {
        IValue::Tensor(t) => IValue::Tensor(meta(t)),
        IValue::TensorList(l) => IValue::TensorList(l.iter().map(meta).collect()),
        IValue::OptionalTensorList(l) => IValue::OptionalTensorList(l.iter().map(|t| t.as_ref().map(meta)).collect()),
        IValue::Device(Device::Cpu) => IValue::Device(Device::Meta),
        other => other.clone(),
    }
}

fn compare_returns(cpu: &Stack, meta: &Stack) -> Option<String> {
    if cpu.len() != meta.len() {
        return Some(format!("{} returns on CPU, {} on Meta", cpu.len(), meta.len()));
    }
    let same = |a: &Tensor, b: &Tensor| a.sizes() == b.sizes() && a.dtype() == b.dtype();
    for (i, (c, m)) in cpu.iter().zip(meta).enumerate() {
        match (c, m) {
            (IValue::Tensor(a), IValue::Tensor(b)) if !same(a, b) => {
                return Some(format!("return {i}: CPU {} vs Meta {}", describe_tensor(a), describe_tensor(b)));
            }
            (IValue::TensorList(a), IValue::TensorList(b)) => {
                if a.len() != b.len() {
                    return Some(format!("return {i}: {} tensors on CPU, {} on Meta", a.len(), b.len()));
                }
                for (j, (x, y)) in a.iter().zip(b).enumerate() {
                    if !same(x, y) {
                        return Some(format!(
                            "return {i}[{j}]: CPU {} vs Meta {}",
                            describe_tensor(x),
                            describe_tensor(y)
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// `f32[2, 3] strides [1, 2] offset 1 requires_grad`.
pub fn describe_tensor(t: &Tensor) -> String {
    let mut s = format!("{}{:?}", t.dtype().name(), &t.sizes()[..]);
    if !t.is_contiguous() {
        s.push_str(&format!(" strides {:?}", &t.strides()[..]));
    }
    if t.storage_offset() != 0 {
        s.push_str(&format!(" offset {}", t.storage_offset()));
    }
    if t.requires_grad() {
        s.push_str(" requires_grad");
    }
    // With OXTEN_FUZZ_VALUES set, small tensors' values too (to rebuild a failing call).
    if std::env::var_os("OXTEN_FUZZ_VALUES").is_some() && t.numel() <= 64 {
        if let Ok(v) = t.detach().to_f64_vec() {
            s.push_str(&format!(" values {v:?}"));
        }
    }
    s
}

fn describe(v: &IValue) -> String {
    match v {
        IValue::Tensor(t) => describe_tensor(t),
        IValue::TensorList(l) => format!("[{}]", l.iter().map(describe_tensor).collect::<Vec<_>>().join(", ")),
        IValue::OptionalTensorList(l) => format!(
            "[{}]",
            l.iter().map(|t| t.as_ref().map_or("None".into(), describe_tensor)).collect::<Vec<_>>().join(", ")
        ),
        IValue::Scalar(s) => format!("{s:?}"),
        IValue::Generator(_) => "Generator".into(),
        other => format!("{other:?}"),
    }
}

fn describe_stack(op: &OpInfo, stack: &Stack) -> String {
    op.args.iter().zip(stack).map(|(a, v)| format!("{}={}", a.name, describe(v))).collect::<Vec<_>>().join(", ")
}

/// The report as text: counts, then each failure with the command that reruns it.
pub fn summary(cfg: &Config, r: &Report, nops: usize) -> String {
    let mut s = format!(
        "{} calls over {nops} operators (seed {}): {} ok, {} errors, {} skipped, {} ok calls checked against Meta, {} backward runs, {} failures\n",
        r.calls,
        cfg.seed,
        r.ok,
        r.errors,
        r.skipped,
        r.meta_checked,
        r.backward_runs,
        r.failures.len()
    );
    // One example per distinct (operator, failure) pair, with how often it happened.
    let never: Vec<String> = operators(cfg.only.as_deref())
        .iter()
        .filter(|o| !r.ok_by_op.contains_key(o.name))
        .map(|o| format!("{} ({})", o.name, r.first_error.get(o.name).map_or("", |m| m.as_str())))
        .collect();
    if !never.is_empty() {
        s.push_str(&format!("operators that never returned Ok: {}\n", never.join("; ")));
    }
    let slow: Vec<String> = r.slowest.iter().map(|(t, op, i)| format!("{op} #{i} {:.3} s", t)).collect();
    s.push_str(&format!("slowest calls: {}\n", slow.join(", ")));
    // Panics group by where they happened (the message often carries the dtype).
    let mut seen: BTreeMap<(&str, &str), (usize, &Failure)> = BTreeMap::new();
    for f in &r.failures {
        let key = f.what.rsplit_once(" at ").map_or(f.what.as_str(), |(_, at)| at);
        seen.entry((f.op, key)).or_insert((0, f)).0 += 1;
    }
    for (n, f) in seen.values().take(80) {
        s.push_str(&format!(
            "- {} ({n}x): {}\n  args: {}\n  rerun: cargo run --release -p oxten-tests --bin op_fuzz -- --seed {} --only {} --call {}\n",
            f.op, f.what, f.args, cfg.seed, f.op, f.call
        ));
    }
    s
}
