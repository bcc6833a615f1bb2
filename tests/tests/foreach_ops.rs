//! The `_foreach_*` operators against their single-tensor counterparts, on the fused path
//! (contiguous float32/float64 lists) and the fallback (strided, half precision), with aliasing
//! lists, list checks and version counters; the fused AdamW kernel is checked against PyTorch in
//! optim.rs. Also `clip_grad_norm_`, which is built on `_foreach_norm` and `_foreach_mul_`.

use oxten::{ops, DType, Result, Scalar, Tensor};

/// A list of differently shaped tensors of `dtype`, the second transposed when `strided`.
fn list(dtype: DType, strided: bool, salt: usize) -> Vec<Tensor> {
    let shapes: [&[i64]; 3] = [&[40_000], &[7, 5], &[3]];
    shapes
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let n: i64 = s.iter().product();
            let v: Vec<f64> =
                (0..n).map(|i| (((i as usize * 31 + k * 7 + salt * 13) % 97) as f64) / 40.0 + 0.25).collect();
            let t = Tensor::from_vec(v, s).unwrap().to_dtype(dtype);
            if strided && k == 1 {
                Tensor::from_vec(t.to_f64_vec().unwrap(), &[5, 7]).unwrap().to_dtype(dtype).t()
            } else {
                t
            }
        })
        .collect()
}

fn copy(l: &[Tensor]) -> Vec<Tensor> {
    l.iter().map(|t| t.deep_clone()).collect()
}

fn assert_same(got: &[Tensor], want: &[Tensor], what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.sizes(), w.sizes(), "{what}[{i}]");
        let (g, w) = (g.to_f64_vec().unwrap(), w.to_f64_vec().unwrap());
        for (a, b) in g.iter().zip(&w) {
            assert!((a - b).abs() <= 1e-6 * (1.0 + b.abs()), "{what}[{i}]: {a} vs {b}");
        }
    }
}

#[test]
fn foreach_ops_match_the_single_tensor_ops() -> Result<()> {
    for (dtype, strided) in [(DType::F32, false), (DType::F64, false), (DType::F32, true), (DType::BF16, false)] {
        let what = |op: &str| format!("{op} {dtype:?} strided={strided}");
        let (a, b, c) = (list(dtype, strided, 0), list(dtype, strided, 1), list(dtype, strided, 2));
        let half = Scalar::Float(0.5);
        let check = |op: &str,
                     run: &dyn Fn(&[Tensor]) -> Result<()>,
                     single: &dyn Fn(&Tensor, usize) -> Result<Tensor>| {
            let got = copy(&a);
            run(&got).unwrap();
            let want: Vec<Tensor> = a.iter().enumerate().map(|(i, t)| single(&t.deep_clone(), i).unwrap()).collect();
            assert_same(&got, &want, &what(op));
        };
        check("add_.Scalar", &|x| ops::_foreach_add_scalar_::call(x, half), &|t, _| t.try_add_scalar(half));
        check("add_.List", &|x| ops::_foreach_add_list_::call(x, &b, Scalar::Int(-2)), &|t, i| {
            t.try_add_with(&b[i], oxten::options::AddOpts { alpha: Scalar::Int(-2) })
        });
        check("mul_.Scalar", &|x| ops::_foreach_mul_scalar_::call(x, half), &|t, _| t.try_mul_scalar(half));
        check("mul_.List", &|x| ops::_foreach_mul_list_::call(x, &b), &|t, i| t.try_mul(&b[i]));
        check("div_.Scalar", &|x| ops::_foreach_div_scalar_::call(x, Scalar::Int(3)), &|t, _| t.try_div_scalar(3));
        check("lerp_.Scalar", &|x| ops::_foreach_lerp_scalar_::call(x, &b, Scalar::Float(0.7)), &|t, i| {
            t.try_lerp_scalar(&b[i], Scalar::Float(0.7))
        });
        check("addcmul_", &|x| ops::_foreach_addcmul_scalar_::call(x, &b, &c, half), &|t, i| {
            t.try_addcmul_with(&b[i], &c[i], oxten::options::AddcmulOpts { value: half })
        });
        check("addcdiv_", &|x| ops::_foreach_addcdiv_scalar_::call(x, &b, &c, half), &|t, i| {
            t.try_addcdiv_with(&b[i], &c[i], oxten::options::AddcdivOpts { value: half })
        });
        check("zero_", &|x| ops::_foreach_zero_::call(x), &|t, _| oxten::try_zeros_like(t));
        // Per-index scalars, and a 0-dim tensor factor.
        let sl = [Scalar::Float(0.5), Scalar::Int(-3), Scalar::Float(2.25)];
        check("add_.ScalarList", &|x| ops::_foreach_add_scalarlist_::call(x, &sl), &|t, i| t.try_add_scalar(sl[i]));
        check("mul_.ScalarList", &|x| ops::_foreach_mul_scalarlist_::call(x, &sl), &|t, i| t.try_mul_scalar(sl[i]));
        check("div_.ScalarList", &|x| ops::_foreach_div_scalarlist_::call(x, &sl), &|t, i| t.try_div_scalar(sl[i]));
        check("div_.List", &|x| ops::_foreach_div_list_::call(x, &b), &|t, i| t.try_div(&b[i]));
        let factor = Tensor::scalar(1.75f64);
        check("mul_.Tensor", &|x| ops::_foreach_mul_::call(x, &factor), &|t, _| t.try_mul(&factor));
        check("addcmul_.ScalarList", &|x| ops::_foreach_addcmul_scalarlist_::call(x, &b, &c, &sl), &|t, i| {
            t.try_addcmul_with(&b[i], &c[i], oxten::options::AddcmulOpts { value: sl[i] })
        });
        check("addcdiv_.ScalarList", &|x| ops::_foreach_addcdiv_scalarlist_::call(x, &b, &c, &sl), &|t, i| {
            t.try_addcdiv_with(&b[i], &c[i], oxten::options::AddcdivOpts { value: sl[i] })
        });
        let packed = Tensor::from_vec(vec![0.5f32, -3.0, 2.25], &[3])?;
        check("addcdiv_.Tensor", &|x| ops::_foreach_addcdiv_::call(x, &b, &c, &packed), &|t, i| {
            t.try_addcdiv_with(&b[i], &c[i], oxten::options::AddcdivOpts { value: sl[i] })
        });
        check("addcmul_.Tensor", &|x| ops::_foreach_addcmul_::call(x, &b, &c, &packed), &|t, i| {
            t.try_addcmul_with(&b[i], &c[i], oxten::options::AddcmulOpts { value: sl[i] })
        });
        assert_same(&ops::_foreach_sqrt::call(&a)?, &a.iter().map(|t| t.sqrt()).collect::<Vec<_>>(), &what("sqrt"));
        let norms = ops::_foreach_norm_scalar::call(&a, Scalar::Int(2), None)?;
        let want: Vec<Tensor> =
            a.iter().map(|t| t.to_dtype(DType::F64).pow_tensor_scalar(2).sum().sqrt().to_dtype(dtype)).collect();
        assert_same(&norms, &want, &what("norm"));
    }
    Ok(())
}

#[test]
fn aliasing_lists_versions_and_errors() -> Result<()> {
    let xs = list(DType::F32, false, 0);
    let squares: Vec<Tensor> = xs.iter().map(|t| t.mul(t)).collect();
    let versions: Vec<u64> = xs.iter().map(|t| t.version()).collect();
    ops::_foreach_mul_list_::call(&xs, &xs)?;
    assert_same(&xs, &squares, "x *= x");
    assert!(xs.iter().zip(&versions).all(|(t, v)| t.version() > *v), "every tensor's version is bumped");
    let e = ops::_foreach_add_list_::call(&xs, &xs[..2], Scalar::Int(1)).unwrap_err().to_string();
    assert!(e.contains("Tensor lists must have the same number of tensors, got 3 and 2"), "{e}");
    // PyTorch's messages for the per-index scalar overloads.
    let e = ops::_foreach_add_scalarlist_::call(&xs, &[Scalar::Int(1)]).unwrap_err().to_string();
    assert!(e.contains("Tensor list must have same number of elements as scalar list."), "{e}");
    let e = ops::_foreach_mul_::call(&xs, &Tensor::from_vec(vec![1.0f32, 2.0], &[2])?).unwrap_err().to_string();
    assert!(e.contains("scalar tensor expected to be 0 dim but it has 1 dimensions and 2 elements."), "{e}");
    let e =
        ops::_foreach_addcdiv_::call(&xs, &xs, &xs, &Tensor::from_vec(vec![1.0f32; 2], &[2])?).unwrap_err().to_string();
    assert!(e.contains("Expected length of scalars to match input of length 3 but got 2 instead."), "{e}");
    let e = ops::_foreach_addcdiv_::call(&xs, &xs, &xs, &Tensor::from_vec(vec![1.0f32; 3], &[3, 1])?)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Expected packed scalar Tensor to be of dimension 1. Got 2 instead."), "{e}");
    let mut swapped = xs.clone();
    swapped.swap(1, 2);
    let e = ops::_foreach_add_list_::call(&xs, &swapped, Scalar::Int(1)).unwrap_err().to_string();
    assert!(e.contains("Tensors at index 1 must have the same shape"), "{e}");
    Ok(())
}

#[test]
fn clip_grad_norm_scales_to_the_max_norm() -> Result<()> {
    let params: Vec<Tensor> = list(DType::F32, false, 3).into_iter().map(|t| t.requires_grad_(true)).collect();
    for p in &params {
        p.mul(p).sum().backward();
    }
    let grads: Vec<Vec<f64>> = params.iter().map(|p| p.grad().unwrap().to_f64_vec().unwrap()).collect();
    let total = grads.iter().flatten().map(|g| g * g).sum::<f64>().sqrt();
    let norm = oxten::nn::clip_grad_norm_(&params, 1.0)?;
    assert!((norm - total).abs() < 1e-4 * total, "{norm} vs {total}");
    let after = params.iter().flat_map(|p| p.grad().unwrap().to_f64_vec().unwrap()).map(|g| g * g).sum::<f64>().sqrt();
    assert!((after - 1.0).abs() < 1e-5, "clipped norm {after}");
    // A norm already under the limit is left alone.
    let again = oxten::nn::clip_grad_norm_(&params, 10.0)?;
    assert!((again - after).abs() < 1e-5);
    Ok(())
}

/// Tensors of f64 that require grad, for the autograd checks.
fn leaves(n: usize) -> Vec<Tensor> {
    (0..n)
        .map(|k| {
            let v: Vec<f64> = (0..6).map(|i| 0.5 + ((i * 7 + k * 5) % 11) as f64 / 8.0).collect();
            Tensor::from_vec(v, &[2, 3]).unwrap().requires_grad_(true)
        })
        .collect()
}

#[test]
fn foreach_ops_differentiate_as_their_per_tensor_ops() -> Result<()> {
    use oxten::autograd::{gradcheck, GradcheckOpts};
    // Every in-place foreach op on non-leaf tensors, then the two out-of-place ones.
    let f = |t: &[Tensor]| -> Result<Vec<Tensor>> {
        let xs = vec![t[0].try_mul_scalar(1.5)?, t[1].try_add_scalar(0.25)?];
        let ys = [t[1].clone(), t[2].clone()];
        let zs = [t[2].try_add_scalar(2.0)?, t[0].try_add_scalar(3.0)?];
        ops::_foreach_mul_list_::call(&xs, &ys)?;
        ops::_foreach_addcdiv_scalar_::call(&xs, &ys, &zs, Scalar::Float(0.5))?;
        ops::_foreach_addcmul_scalar_::call(&xs, &zs, &ys, Scalar::Float(-0.25))?;
        ops::_foreach_lerp_scalar_::call(&xs, &zs, Scalar::Float(0.3))?;
        ops::_foreach_add_list_::call(&xs, &ys, Scalar::Float(2.0))?;
        ops::_foreach_add_scalar_::call(&xs, Scalar::Float(1.0))?;
        ops::_foreach_mul_scalar_::call(&xs, Scalar::Float(0.75))?;
        ops::_foreach_div_scalar_::call(&xs, Scalar::Float(4.0))?;
        let sl = [Scalar::Float(0.5), Scalar::Int(2)];
        ops::_foreach_add_scalarlist_::call(&xs, &sl)?;
        ops::_foreach_mul_scalarlist_::call(&xs, &sl)?;
        ops::_foreach_div_scalarlist_::call(&xs, &sl)?;
        ops::_foreach_div_list_::call(&xs, &zs)?;
        ops::_foreach_mul_::call(&xs, &t[1].try_select(1, 2)?.try_select(0, 0)?)?;
        ops::_foreach_addcmul_scalarlist_::call(&xs, &ys, &zs, &sl)?;
        ops::_foreach_addcdiv_::call(&xs, &ys, &zs, &Tensor::from_vec(vec![0.25, -1.0], &[2])?)?;
        let mut out = ops::_foreach_sqrt::call(&xs)?;
        out.extend(ops::_foreach_norm_scalar::call(&xs, Scalar::Float(3.0), None)?);
        Ok(out)
    };
    gradcheck(f, &leaves(3), GradcheckOpts::default())?;

    // Worked by hand: x = 2a; x *= 3 (x = 6a); x += 2·(3a) (x = 12a): dx/da = 12, and the write
    // bumps x's version once.
    let a = leaves(1).remove(0);
    let x = a.try_mul_scalar(2.0)?;
    let y = a.try_mul_scalar(3.0)?;
    let v = x.version();
    ops::_foreach_mul_scalar_::call(std::slice::from_ref(&x), Scalar::Int(3))?;
    assert_eq!(x.version(), v + 1);
    ops::_foreach_add_list_::call(std::slice::from_ref(&x), std::slice::from_ref(&y), Scalar::Int(2))?;
    x.sum().backward();
    assert_eq!(a.grad().unwrap().to_f64_vec()?, vec![12.0; 6]);
    // `_foreach_zero_` cuts the gradient; `_foreach_norm` of a leaf gives a/|a|.
    let a = leaves(1).remove(0);
    let z = a.try_mul_scalar(2.0)?;
    ops::_foreach_zero_::call(std::slice::from_ref(&z))?;
    let n = ops::_foreach_norm_scalar::call(std::slice::from_ref(&a), Scalar::Int(2), None)?.remove(0);
    z.try_add(&n)?.sum().backward();
    let av = a.to_f64_vec()?;
    let norm = av.iter().map(|v| v * v).sum::<f64>().sqrt();
    for (g, v) in a.grad().unwrap().to_f64_vec()?.iter().zip(&av) {
        assert!((g - 6.0 * v / norm).abs() < 1e-12, "{g} vs {}", 6.0 * v / norm);
    }
    Ok(())
}

#[test]
fn foreach_in_place_ops_refuse_leaves_that_require_grad() -> Result<()> {
    let ls = leaves(2);
    let nonleaf = ls[0].try_mul_scalar(2.0)?;
    let before = nonleaf.to_f64_vec()?;
    // The leaf comes second: the check runs before any write, so the first tensor is unchanged.
    let list = [nonleaf.clone(), ls[1].clone()];
    let e = ops::_foreach_add_scalar_::call(&list, Scalar::Int(1)).unwrap_err().to_string();
    assert!(
        e.contains("_foreach_add_.Scalar")
            && e.contains("a leaf Variable that requires grad is being used in an in-place operation."),
        "{e}"
    );
    assert_eq!(nonleaf.to_f64_vec()?, before);
    // A leaf on the other side of the operator is fine; a view of a leaf is refused like the leaf.
    let other = [ls[1].clone(), ls[0].clone()];
    let xs = [nonleaf.clone(), ls[1].try_mul_scalar(1.0)?];
    ops::_foreach_add_list_::call(&xs, &other, Scalar::Int(1))?;
    let e = ops::_foreach_mul_scalar_::call(&[ls[0].select(0, 1)], Scalar::Int(2)).unwrap_err().to_string();
    assert!(e.contains("a view of a leaf Variable that requires grad"), "{e}");
    // Mismatched lists are refused on the autograd path too.
    let e = ops::_foreach_mul_list_::call(&xs, &other[..1]).unwrap_err().to_string();
    assert!(e.contains("_foreach_mul_.List") && e.contains("got 2 and 1"), "{e}");
    // Under no_grad (what the optimizers do) the leaves are updated in place.
    oxten::autograd::no_grad(|| ops::_foreach_add_scalar_::call(&ls, Scalar::Int(1)))?;
    assert!(ls.iter().all(|t| t.is_leaf() && t.grad_fn().is_none()));
    assert_eq!(ls[0].to_f64_vec()?[0], 1.5);
    Ok(())
}
