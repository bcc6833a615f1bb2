//! Replays tests/golden/sort.txt — PyTorch's outputs (values, indices, dtypes, strides) and error
//! messages for `sort`, `argsort`, `topk`, `kthvalue`, `median` and `mode`, recorded by
//! scripts/golden_sort.py — then checks what the file cannot: stability on long rows (the
//! parallel sort), gradients, and meta tensors.

use oxten::ops;
use oxten::{DType, Device, MemoryFormat, Result, Tensor};
use oxten_tests::golden::{replay, Case};

const GOLDEN: &str = include_str!("../golden/sort.txt");

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let x = c.t(0);
    let dim = c.int("dim");
    let keepdim = c.flag("keepdim");
    let descending = c.flag("descending");
    let pair = |r: Result<(Tensor, Tensor)>| r.map(|(v, i)| vec![v, i]);
    match c.op.as_str() {
        "sort" => pair(ops::sort::call(x, dim.unwrap_or(-1), descending)),
        "sort_stable" => pair(ops::sort_stable::call(x, Some(true), dim.unwrap_or(-1), descending)),
        "argsort" => Ok(vec![ops::argsort::call(x, dim.unwrap_or(-1), descending)?]),
        "topk" => {
            pair(ops::topk::call(x, c.int("k").unwrap(), dim.unwrap_or(-1), c.attr("largest") != Some("0"), true))
        }
        "kthvalue" => pair(ops::kthvalue::call(x, c.int("k").unwrap(), dim.unwrap_or(-1), keepdim)),
        "median_dim" => pair(ops::median_dim::call(x, dim.unwrap(), keepdim)),
        "median" => Ok(vec![ops::median::call(x)?]),
        "mode" => pair(ops::mode::call(x, dim.unwrap_or(-1), keepdim)),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn sorting_matches_pytorch() {
    replay(GOLDEN, 90, run);
}

/// A row long enough for the parallel merge sort, full of ties: equal keys keep their order,
/// ascending and descending, and the result is a permutation.
#[test]
fn long_rows_sort_stably() -> Result<()> {
    let n = 200_003usize;
    let keys: Vec<i32> = (0..n).map(|i| ((i * 7919) % 13) as i32).collect();
    let t = Tensor::from_vec(keys.clone(), &[n as i64])?;
    for descending in [false, true] {
        let (v, i) = ops::sort::call(&t, -1, descending)?;
        let (v, i) = (v.to_vec::<i32>()?, i.to_vec::<i64>()?);
        for k in 1..n {
            let (a, b) = (v[k - 1], v[k]);
            assert!(if descending { a >= b } else { a <= b }, "order at {k}");
            if a == b {
                assert!(i[k - 1] < i[k], "ties keep their order at {k}");
            }
            assert_eq!(keys[i[k] as usize], b);
        }
    }
    Ok(())
}

/// Gradients flow back to the selected positions (sort, topk, kthvalue, median, mode) and are
/// shared among ties for `median()`.
#[test]
fn gradients_reach_the_selected_elements() -> Result<()> {
    use oxten::autograd::{gradcheck, GradcheckOpts};
    let x = Tensor::from_vec(vec![0.3f64, -1.2, 2.5, 0.9, -0.4, 1.7], &[2, 3])?.requires_grad_(true);
    type Op = Box<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>>;
    let cases: Vec<Op> = vec![
        Box::new(|t| Ok(vec![ops::sort::call(&t[0], 1, true)?.0])),
        Box::new(|t| Ok(vec![ops::topk::call(&t[0], 2, 0, true, true)?.0])),
        Box::new(|t| Ok(vec![ops::kthvalue::call(&t[0], 2, 1, true)?.0])),
        Box::new(|t| Ok(vec![ops::median_dim::call(&t[0], 1, false)?.0])),
        Box::new(|t| Ok(vec![ops::median::call(&t[0])?])),
        Box::new(|t| Ok(vec![ops::mode::call(&t[0], 0, false)?.0])),
    ];
    for f in &cases {
        gradcheck(|t: &[Tensor]| f(t), std::slice::from_ref(&x), GradcheckOpts::default())?;
    }
    let ties = Tensor::from_vec(vec![1.0f64, 2.0, 2.0, 3.0], &[4])?.requires_grad_(true);
    ops::median::call(&ties)?.try_backward()?;
    assert_eq!(ties.grad().unwrap().to_vec::<f64>()?, [0.0, 0.5, 0.5, 0.0]);
    Ok(())
}

#[test]
fn meta_tensors_get_shapes() -> Result<()> {
    let m = Tensor::empty(&[4, 7], DType::F16, Device::Meta, MemoryFormat::Contiguous)?;
    let (v, i) = ops::topk::call(&m, 3, 1, true, true)?;
    assert_eq!((&v.sizes()[..], v.dtype(), i.dtype()), (&[4i64, 3][..], DType::F16, DType::I64));
    let (v, _) = ops::kthvalue::call(&m, 2, 0, true)?;
    assert_eq!(v.sizes()[..], [1, 7]);
    assert_eq!(ops::median::call(&m)?.dim(), 0);
    let (v, _) = ops::sort::call(&m, 0, false)?;
    assert_eq!((v.sizes()[..].to_vec(), v.device()), (vec![4, 7], Device::Meta));
    Ok(())
}

/// `unique_consecutive` and `unique_dim` on the cases PyTorch 2.15 answers specially (values from
/// `torch.ops.aten`): 0-dim tensors have no slices, empty slices, and the inverse and counts
/// that the dim forms always return.
#[test]
fn unique_over_runs_and_slices() {
    let x = oxten::tensor![[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]];
    let (v, inv, counts) = oxten::unique_dim(&x, 0);
    assert_eq!(v.to_vec::<f32>().unwrap(), [0.0, 5.0, 1.0, 2.0]);
    assert_eq!((inv.to_vec::<i64>().unwrap(), counts.to_vec::<i64>().unwrap()), (vec![1, 1, 0], vec![1, 2]));
    let (v, inv, counts) = oxten::unique_dim_consecutive(&x, 0);
    assert_eq!(v.to_vec::<f32>().unwrap(), [1.0, 2.0, 0.0, 5.0]);
    assert_eq!((inv.to_vec::<i64>().unwrap(), counts.to_vec::<i64>().unwrap()), (vec![0, 0, 1], vec![2, 1]));
    // Columns: both differ, so both stay; the values are a view with the dim moved back.
    let (v, _, counts) = oxten::unique_dim(&x, 1);
    assert_eq!((v.sizes().to_vec(), counts.to_vec::<i64>().unwrap()), (vec![3, 2], vec![1, 1]));
    let (v, inv, counts) = oxten::unique_consecutive(&oxten::tensor![1, 1, 2, 2, 1]);
    assert_eq!(v.to_vec::<i64>().unwrap(), [1, 2, 1]);
    assert_eq!((inv.numel(), counts.numel()), (0, 0), "not asked for");
    let nan = oxten::tensor![f32::NAN, f32::NAN];
    assert_eq!(oxten::unique_consecutive(&nan).0.numel(), 2, "NaN never equals NaN");
    let e = oxten::try_unique_dim(&oxten::tensor![3.0].try_squeeze().unwrap(), -1).unwrap_err().to_string();
    assert!(e.contains("Dimension specified as -1 but tensor has no dimensions"), "{e}");
    let e = oxten::try_unique_dim(&oxten::zeros(&[3, 0]), 0).unwrap_err().to_string();
    assert!(e.contains("There are 0 sized dimensions, and they aren't selected"), "{e}");
    let (v, inv, counts) = oxten::unique_dim(&oxten::zeros(&[0, 3]), 0);
    assert_eq!((v.sizes().to_vec(), inv.numel(), counts.numel()), (vec![0, 3], 0, 0));
}
