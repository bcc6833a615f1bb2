//! Reader for the golden files in `tests/golden/`: PyTorch's outputs (values, dtype, shape,
//! strides) and error messages, recorded by the `scripts/golden*.py` scripts (see
//! `scripts/golden_lib.py` for the format). A test file supplies a runner that maps a case's op
//! name to oxten calls; [`replay`] checks every case and reports all differences at once.

use oxten::{DType, MemoryFormat, Result, Scalar, Tensor};

/// One input of a case.
pub enum Arg {
    T(Tensor),
    S(Scalar),
}

/// PyTorch's output: dtype, sizes, strides, values in logical order.
pub struct Expected {
    pub dtype: DType,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub values: Vec<f64>,
}

/// A recorded call: op name, `key=value` attributes, inputs, and PyTorch's outputs or error.
pub struct Case {
    pub line: usize,
    pub op: String,
    pub attrs: Vec<(String, String)>,
    pub args: Vec<Arg>,
    pub outs: Vec<Expected>,
    pub err: Option<String>,
}

impl Case {
    /// Tensor input `i`.
    pub fn t(&self, i: usize) -> &Tensor {
        match &self.args[i] {
            Arg::T(t) => t,
            Arg::S(_) => panic!("case at line {}: argument {i} is not a tensor", self.line),
        }
    }

    /// Scalar input `i`.
    pub fn s(&self, i: usize) -> Scalar {
        match &self.args[i] {
            Arg::S(s) => *s,
            Arg::T(_) => panic!("case at line {}: argument {i} is not a scalar", self.line),
        }
    }

    /// Attribute `k`, if recorded.
    pub fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
    }

    /// Attribute `k` as a comma-separated list of integers (`dim=0,1`).
    pub fn ints(&self, k: &str) -> Option<Vec<i64>> {
        self.attr(k).map(|d| if d.is_empty() { vec![] } else { d.split(',').map(|x| x.parse().unwrap()).collect() })
    }

    /// Attribute `k` as one integer.
    pub fn int(&self, k: &str) -> Option<i64> {
        self.attr(k).map(|v| v.parse().unwrap())
    }

    /// Attribute `k` as a float.
    pub fn float(&self, k: &str) -> Option<f64> {
        self.attr(k).map(|v| v.parse().unwrap())
    }

    /// Attribute `k` as a boolean (`1` / `0`); absent is false.
    pub fn flag(&self, k: &str) -> bool {
        self.attr(k) == Some("1")
    }

    /// Attribute `k` as a Scalar: an int if it parses as one, else a float.
    pub fn scalar(&self, k: &str) -> Option<Scalar> {
        self.attr(k).map(scalar_attr)
    }
}

/// `3` → `Scalar::Int(3)`, `2.5` → `Scalar::Float(2.5)`.
pub fn scalar_attr(v: &str) -> Scalar {
    if let Ok(i) = v.parse::<i64>() {
        Scalar::Int(i)
    } else {
        Scalar::Float(v.parse().unwrap())
    }
}

fn dims(s: &str) -> Vec<i64> {
    if s == "-" {
        vec![]
    } else {
        s.split(',').map(|x| x.parse().unwrap()).collect()
    }
}

fn parse_vals(v: &[&str]) -> Vec<f64> {
    v.iter().filter(|x| !x.is_empty()).map(|x| x.parse::<f64>().unwrap()).collect()
}

fn build_tensor(dtype: DType, sizes: &[i64], layout: &str, vals: &[f64]) -> Tensor {
    let t = Tensor::from_vec(vals.to_vec(), sizes).unwrap().to_dtype(dtype);
    match layout {
        "c" => t,
        "t" => t.t(),
        "cl" => t.contiguous_with(oxten::options::ContiguousOpts { memory_format: MemoryFormat::ChannelsLast }),
        other => panic!("unknown layout {other}"),
    }
}

/// Parses a golden file.
pub fn parse(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let w: Vec<&str> = line.split(' ').collect();
        match w[0] {
            "#" | "" => {}
            "case" => cases.push(Case {
                line: i + 1,
                op: w[2].to_string(),
                attrs: w[3..]
                    .iter()
                    .filter(|a| !a.is_empty())
                    .map(|a| {
                        let (k, v) = a.split_once('=').unwrap();
                        (k.to_string(), v.to_string())
                    })
                    .collect(),
                args: vec![],
                outs: vec![],
                err: None,
            }),
            "in" => {
                let c = cases.last_mut().unwrap();
                if w[1] == "t" {
                    let dtype = DType::from_name(w[2]).unwrap();
                    c.args.push(Arg::T(build_tensor(dtype, &dims(w[3]), w[4], &parse_vals(&w[5..]))));
                } else {
                    c.args.push(Arg::S(match w[2] {
                        "bool" => Scalar::Bool(w[3] == "1"),
                        "int" => Scalar::Int(w[3].parse().unwrap()),
                        _ => Scalar::Float(w[3].parse().unwrap()),
                    }));
                }
            }
            "out" => {
                let c = cases.last_mut().unwrap();
                c.outs.push(Expected {
                    dtype: DType::from_name(w[1]).unwrap(),
                    sizes: dims(w[2]),
                    strides: dims(w[3]),
                    values: parse_vals(&w[4..]),
                });
            }
            "err" => cases.last_mut().unwrap().err = Some(w[1..].join(" ")),
            other => panic!("line {}: unknown record {other}", i + 1),
        }
    }
    cases
}

/// Default (rtol, atol) per dtype; exact for integers and bool.
pub fn tolerance(d: DType) -> (f64, f64) {
    match d {
        DType::F64 => (1e-12, 1e-12),
        DType::F32 => (2e-6, 1e-6),
        DType::F16 => (2e-3, 1e-3),
        DType::BF16 => (1.6e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

/// Options of [`replay_with`].
pub struct ReplayOpts {
    /// At least this many cases must be in the file (guards against an empty or truncated file).
    pub min_cases: usize,
    /// Compare strides too (for outputs with more than one element).
    pub strides: bool,
    /// Tolerance per output dtype, (rtol, atol).
    pub tolerance: fn(DType) -> (f64, f64),
}

impl Default for ReplayOpts {
    fn default() -> Self {
        ReplayOpts { min_cases: 1, strides: true, tolerance }
    }
}

/// Runs every case of `text` through `run` and panics listing every case whose dtype, shape,
/// strides, values or error differ from PyTorch's. A case PyTorch rejected passes when oxten
/// returns an error containing PyTorch's message (first line).
pub fn replay(text: &str, min_cases: usize, run: impl Fn(&Case) -> Result<Vec<Tensor>>) {
    replay_with(text, ReplayOpts { min_cases, ..Default::default() }, run)
}

/// [`replay`] with options.
pub fn replay_with(text: &str, opts: ReplayOpts, run: impl Fn(&Case) -> Result<Vec<Tensor>>) {
    let cases = parse(text);
    assert!(cases.len() >= opts.min_cases, "golden file has {} cases, expected ≥ {}", cases.len(), opts.min_cases);
    let mut failures = Vec::new();
    for c in &cases {
        let what = format!("line {} ({} {:?})", c.line, c.op, c.attrs);
        let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(c))) {
            Ok(r) => r,
            Err(_) => {
                failures.push(format!("{what}: panicked"));
                continue;
            }
        };
        match (&c.err, result) {
            (Some(msg), Err(e)) => {
                if !e.to_string().contains(msg.as_str()) {
                    failures.push(format!("{what}: error `{e}` does not contain PyTorch's `{msg}`"));
                }
            }
            (Some(msg), Ok(_)) => failures.push(format!("{what}: PyTorch raised `{msg}`, oxten succeeded")),
            (None, Err(e)) => failures.push(format!("{what}: oxten failed: {e}")),
            (None, Ok(outs)) => {
                if outs.len() != c.outs.len() {
                    failures.push(format!("{what}: {} outputs, PyTorch {}", outs.len(), c.outs.len()));
                    continue;
                }
                for (k, (o, Expected { dtype, sizes, strides, values: vals })) in outs.iter().zip(&c.outs).enumerate() {
                    if o.dtype() != *dtype || o.sizes()[..] != sizes[..] {
                        failures.push(format!(
                            "{what} out {k}: got {} {:?}, PyTorch {} {:?}",
                            o.dtype(),
                            &o.sizes()[..],
                            dtype,
                            sizes
                        ));
                        continue;
                    }
                    if opts.strides && o.strides()[..] != strides[..] && o.numel() > 1 {
                        failures.push(format!("{what} out {k}: strides {:?}, PyTorch {:?}", &o.strides()[..], strides));
                    }
                    let got = o.to_f64_vec().unwrap();
                    let (rtol, atol) = (opts.tolerance)(*dtype);
                    for (j, (g, w)) in got.iter().zip(vals).enumerate() {
                        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= atol + rtol * w.abs();
                        if !ok {
                            failures.push(format!("{what} out {k}[{j}]: {g} vs PyTorch {w}"));
                            break;
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from PyTorch:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
