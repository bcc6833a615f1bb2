//! Replays tests/golden/spine.txt — PyTorch's outputs (values, dtype, shape, strides) and error
//! messages for the spine operators, recorded by scripts/golden.py — through oxten.

use oxten::options::{ClampOpts, GeluOpts, MaxDimOpts, SumDimIntlistOpts};
use oxten::{DType, MemoryFormat, Result, Scalar, Tensor};

const GOLDEN: &str = include_str!("../golden/spine.txt");

enum Arg {
    T(Tensor),
    S(Scalar),
}

/// PyTorch's output: dtype, sizes, strides, values in logical order.
struct Expected {
    dtype: DType,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    values: Vec<f64>,
}

struct Case {
    line: usize,
    op: String,
    attrs: Vec<(String, String)>,
    args: Vec<Arg>,
    outs: Vec<Expected>,
    err: Option<String>,
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

fn parse() -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for (i, line) in GOLDEN.lines().enumerate() {
        let w: Vec<&str> = line.split(' ').collect();
        match w[0] {
            "#" => {}
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

fn scalar_attr(v: &str) -> Scalar {
    if let Ok(i) = v.parse::<i64>() {
        Scalar::Int(i)
    } else {
        Scalar::Float(v.parse().unwrap())
    }
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| match &c.args[i] {
        Arg::T(t) => t,
        Arg::S(_) => panic!("case {}: argument {i} is not a tensor", c.line),
    };
    let s = |i: usize| match &c.args[i] {
        Arg::S(s) => *s,
        Arg::T(_) => panic!("case {}: argument {i} is not a scalar", c.line),
    };
    let attr = |k: &str| c.attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
    let dim_list = || attr("dim").map(|d| d.split(',').map(|x| x.parse::<i64>().unwrap()).collect::<Vec<_>>());
    let keepdim = attr("keepdim") == Some("1");
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    match c.op.as_str() {
        "add" => one(t(0)
            .try_add_with(t(1), oxten::options::AddOpts { alpha: attr("alpha").map_or(Scalar::Int(1), scalar_attr) })),
        "sub" => one(t(0).try_sub(t(1))),
        "mul" => one(t(0).try_mul(t(1))),
        "div" => one(t(0).try_div(t(1))),
        "maximum" => one(t(0).try_maximum(t(1))),
        "minimum" => one(t(0).try_minimum(t(1))),
        "add_scalar" => one(t(0).try_add_scalar(s(1))),
        "sub_scalar" => one(t(0).try_sub_scalar(s(1))),
        "mul_scalar" => one(t(0).try_mul_scalar(s(1))),
        "div_scalar" => one(t(0).try_div_scalar(s(1))),
        "neg" => one(t(0).try_neg()),
        "abs" => one(t(0).try_abs()),
        "exp" => one(t(0).try_exp()),
        "log" => one(t(0).try_log()),
        "sqrt" => one(t(0).try_sqrt()),
        "rsqrt" => one(t(0).try_rsqrt()),
        "sin" => one(t(0).try_sin()),
        "cos" => one(t(0).try_cos()),
        "tanh" => one(t(0).try_tanh()),
        "sigmoid" => one(t(0).try_sigmoid()),
        "relu" => one(t(0).try_relu()),
        "silu" => one(t(0).try_silu()),
        "gelu" => one(t(0).try_gelu_with(GeluOpts { approximate: attr("approximate").unwrap() })),
        "pow" => one(t(0).try_pow_tensor_scalar(s(1))),
        "clamp" => {
            one(t(0).try_clamp_with(ClampOpts { min: attr("min").map(scalar_attr), max: attr("max").map(scalar_attr) }))
        }
        "eq" => one(t(0).try_eq(t(1))),
        "ne" => one(t(0).try_ne(t(1))),
        "lt" => one(t(0).try_lt(t(1))),
        "le" => one(t(0).try_le(t(1))),
        "gt" => one(t(0).try_gt(t(1))),
        "ge" => one(t(0).try_ge(t(1))),
        "eq_scalar" => one(t(0).try_eq_scalar(s(1))),
        "ne_scalar" => one(t(0).try_ne_scalar(s(1))),
        "lt_scalar" => one(t(0).try_lt_scalar(s(1))),
        "le_scalar" => one(t(0).try_le_scalar(s(1))),
        "gt_scalar" => one(t(0).try_gt_scalar(s(1))),
        "ge_scalar" => one(t(0).try_ge_scalar(s(1))),
        "logical_not" => one(t(0).try_logical_not()),
        "where" => one(t(1).try_where_self(t(0), t(2))),
        "sum" => one(t(0).try_sum()),
        "sum_dim" => {
            let d = dim_list();
            one(t(0).try_sum_dim_intlist_with(d.as_deref(), SumDimIntlistOpts { keepdim, dtype: None }))
        }
        "mean_dim" => {
            let d = dim_list();
            one(t(0).try_mean_dim_with(d.as_deref(), oxten::options::MeanDimOpts { keepdim, dtype: None }))
        }
        "amax" => one(t(0).try_amax_with(oxten::options::AmaxOpts { dim: &dim_list().unwrap(), keepdim })),
        "amin" => one(t(0).try_amin_with(oxten::options::AminOpts { dim: &dim_list().unwrap(), keepdim })),
        "max_dim" => {
            let (v, i) = t(0).try_max_dim_with(dim_list().unwrap()[0], MaxDimOpts { keepdim })?;
            Ok(vec![v, i])
        }
        "argmax" => one(t(0).try_argmax_with(oxten::options::ArgmaxOpts { dim: dim_list().map(|d| d[0]), keepdim })),
        "mm" => one(t(0).try_mm(t(1))),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

fn tolerance(d: DType) -> (f64, f64) {
    match d {
        DType::F64 => (1e-12, 1e-12),
        DType::F32 => (2e-6, 1e-6),
        DType::F16 => (2e-3, 1e-3),
        DType::BF16 => (1.6e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

#[test]
fn spine_ops_match_pytorch() {
    let cases = parse();
    assert!(cases.len() > 300, "golden file has {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let what = format!("line {} ({} {:?})", c.line, c.op, c.attrs);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(c)));
        let result = match result {
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
                    if o.strides()[..] != strides[..] && o.numel() > 1 {
                        failures.push(format!("{what} out {k}: strides {:?}, PyTorch {:?}", &o.strides()[..], strides));
                    }
                    let got = o.to_f64_vec().unwrap();
                    let (rtol, atol) = tolerance(*dtype);
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
