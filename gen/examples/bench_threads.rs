//! How oxten's CPU operators scale with threads, beside PyTorch (issue: server-class CPUs).
//!
//! ```text
//! cargo build --release -p oxten --example bench_threads
//! target/release/examples/bench_threads run --threads 1,2,4,8,16 > oxten.txt
//! python3 scripts/bench_threads_pytorch.py --threads 1,2,4,8,16 > torch.txt
//! target/release/examples/bench_threads report oxten.txt torch.txt --png threads.png
//! ```
//!
//! `run` times each case at each thread count (capped at the cores present unless
//! `--no-cap`; `oxten::set_num_threads`) and prints `threads case median_seconds` lines (medians of
//! timed repetitions after a warm-up, at least 5 and about 0.3 s per case). `report` joins two such
//! files into a markdown table (times and PyTorch-over-oxten speed-ups) and draws time against
//! threads for the main cases. `scripts/bench_threads.sh` does all three steps. The binary needs
//! no Rust toolchain where it runs, so it can be built here and carried to another machine.
//!
//! `fork_join` is the cost of one parallel loop with nothing to do on every thread (start and
//! join): oxten's alone, PyTorch does not expose its `parallel_for`.

use oxten::options::ContiguousOpts;
use oxten::{DType, MemoryFormat, Tensor};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

const FONT: &[u8] = include_bytes!("train/fonts/DejaVuSans-ascii.ttf");

/// Multiplicative hashing of the index into [0, 1): the same values as the PyTorch script's.
fn hashed(shape: &[i64]) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i as u64 * 2_654_435_761) % (1 << 32)) as f32 / 4_294_967_296.0).collect();
    Tensor::from_vec(v, shape).expect("a fresh tensor")
}

/// The median time of `f` over repetitions after two warm-up calls.
fn median_time(mut f: impl FnMut()) -> f64 {
    f();
    f();
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_millis(300) && times.len() < 2000) {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// A case: its name and a closure to time.
type Case = (&'static str, Box<dyn FnMut()>);

/// The cases.
fn cases() -> Vec<Case> {
    let a = hashed(&[1 << 20]);
    let b = hashed(&[1 << 20]).add_scalar(0.5);
    let m = hashed(&[1024, 1024]);
    let m2 = hashed(&[2048, 2048]);
    let mb = m.to_dtype(DType::BF16);
    // conv2d NHWC under bf16 autocast: 32 × 64 × 56², 3 × 3, 64 → 64 channels.
    let nhwc = || ContiguousOpts { memory_format: MemoryFormat::ChannelsLast };
    let x = hashed(&[32, 64, 56, 56]).contiguous_with(nhwc());
    let w = hashed(&[64, 64, 3, 3]).sub_scalar(0.5).mul_scalar(0.1).contiguous_with(nhwc());
    let mut out: Vec<Case> = Vec::new();
    out.push(("fork_join", Box::new(|| oxten_runtime_loop(oxten::get_num_threads())) as Box<dyn FnMut()>));
    let (a1, b1) = (a.clone(), b.clone());
    out.push(("add_f32_2p20", Box::new(move || drop(black_box(a1.add(&b1))))));
    let a1 = a.clone();
    out.push(("exp_f32_2p20", Box::new(move || drop(black_box(a1.exp())))));
    let b1 = b.clone();
    out.push(("log_f32_2p20", Box::new(move || drop(black_box(b1.log())))));
    let a1 = a.clone();
    out.push(("tanh_f32_2p20", Box::new(move || drop(black_box(a1.tanh())))));
    let a1 = a.clone();
    out.push(("sigmoid_f32_2p20", Box::new(move || drop(black_box(a1.sigmoid())))));
    let a1 = a.clone();
    out.push(("erf_f32_2p20", Box::new(move || drop(black_box(a1.erf())))));
    let a1 = a.clone();
    out.push(("gelu_f32_2p20", Box::new(move || drop(black_box(a1.gelu())))));
    let a1 = a.clone();
    out.push(("sum_f32_2p20", Box::new(move || drop(black_box(a1.sum())))));
    let m1 = m.clone();
    out.push(("matmul_f32_1024", Box::new(move || drop(black_box(m1.matmul(&m1))))));
    out.push(("matmul_f32_2048", Box::new(move || drop(black_box(m2.matmul(&m2))))));
    out.push(("matmul_bf16_1024", Box::new(move || drop(black_box(mb.matmul(&mb))))));
    out.push((
        "conv2d_nhwc_bf16_autocast",
        Box::new(move || {
            oxten::autocast(DType::BF16, || {
                drop(black_box(oxten::conv2d(&x, &w, None, &[1], &[1])));
            })
        }),
    ));
    out
}

/// One parallel loop of `threads` empty chunks.
fn oxten_runtime_loop(threads: usize) {
    oxten::runtime::parallel::for_each(threads, |i| {
        black_box(i);
    });
}

fn parse_list(s: &str) -> Vec<usize> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).filter(|&n| n > 0).collect()
}

fn run(args: &[String]) {
    let mut threads = vec![1, 2, 4, 8, 16];
    let mut cap = true;
    let mut only: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--threads" => {
                threads = parse_list(args.get(i + 1).map_or("", |s| s));
                i += 1;
            }
            "--no-cap" => cap = false,
            "--only" => {
                only = args.get(i + 1).cloned();
                i += 1;
            }
            other => eprintln!("ignoring argument {other}"),
        }
        i += 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cap {
        threads.retain(|&t| t <= cores);
    }
    println!("# oxten, {cores} cores, SIMD level {:?}", oxten::iter::simd_level());
    for &t in &threads {
        oxten::set_num_threads(t).expect("a positive thread count");
        for (name, f) in cases().iter_mut() {
            if only.as_deref().is_some_and(|o| !name.contains(o)) {
                continue;
            }
            println!("{t} {name} {:.9}", median_time(f));
        }
    }
}

/// `threads case seconds` lines: `times[case][threads]`.
fn read(path: &str) -> BTreeMap<String, BTreeMap<usize, f64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out: BTreeMap<String, BTreeMap<usize, f64>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [t, name, secs] = f[..] {
            if let (Ok(t), Ok(s)) = (t.parse(), secs.parse()) {
                out.entry(name.to_string()).or_default().insert(t, s);
            }
        }
    }
    out
}

fn fmt_time(s: f64) -> String {
    if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn report(args: &[String]) {
    let (Some(ox), Some(pt)) = (args.first(), args.get(1)) else {
        eprintln!("usage: bench_threads report OXTEN.txt TORCH.txt [--png FILE]");
        std::process::exit(2);
    };
    let png = args.iter().position(|a| a == "--png").and_then(|i| args.get(i + 1));
    let (ox, pt) = (read(ox), read(pt));
    let threads: Vec<usize> = {
        let mut t: Vec<usize> = ox.values().flat_map(|m| m.keys().copied()).collect();
        t.sort();
        t.dedup();
        t
    };
    print!("| case |");
    for t in &threads {
        print!(" {t} thr. oxten / PyTorch |");
    }
    println!();
    println!("|---|{}", "---|".repeat(threads.len()));
    for (case, times) in &ox {
        print!("| {case} |");
        for t in &threads {
            match (times.get(t), pt.get(case).and_then(|p| p.get(t))) {
                (Some(&o), Some(&p)) => print!(" {} / {} ({:.2}×) |", fmt_time(o), fmt_time(p), p / o),
                (Some(&o), None) => print!(" {} / — |", fmt_time(o)),
                _ => print!(" — |"),
            }
        }
        println!();
    }
    if let Some(path) = png {
        if let Err(e) = plot(path, &ox, &pt, &threads) {
            eprintln!("could not draw {path}: {e}");
        }
    }
}

/// Time against threads (log-log), oxten solid and PyTorch dashed, for the main cases.
fn plot(
    path: &str,
    ox: &BTreeMap<String, BTreeMap<usize, f64>>,
    pt: &BTreeMap<String, BTreeMap<usize, f64>>,
    threads: &[usize],
) -> Result<(), Box<dyn std::error::Error>> {
    let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    let main = ["add_f32_2p20", "exp_f32_2p20", "sum_f32_2p20", "matmul_f32_1024", "matmul_bf16_1024"];
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let all: Vec<f64> = main
        .iter()
        .flat_map(|c| ox.get(*c).into_iter().chain(pt.get(*c)).flat_map(|m| m.values().copied()))
        .filter(|v| *v > 0.0)
        .collect();
    let (lo, hi) = all.iter().fold((f64::INFINITY, 0f64), |(a, b), &v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo.is_finite() { (lo / 1.5, hi * 1.5) } else { (1e-6, 1.0) };
    let max_t = *threads.last().unwrap_or(&1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption("time against threads (solid: oxten, dashed: PyTorch)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((1f64..max_t.max(2.0)).log_scale(), (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc("seconds")
        .label_style(("sans-serif", 14))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| fmt_time(*y))
        .draw()?;
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
    ];
    for (case, color) in main.iter().zip(palette) {
        if let Some(m) = ox.get(*case) {
            let pts: Vec<(f64, f64)> = m.iter().map(|(&t, &s)| (t as f64, s)).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(*case)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        if let Some(m) = pt.get(*case) {
            let pts: Vec<(f64, f64)> = m.iter().map(|(&t, &s)| (t as f64, s)).collect();
            chart.draw_series(DashedLineSeries::new(pts, 6, 4, color.stroke_width(1)))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 14))
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("report") => report(&args[1..]),
        _ => {
            eprintln!("usage: bench_threads run [--threads 1,2,4] [--no-cap] [--only CASE] | report OXTEN.txt TORCH.txt [--png FILE]");
            std::process::exit(2);
        }
    }
}
