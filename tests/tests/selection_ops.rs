//! Replays tests/golden/selection.txt — PyTorch's outputs and error messages for `nonzero`,
//! `masked_select`, `repeat_interleave`, `one_hot`, `bincount`, `histc`, `searchsorted`,
//! `bucketize` and `unique` (`_unique2`), recorded by scripts/golden_selection.py — plus the
//! gradients of the differentiable composites.

use oxten::ops;
use oxten::{Result, Scalar, Tensor};
use oxten_tests::golden::{replay, scalar_attr, Case};

const GOLDEN: &str = include_str!("../golden/selection.txt");

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| c.t(i);
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let right = c.flag("right");
    let out_int32 = c.flag("out_int32");
    let scalar = |k: &str| c.attr(k).map(scalar_attr).unwrap();
    match c.op.as_str() {
        "nonzero" => one(ops::nonzero::call(t(0))),
        "masked_select" => one(ops::masked_select::call(t(0), t(1))),
        "repeat_interleave" => one(ops::repeat_interleave::call(t(0), None)),
        "repeat_interleave_int" => {
            one(ops::repeat_interleave_self_int::call(t(0), c.int("repeats").unwrap(), c.int("dim"), None))
        }
        "repeat_interleave_self" => one(ops::repeat_interleave_self_tensor::call(t(0), t(1), c.int("dim"), None)),
        "one_hot" => one(ops::one_hot::call(t(0), c.int("num_classes").unwrap_or(-1))),
        "bincount" => one(ops::bincount::call(t(0), c.flag("weights").then(|| t(1)), c.int("minlength").unwrap_or(0))),
        "histc" => one(ops::histc::call(
            t(0),
            c.int("bins").unwrap_or(100),
            c.scalar("min").unwrap_or(Scalar::Int(0)),
            c.scalar("max").unwrap_or(Scalar::Int(0)),
        )),
        "searchsorted" => {
            one(ops::searchsorted::call(t(0), t(1), out_int32, right, c.attr("side"), c.flag("sorter").then(|| t(2))))
        }
        "searchsorted_scalar" => {
            one(ops::searchsorted_scalar::call(t(0), scalar("value"), out_int32, right, None, None))
        }
        "bucketize" => one(ops::bucketize::call(t(0), t(1), out_int32, right)),
        "bucketize_scalar" => one(ops::bucketize_scalar::call(scalar("value"), t(0), out_int32, right)),
        "unique" => {
            let (v, i, n) = ops::_unique2::call(t(0), true, c.flag("inverse"), c.flag("counts"))?;
            Ok(vec![v, i, n])
        }
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn selections_match_pytorch() {
    replay(GOLDEN, 80, run);
}

/// `masked_select` and the `repeat_interleave` forms differentiate through `index` and
/// `index_select`.
#[test]
fn composites_pass_gradcheck() -> Result<()> {
    use oxten::autograd::{gradcheck, GradcheckOpts};
    let x = Tensor::from_vec(vec![0.3f64, -1.2, 2.5, 0.9, -0.4, 1.7], &[2, 3])?.requires_grad_(true);
    let mask = Tensor::from_vec(vec![true, false, true], &[3])?;
    let repeats = Tensor::from_vec(vec![2i64, 0, 1], &[3])?;
    gradcheck(
        |t: &[Tensor]| Ok(vec![ops::masked_select::call(&t[0], &mask)?]),
        std::slice::from_ref(&x),
        GradcheckOpts::default(),
    )?;
    gradcheck(
        |t: &[Tensor]| Ok(vec![ops::repeat_interleave_self_tensor::call(&t[0], &repeats, Some(1), None)?]),
        std::slice::from_ref(&x),
        GradcheckOpts::default(),
    )?;
    gradcheck(
        |t: &[Tensor]| Ok(vec![ops::repeat_interleave_self_int::call(&t[0], 3, None, None)?]),
        std::slice::from_ref(&x),
        GradcheckOpts::default(),
    )?;
    Ok(())
}
