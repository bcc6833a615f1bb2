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
