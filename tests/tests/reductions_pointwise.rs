//! Reductions (`sum`, `mean`, `amax`/`amin`, `max.dim`, `argmax`), selection (`where`,
//! `logical_not`) and the hand-written pointwise kernels (`gelu`, `clamp`, `pow`).
//!
//! Expected values are computed by hand or are what PyTorch prints for the same call (quoted
//! in the comments as `torch: ...`); error messages are PyTorch's.

use oxten::ops;
use oxten::options::{ClampInplaceOpts, ClampOpts, GeluOpts, SumDimIntlistOpts};
use oxten::{DType, Device, Element, MemoryFormat, Scalar, Tensor};

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

fn t<T: Element>(data: Vec<T>, sizes: &[i64]) -> Tensor {
    Tensor::from_vec(data, sizes).unwrap()
}

/// `x.to(dtype)` through the runtime's converting copy (independent of the conversion ops).
fn cast(x: &Tensor, dtype: DType) -> Tensor {
    let out = Tensor::empty(&x.sizes(), dtype, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    oxten::iter::copy_(&out, x).unwrap();
    out
}

fn empty(sizes: &[i64], dtype: DType) -> Tensor {
    Tensor::empty(sizes, dtype, Device::Cpu, MemoryFormat::Contiguous).unwrap()
}

fn meta(sizes: &[i64], dtype: DType) -> Tensor {
    Tensor::empty(sizes, dtype, Device::Meta, MemoryFormat::Contiguous).unwrap()
}

fn vals(x: &Tensor) -> Vec<f64> {
    x.to_f64_vec().unwrap()
}

#[track_caller]
fn assert_close(got: &Tensor, want: &[f64], tol: f64) {
    let g = vals(got);
    assert_eq!(g.len(), want.len(), "got {g:?}, want {want:?}");
    for (a, b) in g.iter().zip(want) {
        let ok = (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol * (1.0 + b.abs());
        assert!(ok, "got {g:?}, want {want:?}");
    }
}

#[track_caller]
fn assert_err<T: std::fmt::Debug>(r: oxten::Result<T>, message: &str) {
    let e = r.unwrap_err();
    assert_eq!(e.message, message, "full error: {e}");
}

const NAN: f64 = f64::NAN;

/// [[0, 1, 2], [3, 4, 5]] as f32.
fn m23() -> Tensor {
    t(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3])
}

// ---------------------------------------------------------------------------------------------
// sum
// ---------------------------------------------------------------------------------------------

#[test]
fn sum_over_dims_keepdim_and_all() {
    let x = m23();
    let s0 = ops::sum_dim_intlist::call(&x, Some(&[0]), false, None).unwrap();
    assert_eq!(s0.sizes(), [3]);
    assert_eq!(s0.to_vec::<f32>().unwrap(), [3.0, 5.0, 7.0]);
    let s1 = ops::sum_dim_intlist::call(&x, Some(&[-1]), true, None).unwrap();
    assert_eq!(s1.sizes(), [2, 1]);
    assert_eq!(s1.to_vec::<f32>().unwrap(), [3.0, 12.0]);
    // dim=None and dim=[] both reduce every dim; so does the plain `sum`.
    for d in [None, Some(&[][..]), Some(&[0, 1][..])] {
        let s = ops::sum_dim_intlist::call(&x, d, false, None).unwrap();
        assert_eq!(s.sizes(), [] as [i64; 0]);
        assert_eq!(s.item::<f32>().unwrap(), 15.0);
    }
    assert_eq!(x.sum().item::<f32>().unwrap(), 15.0);
    let all_keep = x.sum_dim_intlist_with(None, true, SumDimIntlistOpts { dtype: None });
    assert_eq!(all_keep.sizes(), [1, 1]);

    // torch.arange(24.).reshape(2,3,4).sum((0,2)) -> [60., 92., 124.], keepdim shape [1, 3, 1]
    let y: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let y = t(y, &[2, 3, 4]);
    assert_eq!(
        ops::sum_dim_intlist::call(&y, Some(&[0, 2]), false, None).unwrap().to_vec::<f32>().unwrap(),
        [60.0, 92.0, 124.0]
    );
    assert_eq!(ops::sum_dim_intlist::call(&y, Some(&[0, 2]), true, None).unwrap().sizes(), [1, 3, 1]);
    // A permuted (non-contiguous) input: torch: x.transpose(0, 2).sum(0) ->
    // [[6, 54], [22, 70], [38, 86]]
    let yt = ops::transpose::call(&y, 0, 2).unwrap();
    let s = ops::sum_dim_intlist::call(&yt, Some(&[0]), false, None).unwrap();
    assert_eq!(s.sizes(), [3, 2]);
    assert_eq!(s.to_vec::<f32>().unwrap(), [6.0, 54.0, 22.0, 70.0, 38.0, 86.0]);

    assert_err(
        ops::sum_dim_intlist::call(&x, Some(&[0, 0]), false, None),
        "dim 0 appears multiple times in the list of dims",
    );
}

#[test]
fn sum_of_integers_is_i64_and_dtype_argument() {
    // torch.tensor([[1,2],[3,4]], dtype=torch.int32).sum() -> tensor(10) (int64)
    let x = t(vec![1i32, 2, 3, 4], &[2, 2]);
    let s = x.sum();
    assert_eq!(s.dtype(), DType::I64);
    assert_eq!(s.item::<i64>().unwrap(), 10);
    // torch.tensor([True, False, True]).sum() -> tensor(2)
    let b = t(vec![true, false, true], &[3]);
    assert_eq!(b.sum().dtype(), DType::I64);
    assert_eq!(b.sum().item::<i64>().unwrap(), 2);
    // torch: x.sum(1, dtype=torch.float16) -> tensor([3., 7.], dtype=torch.float16)
    let h = ops::sum_dim_intlist::call(&x, Some(&[1]), false, Some(DType::F16)).unwrap();
    assert_eq!(h.dtype(), DType::F16);
    assert_eq!(vals(&h), [3.0, 7.0]);
    // torch.tensor([1., 2.]).sum(dtype=torch.int32) -> tensor(3, dtype=torch.int32)
    let f = t(vec![1.0f32, 2.0], &[2]);
    let s = ops::sum::call(&f, Some(DType::I32)).unwrap();
    assert_eq!(s.dtype(), DType::I32);
    assert_eq!(s.item::<i32>().unwrap(), 3);
    // Sums of empty tensors are 0.
    let e = empty(&[0, 3], DType::F32);
    let s = ops::sum_dim_intlist::call(&e, Some(&[0]), false, None).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), [0.0, 0.0, 0.0]);
}

#[test]
fn sum_reduced_floats_accumulate_in_f32() {
    // torch.tensor([0.1] * 1000).half().sum() -> tensor(100., dtype=torch.float16); summing in
    // f16 would stall far below 100.
    let x = cast(&t(vec![0.1f32; 1000], &[1000]), DType::F16);
    let s = x.sum();
    assert_eq!(s.dtype(), DType::F16);
    assert_eq!(vals(&s), [100.0]);
    // torch.tensor([0.5, 1.5, 2.0]).bfloat16().sum() -> tensor(4., dtype=torch.bfloat16)
    let b = cast(&t(vec![0.5f32, 1.5, 2.0], &[3]), DType::BF16);
    assert_eq!(b.sum().dtype(), DType::BF16);
    assert_eq!(vals(&b.sum()), [4.0]);
}

#[test]
fn sum_variants_functional_and_out_resized() {
    let x = m23();
    // Functional through the Tensor method.
    let f = x.sum_dim_intlist(Some(&[1]), false);
    assert_eq!(f.to_vec::<f32>().unwrap(), [3.0, 12.0]);
    // out= with the wrong size is resized to [2].
    let out = empty(&[5], DType::F32);
    let r = ops::sum_intlist_out::call(&x, Some(&[1]), false, None, &out).unwrap();
    assert!(r.is_same(&out));
    assert_eq!(out.sizes(), [2]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [3.0, 12.0]);
    // Without a dtype argument the out= tensor's dtype is used:
    // torch.sum(torch.tensor([1, 2]), 0, out=torch.empty(0)) -> tensor(3.)
    let out = empty(&[0], DType::F32);
    ops::sum_intlist_out::call(&t(vec![1i64, 2], &[2]), Some(&[0]), false, None, &out).unwrap();
    assert_eq!(out.sizes(), [] as [i64; 0]);
    assert_eq!(out.item::<f32>().unwrap(), 3.0);
    // A dtype argument that disagrees with out= is an error.
    let out = empty(&[0], DType::F64);
    assert!(ops::sum_intlist_out::call(&x, Some(&[0]), false, Some(DType::F32), &out).is_err());
}

// ---------------------------------------------------------------------------------------------
// mean
// ---------------------------------------------------------------------------------------------

#[test]
fn mean_values() {
    let x = t(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(ops::mean_dim::call(&x, Some(&[1]), false, None).unwrap().to_vec::<f32>().unwrap(), [2.0, 5.0]);
    assert_eq!(ops::mean_dim::call(&x, Some(&[0]), true, None).unwrap().sizes(), [1, 3]);
    assert_eq!(ops::mean_dim::call(&x, None, false, None).unwrap().item::<f32>().unwrap(), 3.5);
    // torch.arange(24.).reshape(2,3,4).mean((-1, 0)) -> [7.5, 11.5, 15.5]
    let y = t((0..24).map(|v| v as f64).collect::<Vec<_>>(), &[2, 3, 4]);
    let m = ops::mean_dim::call(&y, Some(&[-1, 0]), false, None).unwrap();
    assert_eq!(m.to_vec::<f64>().unwrap(), [7.5, 11.5, 15.5]);
    // An integral input with a floating dtype argument: mean([1, 2, 3, 4]) = 2.5
    let i = t(vec![1i64, 2, 3, 4], &[4]);
    let m = ops::mean_dim::call(&i, None, false, Some(DType::F32)).unwrap();
    assert_eq!(m.dtype(), DType::F32);
    assert_eq!(m.item::<f32>().unwrap(), 2.5);
    // torch.tensor([]).mean() -> tensor(nan)
    assert!(ops::mean_dim::call(&empty(&[0], DType::F32), None, false, None).unwrap().item::<f32>().unwrap().is_nan());
    // f16: torch.tensor([[1.,2,3],[4,5,6]]).half().mean() -> tensor(3.5, dtype=torch.float16);
    // torch.tensor([0.1] * 1000).half().mean() -> tensor(0.09997559, dtype=torch.float16)
    let h = cast(&x, DType::F16);
    let m = ops::mean_dim::call(&h, None, false, None).unwrap();
    assert_eq!(m.dtype(), DType::F16);
    assert_eq!(vals(&m), [3.5]);
    let h = cast(&t(vec![0.1f32; 1000], &[1000]), DType::F16);
    assert_eq!(vals(&ops::mean_dim::call(&h, None, false, None).unwrap()), [0.0999755859375]);
    // torch: ...bfloat16().mean(1) -> tensor([2., 5.], dtype=torch.bfloat16)
    let b = cast(&x, DType::BF16);
    assert_eq!(vals(&ops::mean_dim::call(&b, Some(&[1]), false, None).unwrap()), [2.0, 5.0]);
    // out= is resized.
    let out = empty(&[4, 4], DType::F32);
    ops::mean_out::call(&x, Some(&[0]), false, None, &out).unwrap();
    assert_eq!(out.sizes(), [3]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [2.5, 3.5, 4.5]);
}

#[test]
fn mean_errors() {
    assert_err(
        ops::mean_dim::call(&t(vec![1i64, 2], &[2]), None, false, None),
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
    );
    assert_err(
        ops::mean_dim::call(&t(vec![1i32, 2], &[2]), None, false, None),
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Int",
    );
    assert_err(
        ops::mean_dim::call(&t(vec![1.0f32, 2.0], &[2]), None, false, Some(DType::I32)),
        "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: Int",
    );
    // torch.mean(torch.tensor([1., 2]), 0, out=torch.empty(0, dtype=torch.long))
    assert_err(
        ops::mean_out::call(&t(vec![1.0f32, 2.0], &[2]), Some(&[0]), false, None, &empty(&[0], DType::I64)),
        "result type Float can't be cast to the desired output type Long",
    );
    // The error names the operator.
    let e = t(vec![1i64], &[1]).try_mean_dim(None, false).unwrap_err();
    assert!(e.to_string().starts_with("mean.dim: mean(): could not infer output dtype"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// amax / amin
// ---------------------------------------------------------------------------------------------

#[test]
fn amax_amin_propagate_nan() {
    let x = t(vec![1.0f32, f32::NAN, 3.0, 4.0, 5.0, -1.0], &[2, 3]);
    assert_close(&ops::amax::call(&x, &[1], false).unwrap(), &[NAN, 5.0], 0.0);
    assert_close(&ops::amin::call(&x, &[1], false).unwrap(), &[NAN, -1.0], 0.0);
    assert_close(&ops::amax::call(&x, &[0], false).unwrap(), &[4.0, NAN, 3.0], 0.0);
    // dim=[] reduces everything: torch.tensor([1., nan, 3.]).amax() -> tensor(nan)
    assert!(x.amax(&[], false).item::<f32>().unwrap().is_nan());
    let k = ops::amax::call(&x, &[0], true).unwrap();
    assert_eq!(k.sizes(), [1, 3]);
    // torch: tensor([[3, 7, 7], [9, 1, 9]], dtype=int32).amax(0) -> [9, 7, 9]; .amin(1) -> [3, 1]
    let i = t(vec![3i32, 7, 7, 9, 1, 9], &[2, 3]);
    let mx = ops::amax::call(&i, &[0], false).unwrap();
    assert_eq!(mx.dtype(), DType::I32);
    assert_eq!(mx.to_vec::<i32>().unwrap(), [9, 7, 9]);
    assert_eq!(ops::amin::call(&i, &[1], false).unwrap().to_vec::<i32>().unwrap(), [3, 1]);
    // Bool amax is "any": torch.tensor([True, False]).amax() -> tensor(True)
    assert!(t(vec![false, true], &[2]).amax(&[], false).item::<bool>().unwrap());
    // f16 keeps its dtype.
    let h = cast(&t(vec![-2.0f32, 0.5, 1.5], &[3]), DType::F16);
    let r = h.amax(&[], false);
    assert_eq!(r.dtype(), DType::F16);
    assert_eq!(vals(&r), [1.5]);
    assert_eq!(vals(&h.amin()), [-2.0]);
    // out= is resized.
    let out = empty(&[7], DType::I32);
    ops::amax_out::call(&i, &[1], false, &out).unwrap();
    assert_eq!(out.to_vec::<i32>().unwrap(), [7, 9]);
}

#[test]
fn amax_errors() {
    let e = empty(&[0, 3], DType::F32);
    assert_err(ops::amax::call(&e, &[0], false), "amax(): Expected reduction dim 0 to have non-zero size.");
    // The dim is printed as given.
    assert_err(ops::amax::call(&e, &[-2], false), "amax(): Expected reduction dim -2 to have non-zero size.");
    assert_err(ops::amin::call(&e, &[0], false), "amin(): Expected reduction dim 0 to have non-zero size.");
    assert_err(
        ops::amax::call(&e, &[], false),
        "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the \
         'dim' argument.",
    );
    // Reducing a non-empty dim of an empty tensor is fine: shape [0].
    assert_eq!(ops::amax::call(&e, &[1], false).unwrap().sizes(), [0]);
    assert_err(
        ops::amax_out::call(&t(vec![1.0f32, 2.0], &[2]), &[], false, &empty(&[0], DType::F64)),
        "Expected the dtype for input and out to match, but got Float for input's dtype and Double for out's dtype.",
    );
}

// ---------------------------------------------------------------------------------------------
// max.dim
// ---------------------------------------------------------------------------------------------

#[test]
fn max_dim_values_indices_ties_and_nan() {
    // torch.tensor([[1., 5., 5.], [nan, 2., nan]]).max(1) -> values=[5., nan], indices=[1, 0]
    let x = t(vec![1.0f32, 5.0, 5.0, f32::NAN, 2.0, f32::NAN], &[2, 3]);
    let (v, i) = x.max_dim(1, false);
    assert_eq!(v.dtype(), DType::F32);
    assert_eq!(i.dtype(), DType::I64);
    assert_close(&v, &[5.0, NAN], 0.0);
    assert_eq!(i.to_vec::<i64>().unwrap(), [1, 0]);
    // torch: tensor([[3, 7, 7], [9, 1, 9]], dtype=int32).max(1) -> values=[7, 9], indices=[1, 0]
    let xi = t(vec![3i32, 7, 7, 9, 1, 9], &[2, 3]);
    let (v, i) = ops::max_dim::call(&xi, -1, true).unwrap();
    assert_eq!(v.sizes(), [2, 1]);
    assert_eq!(v.to_vec::<i32>().unwrap(), [7, 9]);
    assert_eq!(i.to_vec::<i64>().unwrap(), [1, 0]);
    // Along dim 0: values [9, 7, 9], indices [1, 0, 1]
    let (v, i) = ops::max_dim::call(&xi, 0, false).unwrap();
    assert_eq!(v.to_vec::<i32>().unwrap(), [9, 7, 9]);
    assert_eq!(i.to_vec::<i64>().unwrap(), [1, 0, 1]);
    // torch.tensor(5.).max(0) -> values=tensor(5.), indices=tensor(0)
    let (v, i) = ops::max_dim::call(&Tensor::scalar(5.0f32), 0, false).unwrap();
    assert_eq!(v.item::<f32>().unwrap(), 5.0);
    assert_eq!(i.item::<i64>().unwrap(), 0);
    // bf16 input.
    let b = cast(&t(vec![1.0f32, 3.0, 2.0], &[3]), DType::BF16);
    let (v, i) = ops::max_dim::call(&b, 0, false).unwrap();
    assert_eq!(v.dtype(), DType::BF16);
    assert_eq!(vals(&v), [3.0]);
    assert_eq!(i.item::<i64>().unwrap(), 1);
}

#[test]
fn max_dim_errors_and_out_variant() {
    // torch.empty(2, 0).max(1) and .max(-1) both say dim 1.
    let e = empty(&[2, 0], DType::F32);
    assert_err(ops::max_dim::call(&e, 1, false), "max(): Expected reduction dim 1 to have non-zero size.");
    assert_err(ops::max_dim::call(&e, -1, false), "max(): Expected reduction dim 1 to have non-zero size.");
    assert!(ops::max_dim::call(&e, 2, false).is_err());
    // out= variant: wrongly sized outputs are resized.
    let x = m23();
    let (vo, io) = (empty(&[9], DType::F32), empty(&[1, 1, 1], DType::I64));
    let (v, i) = ops::max_dim_max::call(&x, 1, false, &vo, &io).unwrap();
    assert!(v.is_same(&vo) && i.is_same(&io));
    assert_eq!(vo.sizes(), [2]);
    assert_eq!(io.sizes(), [2]);
    assert_eq!(vo.to_vec::<f32>().unwrap(), [2.0, 5.0]);
    assert_eq!(io.to_vec::<i64>().unwrap(), [2, 2]);
}

// ---------------------------------------------------------------------------------------------
// argmax
// ---------------------------------------------------------------------------------------------

#[test]
fn argmax_flattened_and_along_dims() {
    // torch.tensor([[1., 5., 5.], [7., 2., 7.]]).argmax() -> tensor(3);
    // .argmax(keepdim=True) -> tensor([[3]])
    let x = t(vec![1.0f32, 5.0, 5.0, 7.0, 2.0, 7.0], &[2, 3]);
    let a = x.argmax(None, false);
    assert_eq!(a.dtype(), DType::I64);
    assert_eq!(a.sizes(), [] as [i64; 0]);
    assert_eq!(a.item::<i64>().unwrap(), 3);
    let k = ops::argmax::call(&x, None, true).unwrap();
    assert_eq!(k.sizes(), [1, 1]);
    assert_eq!(k.item::<i64>().unwrap(), 3);
    // Ties go to the first index: along dim 1 -> [1, 0]; along dim 0 -> [1, 0, 1].
    assert_eq!(ops::argmax::call(&x, Some(1), false).unwrap().to_vec::<i64>().unwrap(), [1, 0]);
    assert_eq!(ops::argmax::call(&x, Some(-2), false).unwrap().to_vec::<i64>().unwrap(), [1, 0, 1]);
    // The flat index follows row-major order even for a transposed input: x.t() is
    // [[1, 7], [5, 2], [5, 7]], whose first maximum (7) is at flat index 1.
    let xt = ops::t::call(&x).unwrap();
    assert_eq!(xt.argmax(None, false).item::<i64>().unwrap(), 1);
    // torch.tensor([1., nan, 3., nan]).argmax() -> tensor(1)
    let n = t(vec![1.0f64, f64::NAN, 3.0, f64::NAN], &[4]);
    assert_eq!(n.argmax(None, false).item::<i64>().unwrap(), 1);
    // f16 and integers.
    let h = cast(&t(vec![0.5f32, -1.0, 2.5, 2.5], &[4]), DType::F16);
    assert_eq!(h.argmax(None, false).item::<i64>().unwrap(), 2);
    assert_eq!(t(vec![-3i8, 9, 4], &[3]).argmax(None, false).item::<i64>().unwrap(), 1);
    // out= is resized.
    let out = empty(&[3, 3], DType::I64);
    ops::argmax_out::call(&x, Some(1), true, &out).unwrap();
    assert_eq!(out.sizes(), [2, 1]);
    assert_eq!(out.to_vec::<i64>().unwrap(), [1, 0]);
}

#[test]
fn argmax_errors() {
    assert_err(
        ops::argmax::call(&empty(&[0], DType::F32), None, false),
        "argmax(): Expected reduction dim to be specified for input.numel() == 0.",
    );
    assert_err(
        ops::argmax::call(&empty(&[3, 0], DType::F32), Some(1), false),
        "argmax(): Expected reduction dim 1 to have non-zero size.",
    );
    assert_err(ops::argmax::call(&t(vec![true, false], &[2]), None, false), "argmax(): does not support bool input");
}

// ---------------------------------------------------------------------------------------------
// where
// ---------------------------------------------------------------------------------------------

#[test]
fn where_broadcasts_and_promotes() {
    // torch.where(tensor([[True], [False]]), tensor([1, 2, 3]), tensor(2.5, dtype=float64))
    //   -> [[1., 2., 3.], [2.5, 2.5, 2.5]], dtype=float64 (a 0-dim float outranks int tensors)
    let c = t(vec![true, false], &[2, 1]);
    let a = t(vec![1i64, 2, 3], &[3]);
    let r = ops::where_self::call(&c, &a, &Tensor::scalar(2.5f64)).unwrap();
    assert_eq!(r.dtype(), DType::F64);
    assert_eq!(r.sizes(), [2, 3]);
    assert_eq!(r.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0, 2.5, 2.5, 2.5]);
    // torch.where(tensor([True, False]), tensor([1, 2], dtype=int32), tensor([5., 6.]))
    //   -> tensor([1., 6.]) (float32)
    let c2 = t(vec![true, false], &[2]);
    let r = a.try_where_self(&c2, &t(vec![5.0f32], &[1])).unwrap_err();
    assert!(r.message.contains("must match the size"), "{r}");
    let r = ops::where_self::call(&c2, &t(vec![1i32, 2], &[2]), &t(vec![5.0f32, 6.0], &[2])).unwrap();
    assert_eq!(r.dtype(), DType::F32);
    assert_eq!(r.to_vec::<f32>().unwrap(), [1.0, 6.0]);
    // Same dtypes, bool values.
    let r = ops::where_self::call(&c2, &t(vec![true, true], &[2]), &t(vec![false, false], &[2])).unwrap();
    assert_eq!(r.to_vec::<bool>().unwrap(), [true, false]);
    // A uint8 mask is still accepted (deprecated in PyTorch): tensor([1, 4])
    let mask = t(vec![1u8, 0], &[2]);
    let r = ops::where_self::call(&mask, &t(vec![1i64, 2], &[2]), &t(vec![3i64, 4], &[2])).unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), [1, 4]);
    // f16 values.
    let h = cast(&t(vec![1.5f32, -2.0], &[2]), DType::F16);
    let r = ops::where_self::call(&c2, &h, &cast(&t(vec![0.0f32], &[1]), DType::F16)).unwrap();
    assert_eq!(r.dtype(), DType::F16);
    assert_eq!(vals(&r), [1.5, 0.0]);
}

#[test]
fn where_out_and_errors() {
    let c = t(vec![true, false, true], &[3]);
    let a = t(vec![1.0f32, 2.0, 3.0], &[3]);
    let b = t(vec![-1.0f32], &[1]);
    let out = empty(&[2, 2], DType::F32);
    let r = ops::where_self_out::call(&c, &a, &b, &out).unwrap();
    assert!(r.is_same(&out));
    assert_eq!(out.sizes(), [3]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [1.0, -1.0, 3.0]);
    // torch: where(..., out=torch.empty(2, dtype=torch.long)) with a float result
    assert_err(
        ops::where_self_out::call(&c, &a, &b, &empty(&[3], DType::I64)),
        "Expected out type to be Float but got Long",
    );
    assert_err(
        ops::where_self::call(&t(vec![1.0f32, 0.0, 1.0], &[3]), &a, &b),
        "where expected condition to be a boolean tensor, but got a tensor with dtype Float",
    );
}

// ---------------------------------------------------------------------------------------------
// logical_not
// ---------------------------------------------------------------------------------------------

#[test]
fn logical_not_of_floats_and_ints() {
    // NaN is truthy, -0.0 is zero: [True, False, False, True]
    let f = t(vec![0.0f32, 1.0, f32::NAN, -0.0], &[4]);
    let r = f.logical_not();
    assert_eq!(r.dtype(), DType::Bool);
    assert_eq!(r.to_vec::<bool>().unwrap(), [true, false, false, true]);
    // torch.logical_not(torch.tensor([0, 3, -1])) -> [True, False, False]
    assert_eq!(t(vec![0i64, 3, -1], &[3]).logical_not().to_vec::<bool>().unwrap(), [true, false, false]);
    assert_eq!(t(vec![true, false], &[2]).logical_not().to_vec::<bool>().unwrap(), [false, true]);
    let h = cast(&t(vec![0.0f32, 2.0], &[2]), DType::BF16);
    assert_eq!(h.logical_not().to_vec::<bool>().unwrap(), [true, false]);
    // out= of another dtype gets the 0/1 values, and is resized:
    // torch.logical_not(tensor([0., 1., nan, -0.]), out=torch.empty(4, dtype=int32)) -> [1, 0, 0, 1]
    let out = empty(&[1], DType::I32);
    ops::logical_not_out::call(&f, &out).unwrap();
    assert_eq!(out.sizes(), [4]);
    assert_eq!(out.to_vec::<i32>().unwrap(), [1, 0, 0, 1]);
    let out = empty(&[2, 2], DType::F64);
    ops::logical_not_out::call(&t(vec![5u8, 0], &[2]), &out).unwrap();
    assert_eq!(out.to_vec::<f64>().unwrap(), [0.0, 1.0]);
}

// ---------------------------------------------------------------------------------------------
// gelu
// ---------------------------------------------------------------------------------------------

#[test]
fn gelu_values() {
    // torch: gelu([-1., 0., 1., 2.]) -> [-0.15865526, 0., 0.84134471, 1.95449972]
    //        approximate='tanh'       -> [-0.15880799, 0., 0.84119201, 1.95459771]
    let x = t(vec![-1.0f32, 0.0, 1.0, 2.0], &[4]);
    let exact = [-0.15865526, 0.0, 0.8413447, 1.9544997];
    let tanh = [-0.15880799, 0.0, 0.8411920, 1.9545977];
    assert_close(&x.gelu(), &exact, 1e-6);
    assert_close(&x.gelu_with(GeluOpts { approximate: "tanh" }), &tanh, 1e-6);
    let xd = cast(&x, DType::F64);
    assert_close(&xd.gelu(), &exact, 1e-7);
    assert_close(&ops::gelu::call(&xd, "tanh").unwrap(), &tanh, 1e-7);
    // torch: gelu(x.half()) -> [-0.15869141, 0., 0.84130859, 1.95410156]
    //        gelu(x.bfloat16()) -> [-0.15820312, 0., 0.83984375, 1.95312500]
    let h = ops::gelu::call(&cast(&x, DType::F16), "none").unwrap();
    assert_eq!(h.dtype(), DType::F16);
    assert_eq!(vals(&h), [-0.15869140625, 0.0, 0.84130859375, 1.9541015625]);
    let b = ops::gelu::call(&cast(&x, DType::BF16), "none").unwrap();
    assert_eq!(b.dtype(), DType::BF16);
    assert_eq!(vals(&b), [-0.158203125, 0.0, 0.83984375, 1.953125]);
}

#[test]
fn gelu_variants_and_errors() {
    let x = t(vec![-1.0f32, 0.0, 1.0, 2.0], &[4]);
    // In place.
    let y = cast(&x, DType::F32);
    let r = y.gelu_();
    assert!(r.is_same(&y));
    assert_close(&y, &[-0.15865526, 0.0, 0.8413447, 1.9544997], 1e-6);
    // out= with the wrong size is resized.
    let out = empty(&[7], DType::F32);
    ops::gelu_out::call(&x, "tanh", &out).unwrap();
    assert_eq!(out.sizes(), [4]);
    assert_close(&out, &[-0.15880799, 0.0, 0.8411920, 1.9545977], 1e-6);
    // PyTorch's messages.
    assert_err(ops::gelu::call(&x, "erf"), "approximate argument must be either none or tanh.");
    assert_err(ops::gelu::call(&t(vec![1i64, 2], &[2]), "none"), "\"GeluKernelImpl\" not implemented for 'Long'");
    assert_err(ops::gelu_out::call(&x, "none", &empty(&[4], DType::F64)), "Found dtype Double but expected Float");
    assert_err(
        ops::gelu::call(&meta(&[2], DType::F32), "sigmoid"),
        "approximate argument must be either none or tanh.",
    );
}

// ---------------------------------------------------------------------------------------------
// clamp
// ---------------------------------------------------------------------------------------------

fn clamp(x: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> oxten::Result<Tensor> {
    ops::clamp::call(x, min, max)
}

#[test]
fn clamp_bounds_and_nan() {
    let x = t(vec![-2.0f32, 0.5, 3.0, f32::NAN], &[4]);
    let lo = Some(Scalar::Float(0.0));
    let hi = Some(Scalar::Float(1.0));
    assert_close(&clamp(&x, lo, None).unwrap(), &[0.0, 0.5, 3.0, NAN], 0.0);
    assert_close(&clamp(&x, None, hi).unwrap(), &[-2.0, 0.5, 1.0, NAN], 0.0);
    assert_close(&clamp(&x, lo, hi).unwrap(), &[0.0, 0.5, 1.0, NAN], 0.0);
    // torch.clamp(torch.tensor([1., 2., 3.]), min=2.5, max=1.5) -> [1.5, 1.5, 1.5] (max wins)
    let y = t(vec![1.0f32, 2.0, 3.0], &[3]);
    assert_close(&clamp(&y, Some(2.5.into()), Some(1.5.into())).unwrap(), &[1.5, 1.5, 1.5], 0.0);
    // A NaN bound gives NaN: torch.clamp(tensor([1., 2.]), max=nan) -> [nan, nan]
    assert_close(&clamp(&y, None, Some(f64::NAN.into())).unwrap(), &[NAN, NAN, NAN], 0.0);
    assert_close(&clamp(&y, Some(f64::NAN.into()), Some(1.0.into())).unwrap(), &[NAN, NAN, NAN], 0.0);
    // Through the method with options.
    let r = y.clamp_with(ClampOpts { min: Some(Scalar::Int(2)), max: None });
    assert_eq!(r.to_vec::<f32>().unwrap(), [2.0, 2.0, 3.0]);
}

#[test]
fn clamp_dtypes() {
    // Integer tensor, integer bounds: stays integral.
    let i = t(vec![-3i64, 5, 9], &[3]);
    let r = clamp(&i, Some(0.into()), Some(6.into())).unwrap();
    assert_eq!(r.dtype(), DType::I64);
    assert_eq!(r.to_vec::<i64>().unwrap(), [0, 5, 6]);
    // torch.clamp(torch.tensor([-3, 5, 9]), min=0.5) -> tensor([0.5, 5., 9.]) (float32)
    let r = clamp(&i, Some(0.5.into()), None).unwrap();
    assert_eq!(r.dtype(), DType::F32);
    assert_eq!(r.to_vec::<f32>().unwrap(), [0.5, 5.0, 9.0]);
    // torch.clamp(torch.tensor([1, 5, 9], dtype=torch.int8), max=1000) -> unchanged (the bound
    // saturates to the type's range)
    let i8s = t(vec![1i8, 5, 9], &[3]);
    assert_eq!(clamp(&i8s, None, Some(1000.into())).unwrap().to_vec::<i8>().unwrap(), [1, 5, 9]);
    // torch.clamp(torch.tensor([True, False]), max=2) -> tensor([1, 0]) (int64)
    let r = clamp(&t(vec![true, false], &[2]), None, Some(2.into())).unwrap();
    assert_eq!(r.dtype(), DType::I64);
    assert_eq!(r.to_vec::<i64>().unwrap(), [1, 0]);
    // torch: tensor([-3., 5., 9.]).half().clamp(min=0.1, max=6.) -> [0.09997559, 5., 6.]
    let h = cast(&t(vec![-3.0f32, 5.0, 9.0], &[3]), DType::F16);
    let r = clamp(&h, Some(0.1.into()), Some(6.0.into())).unwrap();
    assert_eq!(r.dtype(), DType::F16);
    assert_eq!(vals(&r), [0.0999755859375, 5.0, 6.0]);
    let b = cast(&t(vec![-3.0f32, 5.0, 9.0], &[3]), DType::BF16);
    assert_eq!(vals(&clamp(&b, Some((-1).into()), Some(6.into())).unwrap()), [-1.0, 5.0, 6.0]);
}

#[test]
fn clamp_variants_and_errors() {
    let x = t(vec![-2.0f32, 0.5, 3.0], &[3]);
    // In place.
    let y = cast(&x, DType::F32);
    let r = y.clamp_with_(ClampInplaceOpts { min: Some(Scalar::Float(0.0)), max: Some(Scalar::Float(1.0)) });
    assert!(r.is_same(&y));
    assert_eq!(y.to_vec::<f32>().unwrap(), [0.0, 0.5, 1.0]);
    // out= with the wrong size is resized.
    let out = empty(&[1, 5], DType::F32);
    ops::clamp_out::call(&x, None, Some(Scalar::Int(0)), &out).unwrap();
    assert_eq!(out.sizes(), [3]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [-2.0, 0.0, 0.0]);
    // PyTorch's messages.
    assert_err(clamp(&x, None, None), "torch.clamp: At least one of 'min' or 'max' must not be None");
    assert_err(
        ops::clamp_::call(&t(vec![1i64, 2], &[2]), Some(Scalar::Float(0.5)), None),
        "result type Float can't be cast to the desired output type long int",
    );
    assert_err(
        ops::clamp_out::call(&t(vec![1i64, 2], &[2]), Some(Scalar::Float(0.5)), None, &empty(&[2], DType::I64)),
        "Found dtype Long but expected Float",
    );
    assert_err(
        ops::clamp_out::call(&x, Some(Scalar::Float(0.5)), None, &empty(&[3], DType::F64)),
        "Found dtype Double but expected Float",
    );
    assert_err(
        clamp(&t(vec![1u8, 2], &[2]), Some(Scalar::Int(300)), None),
        "Clamp min value 300 is outside the representable range of Byte",
    );
    assert_err(
        clamp(&t(vec![1i32, 2], &[2]), None, Some(Scalar::Int(-2_147_483_649))),
        "Clamp max value -2.14748e+09 is outside the representable range of Int",
    );
    assert_err(
        clamp(&cast(&x, DType::F16), None, Some(Scalar::Float(1e10))),
        "value cannot be converted to type c10::Half without overflow",
    );
    assert_err(
        clamp(&t(vec![true], &[1]), Some(Scalar::Bool(false)), None),
        "\"clamp_min_scalar_cpu\" not implemented for 'Bool'",
    );
}

// ---------------------------------------------------------------------------------------------
// pow(Tensor, Scalar)
// ---------------------------------------------------------------------------------------------

fn pow(x: &Tensor, e: impl Into<Scalar>) -> oxten::Result<Tensor> {
    ops::pow_tensor_scalar::call(x, e.into())
}

#[test]
fn pow_integer() {
    let i = t(vec![2i64, 3, -4], &[3]);
    let r = pow(&i, 3).unwrap();
    assert_eq!(r.dtype(), DType::I64);
    assert_eq!(r.to_vec::<i64>().unwrap(), [8, 27, -64]);
    assert_eq!(pow(&i, 2).unwrap().to_vec::<i64>().unwrap(), [4, 9, 16]);
    assert_eq!(pow(&i, 0).unwrap().to_vec::<i64>().unwrap(), [1, 1, 1]);
    assert_eq!(pow(&i, 1).unwrap().to_vec::<i64>().unwrap(), [2, 3, -4]);
    // Wrapping: torch.tensor([2], dtype=torch.int32) ** 31 -> tensor([-2147483648], dtype=int32)
    let r = pow(&t(vec![2i32], &[1]), 31).unwrap();
    assert_eq!(r.dtype(), DType::I32);
    assert_eq!(r.to_vec::<i32>().unwrap(), [i32::MIN]);
    // torch.tensor([3]) ** 2**62 -> tensor([1]) (3 has order 2**62 modulo 2**64)
    assert_eq!(pow(&t(vec![3i64], &[1]), 1i64 << 62).unwrap().to_vec::<i64>().unwrap(), [1]);
    assert_eq!(pow(&t(vec![3u8, 2], &[2]), 5).unwrap().to_vec::<u8>().unwrap(), [243, 32]);
    // torch.pow(torch.tensor([True, False]), 2) -> tensor([1, 0]) (int64)
    let r = pow(&t(vec![true, false], &[2]), 2).unwrap();
    assert_eq!(r.dtype(), DType::I64);
    assert_eq!(r.to_vec::<i64>().unwrap(), [1, 0]);
    // An integer tensor to a float power is float: torch.tensor([1, 2, 3]) ** 2.5
    //   -> [1., 5.65685415, 15.58845711]
    let r = pow(&t(vec![1i64, 2, 3], &[3]), 2.5).unwrap();
    assert_eq!(r.dtype(), DType::F32);
    assert_close(&r, &[1.0, 5.656_854_15, 15.588_457_11], 1e-6);
    // PyTorch's messages.
    assert_err(pow(&i, -1), "Integers to negative integer powers are not allowed.");
    assert_err(pow(&t(vec![1u8], &[1]), 300), "value cannot be converted to type uint8_t without overflow");
    assert_err(pow(&t(vec![1i32], &[1]), 1i64 << 40), "value cannot be converted to type int without overflow");
}

#[test]
fn pow_float_fast_paths_and_general() {
    let x = t(vec![4.0f32, 9.0, 0.25], &[3]);
    assert_eq!(pow(&x, 0.5).unwrap().to_vec::<f32>().unwrap(), [2.0, 3.0, 0.5]);
    assert_eq!(pow(&x, 2).unwrap().to_vec::<f32>().unwrap(), [16.0, 81.0, 0.0625]);
    assert_eq!(pow(&x, 3.0).unwrap().to_vec::<f32>().unwrap(), [64.0, 729.0, 0.015625]);
    assert_eq!(pow(&x, -1).unwrap().to_vec::<f32>().unwrap(), [0.25, 1.0 / 9.0, 4.0]);
    assert_eq!(pow(&x, -2).unwrap().to_vec::<f32>().unwrap(), [0.0625, 1.0 / 81.0, 16.0]);
    assert_eq!(pow(&x, -0.5).unwrap().to_vec::<f32>().unwrap(), [0.5, 1.0 / 3.0, 2.0]);
    // torch.tensor([2., 3.]) ** 2.5 -> [5.65685415, 15.58845711]
    assert_close(&pow(&t(vec![2.0f64, 3.0], &[2]), 2.5).unwrap(), &[5.656_854_249_492_38, 15.588_457_268_119_9], 1e-12);
    // x ** 0 is 1 even for NaN: torch.tensor([nan]) ** 0 -> tensor([1.])
    assert_eq!(pow(&t(vec![f32::NAN], &[1]), 0).unwrap().to_vec::<f32>().unwrap(), [1.0]);
    // f16 keeps its dtype and rounds the exponent to f16 first:
    // torch.tensor([1.5], dtype=torch.float16) ** 2.1 -> tensor([2.3418], dtype=float16)
    let h = cast(&t(vec![1.5f32], &[1]), DType::F16);
    let r = pow(&h, 2.1).unwrap();
    assert_eq!(r.dtype(), DType::F16);
    assert_eq!(vals(&r), [2.341796875]);
    // torch.tensor([1.5], dtype=torch.bfloat16) ** 2.1 -> tensor([2.34375], dtype=bfloat16)
    let b = cast(&t(vec![1.5f32], &[1]), DType::BF16);
    assert_eq!(vals(&pow(&b, 2.1).unwrap()), [2.34375]);
    // torch.tensor([3., -3.]).half() ** 0.5 -> [1.73242188, nan]
    let h = cast(&t(vec![3.0f32, -3.0], &[2]), DType::F16);
    assert_close(&pow(&h, 0.5).unwrap(), &[1.732421875, NAN], 0.0);
    assert_err(pow(&cast(&x, DType::F16), 70000), "value cannot be converted to type c10::Half without overflow");
}

#[test]
fn pow_variants() {
    // In place.
    let y = t(vec![1.0f32, 2.0, 3.0], &[3]);
    let r = y.pow_scalar_(2);
    assert!(r.is_same(&y));
    assert_eq!(y.to_vec::<f32>().unwrap(), [1.0, 4.0, 9.0]);
    let yi = t(vec![1i32, 2], &[2]);
    yi.pow_scalar_(3);
    assert_eq!(yi.to_vec::<i32>().unwrap(), [1, 8]);
    // torch.tensor([1, 2]).pow_(0.5) -> "result type Float can't be cast to the desired output
    // type Long"
    assert_err(
        ops::pow_scalar_::call(&t(vec![1i64, 2], &[2]), Scalar::Float(0.5)),
        "result type Float can't be cast to the desired output type Long",
    );
    // out= with the wrong size is resized.
    let out = empty(&[5], DType::F32);
    ops::pow_tensor_scalar_out::call(&t(vec![1.0f32, 2.0], &[2]), Scalar::Int(3), &out).unwrap();
    assert_eq!(out.sizes(), [2]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [1.0, 8.0]);
    // A wider out= receives the cast result: torch.pow(torch.tensor([1, 2]), 2,
    // out=torch.empty(2)) -> tensor([1., 4.])
    let out = empty(&[0], DType::F32);
    ops::pow_tensor_scalar_out::call(&t(vec![1i64, 2], &[2]), Scalar::Int(2), &out).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), [1.0, 4.0]);
    assert_err(
        ops::pow_tensor_scalar_out::call(&t(vec![1.0f32, 2.0], &[2]), Scalar::Int(2), &empty(&[2], DType::I64)),
        "result type Float can't be cast to the desired output type Long",
    );
}

// ---------------------------------------------------------------------------------------------
// meta tensors
// ---------------------------------------------------------------------------------------------

#[test]
fn meta_tensors_get_shapes_and_dtypes() {
    // torch.empty(3, 4, device='meta').max(1) -> values size (3,), indices size (3,) int64
    let x = meta(&[3, 4], DType::F32);
    let (v, i) = x.max_dim(1, false);
    assert!(v.is_meta() && i.is_meta());
    assert_eq!((v.sizes().to_vec(), v.dtype()), (vec![3], DType::F32));
    assert_eq!((i.sizes().to_vec(), i.dtype()), (vec![3], DType::I64));
    let (v, i) = ops::max_dim::call(&x, 1, true).unwrap();
    assert_eq!(v.sizes(), [3, 1]);
    assert_eq!(i.sizes(), [3, 1]);
    assert_err(
        ops::max_dim::call(&meta(&[3, 0], DType::F32), 1, false),
        "max(): Expected reduction dim 1 to have non-zero size.",
    );

    let s = ops::sum_dim_intlist::call(&meta(&[2, 3], DType::I32), Some(&[0]), true, None).unwrap();
    assert!(s.is_meta());
    assert_eq!((s.sizes().to_vec(), s.dtype()), (vec![1, 3], DType::I64));
    assert_eq!(meta(&[2, 3], DType::F16).sum().sizes(), [] as [i64; 0]);
    let m = ops::mean_dim::call(&meta(&[2, 3], DType::BF16), Some(&[1]), false, None).unwrap();
    assert_eq!((m.sizes().to_vec(), m.dtype()), (vec![2], DType::BF16));
    assert!(ops::mean_dim::call(&meta(&[2], DType::I64), None, false, None).is_err());
    let a = ops::amax::call(&meta(&[2, 3, 4], DType::F64), &[0, 2], false).unwrap();
    assert_eq!((a.sizes().to_vec(), a.dtype()), (vec![3], DType::F64));
    let am = ops::argmax::call(&x, None, true).unwrap();
    assert_eq!((am.sizes().to_vec(), am.dtype(), am.is_meta()), (vec![1, 1], DType::I64, true));

    // Pointwise ops: shape, dtype and promotion only.
    let g = meta(&[2, 5], DType::F16).gelu();
    assert_eq!((g.sizes().to_vec(), g.dtype(), g.is_meta()), (vec![2, 5], DType::F16, true));
    let c = clamp(&meta(&[4], DType::I32), Some(Scalar::Float(0.5)), None).unwrap();
    assert_eq!((c.dtype(), c.is_meta()), (DType::F32, true));
    let p = pow(&meta(&[4], DType::I32), 2).unwrap();
    assert_eq!((p.dtype(), p.is_meta()), (DType::I32, true));
    let p = pow(&meta(&[4], DType::I32), 2.5).unwrap();
    assert_eq!(p.dtype(), DType::F32);
    let w =
        ops::where_self::call(&meta(&[2, 1], DType::Bool), &meta(&[3], DType::I64), &meta(&[], DType::F64)).unwrap();
    assert_eq!((w.sizes().to_vec(), w.dtype(), w.is_meta()), (vec![2, 3], DType::F64, true));
    let n = meta(&[2, 2], DType::F32).logical_not();
    assert_eq!((n.sizes().to_vec(), n.dtype(), n.is_meta()), (vec![2, 2], DType::Bool, true));
}
