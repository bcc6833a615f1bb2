//! Replays tests/golden/edge_cases.txt (scripts/golden_edge_cases.py): PyTorch 2.15's answers
//! where oxten once panicked or differed — reductions over size-0 dimensions and their
//! gradients, clamp / maximum / minimum gradients at the bounds, ties and NaN, prod's gradient
//! with infinities and zeros, integer silu, layer norm of a constant row.

use oxten::options::ClampOpts;
use oxten::{ops, Result, Scalar, Tensor};
use oxten_tests::golden::{replay_with, Case, ReplayOpts};

const GOLDEN: &str = include_str!("../golden/edge_cases.txt");

/// The gradients of `sum(f(inputs))` with respect to every input.
fn grads(c: &Case, f: &dyn Fn(&[Tensor]) -> Result<Tensor>) -> Result<Vec<Tensor>> {
    let ins: Vec<Tensor> = (0..c.args.len()).map(|i| c.t(i).deep_clone().requires_grad_(true)).collect();
    f(&ins)?.try_sum()?.try_backward()?;
    Ok(ins.iter().map(|x| x.grad().unwrap_or_else(|| oxten::zeros_like(x))).collect())
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let dim = || c.int("dim").expect("a dim");
    let one = |t: Result<Tensor>| t.map(|t| vec![t]);
    let scalar = |k: &str| c.float(k).map(Scalar::Float);
    let clamp = |x: &Tensor| x.try_clamp_with(ClampOpts { min: scalar("min"), max: scalar("max") });
    match c.op.as_str() {
        "sum_dim" => one(ops::sum_dim_intlist::call(c.t(0), Some(&[dim()]), false, None)),
        "mean_dim" => one(ops::mean_dim::call(c.t(0), Some(&[dim()]), false, None)),
        "logsumexp" => one(c.t(0).try_logsumexp(&[dim()], false)),
        "amax" => one(c.t(0).try_amax(&[dim()], false)),
        "var_dim" => one(ops::var_correction::call(c.t(0), Some(&[dim()]), None, false)),
        "sum_dim_grad" => grads(c, &|x| ops::sum_dim_intlist::call(&x[0], Some(&[dim()]), false, None)),
        "mean_dim_grad" => grads(c, &|x| ops::mean_dim::call(&x[0], Some(&[dim()]), false, None)),
        "logsumexp_grad" => grads(c, &|x| x[0].try_logsumexp(&[dim()], false)),
        "amax_grad" => grads(c, &|x| x[0].try_amax(&[dim()], false)),
        "amin_grad" => grads(c, &|x| ops::amin::call(&x[0], &[dim()], false)),
        "var_dim_grad" => grads(c, &|x| ops::var_correction::call(&x[0], Some(&[dim()]), None, false)),
        "expand_grad" => grads(c, &|x| x[0].try_expand(&[2, 0, 3])),
        "clamp_grad" => grads(c, &|x| clamp(&x[0])),
        "maximum_grad" => grads(c, &|x| x[0].try_maximum(&x[1])),
        "minimum_grad" => grads(c, &|x| x[0].try_minimum(&x[1])),
        "prod_dim_grad" => grads(c, &|x| ops::prod_dim_int::call(&x[0], dim(), false, None)),
        "prod_grad" => grads(c, &|x| ops::prod::call(&x[0], None)),
        "silu" => one(c.t(0).try_silu()),
        "layer_norm" => one(ops::layer_norm::call(c.t(0), &[5], None, None, 1e-5, true)),
        other => panic!("case at line {}: no runner for {other}", c.line),
    }
}

#[test]
fn edge_cases_match_pytorch() {
    replay_with(GOLDEN, ReplayOpts { min_cases: 33, strides: false, ..Default::default() }, run);
}
