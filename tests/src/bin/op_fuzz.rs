//! The long run of the operator fuzzer (the CI test runs a short one):
//!
//! ```text
//! cargo run --release -p oxten-tests --bin op_fuzz -- --calls 1000000 --seed 1
//! cargo run --release -p oxten-tests --bin op_fuzz -- --seed 1 --only add.Tensor --call 12345
//! ```
//!
//! Exits with status 1 when any call fails (panics, disagrees with its meta function, or panics
//! in backward).

use oxten_tests::op_fuzz::{install_quiet_panic_hook, operators, run, summary, Config};

fn main() {
    let mut cfg = Config { seed: 1, calls: 100_000, only: None, call: None };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage(&format!("{a} needs a value")));
        match a.as_str() {
            "--seed" => cfg.seed = value().parse().unwrap_or_else(|_| usage("--seed takes an integer")),
            "--calls" => cfg.calls = value().parse().unwrap_or_else(|_| usage("--calls takes an integer")),
            "--only" => cfg.only = Some(value()),
            "--call" => cfg.call = Some(value().parse().unwrap_or_else(|_| usage("--call takes an integer"))),
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    install_quiet_panic_hook();
    let nops = operators(cfg.only.as_deref()).len();
    let start = std::time::Instant::now();
    let report = run(&cfg);
    print!("{}", summary(&cfg, &report, nops));
    println!("{:.1} s", start.elapsed().as_secs_f64());
    if cfg.call.is_some() {
        if let Some(f) = report.failures.first() {
            println!("{}", f.what);
        }
    }
    std::process::exit(if report.failures.is_empty() { 0 } else { 1 });
}

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("op_fuzz: {msg}");
    }
    eprintln!("usage: op_fuzz [--calls N] [--seed S] [--only OP|PREFIX*] [--call I]");
    std::process::exit(2);
}
