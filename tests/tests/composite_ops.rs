//! Replays tests/golden/composites.txt — PyTorch's outputs (values, dtype, shape, strides) and
//! errors for the operators oxten composes of others (`count_nonzero nansum nanmean trace
//! positive true_divide fliplr flipud ravel view_as expand_as reshape_as swapaxes swapdims
//! atleast_1d/2d/3d hstack vstack dstack column_stack`), recorded by
//! scripts/golden_composites.py — through oxten, plus their gradients.

use oxten::ops;
use oxten::{DType, Result, Tensor};
use oxten_tests::golden::{replay, Case};

const GOLDEN: &str = include_str!("../golden/composites.txt");

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| c.t(i);
    let copy = |i: usize| t(i).deep_clone();
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let all: Vec<Tensor> = (0..c.args.len()).map(|i| t(i).clone()).collect();
    let dims = c.ints("dims");
    let keepdim = c.flag("keepdim");
    let dtype = c.attr("dtype").map(|_| DType::F64);
    let other = || c.scalar("other").unwrap();
    let (dim0, dim1) = (|| c.int("dim0").unwrap(), || c.int("dim1").unwrap());
    match c.op.as_str() {
        "count_nonzero" => one(ops::count_nonzero::call(t(0), c.int("dim"))),
        "count_nonzero_dims" => one(ops::count_nonzero_dim_intlist::call(t(0), &dims.unwrap())),
        "nansum" => one(ops::nansum::call(t(0), dims.as_deref(), keepdim, dtype)),
        "nanmean" => one(ops::nanmean::call(t(0), dims.as_deref(), keepdim, dtype)),
        "trace" => one(ops::trace::call(t(0))),
        "positive" => one(ops::positive::call(t(0))),
        "true_divide" => one(ops::true_divide::call(t(0), t(1))),
        "true_divide_scalar" => one(ops::true_divide_scalar::call(t(0), other())),
        "true_divide_" => one(ops::true_divide_::call(&copy(0), t(1))),
        "true_divide_scalar_" => one(ops::true_divide_scalar_::call(&copy(0), other())),
        "true_divide_out" => one(ops::true_divide_out::call(t(0), t(1), t(2))),
        "fliplr" => one(ops::fliplr::call(t(0))),
        "flipud" => one(ops::flipud::call(t(0))),
        "ravel" => one(ops::ravel::call(t(0))),
        "view_as" => one(ops::view_as::call(t(0), t(1))),
        "expand_as" => one(ops::expand_as::call(t(0), t(1))),
        "reshape_as" => one(ops::reshape_as::call(t(0), t(1))),
        "swapaxes" => one(ops::swapaxes::call(t(0), dim0(), dim1())),
        "swapdims" => one(ops::swapdims::call(t(0), dim0(), dim1())),
        "atleast_1d" => one(ops::atleast_1d::call(t(0))),
        "atleast_2d" => one(ops::atleast_2d::call(t(0))),
        "atleast_3d" => one(ops::atleast_3d::call(t(0))),
        "hstack" => one(ops::hstack::call(&all)),
        "vstack" => one(ops::vstack::call(&all)),
        "dstack" => one(ops::dstack::call(&all)),
        "column_stack" => one(ops::column_stack::call(&all)),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn composite_ops_match_pytorch() {
    replay(GOLDEN, 130, run);
}

/// The composites differentiate through the operators they call: `nansum`/`nanmean` give no
/// gradient to NaN elements, `trace` puts the gradient on the diagonal, the stacks route it back
/// to each input.
#[test]
fn composite_ops_pass_gradcheck() -> Result<()> {
    use oxten::autograd::{gradcheck, GradcheckOpts};
    let leaf = |v: Vec<f64>, shape: &[i64]| Tensor::from_vec(v, shape).unwrap().requires_grad_(true);
    let x = leaf(vec![0.3, -1.2, 2.5, 0.7, -0.4, 1.9], &[2, 3]);
    let opts = GradcheckOpts::default();
    gradcheck(
        |t: &[Tensor]| Ok(vec![ops::nanmean::call(&t[0], Some(&[1]), false, None)?]),
        std::slice::from_ref(&x),
        opts,
    )?;
    gradcheck(|t: &[Tensor]| Ok(vec![ops::trace::call(&t[0])?]), std::slice::from_ref(&x), opts)?;
    let y = leaf(vec![1.5, -0.2], &[2]);
    gradcheck(|t: &[Tensor]| Ok(vec![ops::column_stack::call(&[t[0].clone(), t[1].clone()])?]), &[x.clone(), y], opts)?;
    let nan = leaf(vec![1.0, f64::NAN, 2.0], &[3]);
    let y = ops::nansum::call(&nan, None, false, None)?;
    y.try_backward()?;
    assert_eq!(nan.grad().unwrap().to_f64_vec()?, [1.0, 0.0, 1.0]);
    Ok(())
}

/// The stacking functions refuse an empty list with an error naming the operator and argument.
#[test]
fn stacking_an_empty_list_is_an_error() {
    for (name, r) in [
        ("hstack", ops::hstack::call(&[])),
        ("vstack", ops::vstack::call(&[])),
        ("dstack", ops::dstack::call(&[])),
        ("column_stack", ops::column_stack::call(&[])),
    ] {
        let e = r.unwrap_err().to_string();
        assert!(e.contains(name) && e.contains("tensors") && e.contains("non-empty"), "{e}");
    }
}
