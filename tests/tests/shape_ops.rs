//! Replays tests/golden/shape.txt — PyTorch's outputs and error messages for `pad` (constant,
//! reflect, replicate, circular), resampling (`upsample_nearest2d`, `upsample_bilinear2d`),
//! `pixel_shuffle`, `im2col`/`col2im`, the diagonal views, `narrow_copy`, `meshgrid` and
//! `triu`/`tril_indices`, recorded by scripts/golden_shape.py — then gradients and view semantics.

use oxten::ops;
use oxten::{Result, Scalar, Tensor};
use oxten_tests::golden::{replay, Case};

const GOLDEN: &str = include_str!("../golden/shape.txt");

fn ints(c: &Case, k: &str) -> Vec<i64> {
    c.ints(k).unwrap_or_else(|| panic!("case at line {}: no {k}", c.line))
}

fn floats(c: &Case, k: &str) -> Option<Vec<f64>> {
    c.attr(k).map(|v| v.split(',').map(|x| x.parse().unwrap()).collect())
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| c.t(i);
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let int = |k: &str| c.int(k).unwrap_or_else(|| panic!("case at line {}: no {k}", c.line));
    match c.op.as_str() {
        "pad" => one(ops::pad::call(t(0), &ints(c, "pad"), c.attr("mode").unwrap(), c.float("value"))),
        "upsample_nearest" => {
            one(ops::upsample_nearest2d_vec::call(t(0), c.ints("size").as_deref(), floats(c, "scales").as_deref()))
        }
        "upsample_bilinear" => one(ops::upsample_bilinear2d_vec::call(
            t(0),
            c.ints("size").as_deref(),
            c.flag("align_corners"),
            floats(c, "scales").as_deref(),
        )),
        "pixel_shuffle" => one(ops::pixel_shuffle::call(t(0), int("r"))),
        "pixel_unshuffle" => one(ops::pixel_unshuffle::call(t(0), int("r"))),
        "im2col" => one(ops::im2col::call(t(0), &ints(c, "k"), &ints(c, "d"), &ints(c, "p"), &ints(c, "s"))),
        "col2im" => {
            one(ops::col2im::call(t(0), &ints(c, "out"), &ints(c, "k"), &ints(c, "d"), &ints(c, "p"), &ints(c, "s")))
        }
        "diagonal" => one(ops::diagonal::call(t(0), int("offset"), int("dim1"), int("dim2"))),
        "unfold" => one(ops::unfold::call(t(0), int("dim"), int("size"), int("step"))),
        "narrow_copy" => one(ops::narrow_copy::call(t(0), int("dim"), int("start"), int("length"))),
        "diag_embed" => one(ops::diag_embed::call(t(0), int("offset"), int("dim1"), int("dim2"))),
        "meshgrid" => {
            let ts: Vec<Tensor> = (0..c.args.len()).map(|i| t(i).clone()).collect();
            ops::meshgrid_indexing::call(&ts, c.attr("indexing").unwrap())
        }
        "triu_indices" => one(ops::triu_indices::call(int("row"), int("col"), int("offset"), None, None, None, None)),
        "tril_indices" => one(ops::tril_indices::call(int("row"), int("col"), int("offset"), None, None, None, None)),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn shape_ops_match_pytorch() {
    replay(GOLDEN, 110, run);
}

/// First and second derivatives of every composite against finite differences.
#[test]
fn composites_pass_gradcheck() -> Result<()> {
    use oxten::autograd::{gradcheck, gradgradcheck, GradcheckOpts};
    let mut seed = 11u64;
    let mut leaf = |shape: &[i64]| {
        let n: i64 = shape.iter().product();
        let v: Vec<f64> = (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
            })
            .collect();
        Tensor::from_vec(v, shape).unwrap().requires_grad_(true)
    };
    type Op = Box<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>>;
    let cases: Vec<(Tensor, Op)> = vec![
        (leaf(&[1, 2, 4]), Box::new(|x| Ok(vec![ops::pad::call(&x[0], &[2, 1], "reflect", None)?]))),
        (leaf(&[1, 2, 3]), Box::new(|x| Ok(vec![ops::pad::call(&x[0], &[1, 2], "replicate", None)?]))),
        (leaf(&[1, 2, 3]), Box::new(|x| Ok(vec![ops::pad::call(&x[0], &[2, 1], "circular", None)?]))),
        (leaf(&[2, 3]), Box::new(|x| Ok(vec![ops::constant_pad_nd::call(&x[0], &[-1, 2, 1, 0], Scalar::Float(0.5))?]))),
        (leaf(&[1, 1, 2, 3]), Box::new(|x| Ok(vec![ops::upsample_nearest2d_vec::call(&x[0], Some(&[3, 5]), None)?]))),
        (
            leaf(&[1, 1, 2, 3]),
            Box::new(|x| Ok(vec![ops::upsample_bilinear2d_vec::call(&x[0], Some(&[3, 5]), false, None)?])),
        ),
        (leaf(&[1, 4, 2, 1]), Box::new(|x| Ok(vec![ops::pixel_shuffle::call(&x[0], 2)?]))),
        (leaf(&[1, 2, 4, 3]), Box::new(|x| Ok(vec![ops::im2col::call(&x[0], &[2, 2], &[1, 1], &[1, 0], &[2, 1])?]))),
        (
            leaf(&[1, 8, 6]),
            Box::new(|x| Ok(vec![ops::col2im::call(&x[0], &[4, 3], &[2, 2], &[1, 1], &[1, 0], &[2, 1])?])),
        ),
        (leaf(&[3, 4]), Box::new(|x| Ok(vec![ops::diagonal::call(&x[0], 1, 0, 1)?]))),
        (leaf(&[5, 2]), Box::new(|x| Ok(vec![ops::unfold::call(&x[0], 0, 3, 1)?]))),
        (leaf(&[2, 3]), Box::new(|x| Ok(vec![ops::diag_embed::call(&x[0], -1, -2, -1)?]))),
    ];
    for (x, f) in &cases {
        gradcheck(|t: &[Tensor]| f(t), std::slice::from_ref(x), GradcheckOpts::default())?;
        gradgradcheck(|t: &[Tensor]| f(t), std::slice::from_ref(x), GradcheckOpts::default())?;
    }
    Ok(())
}

/// `diagonal` and `unfold` are views: writes through them reach the base.
#[test]
fn diagonal_and_unfold_are_views() -> Result<()> {
    let m = oxten::zeros(&[3, 3]);
    ops::diagonal::call(&m, 0, 0, 1)?.try_fill_scalar_(Scalar::Int(1))?;
    assert_eq!(Vec::<Vec<f32>>::try_from(&m)?, [[1., 0., 0.], [0., 1., 0.], [0., 0., 1.]]);
    let v = Tensor::from_vec(vec![0.0f32; 5], &[5])?;
    ops::unfold::call(&v, 0, 2, 2)?.try_select(1, 0)?.try_fill_scalar_(Scalar::Int(7))?;
    assert_eq!(v.to_vec::<f32>()?, [7., 0., 7., 0., 0.]);
    Ok(())
}

/// The backward of `unfold` over an empty tensor whose unfolded dimension is huge (2^40 windows)
/// is an empty gradient, not a list of every window's positions (found by the schema fuzzer:
/// it asked for 8 GiB).
#[test]
fn unfold_backward_of_an_empty_tensor_allocates_nothing() -> Result<()> {
    let x = oxten::zeros(&[0, 1 << 40]).requires_grad_(true);
    let y = ops::unfold::call(&x, 1, 2, 1)?;
    assert_eq!(y.sizes(), [0, (1 << 40) - 1, 2]);
    let g = oxten::autograd::grad(&[y.try_sum()?], std::slice::from_ref(&x))?;
    assert_eq!(g[0].as_ref().unwrap().sizes(), [0, 1 << 40]);
    Ok(())
}

/// `combinations` with more positions than elements has no rows (found by the schema fuzzer:
/// `r = i64::MAX` overflowed a capacity computation); with replacement, such an `r` is an error.
#[test]
fn combinations_of_too_many_positions() {
    let x = oxten::tensor![1.0, 2.0, 3.0];
    let c = oxten::combinations(&x);
    assert_eq!(c.sizes(), [3, 2]);
    assert_eq!(c.to_vec::<f32>().unwrap(), [1.0, 2.0, 1.0, 3.0, 2.0, 3.0]);
    let opts = |r, with_replacement| oxten::options::CombinationsOpts { r, with_replacement };
    assert_eq!(oxten::combinations_with(&x, opts(i64::MAX, false)).sizes(), [0, i64::MAX]);
    let e = oxten::try_combinations_with(&x, opts(i64::MAX, true)).unwrap_err().to_string();
    assert!(e.contains("combinations") && e.contains("too many"), "{e}");
    let w = oxten::combinations_with(&x, opts(2, true));
    assert_eq!(w.to_vec::<f32>().unwrap(), [1.0, 1.0, 1.0, 2.0, 1.0, 3.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0]);
}

#[test]
fn transposing_properties_are_views_with_pytorchs_checks() -> Result<()> {
    let x = Tensor::from_vec((0..24).map(|v| v as f32).collect::<Vec<_>>(), &[2, 3, 4])?;
    // `T` reverses every dimension; `mT`, `mH` and `adjoint` swap the last two.
    let t = ops::numpy_T::call(&x)?;
    assert_eq!(t.sizes().to_vec(), vec![4, 3, 2]);
    assert_eq!(t.strides().to_vec(), vec![1, 4, 12]);
    for swapped in [ops::mT::call(&x)?, ops::mH::call(&x)?, ops::adjoint::call(&x)?] {
        assert_eq!(swapped.sizes().to_vec(), vec![2, 4, 3]);
        assert_eq!(swapped.strides().to_vec(), vec![12, 1, 4]);
        assert_eq!(swapped.storage_offset(), 0);
        assert_eq!(swapped.data_ptr(), x.data_ptr());
    }
    let m = ops::matrix_H::call(&x.try_select(0, 1)?)?;
    assert_eq!(m.to_vec::<f32>()?, ops::t::call(&x.try_select(0, 1)?)?.contiguous().to_vec::<f32>()?);
    let err = |r: Result<Tensor>| r.expect_err("expected an error").to_string();
    let v = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    assert!(err(ops::mT::call(&v))
        .ends_with("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."));
    assert!(err(ops::mH::call(&v))
        .ends_with("tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor."));
    assert!(err(ops::adjoint::call(&v))
        .ends_with("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor."));
    assert!(err(ops::matrix_H::call(&x)).ends_with(
        "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of matrices, consider using tensor.mH"
    ));
    // A 1-D `T` is the tensor itself.
    assert_eq!(ops::numpy_T::call(&v)?.to_vec::<f32>()?, vec![1.0, 2.0]);
    Ok(())
}

#[test]
fn empty_permuted_lays_dimensions_out_in_the_order_given() -> Result<()> {
    let e = ops::empty_permuted::call(&[2, 3, 4], &[0, 2, 1], None, None, None, None)?;
    assert_eq!((e.sizes().to_vec(), e.strides().to_vec()), (vec![2, 3, 4], vec![12, 1, 3]));
    let nhwc = ops::empty_permuted::call(&[2, 3, 4, 5], &[0, 2, 3, 1], None, None, None, None)?;
    assert_eq!(nhwc.strides().to_vec(), vec![60, 1, 15, 3]);
    let err = |r: Result<Tensor>| r.expect_err("expected an error").to_string();
    assert!(err(ops::empty_permuted::call(&[2, 3], &[0], None, None, None, None)).ends_with(
        "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = 2 is not equal to len(physical_layout) = 1"
    ));
    assert!(
        err(ops::empty_permuted::call(&[2, 3], &[0, 0], None, None, None, None)).ends_with("Duplicate dim not allowed")
    );
    assert!(err(ops::empty_permuted::call(&[2, 3], &[0, 2], None, None, None, None))
        .contains("Dimension out of range (expected to be between 0 and 1, but got 2 at index 1)"));
    Ok(())
}

/// `resize_` keeps the elements in storage order and grows the storage (PyTorch's results);
/// unchanged sizes keep the strides; `resize_as_` with `preserve` takes the template's format;
/// tensors that require grad, negative sizes and a `preserve` format are refused.
#[test]
fn resize_keeps_storage_order_and_grows() -> Result<()> {
    use oxten::MemoryFormat;
    let x = Tensor::from_vec((0..4).map(f64::from).collect::<Vec<_>>(), &[4])?;
    let v0 = x.version();
    let r = ops::resize_::call(&x, &[2, 3], None)?;
    assert_eq!((x.sizes().to_vec(), x.strides().to_vec()), (vec![2, 3], vec![3, 1]));
    assert_eq!(r.sizes(), x.sizes());
    assert!(x.version() > v0, "resize_ is a write");
    assert_eq!(x.try_flatten(0)?.try_narrow(0, 0, 4)?.to_f64_vec()?, [0., 1., 2., 3.]);
    let t = Tensor::from_vec((0..6).map(f64::from).collect::<Vec<_>>(), &[2, 3])?.try_transpose(0, 1)?;
    ops::resize_::call(&t, &[3, 2], None)?;
    assert_eq!(t.strides(), [1, 3], "unchanged sizes keep their strides");
    let f = ops::resize::call(&Tensor::from_vec((0..6).map(f64::from).collect::<Vec<_>>(), &[6])?, &[2, 2], None)?;
    assert_eq!(f.to_f64_vec()?, [0., 1., 2., 3.]);
    let template =
        ops::contiguous::call(&Tensor::from_vec(vec![0.0f64; 24], &[2, 3, 2, 2])?, MemoryFormat::ChannelsLast)?;
    let y = Tensor::from_vec((0..24).map(f64::from).collect::<Vec<_>>(), &[24])?;
    ops::resize_as_::call(&y, &template, Some(MemoryFormat::Preserve))?;
    assert_eq!(y.strides(), [12, 1, 6, 3]);
    let z = ops::resize_as::call(&y, &Tensor::from_vec(vec![0.0f64; 24], &[4, 6])?, None)?;
    assert_eq!((z.sizes().to_vec(), z.strides().to_vec()), (vec![4, 6], vec![6, 1]));
    let err = |r: Result<Tensor>| r.unwrap_err().to_string();
    let g = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?.requires_grad_(true);
    assert!(err(ops::resize_::call(&g, &[3], None)).contains("cannot resize variables that require grad"));
    assert!(err(ops::resize_as_::call(&g, &x, None)).contains("cannot resize variables that require grad"));
    assert!(err(ops::resize_::call(&x, &[2, -1], None)).contains("negative dimension -1"));
    assert!(
        err(ops::resize_::call(&x, &[6], Some(MemoryFormat::Preserve))).contains("Unsupported memory format Preserve")
    );
    assert!(err(ops::resize_::call(&x, &[6], Some(MemoryFormat::ChannelsLast))).contains("rank 4"));
    Ok(())
}
