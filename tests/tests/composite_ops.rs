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

/// Fractional max pooling against PyTorch 2.15 (`torch.ops.aten.fractional_max_pool2d/3d` with
/// the same samples): the window starts, the arg-max indices and values, bf16 starts computed
/// in bf16 (they differ from float32's), the gradient through `gather`, and PyTorch's errors.
#[test]
fn fractional_max_pool_matches_pytorch() -> Result<()> {
    let x = Tensor::from_vec((0..84).map(|v| (f64::from(v) * 1.7).sin()).collect::<Vec<_>>(), &[1, 2, 6, 7])?;
    let s = Tensor::from_vec(vec![0.25f64, 0.75, 0.6, 0.1], &[1, 2, 2])?;
    let (o, i) = ops::fractional_max_pool2d::call(&x, &[2, 3], &[3, 2], &s)?;
    assert_eq!(i.sizes(), [1, 2, 3, 2]);
    assert_eq!(i.to_vec::<i64>()?, [1, 12, 23, 27, 30, 34, 7, 11, 22, 18, 29, 33]);
    let want = [
        0.991664810452,
        0.999792900143,
        0.985600298791,
        0.940428962947,
        0.670229175843,
        0.949403860687,
        0.998858051695,
        0.84479768402,
        0.915094768221,
        0.994826791358,
        0.96858570992,
        0.964962073822,
    ];
    for (a, b) in o.to_f64_vec()?.iter().zip(want) {
        assert!((a - b).abs() < 1e-11, "{a} vs {b}");
    }
    // The gradient reaches each window's maximum.
    let xg = x.detach().requires_grad_(true);
    ops::fractional_max_pool2d::call(&xg, &[2, 3], &[3, 2], &s)?.0.try_sum()?.try_backward()?;
    let g = xg.grad().unwrap().to_f64_vec()?;
    assert_eq!(g.iter().sum::<f64>(), 12.0);
    assert_eq!((g[1], g[42 + 7], g[0]), (1.0, 1.0, 0.0));

    // In bf16 the starts are computed in bf16: output 62 starts at 94 (93 in float32).
    let ramp = Tensor::from_vec((0..300).map(|v| v as f32).collect::<Vec<_>>(), &[1, 1, 1, 300])?;
    let sb = Tensor::from_vec(vec![0.77f32, 0.3], &[1, 1, 2])?.try_to_dtype(DType::BF16)?;
    let (_, ib) = ops::fractional_max_pool2d::call(&ramp.try_to_dtype(DType::BF16)?, &[1, 2], &[1, 200], &sb)?;
    let (_, i32_) = ops::fractional_max_pool2d::call(&ramp, &[1, 2], &[1, 200], &sb.try_to_dtype(DType::F32)?)?;
    assert_eq!((ib.to_vec::<i64>()?[62], i32_.to_vec::<i64>()?[62]), (94, 93));

    let x3 = Tensor::from_vec((0..125).map(|v| f64::from(v).sin()).collect::<Vec<_>>(), &[1, 1, 5, 5, 5])?;
    let s3 = Tensor::from_vec(vec![0.3f64, 0.8, 0.5], &[1, 1, 3])?;
    let (_, i3) = ops::fractional_max_pool3d::call(&x3, &[2, 2, 2], &[2, 3, 2], &s3)?;
    assert_eq!(i3.to_vec::<i64>()?, [1, 33, 6, 33, 20, 19, 76, 83, 110, 83, 121, 94]);
    let (o_, i_) = ops::fractional_max_pool2d::call(&x.try_narrow(0, 0, 0)?, &[2, 2], &[2, 2], &s)?;
    assert_eq!((o_.sizes().to_vec(), i_.sizes().to_vec()), (vec![0, 2, 2, 2], vec![0, 2, 2, 2]));
    // The backward operator adds the gradient at the indices.
    let gi = ops::fractional_max_pool2d_backward::call(&oxten::try_ones_like(&o)?, &x, &[2, 3], &[3, 2], &i)?;
    assert_eq!(gi.to_f64_vec()?, g);

    let err = |r: Result<(Tensor, Tensor)>| r.unwrap_err().to_string();
    let cases: [(Result<(Tensor, Tensor)>, &str); 8] = [
        (
            ops::fractional_max_pool2d::call(&x, &[2], &[3, 2], &s),
            "kernel_size must either be a single Int or tuple of Ints",
        ),
        (
            ops::fractional_max_pool2d::call(&x, &[0, 2], &[3, 2], &s),
            "kernel size should be greater than zero, but got 0x2",
        ),
        (
            ops::fractional_max_pool2d::call(&x, &[2, 2], &[6, 2], &s),
            "pool height 2 too large relative to input height 6",
        ),
        (
            ops::fractional_max_pool2d::call(&x, &[2, 2], &[-1, 2], &s),
            "Trying to create tensor with negative dimension -1: [1, 2, -1, 2]",
        ),
        (
            ops::fractional_max_pool2d::call(&x, &[2, 2], &[2, 2], &s.try_to_dtype(DType::F32)?),
            "Expect _random_samples to have the same dtype as input",
        ),
        (
            ops::fractional_max_pool2d::call(&x, &[2, 2], &[2, 2], &s.try_narrow(1, 0, 1)?),
            "Expect _random_samples.size(1) equals to input channel size.",
        ),
        (
            ops::fractional_max_pool3d::call(&x.try_select(0, 0)?, &[2, 2, 2], &[2, 2, 2], &s3),
            "fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: [2, 6, 7]",
        ),
        (
            ops::fractional_max_pool3d::call(&x3, &[2, 2, 2], &[2, 2, 2], &s.try_narrow(1, 0, 1)?),
            "Expect _random_samples.size(2) equals to 3; got 2.",
        ),
    ];
    for (r, want) in cases {
        let e = err(r);
        assert!(e.contains(want), "{e}");
    }
    let long = x.try_to_dtype(DType::I64)?;
    let e = err(ops::fractional_max_pool2d::call(&long, &[2, 2], &[2, 2], &s.try_to_dtype(DType::I64)?));
    assert!(e.contains("\"fractional_max_pool2d_out_frame\" not implemented for 'Long'"), "{e}");
    Ok(())
}

/// `unravel_index`, `histogramdd` and `segment_reduce` against PyTorch 2.15's outputs.
#[test]
fn unravel_histogramdd_and_segment_reduce_match_pytorch() -> Result<()> {
    let idx = Tensor::from_vec(vec![7i64, -1, 19, 23], &[2, 2])?;
    let c = ops::unravel_index::call(&idx, &[4, 5])?;
    assert_eq!((c[0].to_vec::<i64>()?, c[1].to_vec::<i64>()?), (vec![1, 3, 3, 0], vec![2, 4, 4, 3]));
    assert_eq!(c[0].sizes(), [2, 2]);
    let c = ops::unravel_index::call(&Tensor::from_vec(vec![5i32], &[1])?, &[3])?;
    assert_eq!((c.len(), c[0].dtype(), c[0].to_vec::<i64>()?), (1, DType::I64, vec![2]));
    let e = ops::unravel_index::call(&idx.try_to_dtype(DType::F32)?, &[4, 5]).unwrap_err().to_string();
    assert!(e.contains("expected 'indices' to be integer dtype, but got torch.float32"), "{e}");
    let e = ops::unravel_index::call(&idx, &[4, -5]).unwrap_err().to_string();
    assert!(e.contains("'shape' cannot have negative values, but got (4, -5)"), "{e}");
    let e = ops::unravel_index::call(&idx, &[4, i64::MAX, 5]).unwrap_err().to_string();
    assert!(e.contains("overflows int64"), "{e}");

    let pts = Tensor::from_vec(vec![0.0f32, 0., 1., 1., 0.5, 2., 0.2, 0.7], &[4, 2])?;
    let (h, edges) = ops::histogramdd::call(&pts, &[2, 3], None, None, false)?;
    assert_eq!((h.sizes().to_vec(), h.to_f64_vec()?), (vec![2, 3], vec![1., 1., 0., 0., 1., 1.]));
    assert_eq!(edges[1].to_vec::<f32>()?, [0.0, 0.6666667, 1.3333333, 2.0]);
    let w = Tensor::from_vec(vec![1.0f32, 2., 3., 4.], &[4])?;
    let (h, _) = ops::histogramdd::call(&pts, &[2, 2], Some(&[0., 1., 0., 1.]), Some(&w), true)?;
    for (a, b) in h.to_f64_vec()?.iter().zip([0.5714285969734192, 2.2857143878936768, 0.0, 1.1428571939468384]) {
        assert!((a - b).abs() < 1e-6, "{a} vs {b}");
    }
    let bins = [Tensor::from_vec(vec![0.0f32, 0.1, 1.], &[3])?, Tensor::from_vec(vec![0.0f32, 1.5, 2.], &[3])?];
    let (h, edges) = ops::histogramdd_tensorlist_bins::call(&pts, &bins, None, None, false)?;
    assert_eq!(h.to_f64_vec()?, [1., 0., 2., 1.]);
    assert_eq!(edges[0].to_vec::<f32>()?, [0.0, 0.1, 1.0]);
    let e = ops::histogramdd::call(&pts, &[2], None, None, false).unwrap_err().to_string();
    assert!(e.contains("The size of bins must be equal to the innermost dimension of the input"), "{e}");
    let e = ops::histogramdd::call(&pts, &[2, 2], Some(&[0., 1., 1., 0.]), None, false).unwrap_err().to_string();
    assert!(e.contains("min should not exceed max, but got min 1 max 0 for dimension 1"), "{e}");

    let d = Tensor::from_vec((1..=10).map(f64::from).collect::<Vec<_>>(), &[2, 5])?;
    let lengths = Tensor::from_vec(vec![2i64, 3, 1, 4], &[2, 2])?;
    let r = ops::segment_reduce::call(&d, "prod", Some(&lengths), None, None, 1, false, None)?;
    assert_eq!(r.to_f64_vec()?, [2., 60., 6., 5040.]);
    let offsets = Tensor::from_vec(vec![0i64, 2, 2, 5], &[4])?;
    let r = ops::segment_reduce::call(&d.try_t()?, "max", None, None, Some(&offsets), 0, false, None)?;
    assert_eq!(r.to_f64_vec()?, [2., 7., f64::NEG_INFINITY, f64::NEG_INFINITY, 5., 10.]);
    let short = Tensor::from_vec(vec![2i64, 1], &[2])?;
    let row = d.try_select(0, 0)?;
    let r = ops::segment_reduce::call(&row, "sum", Some(&short), None, None, 0, true, None)?;
    assert_eq!(r.to_f64_vec()?, [3., 3.]);
    let e = ops::segment_reduce::call(&row, "sum", Some(&short), None, None, 0, false, None).unwrap_err().to_string();
    assert!(e.contains("Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1)"), "{e}");
    let gaps = Tensor::from_vec(vec![3i64, 0, 2], &[3])?;
    let r = ops::segment_reduce::call(&row, "mean", Some(&gaps), None, None, 0, false, None)?;
    assert_eq!(r.to_f64_vec()?[0], 2.0);
    assert!(r.to_f64_vec()?[1].is_nan());
    let r = ops::segment_reduce::call(&row, "mean", Some(&gaps), None, None, 0, false, Some(7.into()))?;
    let v = r.to_f64_vec()?;
    assert!((v[0] - 13.0 / 3.0).abs() < 1e-12 && v[1] == 7.0 && v[2] == 8.0, "{v:?}");
    let dg = d.detach().requires_grad_(true);
    let init = Some(oxten::Scalar::Float(1.0));
    ops::segment_reduce::call(&dg, "mean", Some(&lengths), None, None, 1, false, init)?.try_sum()?.try_backward()?;
    let g = dg.grad().unwrap().to_f64_vec()?;
    let want = [0.5, 0.5, 1. / 3., 1. / 3., 1. / 3., 1.0, 0.25, 0.25, 0.25, 0.25];
    assert!(g.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12), "{g:?}");
    let e =
        ops::segment_reduce::call(&row, "median", Some(&short), None, None, 0, false, None).unwrap_err().to_string();
    assert!(e.contains("reduce argument must be either sum, prod, mean, amax or amin, got median"), "{e}");
    let bad = Tensor::from_vec(vec![0i64, 3, 2], &[3])?;
    let e = ops::segment_reduce::call(&row, "sum", None, None, Some(&bad), 0, false, None).unwrap_err().to_string();
    assert!(e.contains("segment_length >= 0"), "{e}");
    Ok(())
}

/// aten's window functions against PyTorch 2.15's float64 values (periodic by default), and
/// their errors. (`torch.signal.windows` is checked by the OpInfo samples.)
#[test]
fn window_functions_match_pytorch() -> Result<()> {
    let f64_ = Some(DType::F64);
    let close = |t: Tensor, want: &[f64]| {
        let got = t.to_f64_vec().unwrap();
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (a, b) in got.iter().zip(want) {
            assert!((a - b).abs() < 1e-14, "{got:?} vs {want:?}");
        }
    };
    close(
        ops::hann_window::call(5, f64_, None, None, None)?,
        &[0.0, 0.3454915028125263, 0.9045084971874737, 0.9045084971874737, 0.3454915028125264],
    );
    close(ops::hann_window_periodic::call(5, false, f64_, None, None, None)?, &[0.0, 0.5, 1.0, 0.5, 0.0]);
    close(
        ops::hamming_window_periodic_alpha_beta::call(6, true, 0.5, 0.3, f64_, None, None, None)?,
        &[0.2, 0.35, 0.65, 0.8, 0.65, 0.35],
    );
    close(
        ops::blackman_window::call(5, f64_, None, None, None)?,
        &[0.0, 0.20077014326253045, 0.8492298567374694, 0.8492298567374696, 0.20077014326253056],
    );
    close(
        ops::bartlett_window::call(6, f64_, None, None, None)?,
        &[0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0, 2.0 / 3.0, 1.0 / 3.0],
    );
    close(ops::bartlett_window_periodic::call(5, false, f64_, None, None, None)?, &[0.0, 0.5, 1.0, 0.5, 0.0]);
    close(
        ops::kaiser_window::call(5, f64_, None, None, None)?,
        &[5.2773441320097665e-05, 0.10171968770956323, 0.7929398341014605, 0.7929398341014605, 0.10171968770956323],
    );
    close(
        ops::kaiser_window_beta::call(6, false, 5.0, f64_, None, None, None)?,
        &[
            0.036710892271286676,
            0.4149036392433668,
            0.9138124838692001,
            0.9138124838692001,
            0.4149036392433668,
            0.036710892271286676,
        ],
    );
    let w = ops::hann_window::call(4, None, None, None, None)?;
    assert_eq!(w.dtype(), DType::F32);
    assert_eq!(ops::hann_window::call(1, None, None, None, None)?.to_f64_vec()?, [1.0]);
    assert_eq!(ops::hann_window::call(0, None, None, None, None)?.sizes(), [0]);
    let e = ops::hann_window::call(-1, None, None, None, None).unwrap_err().to_string();
    assert!(e.contains("hann_window requires non-negative window_length, got window_length=-1"), "{e}");
    let e = ops::hann_window::call(3, Some(DType::I64), None, None, None).unwrap_err().to_string();
    assert!(e.contains("hann_window expects floating point dtypes"), "{e}");
    let e = ops::kaiser_window::call(-2, None, None, None, None).unwrap_err().to_string();
    assert!(e.contains("kaiser_window requires non-negative window_length, got window_length=-2"), "{e}");
    Ok(())
}
