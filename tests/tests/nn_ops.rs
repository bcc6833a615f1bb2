//! Replays tests/golden/nn.txt — PyTorch's outputs (values, dtype, shape, strides) and error
//! messages for the nn family (activations, the softmax family, logsumexp, losses), recorded by
//! scripts/golden_nn.py — through oxten, plus checks PyTorch's file cannot express (meta
//! tensors, numerical stability, large inputs against a naive reference).

use oxten::ops;
use oxten::{DType, Device, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::golden::{replay, Case};

const GOLDEN: &str = include_str!("../golden/nn.txt");

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| c.t(i);
    let s = |k: &str, default: Scalar| c.scalar(k).unwrap_or(default);
    let int = |k: &str| c.int(k).unwrap_or_else(|| panic!("case at line {}: no attribute {k}", c.line));
    let dim = || int("dim");
    let dtype = |k: &str| c.attr(k).map(|d| DType::from_name(d).unwrap());
    let reduction = || c.int("reduction").unwrap_or(1);
    let ignore = || c.int("ignore_index").unwrap_or(-100);
    let weight = |i: usize| if c.flag("weight") { Some(t(i)) } else { None };
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let f = |v: f64| Scalar::Float(v);
    let i = Scalar::Int;
    match c.op.as_str() {
        // ---- activations ----
        "elu" => one(ops::elu::call(t(0), s("alpha", i(1)), s("scale", i(1)), s("input_scale", i(1)))),
        "leaky_relu" => one(ops::leaky_relu::call(t(0), s("negative_slope", f(0.01)))),
        "threshold" => one(ops::threshold::call(t(0), s("threshold", f(0.0)), s("value", f(0.0)))),
        "threshold_" => one(ops::threshold_::call(&t(0).deep_clone(), s("threshold", f(0.0)), s("value", f(0.0)))),
        "threshold_out" => one(ops::threshold_out::call(t(0), s("threshold", f(0.0)), s("value", f(0.0)), t(1))),
        "hardshrink" => one(ops::hardshrink::call(t(0), s("lambd", f(0.5)))),
        "softshrink" => one(ops::softshrink::call(t(0), s("lambd", f(0.5)))),
        "hardshrink_backward" => one(ops::hardshrink_backward::call(t(0), t(1), s("lambd", f(0.5)))),
        "softshrink_backward" => one(ops::softshrink_backward::call(t(0), t(1), s("lambd", f(0.5)))),
        "leaky_relu_out" => one(ops::leaky_relu_out::call(t(0), s("negative_slope", f(0.01)), t(1))),
        "hardtanh" => one(ops::hardtanh::call(t(0), s("min_val", i(-1)), s("max_val", i(1)))),
        "hardtanh_" => {
            let x = t(0).deep_clone();
            one(ops::hardtanh_::call(&x, s("min_val", i(-1)), s("max_val", i(1))))
        }
        "hardtanh_out" => one(ops::hardtanh_out::call(t(0), s("min_val", i(-1)), s("max_val", i(1)), t(1))),
        "softplus" => one(ops::softplus::call(t(0), s("beta", i(1)), s("threshold", i(20)))),
        "elu_backward" => one(ops::elu_backward::call(
            t(0),
            s("alpha", i(1)),
            s("scale", i(1)),
            s("input_scale", i(1)),
            c.flag("is_result"),
            t(1),
        )),
        "leaky_relu_backward" => {
            one(ops::leaky_relu_backward::call(t(0), t(1), s("negative_slope", f(0.01)), c.flag("self_is_result")))
        }
        "hardtanh_backward" => one(ops::hardtanh_backward::call(t(0), t(1), s("min_val", i(-1)), s("max_val", i(1)))),
        "softplus_backward" => one(ops::softplus_backward::call(t(0), t(1), s("beta", i(1)), s("threshold", i(20)))),
        "threshold_backward" => one(ops::threshold_backward::call(t(0), t(1), s("threshold", i(0)))),
        // ---- softmax family ----
        "_softmax" => one(ops::_softmax::call(t(0), dim(), c.flag("half_to_float"))),
        "_log_softmax" => one(ops::_log_softmax::call(t(0), dim(), c.flag("half_to_float"))),
        "_softmax_out" => one(ops::_softmax_out::call(t(0), dim(), false, t(1))),
        "_log_softmax_out" => one(ops::_log_softmax_out::call(t(0), dim(), false, t(1))),
        "softmax" => one(t(0).try_softmax_with(dim(), oxten::options::SoftmaxOpts { dtype: dtype("dtype") })),
        "log_softmax" => {
            one(t(0).try_log_softmax_with(dim(), oxten::options::LogSoftmaxOpts { dtype: dtype("dtype") }))
        }
        "softmax_int_out" => one(ops::softmax_int_out::call(t(0), dim(), dtype("dtype"), t(1))),
        "log_softmax_int_out" => one(ops::log_softmax_int_out::call(t(0), dim(), dtype("dtype"), t(1))),
        "_softmax_backward_data" => {
            one(ops::_softmax_backward_data::call(t(0), t(1), dim(), dtype("input_dtype").unwrap()))
        }
        "_log_softmax_backward_data" => {
            one(ops::_log_softmax_backward_data::call(t(0), t(1), dim(), dtype("input_dtype").unwrap()))
        }
        "logsumexp" => one(ops::logsumexp::call(t(0), &c.ints("dim").unwrap(), c.flag("keepdim"))),
        "logsumexp_out" => one(ops::logsumexp_out::call(t(0), &c.ints("dim").unwrap(), c.flag("keepdim"), t(1))),
        // ---- losses ----
        "nll_loss_forward" => {
            let (o, tw) = ops::nll_loss_forward::call(t(0), t(1), weight(2), reduction(), ignore())?;
            Ok(vec![o, tw])
        }
        "nll_loss_backward" => {
            let tw = if c.flag("weight") { 4 } else { 3 };
            one(ops::nll_loss_backward::call(t(0), t(1), t(2), weight(3), reduction(), ignore(), t(tw)))
        }
        "nll_loss" => one(ops::nll_loss::call(t(0), t(1), weight(2), reduction(), ignore())),
        "nll_loss_nd" => one(ops::nll_loss_nd::call(t(0), t(1), weight(2), reduction(), ignore())),
        "cross_entropy_loss" => one(ops::cross_entropy_loss::call(
            t(0),
            t(1),
            weight(2),
            reduction(),
            ignore(),
            c.float("label_smoothing").unwrap_or(0.0),
        )),
        "mse_loss" => one(ops::mse_loss::call(t(0), t(1), reduction())),
        "mse_loss_out" => one(ops::mse_loss_out::call(t(0), t(1), reduction(), t(2))),
        "mse_loss_backward" => one(ops::mse_loss_backward::call(t(0), t(1), t(2), reduction())),
        "bce_with_logits" => {
            let w = weight(2);
            let pw_at = if w.is_some() { 3 } else { 2 };
            let pw = if c.flag("pos_weight") { Some(t(pw_at)) } else { None };
            one(ops::binary_cross_entropy_with_logits::call(t(0), t(1), w, pw, reduction()))
        }
        "cosine_similarity" => {
            one(ops::cosine_similarity::call(t(0), t(1), c.int("dim").unwrap_or(1), c.float("eps").unwrap_or(1e-8)))
        }
        "cosine_similarity_grad" => {
            let (a, b) = (t(0).deep_clone().requires_grad_(true), t(1).deep_clone().requires_grad_(true));
            ops::cosine_similarity::call(&a, &b, 1, c.float("eps").unwrap_or(1e-8))?.sum().try_backward()?;
            Ok(vec![a.grad().unwrap(), b.grad().unwrap()])
        }
        "pairwise_distance" => one(ops::pairwise_distance::call(
            t(0),
            t(1),
            c.float("p").unwrap_or(2.0),
            c.float("eps").unwrap_or(1e-6),
            c.flag("keepdim"),
        )),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn nn_ops_match_pytorch() {
    replay(GOLDEN, 490, run);
}

// ---------------------------------------------------------------------------------------------
// beyond the golden file
// ---------------------------------------------------------------------------------------------

fn meta(sizes: &[i64], dtype: DType) -> Tensor {
    Tensor::empty(sizes, dtype, Device::Meta, MemoryFormat::Contiguous).unwrap()
}

/// Meta tensors get PyTorch's output shapes and dtypes without any data.
#[test]
fn meta_tensors_get_shapes_and_dtypes() {
    let x = meta(&[4, 5], DType::F32);
    let y = ops::_softmax::call(&x, 1, false).unwrap();
    assert_eq!((y.device(), &y.sizes()[..], y.dtype()), (Device::Meta, &[4, 5][..], DType::F32));
    // half_to_float is accepted by the meta function (the CPU impl rejects it).
    let h = ops::_log_softmax::call(&meta(&[3], DType::F16), 0, true).unwrap();
    assert_eq!(h.dtype(), DType::F32);
    let (o, tw) = ops::nll_loss_forward::call(&x, &meta(&[4], DType::I64), None, 0, -100).unwrap();
    assert_eq!((&o.sizes()[..], &tw.sizes()[..]), (&[4][..], &[][..]));
    let e = ops::elu::call(&x, Scalar::Int(1), Scalar::Int(1), Scalar::Int(1)).unwrap();
    assert_eq!(e.device(), Device::Meta);
    let m = ops::mse_loss::call(&x, &meta(&[5], DType::F64), 1).unwrap();
    assert_eq!((&m.sizes()[..], m.dtype()), (&[][..], DType::F64));
    let hb = ops::hardtanh_backward::call(&meta(&[5], DType::F32), &x, Scalar::Int(-1), Scalar::Int(1)).unwrap();
    assert_eq!(&hb.sizes()[..], &[4, 5]);
}

/// Softmax of large inputs stays finite (the max is subtracted) and sums to 1; log-softmax is
/// the log of softmax; both agree with a naive f64 reference on a non-contiguous input.
#[test]
fn softmax_is_stable_and_matches_a_reference() {
    let vals: Vec<f32> = (0..6 * 257).map(|k| ((k * 7919) % 1000) as f32 * 0.9 - 400.0).collect();
    let x = Tensor::from_vec(vals.clone(), &[6, 257]).unwrap();
    for (dim, xt) in [(1, x.clone()), (0, x.t())] {
        let y = ops::_softmax::call(&xt, dim, false).unwrap();
        let ly = ops::_log_softmax::call(&xt, dim, false).unwrap();
        let sizes = xt.sizes();
        let (rows, n) = if dim == 1 { (sizes[0], sizes[1]) } else { (sizes[1], sizes[0]) };
        let xv = xt.to_f64_vec().unwrap();
        let (yv, lyv) = (y.to_f64_vec().unwrap(), ly.to_f64_vec().unwrap());
        let idx = |r: i64, k: i64| if dim == 1 { (r * n + k) as usize } else { (k * rows + r) as usize };
        for r in 0..rows {
            let m = (0..n).map(|k| xv[idx(r, k)]).fold(f64::NEG_INFINITY, f64::max);
            let lse = m + (0..n).map(|k| (xv[idx(r, k)] - m).exp()).sum::<f64>().ln();
            let mut total = 0.0;
            for k in 0..n {
                let want = xv[idx(r, k)] - lse;
                assert!((lyv[idx(r, k)] - want).abs() <= 1e-4 * want.abs().max(1.0), "log_softmax dim {dim}");
                assert!((yv[idx(r, k)] - want.exp()).abs() <= 1e-6, "softmax dim {dim}");
                total += yv[idx(r, k)];
            }
            assert!((total - 1.0).abs() < 1e-5);
        }
    }
}

/// Large enough to split over rayon's pool: every row is still exactly normalized, for f32 and
/// bf16 (computed in f32), along the last dim and along dim 0.
#[test]
fn parallel_softmax_rows_sum_to_one() {
    let (rows, n) = (512, 300);
    let vals: Vec<f32> = (0..rows * n).map(|k| ((k * 31) % 97) as f32 * 0.05 - 2.0).collect();
    let x = Tensor::from_vec(vals, &[rows as i64, n as i64]).unwrap();
    for dtype in [DType::F32, DType::BF16] {
        let xd = x.to_dtype(dtype);
        for dim in [1i64, 0] {
            let y = ops::_softmax::call(&xd, dim, false).unwrap();
            let s = y.to_dtype(DType::F64).sum_dim_intlist(Some(&[dim]), false);
            let tol = if dtype == DType::F32 { 1e-5 } else { 2e-2 };
            assert!(s.to_f64_vec().unwrap().iter().all(|v| (v - 1.0).abs() < tol), "{dtype:?} dim {dim}");
        }
    }
}

/// `cross_entropy_loss` equals `nll_loss(log_softmax(x))`, and its gradient through the
/// structured kernels is `softmax(x) - one_hot(target)` over the batch.
#[test]
fn cross_entropy_gradient_is_softmax_minus_one_hot() {
    let x = Tensor::from_vec(vec![0.5f64, -1.0, 2.0, 0.1, 0.3, -0.7], &[2, 3]).unwrap().requires_grad_(true);
    let target = Tensor::from_vec(vec![2i64, 0], &[2]).unwrap();
    let loss = ops::cross_entropy_loss::call(&x, &target, None, 1, -100, 0.0).unwrap();
    loss.backward();
    let p = ops::_softmax::call(&x.detach(), 1, false).unwrap().to_f64_vec().unwrap();
    let g = x.grad().unwrap().to_f64_vec().unwrap();
    let onehot = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
    for k in 0..6 {
        assert!((g[k] - (p[k] - onehot[k]) / 2.0).abs() < 1e-12);
    }
}

/// Reduction codes other than 0, 1, 2 are rejected by `mse_loss` (PyTorch asserts).
#[test]
fn mse_loss_rejects_unknown_reductions() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let err = ops::mse_loss::call(&x, &x, 3).unwrap_err().to_string();
    assert!(err.contains("reduction"), "{err}");
}

/// `nll_loss_backward` with `reduction=none` rejects out-of-range targets (PyTorch writes out of
/// bounds there).
#[test]
fn nll_loss_backward_checks_targets_without_reduction() {
    let x = Tensor::from_vec(vec![0.0f32; 6], &[2, 3]).unwrap();
    let t = Tensor::from_vec(vec![0i64, 3], &[2]).unwrap();
    let go = Tensor::from_vec(vec![1.0f32, 1.0], &[2]).unwrap();
    let tw = Tensor::scalar(0.0f32);
    let err = ops::nll_loss_backward::call(&go, &x, &t, None, 0, -100, &tw).unwrap_err().to_string();
    assert!(err.contains("Target 3 is out of bounds."), "{err}");
}

/// `cosine_similarity` and `pairwise_distance` differentiate through the norms (first and
/// second derivatives against finite differences).
#[test]
fn distances_pass_gradcheck() -> Result<()> {
    use oxten::autograd::{gradcheck, gradgradcheck, GradcheckOpts};
    let leaf = |v: Vec<f64>, shape: &[i64]| Tensor::from_vec(v, shape).unwrap().requires_grad_(true);
    let a = leaf(vec![0.3, -1.2, 0.8, 1.5, -0.4, 0.9], &[2, 3]);
    let b = leaf(vec![-0.7, 0.2, 1.1], &[3]);
    let cos = |x: &[Tensor]| Ok(vec![ops::cosine_similarity::call(&x[0], &x[1], -1, 1e-8)?]);
    let dist = |x: &[Tensor]| Ok(vec![ops::pairwise_distance::call(&x[0], &x[1], 3.0, 1e-6, false)?]);
    for f in [&cos as &dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>, &dist] {
        gradcheck(f, &[a.clone(), b.clone()], GradcheckOpts::default())?;
        gradgradcheck(f, &[a.clone(), b.clone()], GradcheckOpts::default())?;
    }
    Ok(())
}

#[test]
fn safe_softmax_gives_zeros_and_no_gradient_for_rows_masked_throughout() -> Result<()> {
    let inf = f64::NEG_INFINITY;
    let x = Tensor::from_vec(vec![inf, inf, 1.0, 2.0], &[2, 2])?.requires_grad_(true);
    let y = ops::_safe_softmax::call(&x, 1, None)?;
    let v = y.to_vec::<f64>()?;
    assert_eq!(&v[..2], &[0.0, 0.0]);
    assert!((v[2] - 0.2689414213699951).abs() < 1e-15 && (v[3] - 0.7310585786300049).abs() < 1e-15);
    // Plain softmax has NaNs there.
    assert!(ops::softmax::call(&x, 1, None)?.to_vec::<f64>()?[0].is_nan());
    let w = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    y.try_mul(&w)?.try_sum()?.try_backward()?;
    let g = x.grad().expect("a gradient").to_vec::<f64>()?;
    assert_eq!(&g[..2], &[0.0, 0.0]);
    assert!(g.iter().all(|v| v.is_finite()));
    // A NaN in the row is not a mask: NaNs, as PyTorch.
    let nan = Tensor::from_vec(vec![inf, f64::NAN], &[1, 2])?;
    assert!(ops::_safe_softmax::call(&nan, 1, None)?.to_vec::<f64>()?.iter().all(|v| v.is_nan()));
    // `dtype` converts first, as softmax's.
    let ints = Tensor::from_vec(vec![1i64, 2], &[1, 2])?;
    assert_eq!(ops::_safe_softmax::call(&ints, 1, Some(DType::F64))?.dtype(), DType::F64);
    Ok(())
}

fn grid_2d(values: Vec<f64>, points: i64) -> Result<Tensor> {
    Tensor::from_vec(values, &[1, 1, points, 2])
}

/// `grid_sampler_2d` where a coordinate is NaN or infinite, in every mode (PyTorch 2.15's
/// outputs): bilinear and bicubic propagate NaN through their weights; border and reflection
/// padding send NaN to 0 and clip infinities; nearest reads nothing for a NaN with zero padding.
/// An out-of-range corner contributes nothing even where the input is infinite.
#[test]
fn grid_sampler_non_finite_coordinates_follow_pytorch() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 1, 2, 2])?;
    let grid = grid_2d(vec![f64::NAN, 0.0, 0.5, f64::INFINITY], 2)?.try_to_dtype(DType::F32)?;
    let nan = f64::NAN;
    for (mode, padding, want) in [
        (0, 0, [nan, nan]),
        (0, 1, [2.0, 4.0]),
        (0, 2, [2.0, 2.0]),
        (1, 0, [0.0, 0.0]),
        (1, 1, [1.0, 4.0]),
        (1, 2, [1.0, 2.0]),
        (2, 0, [nan, nan]),
        (2, 1, [nan, nan]),
        (2, 2, [nan, nan]),
    ] {
        let got = ops::grid_sampler_2d::call(&x, &grid, mode, padding, false)?.to_f64_vec()?;
        let same = got.iter().zip(want).all(|(g, w)| g == &w || (g.is_nan() && w.is_nan()));
        assert!(same, "mode {mode}, padding {padding}: {got:?} vs {want:?}");
    }
    let x = Tensor::from_vec(vec![1.0f32, f32::INFINITY, 3.0, 4.0], &[1, 1, 2, 2])?;
    let outside = grid_2d(vec![-1.5, -1.5], 1)?.try_to_dtype(DType::F32)?;
    assert_eq!(ops::grid_sampler_2d::call(&x, &outside, 0, 0, false)?.to_f64_vec()?, [0.0]);
    Ok(())
}

/// The identity affine grid samples the input back exactly (both corner conventions), and
/// `affine_grid` gives PyTorch's grids for a general 2-D map and a 3-D one.
#[test]
fn affine_grid_matches_pytorch_and_its_identity_reproduces_the_input() -> Result<()> {
    use oxten::nn::{affine_grid, grid_sample, GridSampleMode, GridSamplePadding};
    let x = Tensor::from_vec((0..12).map(|v| v as f64).collect::<Vec<_>>(), &[1, 1, 3, 4])?;
    let identity = Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0], &[1, 2, 3])?;
    for align in [false, true] {
        let grid = affine_grid(&identity, &[1, 1, 3, 4], Some(align))?;
        assert_eq!(grid.sizes(), [1, 3, 4, 2]);
        for mode in [GridSampleMode::Bilinear, GridSampleMode::Nearest, GridSampleMode::Bicubic] {
            let y = grid_sample(&x, &grid, mode, GridSamplePadding::Zeros, Some(align))?;
            let err = y.to_f64_vec()?.iter().zip(x.to_f64_vec()?).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(err < 1e-12, "align {align}, {mode:?}: {err}");
        }
    }
    let theta = Tensor::from_vec(vec![0.5, -0.25, 0.1, 0.3, 0.8, -0.2], &[1, 2, 3])?;
    #[rustfmt::skip]
    let want = [
        (false, [-0.10833333333333331, -0.8, 0.225, -0.6000000000000001, 0.5583333333333333, -0.4,
                 -0.3583333333333333, 2.7755575615628914e-17, -0.024999999999999994, 0.2, 0.30833333333333335, 0.39999999999999997]),
        (true, [-0.15, -1.3, 0.35, -1.0, 0.85, -0.7, -0.65, 0.3, -0.15, 0.6000000000000001, 0.35, 0.9000000000000001]),
    ];
    for (align, want) in want {
        let got = affine_grid(&theta, &[1, 1, 2, 3], Some(align))?.to_f64_vec()?;
        assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-15), "{align}: {got:?}");
    }
    let theta3 = Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.5, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0, -1.0], &[1, 3, 4])?;
    let g3 = affine_grid(&theta3, &[1, 1, 2, 1, 2], None)?;
    assert_eq!(g3.sizes(), [1, 2, 1, 2, 3]);
    assert_eq!(g3.to_f64_vec()?, [0.0, 0.0, -1.5, 1.0, 0.0, -1.5, 0.0, 0.0, -0.5, 1.0, 0.0, -0.5]);
    Ok(())
}

/// Bad arguments to the grid samplers and `affine_grid` are errors naming what is wrong.
#[test]
fn grid_sampler_and_affine_grid_reject_bad_arguments() -> Result<()> {
    let x = Tensor::from_vec(vec![0.0f32; 24], &[1, 2, 3, 4])?;
    let grid = Tensor::from_vec(vec![0.0f32; 12], &[1, 2, 3, 2])?;
    let err = |r: Result<Tensor>| r.unwrap_err().to_string();
    let e = err(ops::grid_sampler_2d::call(&x.try_to_dtype(DType::I64)?, &grid, 0, 0, false));
    assert!(e.contains("not implemented for 'Long'"), "{e}");
    let e = err(ops::grid_sampler_2d::call(&x, &grid.try_to_dtype(DType::F64)?, 0, 0, false));
    assert!(e.contains("expected grid to have the dtype of input (Float), but got Double"), "{e}");
    let e = err(ops::grid_sampler_2d::call(&x, &grid.try_narrow(3, 0, 1)?, 0, 0, false));
    assert!(e.contains("expected grid to have size 2 in last dimension, but got grid with sizes [1, 2, 3, 1]"), "{e}");
    let e = err(ops::grid_sampler_2d::call(&x.try_narrow(2, 0, 0)?, &grid, 0, 0, false));
    assert!(e.contains("expected input to have non-empty spatial dimensions"), "{e}");
    let e = err(ops::grid_sampler_2d::call(&x.try_expand(&[2, 2, 3, 4])?, &grid, 0, 0, false));
    assert!(e.contains("expected grid and input to have same batch size"), "{e}");
    let e = err(ops::grid_sampler_2d::call(&x, &grid, 3, 0, false));
    assert!(e.contains("interpolation_mode"), "{e}");
    let e = err(ops::grid_sampler_2d::call(&x, &grid, 0, -1, false));
    assert!(e.contains("padding_mode"), "{e}");
    let e = err(ops::grid_sampler::call(&x.try_unsqueeze(2)?, &grid.try_unsqueeze(1)?, 2, 0, false));
    assert!(e.contains("expected grid to have size 3 in last dimension"), "{e}");
    let v = Tensor::from_vec(vec![0.0f32; 8], &[1, 1, 2, 2, 2])?;
    let g = Tensor::from_vec(vec![0.0f32; 3], &[1, 1, 1, 1, 3])?;
    let e = err(ops::grid_sampler_3d::call(&v, &g, 2, 0, false));
    assert!(e.contains("bicubic interpolation only supports 4D input"), "{e}");
    // Empty channels and an empty grid give empty outputs.
    assert_eq!(ops::grid_sampler_2d::call(&x.try_narrow(1, 0, 0)?, &grid, 0, 0, false)?.sizes(), [1, 0, 2, 3]);
    assert_eq!(ops::grid_sampler_2d::call(&x, &grid.try_narrow(1, 0, 0)?, 1, 1, true)?.sizes(), [1, 2, 0, 3]);
    let theta = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0], &[1, 2, 3])?;
    let e = err(oxten::nn::affine_grid(&theta, &[1, 1, 2], None));
    assert!(e.contains("affine_grid only supports 4D and 5D sizes"), "{e}");
    let e = err(oxten::nn::affine_grid(&theta, &[1, 1, 0, 3], None));
    assert!(e.contains("Expected non-zero, positive output size. Got [1, 1, 0, 3]"), "{e}");
    let e = err(oxten::nn::affine_grid(&theta, &[1, 1, 2, 3, 4], None));
    assert!(e.contains("Expected a batch of 3D affine matrices of shape Nx3x4"), "{e}");
    Ok(())
}

/// `ctc_loss` against a brute-force oracle: the likelihood of a target is the sum, over every
/// frame-by-frame path that collapses to it (repeats merged, blanks dropped), of the product of
/// the path's probabilities. Padded and concatenated targets, an empty target, a shorter input,
/// the reductions and the unbatched form agree with it.
#[test]
fn ctc_loss_matches_a_brute_force_sum_over_alignments() -> Result<()> {
    let (frames, classes) = (4usize, 3usize);
    // Two sequences of log-softmax rows.
    let raw: Vec<f64> = (0..frames * 2 * classes).map(|i| ((i * 7919) % 23) as f64 / 7.0 - 1.5).collect();
    let logits = Tensor::from_vec(raw, &[frames as i64, 2, classes as i64])?;
    let lp = logits.try_log_softmax(2)?;
    let lpv = lp.to_f64_vec()?;
    let nll = |b: usize, len: usize, target: &[usize]| -> f64 {
        let mut total = 0.0;
        for code in 0..classes.pow(len as u32) {
            let path: Vec<usize> = (0..len).map(|t| (code / classes.pow(t as u32)) % classes).collect();
            let mut collapsed = Vec::new();
            for (t, &c) in path.iter().enumerate() {
                if c != 0 && (t == 0 || path[t - 1] != c) {
                    collapsed.push(c);
                }
            }
            if collapsed == target {
                total += path.iter().enumerate().map(|(t, &c)| lpv[(t * 2 + b) * classes + c].exp()).product::<f64>();
            }
        }
        -total.ln()
    };
    let want = [nll(0, 4, &[1, 1]), nll(1, 3, &[2])];
    let padded = Tensor::from_vec(vec![1i64, 1, 2, 0], &[2, 2])?;
    let got = ops::ctc_loss_intlist::call(&lp, &padded, &[4, 3], &[2, 1], 0, 0, false)?.to_f64_vec()?;
    assert!((got[0] - want[0]).abs() < 1e-12 && (got[1] - want[1]).abs() < 1e-12, "{got:?} vs {want:?}");
    let concatenated = Tensor::from_vec(vec![1i32, 1, 2], &[3])?;
    let lengths = |v: Vec<i64>| Tensor::from_vec(v, &[2]);
    let mean =
        ops::ctc_loss_tensor::call(&lp, &concatenated, &lengths(vec![4, 3])?, &lengths(vec![2, 1])?, 0, 1, false)?;
    assert!((mean.to_f64_vec()?[0] - (want[0] / 2.0 + want[1]) / 2.0).abs() < 1e-12);
    let sum = ops::ctc_loss_intlist::call(&lp, &padded, &[4, 3], &[2, 1], 0, 2, false)?;
    assert!((sum.to_f64_vec()?[0] - want[0] - want[1]).abs() < 1e-12);
    // An empty target: every frame blank.
    let empty = ops::ctc_loss_intlist::call(&lp, &padded, &[4, 3], &[0, 0], 0, 0, false)?.to_f64_vec()?;
    assert!((empty[0] - nll(0, 4, &[])).abs() < 1e-12);
    // One sequence without the batch dim.
    let single = lp.try_select(1, 0)?;
    let one = ops::ctc_loss_intlist::call(&single, &Tensor::from_vec(vec![1i64, 1], &[2])?, &[4], &[2], 0, 0, false)?;
    assert_eq!(one.dim(), 0);
    assert!((one.to_f64_vec()?[0] - want[0]).abs() < 1e-12);
    // Impossible alignments: `1 1` needs 3 frames; zero_infinity turns the loss and its gradient to 0.
    let x = lp.detach().requires_grad_(true);
    let inf = ops::ctc_loss_intlist::call(&x, &padded, &[2, 3], &[2, 1], 0, 0, false)?.to_f64_vec()?;
    assert_eq!(inf[0], f64::INFINITY);
    let zeroed = ops::ctc_loss_intlist::call(&x, &padded, &[2, 3], &[2, 1], 0, 2, true)?;
    assert!((zeroed.to_f64_vec()?[0] - want[1]).abs() < 1e-12);
    zeroed.try_backward()?;
    let g = x.grad().unwrap().try_select(1, 0)?.to_f64_vec()?;
    assert!(g.iter().all(|&v| v == 0.0), "{g:?}");
    Ok(())
}

/// `ctc_loss`'s bad arguments are errors naming what is wrong, never an out-of-range read.
#[test]
fn ctc_loss_rejects_bad_arguments() -> Result<()> {
    let lp = Tensor::from_vec(vec![-1.0f32; 4 * 2 * 3], &[4, 2, 3])?;
    let t = Tensor::from_vec(vec![1i64, 2, 1, 1], &[2, 2])?;
    let err = |r: Result<Tensor>| r.unwrap_err().to_string();
    let e = err(ops::ctc_loss_intlist::call(&lp, &t, &[5, 4], &[2, 2], 0, 1, false));
    assert!(e.contains("Expected input_lengths to have value at most 4, but got value 5"), "{e}");
    let e = err(ops::ctc_loss_intlist::call(&lp, &t, &[4, 4], &[2, 3], 0, 1, false));
    assert!(e.contains("Expected tensor to have size at least 3 at dimension 1, but got size 2"), "{e}");
    let e = err(ops::ctc_loss_intlist::call(&lp, &t, &[4, 4], &[2, -1], 0, 1, false));
    assert!(e.contains("Expected target_lengths to have value at least 0, but got value -1"), "{e}");
    let e = err(ops::ctc_loss_intlist::call(&lp, &t, &[4], &[2, 2], 0, 1, false));
    assert!(e.contains("input_lengths must be of size batch_size"), "{e}");
    let e = err(ops::ctc_loss_intlist::call(&lp, &t, &[4, 4], &[2, 2], 3, 1, false));
    assert!(e.contains("blank must be in label range"), "{e}");
    let bad = Tensor::from_vec(vec![1i64, 7, 1, 1], &[2, 2])?;
    let e = err(ops::ctc_loss_intlist::call(&lp, &bad, &[4, 4], &[2, 2], 0, 1, false));
    assert!(e.contains("target label 7 is out of the range [0, 3)"), "{e}");
    let flat = Tensor::from_vec(vec![1i64, 2, 1], &[3])?;
    let e = err(ops::ctc_loss_intlist::call(&lp, &flat, &[4, 4], &[2, 2], 0, 1, false));
    assert!(e.contains("Expected tensor to have size 4 at dimension 0, but got size 3"), "{e}");
    let e = err(ops::ctc_loss_intlist::call(&lp.try_to_dtype(DType::F16)?, &t, &[4, 4], &[2, 2], 0, 1, false));
    assert!(e.contains("\"ctc_loss_cpu\" not implemented for 'Half'"), "{e}");
    // `ctc_loss` converts targets to Long (as PyTorch); `_ctc_loss` itself takes Long or Int.
    let e = err(ops::_ctc_loss::call(&lp, &t.try_to_dtype(DType::F32)?, &[4, 4], &[2, 2], 0, false).map(|r| r.0));
    assert!(e.contains("'targets' to have one of the following scalar types: Long, Int"), "{e}");
    Ok(())
}
