//! Reductions: output shapes, sum (exactness, reduced-precision accumulation, layouts,
//! parallel paths), generic reductions, and value+index reductions.

use half::{bf16, f16};
use oxten::iter::{
    check_reduction_nonempty, make_reduction, reduce_kernel, reduce_with_index_kernel, reduction_output_shape,
    sum_kernel, to_dtype, StructuredOutputs,
};
use oxten::{DType, Device, MemoryFormat, Tensor};

/// Runs sum the way a structured `sum.dim_IntList` would: shape, set_output, iterator, kernel.
fn sum(x: &Tensor, dims: Option<&[i64]>, keepdim: bool) -> Tensor {
    let (shape, _) = reduction_output_shape(&x.sizes(), dims, keepdim).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    outs.set_output(0, &shape, None, x.dtype(), x.device()).unwrap();
    let iter = make_reduction(outs.output(0), x, dims, keepdim).unwrap();
    sum_kernel(&iter);
    outs.into_outputs().remove(0)
}

/// Naive f64 reference: sums `vals` (row-major over `shape`) over the masked dims.
fn naive_sum(vals: &[f64], shape: &[i64], mask: &[bool]) -> Vec<f64> {
    naive_fold(vals, shape, mask, 0.0, |a, b| a + b)
}

fn naive_fold(vals: &[f64], shape: &[i64], mask: &[bool], init: f64, f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    let out_shape: Vec<i64> = shape.iter().zip(mask).map(|(&s, &m)| if m { 1 } else { s }).collect();
    let mut out = vec![init; out_shape.iter().product::<i64>() as usize];
    for (flat, &v) in vals.iter().enumerate() {
        let mut rem = flat as i64;
        let mut o = 0i64;
        let mut mul = 1i64;
        for d in (0..shape.len()).rev() {
            let i = rem % shape[d];
            rem /= shape[d];
            if !mask[d] {
                o += i * mul;
            }
            mul *= out_shape[d];
        }
        out[o as usize] = f(out[o as usize], v);
    }
    out
}

fn seq(n: i64) -> Vec<f32> {
    (0..n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect()
}

#[test]
fn output_shapes() {
    assert_eq!(reduction_output_shape(&[2, 3, 4], Some(&[1]), false).unwrap(), (vec![2, 4], vec![false, true, false]));
    assert_eq!(reduction_output_shape(&[2, 3, 4], Some(&[-1, 0]), true).unwrap().0, vec![1, 3, 1]);
    assert_eq!(reduction_output_shape(&[2, 3, 4], None, false).unwrap().0, Vec::<i64>::new());
    assert_eq!(reduction_output_shape(&[2, 3, 4], Some(&[]), true).unwrap().0, vec![1, 1, 1]);
    assert_eq!(reduction_output_shape(&[], Some(&[0]), false).unwrap().0, Vec::<i64>::new());
    let e = reduction_output_shape(&[2, 3], Some(&[1, -1]), false).unwrap_err();
    assert_eq!(e.message, "dim 1 appears multiple times in the list of dims");
    assert!(reduction_output_shape(&[2, 3], Some(&[2]), false).is_err());
}

#[test]
fn sum_over_dims_matches_naive() {
    let shape = [3i64, 4, 5];
    let x = Tensor::from_vec(seq(60), &shape).unwrap();
    let vals: Vec<f64> = seq(60).into_iter().map(f64::from).collect();
    // A transposed view of the same values, to exercise other layouts.
    let base = Tensor::from_vec(seq(60), &[5, 4, 3]).unwrap();
    let xt = base.alias_with_layout(&[3, 4, 5], &[1, 3, 12], 0).unwrap();
    let vals_t = xt.to_f64_vec().unwrap();
    let cases: [&[i64]; 7] = [&[0], &[1], &[2], &[0, 2], &[1, 2], &[0, 1, 2], &[]];
    for dims in cases {
        let (_, mask) = reduction_output_shape(&shape, Some(dims), true).unwrap();
        for keepdim in [false, true] {
            for (t, v) in [(&x, &vals), (&xt, &vals_t)] {
                let out = sum(t, Some(dims), keepdim);
                let (want_shape, _) = reduction_output_shape(&shape, Some(dims), keepdim).unwrap();
                assert_eq!(out.sizes().to_vec(), want_shape);
                let got: Vec<f64> = out.to_f64_vec().unwrap();
                assert_eq!(got, naive_sum(v, &shape, &mask), "dims {dims:?} keepdim {keepdim}");
            }
        }
    }
}

#[test]
fn column_sums_of_a_tall_matrix() {
    // sum(dim=0) of a row-major [rows, cols] matrix uses the column mode: groups of 256
    // columns, added 64 at a time in registers, then the rest.
    for cols in [1i64, 3, 40, 70, 130, 300] {
        let rows = 1000;
        let x = Tensor::from_vec(seq(rows * cols), &[rows, cols]).unwrap();
        let vals: Vec<f64> = seq(rows * cols).into_iter().map(f64::from).collect();
        let got = sum(&x, Some(&[0]), false).to_f64_vec().unwrap();
        assert_eq!(got, naive_sum(&vals, &[rows, cols], &[true, false]), "cols {cols}");
        let xi =
            Tensor::from_vec((0..rows * cols).map(|v| (v % 1000) as i32).collect::<Vec<_>>(), &[rows, cols]).unwrap();
        let vals: Vec<f64> = (0..rows * cols).map(|v| (v % 1000) as f64).collect();
        let got = sum(&xi, Some(&[0]), false).to_f64_vec().unwrap();
        assert_eq!(got, naive_sum(&vals, &[rows, cols], &[true, false]), "i32, cols {cols}");
    }
    // Accuracy of the column cascade: 1e6 rows of 0.1 in f32.
    let x = Tensor::from_vec(vec![0.1f32; 2_000_000], &[1_000_000, 2]).unwrap();
    let got = sum(&x, Some(&[0]), false).to_vec::<f32>().unwrap();
    let want = 1e6 * (0.1f32 as f64);
    for g in got {
        assert!(((g as f64 - want) / want).abs() < 1e-5, "{g}");
    }
}

#[test]
fn column_sums_add_rows_in_order_in_blocks_of_64() {
    // Each column adds its rows in order, 64 at a time; the blocks' sums are then added (for up
    // to two blocks, the second plus the first). Values that round make the order visible: a
    // batch of exactly 64 rows is one plain in-order sum.
    for (rows, cols) in [(64usize, 10usize), (64, 300), (65, 10), (100, 256), (128, 10), (128, 300)] {
        let vals: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919) % 1000) as f32 / 300.0 - 1.7).collect();
        let x = Tensor::from_vec(vals.clone(), &[rows as i64, cols as i64]).unwrap();
        let got = sum(&x, Some(&[0]), false).to_vec::<f32>().unwrap();
        for (c, &g) in got.iter().enumerate() {
            let block = |r0: usize, r1: usize| (r0..r1).fold(0.0f32, |acc, r| acc + vals[r * cols + c]);
            let want = if rows <= 64 { block(0, rows) } else { block(64, rows) + block(0, 64) };
            assert_eq!(g.to_bits(), want.to_bits(), "{rows}x{cols}, column {c}: {g} vs {want}");
        }
    }
}

#[test]
fn cascade_sum_is_exact_and_accurate() {
    let n = 1 << 24;
    let ones = Tensor::from_vec(vec![1.0f32; n], &[n as i64]).unwrap();
    assert_eq!(sum(&ones, None, false).item::<f32>().unwrap(), 16_777_216.0);

    let n = 10_000_000;
    let x = Tensor::from_vec(vec![0.1f32; n], &[n as i64]).unwrap();
    let got = sum(&x, None, false).item::<f32>().unwrap() as f64;
    let want = n as f64 * (0.1f32 as f64);
    assert!(((got - want) / want).abs() < 1e-3, "{got} vs {want}");
    // Strided input (every other element) goes through the strided cascade.
    let y = Tensor::from_vec(vec![0.1f32; 2 * n], &[2 * n as i64]).unwrap();
    let every_other = y.alias_with_layout(&[n as i64], &[2], 0).unwrap();
    let got = sum(&every_other, None, false).item::<f32>().unwrap() as f64;
    assert!(((got - want) / want).abs() < 1e-3, "{got} vs {want}");
}

#[test]
fn reduced_precision_accumulates_in_f32() {
    // A naive bf16 accumulator gets stuck at 256 (256 + 0.1 rounds back to 256).
    let v = bf16::from_f32(0.1);
    let x = Tensor::from_vec(vec![v; 10_000], &[10_000]).unwrap();
    let got = f32::from(sum(&x, None, false).item::<bf16>().unwrap());
    let want = 10_000.0 * f32::from(v);
    assert!((got - want).abs() / want < 0.01, "{got}");

    let h = f16::from_f32(0.1);
    let x = Tensor::from_vec(vec![h; 10_000], &[100, 100]).unwrap();
    let got = f32::from(sum(&x, None, false).item::<f16>().unwrap());
    assert!((got - 10_000.0 * f32::from(h)).abs() / 1000.0 < 0.01, "{got}");
    // Column mode in f16.
    let col = sum(&x, Some(&[0]), false).to_vec::<f16>().unwrap();
    assert!(col.iter().all(|&c| (f32::from(c) - 100.0 * f32::from(h)).abs() < 0.05), "{col:?}");
}

#[test]
fn integer_and_empty_sums() {
    // PyTorch sums ints into int64: the input is converted to the output dtype first.
    let x = Tensor::from_vec(vec![i32::MAX, 1, 2], &[3]).unwrap();
    let out = Tensor::empty(&[], DType::I64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let iter = make_reduction(&out, &to_dtype(&x, DType::I64).unwrap(), None, false).unwrap();
    sum_kernel(&iter);
    assert_eq!(out.item::<i64>().unwrap(), i32::MAX as i64 + 3);

    let e = Tensor::empty(&[3, 0], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let out = Tensor::from_vec(vec![7.0f32; 3], &[3]).unwrap();
    sum_kernel(&make_reduction(&out, &e, Some(&[1]), false).unwrap());
    assert_eq!(out.to_vec::<f32>().unwrap(), [0.0; 3]);
    assert_eq!(sum(&e, Some(&[0]), false).sizes(), [0]);
    let b = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    assert_eq!(sum(&to_dtype(&b, DType::I64).unwrap(), None, false).item::<i64>().unwrap(), 2);
}

#[test]
fn parallel_reductions_match_serial_reference() {
    // Many outputs (parallel over outputs) and few long outputs (parallel over the range).
    for shape in [[4096i64, 64], [3, 200_000], [200_000, 3]] {
        let n = shape[0] * shape[1];
        let vals: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
        let x = Tensor::from_vec(vals.clone(), &shape).unwrap();
        let v64: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
        for d in [0i64, 1] {
            let mut mask = [false; 2];
            mask[d as usize] = true;
            let got = sum(&x, Some(&[d]), false).to_f64_vec().unwrap();
            assert_eq!(got, naive_sum(&v64, &shape, &mask), "{shape:?} dim {d}");
            let out =
                Tensor::empty(&[shape[1 - d as usize]], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
            let iter = make_reduction(&out, &x, Some(&[d]), false).unwrap();
            reduce_kernel::<f32, f32, f32>(&iter, f32::NEG_INFINITY, f32::max, f32::max, |a| a);
            assert_eq!(out.to_f64_vec().unwrap(), naive_fold(&v64, &shape, &mask, f64::NEG_INFINITY, f64::max));
        }
    }
}

#[test]
fn generic_reduction_amax_and_prod() {
    let x = Tensor::from_vec(vec![1.0f32, 5.0, f32::NAN, 2.0, -1.0, 0.5], &[2, 3]).unwrap();
    let nan_max = |a: f32, b: f32| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            a.max(b)
        }
    };
    let out = Tensor::empty(&[2], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    reduce_kernel::<f32, f32, f32>(
        &make_reduction(&out, &x, Some(&[1]), false).unwrap(),
        f32::NEG_INFINITY,
        nan_max,
        nan_max,
        |a| a,
    );
    let got = out.to_vec::<f32>().unwrap();
    assert!(got[0].is_nan());
    assert_eq!(got[1], 2.0);
    // prod over dim 0 with an f64 accumulator, written as f32.
    let out = Tensor::empty(&[1, 3], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    reduce_kernel::<f32, f64, f32>(
        &make_reduction(&out, &x, Some(&[0]), true).unwrap(),
        1.0,
        |a, v| a * v as f64,
        |a, b| a * b,
        |a| a as f32,
    );
    let got = out.to_vec::<f32>().unwrap();
    assert_eq!((got[0], got[1]), (2.0, -5.0));
    assert!(got[2].is_nan());
    // bf16 input, values seen as f32.
    let h = Tensor::from_vec(vec![bf16::from_f32(1.5), bf16::from_f32(-3.0)], &[2]).unwrap();
    let out = Tensor::empty(&[], DType::BF16, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    reduce_kernel::<bf16, f32, bf16>(
        &make_reduction(&out, &h, None, false).unwrap(),
        0.0,
        |a, v| a + v.abs(),
        |a, b| a + b,
        bf16::from_f32,
    );
    assert_eq!(out.item::<bf16>().unwrap(), bf16::from_f32(4.5));
}

fn max_dim(x: &Tensor, dim: Option<i64>, keepdim: bool) -> oxten::Result<(Vec<f32>, Vec<i64>)> {
    let shape = match dim {
        Some(d) => reduction_output_shape(&x.sizes(), Some(&[d]), keepdim)?.0,
        None => vec![],
    };
    let values = Tensor::empty(&shape, DType::F32, Device::Cpu, MemoryFormat::Contiguous)?;
    let indices = Tensor::empty(&shape, DType::I64, Device::Cpu, MemoryFormat::Contiguous)?;
    reduce_with_index_kernel::<f32>("max", Some(&values), &indices, x, dim, keepdim, |a, b| a > b)?;
    Ok((values.to_vec::<f32>()?, indices.to_vec::<i64>()?))
}

#[test]
fn max_with_index_nan_and_ties() {
    let x = Tensor::from_vec(vec![1.0f32, 3.0, 3.0, 2.0], &[4]).unwrap();
    assert_eq!(max_dim(&x, Some(0), false).unwrap(), (vec![3.0], vec![1]));
    let x = Tensor::from_vec(vec![1.0f32, f32::NAN, 3.0, f32::NAN], &[4]).unwrap();
    let (v, i) = max_dim(&x, Some(0), false).unwrap();
    assert!(v[0].is_nan());
    assert_eq!(i, [1]);
    // Rows: [5, 1, 5], [0, NaN, 9] (stored transposed, so the reduced dim is strided).
    let base = Tensor::from_vec(vec![5.0f32, 0.0, 1.0, f32::NAN, 5.0, 9.0], &[3, 2]).unwrap();
    let xt = base.alias_with_layout(&[2, 3], &[1, 2], 0).unwrap();
    let (v, i) = max_dim(&xt, Some(1), true).unwrap();
    assert_eq!(v[0], 5.0);
    assert!(v[1].is_nan());
    assert_eq!(i, [0, 1]);
    let (v, i) = max_dim(&xt, Some(0), false).unwrap();
    assert!(v[1].is_nan());
    assert_eq!((v[0], v[2], i), (5.0, 9.0, vec![0, 1, 1]));
    // argmax over the flattened (transposed) tensor: row-major flat index of the first 9.
    let idx = Tensor::empty(&[], DType::I64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let x2 = base.alias_with_layout(&[2, 3], &[1, 2], 0).unwrap();
    let no_nan = Tensor::from_vec(vec![5.0f32, 0.0, 1.0, 7.0, 9.0, 9.0], &[3, 2]).unwrap();
    let no_nan_t = no_nan.alias_with_layout(&[2, 3], &[1, 2], 0).unwrap(); // [[5,1,9],[0,7,9]]
    reduce_with_index_kernel::<f32>("argmax", None, &idx, &no_nan_t, None, false, |a, b| a > b).unwrap();
    assert_eq!(idx.item::<i64>().unwrap(), 2);
    reduce_with_index_kernel::<f32>("argmax", None, &idx, &x2, None, false, |a, b| a > b).unwrap();
    assert_eq!(idx.item::<i64>().unwrap(), 4);
    // min: NaN still wins.
    let y = Tensor::from_vec(vec![2i32, -1, -1, 7], &[4]).unwrap();
    let (vi, ii) = (Tensor::scalar(0i32), Tensor::scalar(0i64));
    reduce_with_index_kernel::<i32>("min", Some(&vi), &ii, &y, Some(0), false, |a, b| a < b).unwrap();
    assert_eq!((vi.item::<i32>().unwrap(), ii.item::<i64>().unwrap()), (-1, 1));
}

#[test]
fn long_argmax_in_parallel_finds_first_occurrence() {
    let n = 1_000_000;
    let mut v = vec![0.0f32; n];
    v[123_457] = 5.0;
    v[999_999] = 5.0;
    v[700_001] = 4.0;
    let x = Tensor::from_vec(v, &[n as i64]).unwrap();
    assert_eq!(max_dim(&x, Some(0), false).unwrap(), (vec![5.0], vec![123_457]));
    let mut v = vec![1.0f32; n];
    v[600_000] = f32::NAN;
    v[800_000] = f32::NAN;
    let x = Tensor::from_vec(v, &[n as i64]).unwrap();
    assert_eq!(max_dim(&x, Some(0), false).unwrap().1, vec![600_000]);
}

#[test]
fn empty_reductions_without_identity_fail() {
    let e = Tensor::empty(&[0, 3], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let err = max_dim(&e, Some(0), false).unwrap_err();
    assert_eq!(err.message, "max(): Expected reduction dim 0 to have non-zero size.");
    // Reducing the non-empty dim of an empty tensor is fine and gives an empty result.
    assert_eq!(max_dim(&e, Some(1), false).unwrap(), (vec![], vec![]));
    let err = check_reduction_nonempty("amax", &[2, 0], Some(&[-1])).unwrap_err();
    assert_eq!(err.message, "amax(): Expected reduction dim 1 to have non-zero size.");
    assert!(check_reduction_nonempty("argmax", &[0], None).is_err());
    assert!(check_reduction_nonempty("amax", &[2, 3], None).is_ok());
}
