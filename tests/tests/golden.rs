//! Replays tests/golden/core_ops.txt — PyTorch's outputs (values, dtype, shape, strides) and error
//! messages for the core operators, recorded by scripts/golden.py — through oxten.

use oxten::options::{ClampOpts, GeluOpts, SumDimIntlistOpts};
use oxten::{Result, Scalar, Tensor};
use oxten_tests::golden::{replay, scalar_attr, Case};

const GOLDEN: &str = include_str!("../golden/core_ops.txt");

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| c.t(i);
    let s = |i: usize| c.s(i);
    let attr = |k: &str| c.attr(k);
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
            one(t(0).try_sum_dim_intlist_with(d.as_deref(), keepdim, SumDimIntlistOpts { dtype: None }))
        }
        "mean_dim" => {
            let d = dim_list();
            one(t(0).try_mean_dim_with(d.as_deref(), keepdim, oxten::options::MeanDimOpts { dtype: None }))
        }
        "amax" => one(t(0).try_amax(&dim_list().unwrap(), keepdim)),
        "amin" => one(t(0).try_amin_with(oxten::options::AminOpts { dim: &dim_list().unwrap(), keepdim })),
        "max_dim" => {
            let (v, i) = t(0).try_max_dim(dim_list().unwrap()[0], keepdim)?;
            Ok(vec![v, i])
        }
        "argmax" => one(t(0).try_argmax(dim_list().map(|d| d[0]), keepdim)),
        "mm" => one(t(0).try_mm(t(1))),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn core_ops_match_pytorch() {
    replay(GOLDEN, 300, run);
}
