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

/// `torch.gradient`'s second-order formulas are exact on a quadratic: at uneven coordinates and
/// with a uniform spacing, inside and at both ends (`edge_order=2`); first order at the ends
/// otherwise. Integer inputs give floats; bad arguments are PyTorch's errors.
#[test]
fn gradient_is_exact_on_quadratics() -> Result<()> {
    let xs = [0.0, 1.0, 3.0, 4.5, 5.0];
    let f = Tensor::from_vec(xs.iter().map(|x| x * x).collect::<Vec<f64>>(), &[5])?;
    let coords = Tensor::from_vec(xs.to_vec(), &[5])?;
    let d = ops::gradient_tensorarrayint::call(&f, &[coords], None, 2)?;
    for (g, x) in d[0].to_f64_vec()?.iter().zip(xs) {
        assert!((g - 2.0 * x).abs() < 1e-12, "{g} vs {}", 2.0 * x);
    }
    let ints = Tensor::from_vec(vec![1i64, 4, 9, 16, 25], &[5])?;
    let d = ops::gradient_scalarint::call(&ints, Some(oxten::Scalar::Int(2)), None, 2)?;
    assert_eq!(d[0].dtype(), DType::F32);
    assert_eq!(d[0].to_f64_vec()?, [1., 2., 3., 4., 5.]);
    // Two dims of a matrix, one call: one tensor per dim, with first-order ends.
    let m = Tensor::from_vec(vec![1.0f32, 2.0, 4.0, 8.0, 16.0, 32.0], &[2, 3])?;
    let d = ops::gradient_array::call(&m, &[0, 1], 1)?;
    assert_eq!(d[0].to_f64_vec()?, [7., 14., 28., 7., 14., 28.]);
    assert_eq!(d[1].to_f64_vec()?, [1., 1.5, 2., 8., 12., 16.]);
    let err = |r: Result<Vec<Tensor>>| r.unwrap_err().to_string();
    let e = err(ops::gradient_scalarint::call(&m, None, None, 3));
    assert!(e.contains("only supports edge_order=1 and edge_order=2"), "{e}");
    let e = err(ops::gradient_scalarint::call(&m, None, None, 2));
    assert!(e.contains("each dimension size to be at least edge_order+1"), "{e}");
    let e = err(ops::gradient_scalararray::call(&m, oxten::Scalar::Float(0.1), &[1, 1], 1));
    assert!(e.contains("dim 1 appears multiple times in the list of dims"), "{e}");
    let e = err(ops::gradient_scalarrayarray::call(&m, &[oxten::Scalar::Float(0.1)], &[1, 0], 1));
    assert!(e.contains("spacing and dim arguments to have the same length"), "{e}");
    let e = err(ops::gradient_scalarint::call(&m, None, Some(2), 1));
    assert!(e.contains("Dimension out of range"), "{e}");
    // A 0-d tensor has no dim to differentiate along (found by the schema fuzzer: an index panic).
    let scalar = Tensor::from_vec(vec![1.0f32], &[])?;
    let e = err(ops::gradient_tensorarray::call(&scalar, &[Tensor::from_vec(vec![1.0f32], &[1])?], &[0], 1));
    assert!(e.contains("Dimension specified as 0 but tensor has no dimensions"), "{e}");
    assert!(ops::gradient_scalarint::call(&scalar, None, None, 1)?.is_empty());
    Ok(())
}

/// `_chunk_cat` pads each tensor along `dim` to a multiple of `num_chunks` and concatenates
/// chunk `i` of each into row `i` (values from PyTorch 2.15); PyTorch's argument errors.
#[test]
fn chunk_cat_pads_and_interleaves_chunks() -> Result<()> {
    let a = Tensor::from_vec((0..6).map(f64::from).collect::<Vec<_>>(), &[2, 3])?;
    let b = Tensor::from_vec(vec![10.0, 11.0, 12.0, 13.0], &[2, 2])?;
    let r = ops::_chunk_cat::call(&[a.clone(), b.clone()], 1, 2)?;
    assert_eq!(r.sizes(), [2, 2, 3]);
    assert_eq!(r.to_f64_vec()?, [0., 1., 10., 2., 0., 11., 3., 4., 12., 5., 0., 13.]);
    let (x, y) =
        (Tensor::from_vec(vec![0.0f64, 1., 2., 3., 4.], &[5])?, Tensor::from_vec(vec![10.0f64, 11., 12.], &[3])?);
    let r = ops::_chunk_cat::call(&[x.clone(), y], -1, 2)?;
    assert_eq!(r.sizes(), [2, 5]);
    assert_eq!(r.to_f64_vec()?, [0., 1., 2., 10., 11., 3., 4., 0., 12., 0.]);
    let err = |r: Result<Tensor>| r.unwrap_err().to_string();
    let e = err(ops::_chunk_cat::call(&[a.clone(), b.clone()], 1, 0));
    assert!(e.contains("_chunk_cat expects positive num_chunks"), "{e}");
    let e = err(ops::_chunk_cat::call(&[a.clone(), x.clone()], -1, 2));
    assert!(e.contains("expects non-negative dim when input tensors have different ndims"), "{e}");
    let e = err(ops::_chunk_cat::call(&[a.clone(), x.clone()], 1, 2));
    assert!(e.contains("expects dim < ndim for all input tensors"), "{e}");
    let c = Tensor::from_vec(vec![0.0f64; 6], &[3, 2])?;
    let e = err(ops::_chunk_cat::call(&[a.clone(), c], 1, 2));
    assert!(e.contains("same sizes of 0,...,dim-1 dimensions"), "{e}");
    let e = err(ops::_chunk_cat::call(&[a.clone(), b.try_to_dtype(DType::F32)?], 1, 2));
    assert!(e.contains("with the same dtype"), "{e}");
    let e = err(ops::_chunk_cat::call(&[a.clone(), Tensor::from_vec(Vec::<f64>::new(), &[2, 0])?], 1, 2));
    assert!(e.contains("expects non-empty tensor"), "{e}");
    let e = err(ops::_chunk_cat::call(&[a], 1, i64::MAX));
    assert!(e.contains("num_chunks") && e.contains("too large"), "{e}");
    Ok(())
}

/// The batch-norm forms `torch.export` traces: in training they update the running statistics
/// in place like `native_batch_norm` (values from PyTorch 2.15), in evaluation they leave them,
/// and the `_batch_norm_*_update` pair returns PyTorch's empty uint8 reserve.
#[test]
fn exported_batch_norm_forms_match_native_batch_norm() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f32, 2., 3., 5., 6., 10.], &[3, 2])?;
    let stats = || -> Result<(Tensor, Tensor)> {
        Ok((Tensor::from_vec(vec![0.0f32; 2], &[2])?, Tensor::from_vec(vec![1.0f32; 2], &[2])?))
    };
    let close = |t: &Tensor, want: &[f64]| {
        let got = t.to_f64_vec().unwrap();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?} vs {want:?}");
        }
    };
    let (rm, rv) = stats()?;
    let (y, mean, invstd) = ops::_native_batch_norm_legit::call(&x, None, None, &rm, &rv, true, 0.1, 1e-5)?;
    close(&y, &[-1.1355485, -1.1111673, -0.16222116, -0.20203042, 1.2977698, 1.3131977]);
    close(&mean, &[3.3333333, 5.6666665]);
    close(&invstd, &[0.48666367, 0.30304563]);
    close(&rm, &[0.33333334, 0.56666666]);
    close(&rv, &[1.5333333, 2.5333333]);
    let (rm, rv) = stats()?;
    let (y2, _, _, reserve) = ops::_batch_norm_with_update::call(&x, None, None, &rm, &rv, 0.1, 1e-5)?;
    assert_eq!(y2.to_f64_vec()?, y.to_f64_vec()?);
    close(&rm, &[0.33333334, 0.56666666]);
    assert_eq!((reserve.dtype(), reserve.sizes().to_vec()), (DType::U8, vec![0]));
    let (y3, save_mean, _, reserve) =
        ops::_batch_norm_no_update::call(&x, None, None, Some(&rm), Some(&rv), 0.1, 1e-5)?;
    close(&y3, &[0.53838015, 0.90053415, 2.1535206, 2.785373, 4.576231, 5.9267712]);
    close(&rm, &[0.33333334, 0.56666666]);
    assert_eq!((save_mean.sizes().to_vec(), reserve.sizes().to_vec()), (vec![0], vec![0]));
    let (y4, _, _) = ops::_native_batch_norm_legit_no_training::call(&x, None, None, &rm, &rv, 0.1, 1e-5)?;
    assert_eq!(y4.to_f64_vec()?, y3.to_f64_vec()?);
    let (y5, _, _) = ops::_native_batch_norm_legit_no_stats::call(&x, None, None, true, 0.1, 1e-5)?;
    assert_eq!(y5.to_f64_vec()?, y.to_f64_vec()?);
    let e = ops::_native_batch_norm_legit_no_stats::call(&x, None, None, false, 0.1, 1e-5).unwrap_err().to_string();
    assert!(e.contains("running_mean must be defined in evaluation mode"), "{e}");
    // The backward runs although the op writes the statistics (their versions move), and gives
    // `native_batch_norm`'s gradient.
    let g = Tensor::from_vec(vec![0.5f32, -1., 2., 0.25, -3., 1.], &[3, 2])?;
    let grad_of = |legit: bool| -> Result<Vec<f64>> {
        let x = x.deep_clone().requires_grad_(true);
        let (rm, rv) = stats()?;
        let y = if legit {
            ops::_native_batch_norm_legit::call(&x, None, None, &rm, &rv, true, 0.1, 1e-5)?.0
        } else {
            ops::native_batch_norm::call(&x, None, None, Some(&rm), Some(&rv), true, 0.1, 1e-5)?.0
        };
        y.try_mul(&g)?.sum().try_backward()?;
        x.grad().unwrap().to_f64_vec()
    };
    let want = grad_of(false)?;
    assert!(want.iter().any(|&v| v.abs() > 0.1), "{want:?}");
    assert_eq!(grad_of(true)?, want);
    Ok(())
}
