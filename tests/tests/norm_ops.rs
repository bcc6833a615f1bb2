//! Normalization operators: tests/golden/norm.txt (PyTorch's outputs, updated running
//! statistics, errors and second derivatives, recorded by scripts/golden_norm.py) replayed
//! through oxten, plus the properties the golden file cannot show: gradients taken with
//! create_graph (which record a history: the backward operators' own nodes, or group norm's
//! differentiable formulas) agree with the plain ones, large inputs (the parallel paths) agree
//! with a float64 reference, meta tensors get PyTorch's shapes, and reduced-precision
//! statistics stay accurate.

use oxten::autograd::{grad, grad_with, GradOpts};
use oxten::options::{ContiguousOpts, GroupNormOpts, LayerNormOpts};
use oxten::{DType, Device, MemoryFormat, Result, Tensor};
use oxten_tests::golden::{replay, replay_with, Case, ReplayOpts};

const GOLDEN: &str = include_str!("../golden/norm.txt");

/// `(x, weight, bias, running_mean, running_var)` from the inputs after `first`, following the
/// case's `w`, `b`, `stats` flags.
fn split(c: &Case, first: usize) -> (Tensor, Option<Tensor>, Option<Tensor>, Option<Tensor>, Option<Tensor>) {
    let mut i = first;
    let mut next = || {
        i += 1;
        c.t(i - 1).clone()
    };
    let x = next();
    let w = c.flag("w").then(&mut next);
    let b = c.flag("b").then(&mut next);
    let (rm, rv) = if c.flag("stats") { (Some(next()), Some(next())) } else { (None, None) };
    (x, w, b, rm, rv)
}

/// A copy of a 1-d tensor with its first element appended (the golden `grow` cases).
fn grown(t: &Tensor) -> Tensor {
    let mut v = t.to_f64_vec().unwrap();
    v.push(v[0]);
    let n = v.len() as i64;
    Tensor::from_vec(v, &[n]).unwrap().to_dtype(t.dtype())
}

fn mask(c: &Case) -> Vec<bool> {
    c.ints("mask").unwrap().iter().map(|&m| m != 0).collect()
}

fn masked(m: &[bool], (a, b, d): (Tensor, Tensor, Tensor)) -> Vec<Tensor> {
    [a, b, d].into_iter().zip(m).filter(|(_, &on)| on).map(|(t, _)| t).collect()
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let training = c.flag("training");
    let momentum = c.float("momentum").unwrap_or(0.1);
    let eps = c.float("eps").unwrap_or(1e-5);
    match c.op.as_str() {
        "native_batch_norm" => {
            let (x, w, b, rm, rv) = split(c, 0);
            let (y, sm, si) = oxten::try_native_batch_norm(
                &x,
                w.as_ref(),
                b.as_ref(),
                rm.as_ref(),
                rv.as_ref(),
                training,
                momentum,
                eps,
            )?;
            let mut outs = vec![y, sm, si];
            outs.extend(rm.into_iter().chain(rv));
            Ok(outs)
        }
        "batch_norm" => {
            let (x, mut w, mut b, mut rm, mut rv) = split(c, 0);
            match c.int("grow") {
                Some(1) => w = w.as_ref().map(grown),
                Some(2) => b = b.as_ref().map(grown),
                Some(3) => rm = rm.as_ref().map(grown),
                Some(4) => rv = rv.as_ref().map(grown),
                _ => {}
            }
            let y = oxten::try_batch_norm(
                &x,
                w.as_ref(),
                b.as_ref(),
                rm.as_ref(),
                rv.as_ref(),
                training,
                momentum,
                eps,
                false,
            )?;
            let mut outs = vec![y];
            outs.extend(rm.into_iter().chain(rv));
            Ok(outs)
        }
        "native_batch_norm_backward" => {
            let go = c.t(0);
            let (x, w, _, rm, rv) = split(c, 1);
            let (_, sm, si) =
                oxten::try_native_batch_norm(&x, w.as_ref(), None, rm.as_ref(), rv.as_ref(), training, 0.1, eps)?;
            let m = mask(c);
            let (sm, si) = if training { (Some(&sm), Some(&si)) } else { (None, None) };
            let r = oxten::try_native_batch_norm_backward(
                go,
                &x,
                w.as_ref(),
                rm.as_ref(),
                rv.as_ref(),
                sm,
                si,
                training,
                eps,
                &m,
            )?;
            Ok(masked(&m, r))
        }
        "native_layer_norm" => {
            let (x, w, b, _, _) = split(c, 0);
            let (y, mean, rstd) =
                oxten::try_native_layer_norm(&x, &c.ints("ns").unwrap(), w.as_ref(), b.as_ref(), eps)?;
            Ok(vec![y, mean, rstd])
        }
        "layer_norm" => {
            let (x, w, b, _, _) = split(c, 0);
            let opts = LayerNormOpts { eps, cudnn_enable: true };
            Ok(vec![oxten::try_layer_norm_with(&x, &c.ints("ns").unwrap(), w.as_ref(), b.as_ref(), opts)?])
        }
        "native_layer_norm_backward" => {
            let go = c.t(0);
            let (x, w, b, _, _) = split(c, 1);
            let ns = c.ints("ns").unwrap();
            let (_, mean, rstd) = oxten::try_native_layer_norm(&x, &ns, w.as_ref(), b.as_ref(), eps)?;
            let m = mask(c);
            let (gi, gw, gb) =
                oxten::try_native_layer_norm_backward(go, &x, &ns, &mean, &rstd, w.as_ref(), b.as_ref(), &m)?;
            // Mixed types: compared at the input's precision (see scripts/golden_norm.py).
            let (gw, gb) = match w.as_ref() {
                Some(w) if w.dtype() != x.dtype() => (gw.try_to_dtype(x.dtype())?, gb.try_to_dtype(x.dtype())?),
                _ => (gw, gb),
            };
            Ok(masked(&m, (gi, gw, gb)))
        }
        "native_group_norm" => {
            let (x, w, b, _, _) = split(c, 0);
            let (n, ch, hxw, g) =
                (c.int("N").unwrap(), c.int("C").unwrap(), c.int("HxW").unwrap(), c.int("group").unwrap());
            let (y, mean, rstd) = oxten::try_native_group_norm(&x, w.as_ref(), b.as_ref(), n, ch, hxw, g, eps)?;
            Ok(vec![y, mean, rstd])
        }
        "group_norm" | "group_norm_f" => {
            let (x, w, b, _, _) = split(c, 0);
            let opts = GroupNormOpts { eps, cudnn_enabled: true };
            Ok(vec![oxten::try_group_norm_with(&x, c.int("group").unwrap(), w.as_ref(), b.as_ref(), opts)?])
        }
        "native_group_norm_backward" => {
            let go = c.t(0);
            let x = c.t(1);
            let w = c.flag("w").then(|| c.t(2).clone());
            let (n, ch, hxw, g) =
                (c.int("N").unwrap(), c.int("C").unwrap(), c.int("HxW").unwrap(), c.int("group").unwrap());
            let (_, mean, rstd) = oxten::try_native_group_norm(x, w.as_ref(), None, n, ch, hxw, g, eps)?;
            let m = mask(c);
            let r = oxten::try_native_group_norm_backward(go, x, &mean, &rstd, w.as_ref(), n, ch, hxw, g, &m)?;
            Ok(masked(&m, r))
        }
        "norm_grad2" => norm_grad2(c),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

/// A `norm_grad2` case (see scripts/golden_norm.py): the gradients of `sum(gx²)` (plus
/// `sum(gw²) + sum(gb²)` with `pen`) with respect to `x`, the weight and the output gradient `v`,
/// where `gx, gw, gb` are the create_graph gradients of the normalization's output for `v`.
fn norm_grad2(c: &Case) -> Result<Vec<Tensor>> {
    let eps = c.float("eps").unwrap();
    let v = c.t(0).detach().requires_grad_(true);
    let (x, w, b, rm, rv) = split(c, 1);
    let (x, w, b) = (
        x.detach().requires_grad_(true),
        w.map(|w| w.detach().requires_grad_(true)),
        b.map(|b| b.detach().requires_grad_(true)),
    );
    let params: Vec<Tensor> = [Some(x.clone()), w.clone(), b.clone()].into_iter().flatten().collect();
    let kind = c.attr("kind").unwrap();
    let gs: Vec<Tensor> = if kind == "gn" && c.attr("via") == Some("bwd") {
        // The backward operator itself, with detached statistics (its formula accounts for
        // their dependence on the input).
        let (n, ch, hxw, g) =
            (c.int("N").unwrap(), c.int("C").unwrap(), c.int("HxW").unwrap(), c.int("group").unwrap());
        let (_, mean, rstd) = oxten::try_native_group_norm(&x, w.as_ref(), b.as_ref(), n, ch, hxw, g, eps)?;
        let m = [true, w.is_some(), b.is_some()];
        let r = oxten::try_native_group_norm_backward(
            &v,
            &x,
            &mean.detach(),
            &rstd.detach(),
            w.as_ref(),
            n,
            ch,
            hxw,
            g,
            &m,
        )?;
        masked(&m, r)
    } else {
        let y = match kind {
            "bn" => {
                let training = c.flag("training");
                oxten::try_native_batch_norm(&x, w.as_ref(), b.as_ref(), rm.as_ref(), rv.as_ref(), training, 0.1, eps)?
                    .0
            }
            "ln" => oxten::try_native_layer_norm(&x, &c.ints("ns").unwrap(), w.as_ref(), b.as_ref(), eps)?.0,
            _ => {
                let (n, ch, hxw, g) =
                    (c.int("N").unwrap(), c.int("C").unwrap(), c.int("HxW").unwrap(), c.int("group").unwrap());
                oxten::try_native_group_norm(&x, w.as_ref(), b.as_ref(), n, ch, hxw, g, eps)?.0
            }
        };
        grad_with(
            &[y],
            &params,
            GradOpts {
                grad_outputs: vec![Some(v.clone())],
                retain_graph: Some(true),
                create_graph: true,
                ..Default::default()
            },
        )?
        .into_iter()
        .map(Option::unwrap)
        .collect()
    };
    let mut loss = gs[0].try_pow_tensor_scalar(2)?.try_sum()?;
    if c.flag("pen") {
        for g in &gs[1..] {
            loss = loss.try_add(&g.try_pow_tensor_scalar(2)?.try_sum()?)?;
        }
    }
    let wrt: Vec<Tensor> = [Some(x.clone()), w, Some(v)].into_iter().flatten().collect();
    let outs = grad_with(&[loss], &wrt, GradOpts { allow_unused: true, ..Default::default() })?;
    outs.into_iter()
        .zip(&wrt)
        .map(|(g, t)| match g {
            Some(g) => g.try_contiguous(),
            None => oxten::try_zeros_like(t),
        })
        .collect()
}

/// The golden file's header and the cases whose op passes `keep`.
fn cases_where(keep: impl Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut on = true;
    for line in GOLDEN.lines() {
        if let Some(rest) = line.strip_prefix("case ") {
            on = keep(rest.split_whitespace().nth(1).unwrap_or(""));
        }
        if on || line.starts_with('#') {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn norm_ops_match_pytorch() {
    replay(&cases_where(|op| op != "norm_grad2"), 190, run);
}

/// Second derivatives through each normalization. In float32 they come out of differently
/// ordered cancelling sums in PyTorch and oxten, so they are compared at a looser tolerance.
#[test]
fn second_derivatives_match_pytorch() {
    let tolerance = |d: DType| if d == DType::F32 { (1e-4, 2e-5) } else { oxten_tests::golden::tolerance(d) };
    let opts = ReplayOpts { min_cases: 32, tolerance, ..Default::default() };
    replay_with(&cases_where(|op| op == "norm_grad2"), opts, run);
}

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

/// Deterministic values in [-2, 2) (an LCG), offset by `shift`.
fn values(n: usize, seed: u64, shift: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0 + shift
        })
        .collect()
}

fn tensor(shape: &[i64], seed: u64, dtype: DType) -> Tensor {
    let n = shape.iter().product::<i64>() as usize;
    Tensor::from_vec(values(n, seed, 0.0), shape).unwrap().to_dtype(dtype)
}

fn channels_last(t: &Tensor) -> Tensor {
    t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast })
}

fn assert_close(what: &str, a: &Tensor, b: &Tensor, tol: f64) {
    assert_eq!(a.sizes(), b.sizes(), "{what}: sizes");
    let (a, b) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}[{i}]: {x} vs {y}");
    }
}

/// Gradients of `sum(f(inputs) * weights)` with respect to `inputs`, with or without
/// `create_graph`.
fn grads(f: &dyn Fn(&[Tensor]) -> Tensor, inputs: &[Tensor], create_graph: bool) -> Vec<Tensor> {
    let out = f(inputs);
    let w = tensor(&out.sizes(), 99, out.dtype());
    let loss = out.mul(&w).sum();
    let g =
        grad_with(&[loss], inputs, GradOpts { retain_graph: Some(true), create_graph, ..Default::default() }).unwrap();
    g.into_iter().map(|g| g.unwrap()).collect()
}

/// Gradients with and without create_graph agree, and the create_graph ones have a history.
fn kernel_and_composite_agree(what: &str, f: &dyn Fn(&[Tensor]) -> Tensor, inputs: &[Tensor]) {
    let fused = grads(f, inputs, false);
    let composite = grads(f, inputs, true);
    assert!(composite[0].requires_grad(), "{what}: the create_graph input gradient has no history");
    for (i, (a, b)) in fused.iter().zip(&composite).enumerate() {
        assert_close(&format!("{what} grad {i}"), a, b, 1e-10);
    }
}

fn leaf(shape: &[i64], seed: u64) -> Tensor {
    tensor(shape, seed, DType::F64).requires_grad_(true)
}

// ---------------------------------------------------------------------------------------------
// autograd
// ---------------------------------------------------------------------------------------------

#[test]
fn create_graph_gradients_match_the_kernels() {
    let bn = |training: bool| {
        move |x: &[Tensor]| {
            let rm = Tensor::from_vec(vec![0.1f64, -0.2, 0.3], &[3]).unwrap();
            let rv = Tensor::from_vec(vec![0.5f64, 1.5, 2.0], &[3]).unwrap();
            oxten::native_batch_norm(&x[0], Some(&x[1]), Some(&x[2]), Some(&rm), Some(&rv), training, 0.1, 1e-5).0
        }
    };
    let inputs = [leaf(&[4, 3, 2, 5], 1), leaf(&[3], 2), leaf(&[3], 3)];
    kernel_and_composite_agree("batch norm training", &bn(true), &inputs);
    kernel_and_composite_agree("batch norm eval", &bn(false), &inputs);
    let cl = [channels_last(&tensor(&[4, 3, 2, 5], 4, DType::F64)).requires_grad_(true), leaf(&[3], 2), leaf(&[3], 3)];
    kernel_and_composite_agree("batch norm channels_last", &bn(true), &cl);
    let ln = |x: &[Tensor]| oxten::native_layer_norm(&x[0], &[2, 5], Some(&x[1]), Some(&x[2]), 1e-5).0;
    kernel_and_composite_agree("layer norm", &ln, &[leaf(&[3, 2, 5], 5), leaf(&[2, 5], 6), leaf(&[2, 5], 7)]);
    let gn = |x: &[Tensor]| oxten::native_group_norm(&x[0], Some(&x[1]), Some(&x[2]), 2, 6, 4, 3, 1e-5).0;
    kernel_and_composite_agree("group norm", &gn, &[leaf(&[2, 6, 2, 2], 8), leaf(&[6], 9), leaf(&[6], 10)]);
    let gn_cl =
        [channels_last(&tensor(&[2, 6, 2, 2], 8, DType::F64)).requires_grad_(true), leaf(&[6], 9), leaf(&[6], 10)];
    kernel_and_composite_agree("group norm channels_last", &gn, &gn_cl);
    // Gradients reaching group norm's mean and rstd outputs, with and without create_graph.
    let gn_stats = |x: &[Tensor]| {
        let (y, mean, rstd) = oxten::native_group_norm(&x[0], Some(&x[1]), None, 2, 6, 4, 3, 1e-5);
        y.sum().add(&mean.mul_scalar(3.0).sum()).add(&rstd.mul_scalar(-2.0).sum()).reshape(&[1])
    };
    kernel_and_composite_agree("group norm statistics", &gn_stats, &[leaf(&[2, 6, 2, 2], 11), leaf(&[6], 12)]);
}

#[test]
fn statistics_outputs_follow_pytorch_differentiability() {
    let x = leaf(&[4, 3], 1);
    let (y, m, r) = oxten::native_batch_norm(&x, None, None, None, None, true, 0.1, 1e-5);
    assert!(y.requires_grad() && !m.requires_grad() && !r.requires_grad());
    let (y, m, r) = oxten::native_layer_norm(&x, &[3], None, None, 1e-5);
    assert!(y.requires_grad() && !m.requires_grad() && !r.requires_grad());
    let (y, m, r) = oxten::native_group_norm(&x, None, None, 4, 3, 1, 3, 1e-5);
    assert!(y.requires_grad() && m.requires_grad() && r.requires_grad());
}

#[test]
fn backward_ops_return_empty_tensors_for_masked_outputs() {
    let x = tensor(&[4, 3], 1, DType::F32);
    let (_, sm, si) = oxten::native_batch_norm(&x, None, None, None, None, true, 0.1, 1e-5);
    let (gi, gw, gb) = oxten::native_batch_norm_backward(
        &x,
        &x,
        None,
        None,
        None,
        Some(&sm),
        Some(&si),
        true,
        1e-5,
        &[true, false, false],
    );
    assert_eq!(&gi.sizes()[..], &[4, 3]);
    assert_eq!((&gw.sizes()[..], &gb.sizes()[..]), (&[0i64][..], &[0i64][..]));
}

// ---------------------------------------------------------------------------------------------
// large inputs, reference values
// ---------------------------------------------------------------------------------------------

/// Batch norm of `x` from differentiable operators in float64: `(y, mean, invstd)`.
fn batch_norm_reference(x: &Tensor) -> (Tensor, Tensor, Tensor) {
    let x = x.to_dtype(DType::F64);
    let dims: Vec<i64> = std::iter::once(0).chain(2..x.dim() as i64).collect();
    let mean = x.mean_dim(Some(&dims), true);
    let xc = x.sub(&mean);
    let var = xc.mul(&xc).mean_dim(Some(&dims), true);
    let invstd = var.add_scalar(1e-5).rsqrt();
    let c = x.sizes()[1];
    (xc.mul(&invstd), mean.reshape(&[c]), invstd.reshape(&[c]))
}

#[test]
fn large_batch_norm_matches_a_float64_reference() {
    for (shape, cl) in [(vec![8i64, 16, 24, 24], false), (vec![8, 16, 24, 24], true), (vec![4096, 24], false)] {
        let mut x = tensor(&shape, 3, DType::F32).add_scalar(5.0);
        if cl {
            x = channels_last(&x);
        }
        let rm = oxten::zeros(&[shape[1]]);
        let rv = oxten::ones(&[shape[1]]);
        let (y, sm, si) = oxten::native_batch_norm(&x, None, None, Some(&rm), Some(&rv), true, 0.1, 1e-5);
        assert_eq!(y.is_contiguous_as(MemoryFormat::ChannelsLast), cl && shape.len() == 4);
        let (ry, rmean, rinv) = batch_norm_reference(&x);
        assert_close("y", &y, &ry, 2e-5);
        assert_close("save_mean", &sm, &rmean, 1e-6);
        assert_close("save_invstd", &si, &rinv, 1e-5);
        let count = (x.numel() / shape[1]) as f64;
        let expect_rv =
            rinv.pow_tensor_scalar(-2).add_scalar(-1e-5).mul_scalar(0.1 * count / (count - 1.0)).add_scalar(0.9);
        assert_close("running_mean", &rm, &rmean.mul_scalar(0.1), 1e-6);
        assert_close("running_var", &rv, &expect_rv, 1e-5);
    }
}

#[test]
fn large_layer_and_group_norm_match_float64() {
    let x = tensor(&[64, 1024], 5, DType::F32).add_scalar(3.0);
    let (y, mean, rstd) = oxten::native_layer_norm(&x, &[1024], None, None, 1e-5);
    let (y64, mean64, rstd64) = oxten::native_layer_norm(&x.to_dtype(DType::F64), &[1024], None, None, 1e-5);
    assert_close("layer norm y", &y, &y64, 2e-5);
    assert_close("layer norm mean", &mean, &mean64, 1e-6);
    assert_close("layer norm rstd", &rstd, &rstd64, 1e-5);
    for cl in [false, true] {
        let mut x = tensor(&[4, 32, 32, 32], 6, DType::F32).add_scalar(-4.0);
        if cl {
            x = channels_last(&x);
        }
        let (y, mean, rstd) = oxten::native_group_norm(&x, None, None, 4, 32, 1024, 8, 1e-5);
        let (y64, mean64, rstd64) = oxten::native_group_norm(&x.to_dtype(DType::F64), None, None, 4, 32, 1024, 8, 1e-5);
        assert_eq!(y.is_contiguous_as(MemoryFormat::ChannelsLast), cl);
        assert_close("group norm y", &y, &y64, 2e-5);
        assert_close("group norm mean", &mean, &mean64, 1e-6);
        assert_close("group norm rstd", &rstd, &rstd64, 1e-5);
    }
}

#[test]
fn reduced_precision_statistics_accumulate_in_f32() {
    // 2^17 bf16 values around 10: a bf16 accumulator would stall long before the end.
    let x = Tensor::from_vec(values(1 << 17, 9, 10.0), &[1 << 17, 1]).unwrap();
    let xb = x.to_dtype(DType::BF16);
    let (_, mean, _) = oxten::native_batch_norm(&xb, None, None, None, None, true, 0.1, 1e-5);
    let (_, mean64, _) = oxten::native_batch_norm(&xb.to_dtype(DType::F64), None, None, None, None, true, 0.1, 1e-5);
    assert_eq!(mean.dtype(), DType::BF16);
    assert_close("bf16 mean", &mean, &mean64, 4e-3);
}

// ---------------------------------------------------------------------------------------------
// meta tensors
// ---------------------------------------------------------------------------------------------

#[test]
fn meta_tensors_get_pytorch_shapes() {
    let meta = |shape: &[i64], format: MemoryFormat| Tensor::empty(shape, DType::BF16, Device::Meta, format).unwrap();
    let w = Tensor::empty(&[3], DType::F32, Device::Meta, MemoryFormat::Contiguous).unwrap();
    let x = meta(&[2, 3, 4, 5], MemoryFormat::ChannelsLast);
    let (y, sm, si) = oxten::native_batch_norm(&x, Some(&w), None, None, None, true, 0.1, 1e-5);
    assert!(y.is_meta() && y.is_contiguous_as(MemoryFormat::ChannelsLast));
    assert_eq!((&sm.sizes()[..], sm.dtype(), si.dtype()), (&[3i64][..], DType::F32, DType::F32));
    let (y, mean, _) = oxten::native_layer_norm(&x, &[4, 5], None, None, 1e-5);
    assert!(y.is_contiguous());
    assert_eq!(&mean.sizes()[..], &[2, 3, 1, 1]);
    let (y, mean, _) = oxten::native_group_norm(&x, None, None, 2, 3, 20, 3, 1e-5);
    assert!(y.is_contiguous_as(MemoryFormat::ChannelsLast));
    assert_eq!((&mean.sizes()[..], mean.dtype()), (&[2i64, 3][..], DType::BF16));
}

// ---------------------------------------------------------------------------------------------
// composites
// ---------------------------------------------------------------------------------------------

#[test]
fn composites_record_history_and_update_running_stats() {
    let x = leaf(&[4, 3, 5], 1);
    let w = leaf(&[3], 2);
    let rm = Tensor::from_vec(vec![0.0f64; 3], &[3]).unwrap();
    let rv = Tensor::from_vec(vec![1.0f64; 3], &[3]).unwrap();
    let version = rm.version();
    let y = oxten::batch_norm(&x, Some(&w), None, Some(&rm), Some(&rv), true, 0.1, 1e-5, true);
    // As in PyTorch, the kernel updates the running statistics without a version bump (so a
    // graph that saved them stays usable).
    assert_eq!(rm.version(), version);
    assert!(rm.to_vec::<f64>().unwrap().iter().any(|&m| m != 0.0));
    let (y_native, _, _) = oxten::native_batch_norm(&x, Some(&w), None, None, None, true, 0.1, 1e-5);
    assert_close("batch_norm", &y, &y_native, 1e-12);
    let loss = y
        .mul(&y)
        .sum()
        .add(&oxten::layer_norm(&x, &[5], None, None).exp().sum())
        .add(&oxten::group_norm(&x, 3, None, None).sin().sum());
    let g = grad(&[loss], &[&x, &w]).unwrap();
    assert!(g.iter().all(Option::is_some));
}
