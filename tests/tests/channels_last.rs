//! channels_last end to end: activations, convolution, pooling, batch norm and the elementwise
//! ops keep the memory format of their input with exactly PyTorch's strides, so a CNN run on
//! channels_last input never falls back to NCHW copies in between.
//!
//! - `tests/golden/channels_last.txt` (scripts/golden_channels_last.py): single ops on
//!   channels_last, mixed NCHW/NHWC operands and the ambiguous shapes (C = 1, H = W = 1), with
//!   PyTorch's values and output strides.
//! - `tests/golden/channels_last_cnn.txt`: every intermediate of two small CNNs (functional ops
//!   and `oxten::nn` modules) on channels_last and NCHW input, and the gradients after backward,
//!   with PyTorch's strides (and values, for the functional CNN whose parameters are
//!   deterministic).

use oxten::nn::{
    AdaptiveAvgPool2d, AvgPool2d, BatchNorm2d, Conv2d, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential,
};
use oxten::options::{
    AvgPool2dOpts, ContiguousOpts, Conv2dOpts, DeepCloneOpts, EluOpts, FlattenOpts, GeluOpts, HardtanhOpts,
    MaxPool2dOpts, MeanDimOpts, SoftplusOpts,
};
use oxten::{DType, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::golden::{replay_with, Case, ReplayOpts};
use std::sync::{Arc, Mutex};

const OPS: &str = include_str!("../golden/channels_last.txt");
const CNN: &str = include_str!("../golden/channels_last_cnn.txt");

fn cl(t: &Tensor) -> Tensor {
    t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast })
}

// ---------------------------------------------------------------------------------------------
// Single ops
// ---------------------------------------------------------------------------------------------

fn run_op(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| c.t(i);
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let ints = |k: &str| c.ints(k).unwrap();
    match c.op.as_str() {
        "relu" => one(t(0).try_relu()),
        "gelu" => one(t(0).try_gelu()),
        "gelu_tanh" => one(t(0).try_gelu_with(GeluOpts { approximate: "tanh" })),
        "silu" => one(t(0).try_silu()),
        "leaky_relu" => one(oxten::try_leaky_relu(t(0), Scalar::Float(0.1))),
        "hardtanh" => one(oxten::try_hardtanh_with(
            t(0),
            HardtanhOpts { min_val: Scalar::Float(-0.5), max_val: Scalar::Float(0.75) },
        )),
        "elu" => one(oxten::try_elu_with(t(0), EluOpts::default())),
        "softplus" => one(oxten::try_softplus_with(t(0), SoftplusOpts::default())),
        "sigmoid" => one(t(0).try_sigmoid()),
        "tanh" => one(t(0).try_tanh()),
        "neg" => one(t(0).try_neg()),
        "exp" => one(t(0).try_exp()),
        "abs" => one(t(0).try_abs()),
        "clamp" => one(t(0).try_clamp_with(oxten::options::ClampOpts {
            min: Some(Scalar::Float(-0.5)),
            max: Some(Scalar::Float(0.5)),
        })),
        "mul_scalar" => one(t(0).try_mul_scalar(2.5)),
        "add_scalar" => one(t(0).try_add_scalar(1)),
        "pow" => one(t(0).try_pow_tensor_scalar(2)),
        "deep_clone" => one(t(0).try_deep_clone_with(DeepCloneOpts { memory_format: None })),
        "to_f64" => one(t(0).try_to_dtype(DType::F64)),
        "eq_scalar" => one(t(0).try_gt_scalar(0)),
        "dropout_eval" => one(oxten::try_dropout(t(0), 0.5, false)),
        "add" => one(t(0).try_add(t(1))),
        "sub" => one(t(0).try_sub(t(1))),
        "mul" => one(t(0).try_mul(t(1))),
        "div" => one(t(0).try_div(t(1))),
        "maximum" => one(t(0).try_maximum(t(1))),
        "eq" => one(t(0).try_eq(t(1))),
        "where" => one(t(1).try_where_self(&t(0).try_gt_scalar(0)?, t(2))),
        "add_inplace" => {
            let a = t(0).try_deep_clone_with(DeepCloneOpts { memory_format: None })?;
            a.try_add_(t(1))?;
            one(Ok(a))
        }
        "add_out" => {
            let out = oxten::empty(&ints("size"));
            let out = if c.attr("out") == Some("cl") { cl(&out) } else { out };
            oxten::try_add_out(t(0), t(1), &out)?;
            one(Ok(out))
        }
        "conv2d" => {
            let bias = c.flag("bias").then(|| t(2));
            one(oxten::try_conv2d_with(
                t(0),
                t(1),
                bias,
                &ints("stride"),
                &ints("padding"),
                Conv2dOpts { dilation: &[1, 1], groups: c.int("groups").unwrap() },
            ))
        }
        "max_pool2d" => one(oxten::try_max_pool2d_with(
            t(0),
            &ints("kernel"),
            MaxPool2dOpts { stride: &ints("stride"), padding: &ints("padding"), ..Default::default() },
        )),
        "avg_pool2d" => one(oxten::try_avg_pool2d_with(
            t(0),
            &ints("kernel"),
            AvgPool2dOpts { stride: &ints("stride"), padding: &ints("padding"), ..Default::default() },
        )),
        "adaptive_avg_pool2d" => one(oxten::try_adaptive_avg_pool2d(t(0), &ints("size"))),
        "batch_norm" => {
            let rm = t(3).try_deep_clone()?;
            let rv = t(4).try_deep_clone()?;
            one(oxten::try_batch_norm(
                t(0),
                Some(t(1)),
                Some(t(2)),
                Some(&rm),
                Some(&rv),
                c.flag("training"),
                0.1,
                1e-5,
                false,
            ))
        }
        "group_norm" => one(oxten::try_group_norm(t(0), c.int("groups").unwrap(), Some(t(1)), Some(t(2)))),
        "softmax" => one(t(0).try_softmax(c.int("dim").unwrap())),
        "log_softmax" => one(t(0).try_log_softmax(c.int("dim").unwrap())),
        "mean_dim" => one(t(0).try_mean_dim_with(Some(&ints("dim")), c.flag("keepdim"), MeanDimOpts { dtype: None })),
        "flatten" => one(t(0).try_flatten_with(c.int("start").unwrap(), FlattenOpts { end_dim: -1 })),
        "empty_like" => one(oxten::try_zeros_like(t(0))),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

fn op_tolerance(d: DType) -> (f64, f64) {
    match d {
        DType::F32 => (1e-5, 1e-6),
        _ => oxten_tests::golden::tolerance(d),
    }
}

#[test]
fn single_ops_keep_pytorchs_memory_format() {
    replay_with(OPS, ReplayOpts { min_cases: 300, strides: true, tolerance: op_tolerance }, run_op);
}

// ---------------------------------------------------------------------------------------------
// The CNNs
// ---------------------------------------------------------------------------------------------

/// One recorded intermediate: PyTorch's dtype, sizes, strides and (maybe) values.
struct Step {
    name: String,
    dtype: DType,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    values: Option<Vec<f64>>,
}

fn dims(s: &str) -> Vec<i64> {
    if s == "-" {
        vec![]
    } else {
        s.split(',').map(|x| x.parse().unwrap()).collect()
    }
}

/// The steps of `run`, in order.
fn steps(run: &str) -> Vec<Step> {
    let steps: Vec<Step> = CNN
        .lines()
        .filter(|l| l.starts_with("step "))
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|w| w[1] == run)
        .map(|w| Step {
            name: w[2].to_string(),
            dtype: DType::from_name(w[3]).unwrap(),
            sizes: dims(w[4]),
            strides: dims(w[5]),
            values: (w[6] != "-").then(|| w[6..].iter().map(|v| v.parse().unwrap()).collect()),
        })
        .collect();
    assert!(!steps.is_empty(), "no steps for run {run} in the golden file");
    steps
}

/// `sin(0.7311 i + 1.3 seed) * scale` in row-major order, rounded once to f32 (as the script).
fn det(shape: &[i64], seed: u32, scale: f64) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((0.7311 * i as f64 + 1.3 * seed as f64).sin() * scale) as f32).collect();
    Tensor::from_vec(v, shape).unwrap()
}

struct Params {
    w1: Tensor,
    b1: Tensor,
    gamma: Tensor,
    beta: Tensor,
    w2: Tensor,
    b2: Tensor,
    ws: Tensor,
    scale: Tensor,
    wl: Tensor,
    bl: Tensor,
    rm: Tensor,
    rv: Tensor,
}

impl Params {
    fn new(weights_cl: bool) -> Params {
        let w = |t: Tensor| if weights_cl { cl(&t) } else { t }.requires_grad_(true);
        let p = |t: Tensor| t.requires_grad_(true);
        Params {
            w1: w(det(&[6, 4, 3, 3], 2, 0.3)),
            b1: p(det(&[6], 3, 0.1)),
            gamma: p(det(&[6], 4, 0.1).add_scalar(1)),
            beta: p(det(&[6], 5, 0.1)),
            w2: w(det(&[8, 3, 3, 3], 6, 0.3)),
            b2: p(det(&[8], 7, 0.1)),
            ws: w(det(&[8, 6, 1, 1], 8, 0.3)),
            scale: det(&[1, 8, 1, 1], 9, 0.2).add_scalar(1),
            wl: p(det(&[10, 32], 10, 0.2)),
            bl: p(det(&[10], 11, 0.1)),
            rm: oxten::zeros(&[6]),
            rv: oxten::ones(&[6]),
        }
    }

    fn grads(&self) -> [(&'static str, &Tensor); 9] {
        [
            ("grad_w1", &self.w1),
            ("grad_b1", &self.b1),
            ("grad_gamma", &self.gamma),
            ("grad_beta", &self.beta),
            ("grad_w2", &self.w2),
            ("grad_b2", &self.b2),
            ("grad_ws", &self.ws),
            ("grad_wl", &self.wl),
            ("grad_bl", &self.bl),
        ]
    }
}

type Record = Vec<(String, Tensor)>;

/// The functional CNN of scripts/golden_channels_last.py; every intermediate goes to `rec`.
fn cnn(x: &Tensor, p: &Params, training: bool, rec: &mut Record) -> Result<Tensor> {
    let mut r = |name: &str, t: &Tensor| rec.push((name.to_string(), t.clone()));
    let conv = |x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: i64, padding: i64, groups: i64| {
        oxten::try_conv2d_with(x, w, b, &[stride; 2], &[padding; 2], Conv2dOpts { dilation: &[1, 1], groups })
    };
    let h = conv(x, &p.w1, Some(&p.b1), 1, 1, 1)?;
    r("conv1", &h);
    let h =
        oxten::try_batch_norm(&h, Some(&p.gamma), Some(&p.beta), Some(&p.rm), Some(&p.rv), training, 0.1, 1e-5, false)?;
    r("bn", &h);
    let h = h.try_relu()?;
    r("relu", &h);
    let h = oxten::try_max_pool2d_with(&h, &[2, 2], MaxPool2dOpts::default())?;
    r("maxpool", &h);
    let short = conv(&h, &p.ws, None, 2, 0, 1)?;
    r("shortcut", &short);
    let h = conv(&h, &p.w2, Some(&p.b2), 2, 1, 2)?;
    r("conv2", &h);
    let h = h.try_add(&short)?;
    r("residual", &h);
    let h = h.try_mul(&p.scale)?;
    r("scale", &h);
    let h = p.scale.try_mul(&h)?;
    r("scale_rev", &h);
    let h = h.try_gelu()?;
    r("gelu", &h);
    let h = h.try_silu()?;
    r("silu", &h);
    let h = oxten::try_leaky_relu(&h, Scalar::Float(0.1))?;
    r("leaky_relu", &h);
    let h = oxten::try_hardtanh_with(&h, HardtanhOpts { min_val: Scalar::Float(-1.0), max_val: Scalar::Float(0.9) })?;
    r("hardtanh", &h);
    let dropped = oxten::try_dropout(&h, 0.5, true)?;
    r("dropout_train", &dropped);
    // A training dropout zeroes elements or doubles them (p = 0.5).
    let (hv, dv) = (h.to_f64_vec()?, dropped.to_f64_vec()?);
    assert!(hv.iter().zip(&dv).all(|(h, d)| *d == 0.0 || (d - 2.0 * h).abs() <= 1e-6 * h.abs().max(1.0)));
    let h = oxten::try_dropout(&h, 0.5, false)?;
    r("dropout", &h);
    let h = oxten::try_avg_pool2d_with(
        &h,
        &[3, 3],
        AvgPool2dOpts { stride: &[1, 1], padding: &[1, 1], ..Default::default() },
    )?;
    r("avgpool", &h);
    let h = oxten::try_adaptive_avg_pool2d(&h, &[2, 2])?;
    r("adaptive", &h);
    r("adaptive1", &oxten::try_adaptive_avg_pool2d(&h, &[1, 1])?);
    let h = h.try_flatten_with(1, FlattenOpts { end_dim: -1 })?;
    r("flatten", &h);
    let h = oxten::try_linear(&h, &p.wl, Some(&p.bl))?;
    r("linear", &h);
    Ok(h)
}

type Grads = Arc<Mutex<Vec<(String, Tensor)>>>;

/// Registers a hook on every intermediate on the loss's path; the returned list gets the
/// gradient flowing into each as backward computes it.
fn hook_grads(seen: &Record) -> Grads {
    let grads: Grads = Arc::default();
    for (name, t) in seen {
        if t.requires_grad() && name != "dropout_train" && name != "adaptive1" {
            let (g, name) = (grads.clone(), name.clone());
            t.register_hook(move |grad| {
                g.lock().unwrap().push((name.clone(), grad.clone()));
                Ok(None)
            })
            .unwrap();
        }
    }
    grads
}

/// The hooked gradients as `gradof_NAME`, in the forward order of `seen`.
fn grads_in_order(seen: &Record, grads: &Grads) -> Record {
    let grads = grads.lock().unwrap();
    seen.iter()
        .filter_map(|(name, _)| {
            grads.iter().find(|(n, _)| n == name).map(|(_, g)| (format!("gradof_{name}"), g.clone()))
        })
        .collect()
}

/// Runs the functional CNN (training forward, backward, evaluation forward) and returns the
/// records per run name (`RUN` and `RUN_eval`).
fn run_cnn(x_cl: bool, weights_cl: bool) -> (Record, Record) {
    let x = det(&[2, 4, 12, 12], 1, 1.0);
    let x = if x_cl { cl(&x) } else { x }.requires_grad_(true);
    let p = Params::new(weights_cl);
    let mut train = Vec::new();
    let out = cnn(&x, &p, true, &mut train).unwrap();
    let grads = hook_grads(&train);
    out.mul(&det(&[2, 10], 12, 1.0)).sum().backward();
    train.extend(grads_in_order(&train, &grads));
    train.push(("grad_x".into(), x.grad().expect("x.grad")));
    for (name, t) in p.grads() {
        train.push((name.into(), t.grad().unwrap_or_else(|| panic!("{name} missing"))));
    }
    train.push(("running_mean".into(), p.rm.clone()));
    train.push(("running_var".into(), p.rv.clone()));
    let mut eval = Vec::new();
    oxten::autograd::no_grad(|| cnn(&x, &p, false, &mut eval)).unwrap();
    (train, eval)
}

/// Checks `got` against PyTorch's steps for `run`: the same names in the same order, dtype,
/// sizes, exact strides (size-1 dims included) and, where recorded, values.
fn check(run: &str, got: &Record, failures: &mut Vec<String>) {
    let want = steps(run);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    let want_names: Vec<&str> = want.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, want_names, "{run}: recorded steps differ from the golden file");
    for ((name, t), s) in got.iter().zip(&want) {
        let what = format!("{run} {name}");
        if t.dtype() != s.dtype || t.sizes()[..] != s.sizes[..] {
            failures.push(format!("{what}: {} {:?}, PyTorch {} {:?}", t.dtype(), &t.sizes()[..], s.dtype, s.sizes));
            continue;
        }
        if t.strides()[..] != s.strides[..] {
            failures.push(format!("{what}: strides {:?}, PyTorch {:?}", &t.strides()[..], s.strides));
        }
        if let Some(vals) = &s.values {
            let got = t.to_f64_vec().unwrap();
            if let Some((j, (g, w))) =
                got.iter().zip(vals).enumerate().find(|(_, (g, w))| (*g - *w).abs() > 2e-5 + 2e-4 * w.abs())
            {
                failures.push(format!("{what}[{j}]: {g} vs PyTorch {w}"));
            }
        }
    }
}

/// Every 4-d intermediate of a channels_last run is channels_last-contiguous (no NCHW copy in
/// between), and its values match the NCHW run's.
fn check_against_nchw(run: &str, cl_run: &Record, nchw_run: &Record, failures: &mut Vec<String>) {
    for ((name, a), (_, b)) in cl_run.iter().zip(nchw_run) {
        // Parameter gradients follow the parameter's format, and a gradient coming back through
        // `flatten` is NCHW in PyTorch too: those are checked against PyTorch's in `check`.
        let activation = !name.starts_with("grad") || name == "grad_x";
        if a.dim() == 4 && activation && !a.is_contiguous_as(MemoryFormat::ChannelsLast) {
            failures.push(format!("{run} {name}: fell back to NCHW (strides {:?})", &a.strides()[..]));
        }
        if name == "dropout_train" {
            continue;
        }
        let (av, bv) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
        if let Some((j, (x, y))) =
            av.iter().zip(&bv).enumerate().find(|(_, (x, y))| (*x - *y).abs() > 1e-5 + 1e-4 * y.abs())
        {
            failures.push(format!("{run} {name}[{j}]: channels_last {x} vs NCHW {y}"));
        }
    }
}

fn report(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn functional_cnn_keeps_channels_last_and_matches_pytorch() {
    let mut failures = Vec::new();
    let (nchw, nchw_eval) = run_cnn(false, false);
    check("ops_nchw", &nchw, &mut failures);
    check("ops_nchw_eval", &nchw_eval, &mut failures);
    let (train, eval) = run_cnn(true, false);
    check("ops_cl", &train, &mut failures);
    check("ops_cl_eval", &eval, &mut failures);
    check_against_nchw("ops_cl", &train, &nchw, &mut failures);
    check_against_nchw("ops_cl_eval", &eval, &nchw_eval, &mut failures);
    report(failures);
}

#[test]
fn functional_cnn_with_channels_last_weights() {
    let mut failures = Vec::new();
    let (nchw, _) = run_cnn(false, false);
    let (train, eval) = run_cnn(true, true);
    check("ops_clw", &train, &mut failures);
    check("ops_clw_eval", &eval, &mut failures);
    check_against_nchw("ops_clw", &train, &nchw, &mut failures);
    // NCHW input with channels_last weights: PyTorch's convolution goes channels_last.
    let (train, eval) = run_cnn(false, true);
    check("ops_nchw_clw", &train, &mut failures);
    check("ops_nchw_clw_eval", &eval, &mut failures);
    report(failures);
}

fn nn_cnn() -> Sequential {
    let mut conv2 = Conv2d::build(6, 8, [3, 3], 2, true).stride(2).padding(1);
    conv2.groups = 2;
    Sequential::new()
        .add(Conv2d::new(4, 6, 3).padding(1))
        .add(BatchNorm2d::new(6))
        .add(ReLU)
        .add(MaxPool2d::new(2))
        .add(conv2)
        .add(BatchNorm2d::new(8))
        .add(ReLU)
        .add(AvgPool2d::new(2))
        .add(AdaptiveAvgPool2d::new(1, 1))
        .add(Flatten::default())
        .add(Linear::new(8, 10))
}

/// A train-mode forward and backward of `net` on `x`: the intermediates and the gradients.
fn train_nn(net: &mut Sequential, x: &Tensor) -> (Record, Record) {
    for p in net.parameters() {
        p.set_grad(None);
    }
    let x = x.detach().requires_grad_(true);
    let mut train = Vec::new();
    net.train();
    let out = net.forward_inspect(&x, |i, t| train.push((format!("layer{i}"), t.clone()))).unwrap();
    let hooked = hook_grads(&train);
    out.sum().backward();
    let params = net.named_parameters();
    let grad = |n: &str| params.iter().find(|(k, _)| k == n).unwrap().1.grad().unwrap();
    let mut grads = grads_in_order(&train, &hooked);
    grads.extend([
        ("grad_x".to_string(), x.grad().unwrap()),
        ("grad_conv0".to_string(), grad("0.weight")),
        ("grad_conv4".to_string(), grad("4.weight")),
        ("grad_linear".to_string(), grad("10.weight")),
    ]);
    (train, grads)
}

/// An eval-mode forward of `net` on `x`: the intermediates.
fn eval_nn(net: &mut Sequential, x: &Tensor) -> Record {
    net.eval();
    let mut eval = Vec::new();
    oxten::autograd::no_grad(|| net.forward_inspect(x, |i, t| eval.push((format!("layer{i}"), t.clone())))).unwrap();
    eval
}

#[test]
fn nn_module_cnn_keeps_channels_last() {
    let mut net = nn_cnn();
    let x = oxten::randn(&[2, 4, 16, 16]);
    let mut failures = Vec::new();
    let (train, grads) = train_nn(&mut net, &x);
    check("nn_nchw_train", &train, &mut failures);
    check("nn_nchw", &grads, &mut failures);
    let (cl_train, cl_grads) = train_nn(&mut net, &cl(&x));
    check("nn_cl_train", &cl_train, &mut failures);
    check("nn_cl", &cl_grads, &mut failures);
    check_against_nchw("nn_cl_train", &cl_train, &train, &mut failures);
    check_against_nchw("nn_cl", &cl_grads, &grads, &mut failures);
    // Both runs see the same running statistics.
    let eval = eval_nn(&mut net, &x);
    let cl_eval = eval_nn(&mut net, &cl(&x));
    check("nn_nchw_eval", &eval, &mut failures);
    check("nn_cl_eval", &cl_eval, &mut failures);
    check_against_nchw("nn_cl_eval", &cl_eval, &eval, &mut failures);
    report(failures);
}
