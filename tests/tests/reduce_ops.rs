//! Replays tests/golden/reduce.txt — PyTorch's outputs and error messages for var/std (and
//! var_mean/std_mean), prod, min.dim/argmin/min/max, cumsum, linalg_vector_norm/norm and
//! all/any, recorded by scripts/golden_reduce.py — through oxten. Also checks meta tensors
//! and a few properties the golden file cannot express.

use oxten::options::*;
use oxten::{DType, Device, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::golden::{replay, scalar_attr, Case};

const GOLDEN: &str = include_str!("../golden/reduce.txt");

fn dtype_attr(c: &Case, k: &str) -> Option<DType> {
    c.attr(k).map(|d| DType::from_name(d).unwrap())
}

/// The `out=` tensor a case asks for: empty of `out_dtype`, or a transposed (3, 4) one.
fn out_tensor(c: &Case) -> Tensor {
    let dtype = dtype_attr(c, "out_dtype").unwrap();
    if c.attr("out_layout") == Some("t") {
        return Tensor::empty(&[4, 3], dtype, Device::Cpu, MemoryFormat::Contiguous).unwrap().t();
    }
    Tensor::empty(&[0], dtype, Device::Cpu, MemoryFormat::Contiguous).unwrap()
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let x = c.t(0);
    let dim = c.ints("dim");
    let dims = dim.as_deref();
    let d0 = || dim.as_ref().unwrap()[0];
    let keepdim = c.flag("keepdim");
    let correction = c.scalar("correction");
    let dtype = dtype_attr(c, "dtype");
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let two = |r: Result<(Tensor, Tensor)>| r.map(|(a, b)| vec![a, b]);
    match c.op.as_str() {
        "var" => one(x.try_var_correction_with(VarCorrectionOpts { dim: dims, correction, keepdim })),
        "std" => one(x.try_std_correction_with(StdCorrectionOpts { dim: dims, correction, keepdim })),
        "var_mean" => {
            two(oxten::try_var_mean_correction_with(x, VarMeanCorrectionOpts { dim: dims, correction, keepdim }))
        }
        "std_mean" => {
            two(oxten::try_std_mean_correction_with(x, StdMeanCorrectionOpts { dim: dims, correction, keepdim }))
        }
        "var_out" => one(oxten::try_var_correction_out_with(
            x,
            &out_tensor(c),
            VarCorrectionOutOpts { dim: dims, correction, keepdim },
        )),
        "std_out" => one(oxten::try_std_correction_out_with(
            x,
            &out_tensor(c),
            StdCorrectionOutOpts { dim: dims, correction, keepdim },
        )),
        "prod" => one(x.try_prod_with(ProdOpts { dtype })),
        "prod_dim" => one(x.try_prod_dim_int_with(d0(), ProdDimIntOpts { keepdim, dtype })),
        "prod_dim_out" => one(oxten::try_prod_int_out_with(x, d0(), &out_tensor(c), ProdIntOutOpts { keepdim, dtype })),
        "min_dim" => two(x.try_min_dim(d0(), keepdim)),
        "argmin" => one(x.try_argmin(dim.as_ref().map(|d| d[0]), keepdim)),
        "min" => one(x.try_min()),
        "max" => one(x.try_max()),
        "min_out" => one(oxten::try_min_unary_out(x, &out_tensor(c))),
        "max_out" => one(oxten::try_max_unary_out(x, &out_tensor(c))),
        "cumsum" => one(x.try_cumsum_with(d0(), CumsumOpts { dtype })),
        "cumsum_" => {
            let y = x.try_deep_clone()?;
            y.try_cumsum_with_(d0(), CumsumInplaceOpts { dtype })?;
            Ok(vec![y])
        }
        "cumsum_out" => one(oxten::try_cumsum_out_with(x, d0(), &out_tensor(c), CumsumOutOpts { dtype })),
        "vector_norm" => one(oxten::try_linalg_vector_norm_with(
            x,
            LinalgVectorNormOpts { ord: c.scalar("ord").unwrap(), dim: dims, keepdim, dtype },
        )),
        "vector_norm_out" => one(oxten::try_linalg_vector_norm_out_with(
            x,
            &out_tensor(c),
            LinalgVectorNormOutOpts { ord: Scalar::Int(2), dim: dims, keepdim, dtype },
        )),
        "norm" => one(x.try_norm_scalar_with(NormScalarOpts { p: c.attr("p").map_or(Scalar::Int(2), scalar_attr) })),
        "norm_dim" => {
            one(x.try_norm_scalaropt_dim_with(c.scalar("p"), dims.unwrap(), NormScalaroptDimOpts { keepdim }))
        }
        "all" => one(x.try_all()),
        "any" => one(x.try_any()),
        "all_dim" => one(x.try_all_dim(d0(), keepdim)),
        "any_dim" => one(x.try_any_dim(d0(), keepdim)),
        "all_dims" => one(x.try_all_dims(dims, keepdim)),
        "any_dims" => one(x.try_any_dims(dims, keepdim)),
        "all_out" => one(oxten::try_all_all_out(x, &out_tensor(c))),
        "any_out" => one(oxten::try_any_all_out(x, &out_tensor(c))),
        "all_dim_out" => one(oxten::try_all_out_with(x, d0(), &out_tensor(c), AllOutOpts { keepdim })),
        "any_dim_out" => one(oxten::try_any_out_with(x, d0(), &out_tensor(c), AnyOutOpts { keepdim })),
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn reductions_match_pytorch() {
    replay(GOLDEN, 500, run);
}

fn meta(sizes: &[i64], dtype: DType) -> Tensor {
    Tensor::empty(sizes, dtype, Device::Meta, MemoryFormat::Contiguous).unwrap()
}

/// Meta tensors get the shapes and dtypes without any data.
#[test]
fn meta_tensors_get_shapes_and_dtypes() {
    let x = meta(&[3, 4, 5], DType::F32);
    let check = |t: Tensor, sizes: &[i64], dtype: DType| {
        assert!(t.is_meta());
        assert_eq!((&t.sizes()[..], t.dtype()), (sizes, dtype));
    };
    check(
        x.var_correction_with(VarCorrectionOpts { dim: Some(&[1]), correction: None, keepdim: true }),
        &[3, 1, 5],
        DType::F32,
    );
    let (s, m) = oxten::std_mean_correction(&x);
    check(s, &[], DType::F32);
    check(m, &[], DType::F32);
    check(meta(&[3, 4], DType::I32).prod(), &[], DType::I64);
    check(x.prod_dim_int(-1), &[3, 4], DType::F32);
    let (v, i) = x.min_dim(0, false);
    check(v, &[4, 5], DType::F32);
    check(i, &[4, 5], DType::I64);
    check(x.argmin(Some(2), true), &[3, 4, 1], DType::I64);
    check(x.min(), &[], DType::F32);
    check(x.max(), &[], DType::F32);
    check(meta(&[3, 4], DType::U8).cumsum(1), &[3, 4], DType::I64);
    check(
        oxten::linalg_vector_norm_with(
            &x,
            LinalgVectorNormOpts {
                ord: Scalar::Float(f64::INFINITY),
                dim: Some(&[0, 2]),
                keepdim: false,
                dtype: Some(DType::F64),
            },
        ),
        &[4],
        DType::F64,
    );
    check(x.norm_scalar(), &[], DType::F32);
    check(x.all(), &[], DType::Bool);
    check(meta(&[3, 4], DType::U8).any_dim(0, false), &[4], DType::U8);
    check(x.all_dims(Some(&[]), false), &[3, 4, 5], DType::Bool);
}

/// Long reductions are split across threads and merged (Welford's partial accumulators with
/// Chan's formula): the result stays exact for data with a large mean.
#[test]
fn var_of_a_long_reduction_with_a_large_mean() {
    let n = 1_000_003usize;
    let v: Vec<f64> = (0..n).map(|i| 1e6 + (i % 7) as f64).collect();
    let mean = v.iter().sum::<f64>() / n as f64;
    let want = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let x = Tensor::from_vec(v.clone(), &[n as i64]).unwrap();
    let got = x.var_correction().item::<f64>().unwrap();
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    let x32 = x.to_dtype(DType::F32);
    let got = x32.var_correction().item::<f32>().unwrap() as f64;
    assert!((got - want).abs() <= 1e-5 * want, "{got} vs {want}");
    // Split over the columns of a matrix as well (few outputs, long reductions).
    let m = Tensor::from_vec(v[..1_000_000].to_vec(), &[2, 500_000]).unwrap();
    let (var, mean) = oxten::var_mean_correction_with(
        &m,
        VarMeanCorrectionOpts { dim: Some(&[1]), correction: Some(Scalar::Int(0)), keepdim: false },
    );
    for (k, (vv, mm)) in var.to_vec::<f64>().unwrap().iter().zip(mean.to_vec::<f64>().unwrap()).enumerate() {
        let row = &v[k * 500_000..(k + 1) * 500_000];
        let rm = row.iter().sum::<f64>() / row.len() as f64;
        let rv = row.iter().map(|x| (x - rm) * (x - rm)).sum::<f64>() / row.len() as f64;
        assert!((mm - rm).abs() <= 1e-9 * rm && (vv - rv).abs() <= 1e-9 * rv, "row {k}: {vv} {mm} vs {rv} {rm}");
    }
}

/// `cumsum_` scans in place; long scans of both layouts agree with a sequential f64 scan.
#[test]
fn cumsum_long_and_in_place() {
    let (r, c) = (700i64, 300i64);
    let v: Vec<f64> = (0..r * c).map(|i| ((i * 37) % 101) as f64 / 7.0 - 5.0).collect();
    let x = Tensor::from_vec(v.clone(), &[r, c]).unwrap();
    for d in [0i64, 1] {
        let got = x.cumsum(d).to_vec::<f64>().unwrap();
        let y = x.deep_clone();
        y.cumsum_(d);
        assert_eq!(y.to_vec::<f64>().unwrap(), got);
        let mut want = v.clone();
        for i in 0..r as usize {
            for j in 0..c as usize {
                let (pi, pj) = if d == 0 { (i.wrapping_sub(1), j) } else { (i, j.wrapping_sub(1)) };
                if pi < r as usize && pj < c as usize {
                    want[i * c as usize + j] += want[pi * c as usize + pj];
                }
            }
        }
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "dim {d}: {a} vs {b}");
        }
    }
}

/// `diff` of an empty tensor takes its shape in one step, however long the differenced dim
/// (the fuzzer found `diff(n=2^62)` of a `[2^40, 0]` tensor looping 2^40 times).
#[test]
fn diff_of_an_empty_tensor_does_not_loop_over_its_length() -> oxten::Result<()> {
    let x = oxten::Tensor::from_vec(Vec::<f32>::new(), &[0])?.try_expand(&[1 << 40, 0])?;
    let y = oxten::ops::diff::call(&x, 1 << 62, 0, None, None)?;
    assert_eq!(y.sizes(), [0, 0]);
    let y = oxten::ops::diff::call(&x, 3, 0, None, None)?;
    assert_eq!((y.sizes().to_vec(), y.dtype()), (vec![(1 << 40) - 3, 0], oxten::DType::F32));
    Ok(())
}

/// `histogram` with a bin count: elements exactly on an inner float32 edge fall in the bin to
/// its right (the bin is settled on the edges, not only interpolated), the last edge is inclusive,
/// a single-valued input is widened by 1/2 on each side, an empty one spans [0, 1]; densities
/// integrate to 1; weights are summed. PyTorch 2.15's outputs.
#[test]
fn histogram_bins_settle_on_the_edges() -> Result<()> {
    let x = Tensor::from_vec(vec![0.0f32, 0.1, 0.2, 0.3, 0.7, 1.0], &[6])?;
    let (hist, edges) = oxten::ops::histogram_bin_ct::call(&x, 10, None, None, false)?;
    assert_eq!(hist.to_f64_vec()?, [1., 1., 1., 1., 0., 0., 0., 1., 0., 1.]);
    assert_eq!(edges.dtype(), DType::F32);
    assert_eq!(edges.sizes(), [11]);
    let (hist, _) = oxten::ops::histogram_bin_ct::call(&x, 3, Some(&[0.1, 0.7]), None, true)?;
    // f32 bin widths: PyTorch's values to the last bit.
    assert_eq!(hist.to_f64_vec()?, [2.500000238418579, 1.2499998807907104, 1.2500001192092896]);
    let ones = Tensor::from_vec(vec![1.0f64; 3], &[3])?;
    let (hist, edges) = oxten::ops::histogram_bin_ct::call(&ones, 4, None, None, false)?;
    assert_eq!((hist.to_f64_vec()?, edges.to_f64_vec()?), (vec![0., 0., 3., 0.], vec![0.5, 0.75, 1.0, 1.25, 1.5]));
    let empty = Tensor::from_vec(Vec::<f32>::new(), &[0])?;
    let (hist, edges) = oxten::ops::histogram_bin_ct::call(&empty, 2, None, None, false)?;
    assert_eq!((hist.to_f64_vec()?, edges.to_f64_vec()?), (vec![0., 0.], vec![0., 0.5, 1.]));
    let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6])?;
    let (hist, _) = oxten::ops::histogram_bin_ct::call(&x, 2, None, Some(&w), false)?;
    assert_eq!(hist.to_f64_vec()?, [10.0, 11.0]);
    // Given edges: binary search; edges that decrease hold nothing.
    let bins = Tensor::from_vec(vec![0.0f32, 0.25, 1.0], &[3])?;
    let (hist, edges) = oxten::ops::histogram_bins_tensor::call(&x, &bins, None, false)?;
    assert_eq!((hist.to_f64_vec()?, edges.to_f64_vec()?), (vec![3., 3.], vec![0., 0.25, 1.]));
    let (hist, _) =
        oxten::ops::histogram_bins_tensor::call(&x, &Tensor::from_vec(vec![2.0f32, 1.0], &[2])?, None, false)?;
    assert_eq!(hist.to_f64_vec()?, [0.]);
    Ok(())
}

/// `histogram`'s bad arguments: PyTorch's messages.
#[test]
fn histogram_rejects_bad_arguments() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    let err = |r: Result<(Tensor, Tensor)>| r.unwrap_err().to_string();
    let e = err(oxten::ops::histogram_bin_ct::call(&Tensor::from_vec(vec![1i64, 2], &[2])?, 3, None, None, false));
    assert!(e.contains("\"histogramdd\" not implemented for 'Long'"), "{e}");
    let e = err(oxten::ops::histogram_bin_ct::call(&x, 0, None, None, false));
    assert!(e.contains("bins must be > 0, but got 0 for dimension 0"), "{e}");
    let e = err(oxten::ops::histogram_bin_ct::call(&x, 3, Some(&[2.0, 1.0]), None, false));
    assert!(e.contains("min should not exceed max, but got min 2 max 1 for dimension 0"), "{e}");
    let e =
        err(oxten::ops::histogram_bin_ct::call(&Tensor::from_vec(vec![1.0f32, f32::NAN], &[2])?, 3, None, None, false));
    assert!(e.contains("dimension 0's range [nan, nan] is not finite"), "{e}");
    let e = err(oxten::ops::histogram_bin_ct::call(&x, 3, Some(&[0.0, f64::INFINITY]), None, false));
    assert!(e.contains("range [0, inf] is not finite"), "{e}");
    let e = err(oxten::ops::histogram_bin_ct::call(&x, 3, Some(&[0.0, 1.0, 2.0]), None, false));
    assert!(e.contains("range should have 2 elements, but got 3"), "{e}");
    let e = err(oxten::ops::histogram_bin_ct::call(&x, 2, None, Some(&Tensor::from_vec(vec![1.0f32], &[1])?), false));
    assert!(e.contains("same shape as the input tensor"), "{e}");
    let e =
        err(oxten::ops::histogram_bin_ct::call(&x, 2, None, Some(&Tensor::from_vec(vec![1.0f64, 2.0], &[2])?), false));
    assert!(e.contains("input(float), and weight(double)"), "{e}");
    let e = err(oxten::ops::histogram_bins_tensor::call(&x, &Tensor::from_vec(vec![1.0f64, 2.0], &[2])?, None, false));
    assert!(e.contains("input with dtype float and bins for dimension 0 with dtype double"), "{e}");
    let e =
        err(oxten::ops::histogram_bins_tensor::call(&x, &Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?, None, false));
    assert!(e.contains("bins tensor should have one dimension, but got 2 dimensions"), "{e}");
    Ok(())
}
