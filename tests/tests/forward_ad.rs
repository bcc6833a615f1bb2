//! Forward-mode AD and `oxten::func` against PyTorch's `torch.func` (tests/golden/func.txt,
//! written by scripts/golden_func.py): JVPs of an MLP, softmax cross-entropy, layer / batch /
//! group norm, a convolution, reductions and max pooling; Jacobians by forward and reverse
//! mode, a Hessian and a Hessian-vector product. Also the dual-tensor rules (levels, views,
//! in-place updates, errors) and the list of derivatives.yaml entries without a forward formula.

use oxten::autograd::forward_ad::{dual_level, make_dual, unpack_dual};
use oxten::func;
use oxten::{ops, Result, Scalar, Tensor};
use oxten_tests::golden::{replay_with, Case, ReplayOpts};

const GOLDEN: &str = include_str!("../golden/func.txt");

fn mlp(x: &[Tensor]) -> Result<Tensor> {
    let h = x[0].try_matmul(&x[1].try_t()?)?.try_add(&x[2])?.try_tanh()?;
    h.try_matmul(&x[3].try_t()?)
}

fn mlp_loss(x: &[Tensor]) -> Result<Tensor> {
    ops::mean_dim::call(&mlp(x)?.try_pow_tensor_scalar(2)?, None, false, None)
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let n = c.args.len();
    let ts: Vec<Tensor> = (0..n).map(|i| c.t(i).clone()).collect();
    let jvp_of = |f: &dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>| -> Result<Vec<Tensor>> {
        let (values, tangents) = func::jvp(f, &ts[..n / 2], &ts[n / 2..])?;
        Ok(values.into_iter().chain(tangents).collect())
    };
    let one = |t: Tensor| -> Result<Vec<Tensor>> { Ok(vec![t]) };
    match c.op.as_str() {
        "jvp_mlp" => jvp_of(&|x| one(mlp(x)?)),
        "jvp_mlp_loss" => jvp_of(&|x| one(mlp_loss(x)?)),
        "jvp_cross_entropy" => {
            let target = ts[1].clone();
            let f = |x: &[Tensor]| ops::cross_entropy_loss::call(&x[0], &target, None, 1, -100, 0.0);
            let (v, t) = func::jvp(f, &ts[..1], &ts[2..])?;
            Ok(vec![v[0].clone(), t[0].clone()])
        }
        "jvp_layer_norm" => jvp_of(&|x| one(ops::layer_norm::call(&x[0], &[6], Some(&x[1]), Some(&x[2]), 1e-5, true)?)),
        "jvp_conv2d" => jvp_of(&|x| one(ops::conv2d::call(&x[0], &x[1], Some(&x[2]), &[1, 1], &[1, 1], &[1, 1], 1)?)),
        "jvp_batch_norm" => {
            jvp_of(&|x| one(ops::batch_norm::call(&x[0], Some(&x[1]), Some(&x[2]), None, None, true, 0.1, 1e-5, true)?))
        }
        "jvp_group_norm" => jvp_of(&|x| one(ops::group_norm::call(&x[0], 2, Some(&x[1]), Some(&x[2]), 1e-5, true)?)),
        "jvp_softmax_logsumexp" => {
            jvp_of(&|x| Ok(vec![x[0].try_softmax(1)?, x[0].try_logsumexp(&[1], false)?, x[0].try_log_softmax(0)?]))
        }
        "jvp_reductions" => jvp_of(&|x| {
            let x = &x[0];
            Ok(vec![
                x.try_amax(&[1], false)?,
                ops::std_correction::call(x, Some(&[0]), None, false)?,
                ops::linalg_vector_norm::call(x, Scalar::Int(2), None, false, None)?,
                ops::prod_dim_int::call(x, 1, false, None)?,
                ops::max_dim::call(x, 0, false)?.0,
                ops::var_mean_correction::call(x, Some(&[1]), None, false)?.0,
            ])
        }),
        "jvp_max_pool" => jvp_of(&|x| one(ops::max_pool2d::call(&x[0], &[2, 2], &[], &[0, 0], &[1, 1], false)?)),
        "jacfwd_mlp" => one(func::jacfwd(mlp, &ts)?.remove(0).remove(0)),
        "jacrev_mlp" => {
            let j = func::jacrev(mlp, &ts)?.remove(0);
            Ok(vec![j[0].clone(), j[1].clone()])
        }
        "hessian_mlp_loss" => one(func::hessian(mlp_loss, &ts)?[2][2].clone()),
        "hvp_mlp_loss" => {
            let (b1, w2) = (ts[2].clone(), ts[3].clone());
            let f = move |x: &[Tensor]| mlp_loss(&[x[0].clone(), x[1].clone(), b1.clone(), w2.clone()]);
            let (_, hv) = func::hvp(f, &ts[..2], &ts[4..6])?;
            Ok(hv)
        }
        "hvp_layer_norm" => {
            let (w, gamma) = (ts[1].clone(), ts[2].clone());
            let f = move |x: &[Tensor]| {
                let y = ops::layer_norm::call(&x[0].try_matmul(&w.try_t()?)?, &[5], Some(&gamma), None, 1e-5, true)?;
                y.try_pow_tensor_scalar(2)?.try_sum()
            };
            Ok(func::hvp(f, &ts[..1], &ts[3..4])?.1)
        }
        "hvp_conv_batch_norm" => {
            let x = ts[0].clone();
            let f = move |k: &[Tensor]| {
                let y = ops::conv2d::call(&x, &k[0], None, &[1, 1], &[1, 1], &[1, 1], 1)?;
                let y = ops::batch_norm::call(&y, None, None, None, None, true, 0.1, 1e-5, true)?;
                ops::mean_dim::call(&y.try_pow_tensor_scalar(3)?, None, false, None)
            };
            Ok(func::hvp(f, &ts[1..2], &ts[2..3])?.1)
        }
        "hvp_group_norm" => {
            let f = |x: &[Tensor]| {
                ops::group_norm::call(&x[0], 2, None, None, 1e-5, true)?.try_tanh()?.try_pow_tensor_scalar(2)?.try_sum()
            };
            Ok(func::hvp(f, &ts[..1], &ts[1..2])?.1)
        }
        "hvp_attention" => {
            let (k, v) = (ts[1].clone(), ts[2].clone());
            let f = move |q: &[Tensor]| {
                let o = ops::scaled_dot_product_attention::call(&q[0], &k, &v, None, 0.0, true, None, false)?;
                o.try_tanh()?.try_sum()
            };
            Ok(func::hvp(f, &ts[..1], &ts[3..4])?.1)
        }
        other => panic!("case at line {}: no runner for {other}", c.line),
    }
}

#[test]
fn transforms_match_torch_func() {
    let opts = ReplayOpts { min_cases: 18, strides: false, tolerance: |_| (1e-10, 1e-12) };
    replay_with(GOLDEN, opts, run);
}

#[test]
fn hvp_of_a_cube() -> Result<()> {
    let x = Tensor::from_vec(vec![0.5f64, -1.0, 2.0], &[3])?;
    let v = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3])?;
    let (_, hv) =
        func::hvp(|x| x[0].try_pow_tensor_scalar(3)?.try_sum(), std::slice::from_ref(&x), std::slice::from_ref(&v))?;
    assert_eq!(hv[0].to_f64_vec()?, vec![3.0, -12.0, 36.0]);
    let (_, hv) = func::hvp(|x| x[0].try_mul(&x[0])?.try_mul(&x[0])?.try_sum(), std::slice::from_ref(&x), &[v])?;
    assert_eq!(hv[0].to_f64_vec()?, vec![3.0, -12.0, 36.0]);
    Ok(())
}

/// Forward-over-reverse against central differences of the gradient, through the operators whose
/// backward formulas read saved outputs (`tanh`), reduce (`mean`), multiply matrices or broadcast.
#[test]
fn hvp_matches_finite_differences_of_the_gradient() -> Result<()> {
    let x = Tensor::from_vec(vec![0.5f64, -1.0, 0.3, 0.7, -0.2, 0.1], &[2, 3])?;
    let v = Tensor::from_vec(vec![1.0f64, 0.5, -0.3, 0.2, 0.4, -1.0], &[2, 3])?;
    let w = Tensor::from_vec(vec![0.3f64, -0.6, 0.9, 0.1, 0.2, -0.4], &[2, 3])?;
    type F = Box<dyn Fn(&[Tensor]) -> Result<Tensor>>;
    let w2 = w.clone();
    let fs: Vec<(&str, F)> = vec![
        ("tanh", Box::new(|x: &[Tensor]| x[0].try_tanh()?.try_pow_tensor_scalar(2)?.try_sum())),
        (
            "mean",
            Box::new(|x: &[Tensor]| ops::mean_dim::call(&x[0].try_exp()?.try_pow_tensor_scalar(2)?, None, false, None)),
        ),
        ("mm", Box::new(move |x: &[Tensor]| x[0].try_matmul(&w.try_t()?)?.try_sigmoid()?.try_sum())),
        ("softmax", Box::new(move |x: &[Tensor]| x[0].try_mul(&w2)?.try_log_softmax(1)?.try_select(1, 0)?.try_sum())),
        (
            "broadcast",
            Box::new(|x: &[Tensor]| x[0].try_add(&x[0].try_select(0, 1)?)?.try_pow_tensor_scalar(3)?.try_sum()),
        ),
    ];
    for (name, f) in &fs {
        let (_, hv) = func::hvp(f, std::slice::from_ref(&x), std::slice::from_ref(&v))?;
        let g = |x: &Tensor| -> Result<Vec<f64>> {
            let xr = x.detach().requires_grad_(true);
            let y = f(std::slice::from_ref(&xr))?;
            oxten::autograd::grad(&[y], &[xr])?[0].clone().expect("used").to_f64_vec()
        };
        let eps = 1e-6;
        let (gp, gm) = (g(&x.try_add(&v.try_mul_scalar(eps)?)?)?, g(&x.try_sub(&v.try_mul_scalar(eps)?)?)?);
        for (k, (h, (a, b))) in hv[0].to_f64_vec()?.iter().zip(gp.iter().zip(&gm)).enumerate() {
            let fd = (a - b) / (2.0 * eps);
            assert!((h - fd).abs() < 1e-6, "{name}[{k}]: hvp {h}, finite differences {fd}");
        }
    }
    Ok(())
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

#[test]
fn dual_levels_nest_and_drop_their_tangents() -> Result<()> {
    let x = Tensor::from_vec(vec![0.3f64, 1.2], &[2])?;
    let one = Tensor::from_vec(vec![1.0f64; 2], &[2])?;
    // Forward over forward: the inner tangent of sin is cos, its outer tangent -sin.
    let (second, kept) = dual_level(|| -> Result<(Vec<f64>, Tensor)> {
        let outer = make_dual(&x, &one)?;
        dual_level(|| -> Result<(Vec<f64>, Tensor)> {
            let inner = make_dual(&outer, &one)?;
            let (_, d1) = unpack_dual(&inner.try_sin()?)?;
            let d1 = d1.expect("a tangent");
            assert_eq!(vals(&d1), vals(&x.try_cos()?));
            Ok((vec![], d1))
        })
        .map(|(_, d1)| {
            // Back in the outer level: the tangent of the inner tangent.
            let (_, d2) = unpack_dual(&d1).unwrap();
            (vals(&d2.expect("an outer tangent")), d1)
        })
    })?;
    let want: Vec<f64> = vals(&x.try_sin()?.try_neg()?);
    for (a, b) in second.iter().zip(&want) {
        assert!((a - b).abs() < 1e-15, "{a} vs {b}");
    }
    // Outside every level nothing has a tangent, and operators do not compute any.
    assert!(unpack_dual(&kept)?.1.is_none());
    assert!(unpack_dual(&kept.try_mul_scalar(2.0)?)?.1.is_none());
    Ok(())
}

#[test]
fn views_and_in_place_updates_share_tangents() -> Result<()> {
    dual_level(|| -> Result<()> {
        let x = make_dual(
            &Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?,
            &Tensor::from_vec(vec![10.0f64, 20.0, 30.0, 40.0], &[2, 2])?,
        )?;
        // A view's tangent is the same view of the tangent.
        let row = x.try_select(0, 1)?;
        assert_eq!(vals(&unpack_dual(&row)?.1.unwrap()), [30.0, 40.0]);
        // In place: x *= 2 doubles the tangent, and the view's tangent sees it.
        x.try_mul_scalar_(2.0)?;
        assert_eq!(vals(&unpack_dual(&x)?.1.unwrap()), [20.0, 40.0, 60.0, 80.0]);
        assert_eq!(vals(&unpack_dual(&row)?.1.unwrap()), [60.0, 80.0]);
        // An in-place op on a view of a plain tensor, with a dual operand: the base gets a
        // tangent (zero outside the view).
        let base = Tensor::from_vec(vec![0.0f64; 4], &[2, 2])?;
        let d = make_dual(&Tensor::from_vec(vec![1.0f64, 1.0], &[2])?, &Tensor::from_vec(vec![5.0f64, 6.0], &[2])?)?;
        base.try_select(0, 0)?.try_add_(&d)?;
        assert_eq!(vals(&unpack_dual(&base)?.1.expect("the base has a tangent")), [5.0, 6.0, 0.0, 0.0]);
        Ok(())
    })
}

#[test]
fn dual_tensor_errors() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
    let e = make_dual(&x, &x).unwrap_err().to_string();
    assert!(e.contains("open a dual level first"), "{e}");
    dual_level(|| -> Result<()> {
        let e = make_dual(&x, &Tensor::from_vec(vec![1.0f64; 3], &[3])?).unwrap_err().to_string();
        assert!(
            e.contains("different size than that of the original Tensor") && e.contains("[2]") && e.contains("[3]"),
            "{e}"
        );
        let e = make_dual(&x, &Tensor::from_vec(vec![1i64, 2], &[2])?).unwrap_err().to_string();
        assert!(e.contains("floating point"), "{e}");
        // out= variants refuse dual inputs.
        let e = ops::add_out::call(&make_dual(&x, &x)?, &x, Scalar::Int(1), &Tensor::from_vec(vec![0.0f64; 2], &[2])?)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("add.out(): functions with out=... arguments don't support automatic differentiation"),
            "{e}"
        );
        Ok(())
    })
}

/// Every differentiable derivatives.yaml entry has a forward formula.
#[test]
fn every_entry_has_a_forward_formula() {
    assert_eq!(oxten::autograd::NO_FORWARD_FORMULA, &[] as &[&str]);
}

/// A custom `Function` has no forward formula: a dual input is an error, as in PyTorch.
#[test]
fn custom_functions_refuse_dual_inputs() -> Result<()> {
    use oxten::autograd::{apply_function, Function, FunctionCtx};
    struct Double;
    impl Function for Double {
        fn name(&self) -> String {
            "Double".into()
        }
        fn forward(&self, _: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
            Ok(vec![x[0].try_mul_scalar(2.0)?])
        }
        fn backward(&self, _: &FunctionCtx, g: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
            Ok(vec![g[0].as_ref().map(|g| g.mul_scalar(2.0))])
        }
    }
    let x = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
    assert_eq!(vals(&apply_function(Double, std::slice::from_ref(&x))?[0]), [2.0, 4.0]);
    dual_level(|| -> Result<()> {
        let d = make_dual(&x, &x)?;
        let e = apply_function(Double, &[d]).unwrap_err().to_string();
        assert!(e.contains("You must implement the jvp function for custom autograd.Function"), "{e}");
        Ok(())
    })
}

#[test]
fn a_tangent_strided_unlike_its_primal_is_laid_out_as_the_primal() -> Result<()> {
    let p = Tensor::from_vec(vec![1.0f64, 2., 3., 4., 5., 6.], &[2, 3])?;
    // A column-major tangent of a row-major primal.
    let t = Tensor::from_vec(vec![1.0f64, 4., 2., 5., 3., 6.], &[3, 2])?.try_t()?;
    dual_level(|| -> Result<()> {
        let x = make_dual(&p, &t)?;
        // `reshape` of the contiguous primal is a view: its tangent is the same view.
        let (_, flat) = unpack_dual(&x.try_reshape(&[6])?)?;
        assert_eq!(vals(&flat.expect("a tangent")), vec![1., 2., 3., 4., 5., 6.]);
        // An in-place update through a view reaches the base's tangent.
        x.try_select(0, 0)?.try_mul_scalar_(2.0)?;
        let (_, dx) = unpack_dual(&x)?;
        assert_eq!(vals(&dx.expect("a tangent")), vec![2., 4., 6., 4., 5., 6.]);
        Ok(())
    })
}
