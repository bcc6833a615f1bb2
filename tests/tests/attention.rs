//! `scaled_dot_product_attention`: PyTorch's outputs and gradients (tests/golden/attention.txt,
//! from scripts/golden_attention.py) through oxten's composite (the fused CPU kernel where it
//! applies), the fused kernel against the math decomposition on sizes spanning several blocks,
//! the math path's cases (dropout, a mask that needs a gradient), meta tensors and errors.

use oxten::autograd::grad;
use oxten::options::{EmptyOpts, ScaledDotProductAttentionOpts};
use oxten::{DType, Device, Result, Tensor};
use oxten_tests::golden::{replay_with, tolerance, Case, ReplayOpts};

const GOLDEN: &str = include_str!("../golden/attention.txt");

fn opts<'a>(c: &Case, mask: Option<&'a Tensor>) -> ScaledDotProductAttentionOpts<'a> {
    ScaledDotProductAttentionOpts {
        attn_mask: mask,
        is_causal: c.flag("is_causal"),
        scale: c.float("scale"),
        enable_gqa: c.flag("enable_gqa"),
        ..Default::default()
    }
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let mask = if c.attr("mask") == Some("none") { None } else { Some(c.t(3)) };
    let (q, k, v) = (c.t(0), c.t(1), c.t(2));
    match c.op.as_str() {
        "sdpa" => Ok(vec![oxten::try_scaled_dot_product_attention_with(q, k, v, opts(c, mask))?]),
        "sdpa_grad" => {
            let go = c.t(c.args.len() - 1);
            let (q, k, v) =
                (q.detach().requires_grad_(true), k.detach().requires_grad_(true), v.detach().requires_grad_(true));
            let out = oxten::try_scaled_dot_product_attention_with(&q, &k, &v, opts(c, mask))?;
            let g = oxten::autograd::grad_with(
                &[&out],
                &[&q, &k, &v],
                oxten::autograd::GradOpts { grad_outputs: vec![Some(go.clone())], ..Default::default() },
            )?;
            let g: Vec<Tensor> = g.into_iter().map(|t| t.expect("every input is used")).collect();
            Ok(vec![out.detach(), g[0].clone(), g[1].clone(), g[2].clone()])
        }
        other => panic!("unknown op {other}"),
    }
}

/// The fused kernel sums in another order than PyTorch's; f32 differs in the last bits.
fn tol(d: DType) -> (f64, f64) {
    match d {
        DType::F32 => (2e-5, 2e-5),
        DType::F64 => (1e-10, 1e-10),
        other => tolerance(other),
    }
}

#[test]
fn matches_pytorch() {
    // Gradient strides are PyTorch's internal choice per path (its fused backward returns
    // transposed buffers); oxten's are contiguous.
    replay_with(GOLDEN, ReplayOpts { min_cases: 22, strides: false, tolerance: tol }, run);
}

fn randn(shape: &[i64], seed: u64) -> Tensor {
    let g = oxten::Generator::with_seed(seed);
    oxten::randn_generator(shape, Some(&g))
}

fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    let (a, b) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// `f`'s output for fresh leaves of `q`, `k`, `v`, and their gradients for the output gradient `go`.
fn with_grads(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    go: &Tensor,
    f: impl Fn(&Tensor, &Tensor, &Tensor) -> Tensor,
) -> Vec<Tensor> {
    let (q, k, v) = (q.detach().requires_grad_(true), k.detach().requires_grad_(true), v.detach().requires_grad_(true));
    let out = f(&q, &k, &v);
    let opts = oxten::autograd::GradOpts { grad_outputs: vec![Some(go.clone())], ..Default::default() };
    let g = oxten::autograd::grad_with(&[&out], &[&q, &k, &v], opts).unwrap();
    let mut r = vec![out.detach()];
    r.extend(g.into_iter().map(Option::unwrap));
    r
}

/// The math decomposition's output and input gradients.
fn math(q: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>, causal: bool, go: &Tensor) -> Vec<Tensor> {
    with_grads(q, k, v, go, |q, k, v| {
        let o = oxten::options::ScaledDotProductAttentionMathOpts {
            attn_mask: mask,
            is_causal: causal,
            ..Default::default()
        };
        oxten::_scaled_dot_product_attention_math_with(q, k, v, o).0
    })
}

/// The fused kernel's output and input gradients.
fn fused(q: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>, causal: bool, go: &Tensor) -> Vec<Tensor> {
    with_grads(q, k, v, go, |q, k, v| {
        let o = oxten::options::ScaledDotProductFlashAttentionForCpuOpts {
            attn_mask: mask,
            is_causal: causal,
            ..Default::default()
        };
        let (out, lse) = oxten::_scaled_dot_product_flash_attention_for_cpu_with(q, k, v, o);
        assert_eq!(lse.sizes()[..], q.sizes()[..3]);
        out
    })
}

#[test]
fn fused_kernel_agrees_with_the_math_path_across_blocks() {
    // 200 queries and 300 keys: several blocks of each, a partial last block, causal and masked.
    let (q, k, v) = (randn(&[2, 2, 200, 16], 1), randn(&[2, 2, 300, 16], 2), randn(&[2, 2, 300, 24], 3));
    let go = randn(&[2, 2, 200, 24], 4);
    let float_mask = randn(&[2, 1, 200, 300], 5);
    let bool_mask = randn(&[200, 300], 6).gt_scalar(-1.0);
    for (mask, causal) in [(None, false), (None, true), (Some(&float_mask), false), (Some(&bool_mask), false)] {
        let (a, b) = (fused(&q, &k, &v, mask, causal, &go), math(&q, &k, &v, mask, causal, &go));
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let d = max_diff(x, y);
            assert!(d < 2e-5, "causal={causal}, mask={}: output {i} differs by {d}", mask.is_some());
        }
    }
    // f64 agrees to rounding.
    let f = |t: &Tensor| t.to_dtype(DType::F64);
    let (a, b) =
        (fused(&f(&q), &f(&k), &f(&v), None, true, &f(&go)), math(&f(&q), &f(&k), &f(&v), None, true, &f(&go)));
    for (x, y) in a.iter().zip(&b) {
        assert!(max_diff(x, y) < 1e-12);
    }
}

#[test]
fn the_composite_takes_the_math_path_when_it_must() {
    let (q, k, v) = (randn(&[1, 2, 5, 4], 7), randn(&[1, 2, 6, 4], 8), randn(&[1, 2, 6, 4], 9));
    // A float mask that needs a gradient: only the math path gives one.
    let mask = randn(&[5, 6], 10).requires_grad_(true);
    let out = oxten::scaled_dot_product_attention_with(
        &q,
        &k,
        &v,
        ScaledDotProductAttentionOpts { attn_mask: Some(&mask), ..Default::default() },
    );
    let g = grad(&[&out.sum()], &[&mask]).unwrap()[0].clone().unwrap();
    assert_eq!(g.sizes(), [5, 6]);
    assert!(g.abs().sum().item::<f32>().unwrap() > 0.0);
    // Dropout: seeded, and p = 1 drops everything.
    let drop = |p: f64, seed: u64| {
        oxten::manual_seed(seed);
        oxten::scaled_dot_product_attention_with(
            &q,
            &k,
            &v,
            ScaledDotProductAttentionOpts { dropout_p: p, ..Default::default() },
        )
    };
    assert_eq!(drop(0.5, 3).to_vec::<f32>().unwrap(), drop(0.5, 3).to_vec::<f32>().unwrap());
    assert_ne!(drop(0.5, 3).to_vec::<f32>().unwrap(), drop(0.5, 4).to_vec::<f32>().unwrap());
    assert!(drop(1.0, 3).to_vec::<f32>().unwrap().iter().all(|&x| x == 0.0));
    // 3-d inputs (no heads) go through the math path with the same result as 4-d ones.
    let out3 = oxten::scaled_dot_product_attention(&q.select(0, 0), &k.select(0, 0), &v.select(0, 0));
    let out4 = oxten::scaled_dot_product_attention(&q, &k, &v);
    assert!(max_diff(&out3, &out4.select(0, 0)) < 1e-6);
}

#[test]
fn meta_tensors_and_errors() {
    let meta = |s: &[i64]| oxten::empty_with(s, EmptyOpts { device: Some(Device::Meta), ..Default::default() });
    let out = oxten::scaled_dot_product_attention(&meta(&[2, 4, 7, 8]), &meta(&[2, 4, 9, 8]), &meta(&[2, 4, 9, 5]));
    assert_eq!((out.sizes().to_vec(), out.device()), (vec![2, 4, 7, 5], Device::Meta));
    let (q, k) = (randn(&[1, 2, 3, 4], 1), randn(&[1, 2, 5, 4], 2));
    let e = oxten::try_scaled_dot_product_attention(&q, &k, &randn(&[1, 2, 6, 4], 3)).unwrap_err().to_string();
    assert!(e.contains("scaled_dot_product_attention"), "{e}");
    let gqa = ScaledDotProductAttentionOpts { enable_gqa: true, ..Default::default() };
    let e = oxten::try_scaled_dot_product_attention_with(&randn(&[1, 3, 3, 4], 1), &k, &randn(&[1, 2, 5, 4], 3), gqa)
        .unwrap_err()
        .to_string();
    assert!(e.contains("multiple of the key's and value's (2)"), "{e}");
}
