//! Views, factories and conversions through the public `oxten` API.
//!
//! Expected values are worked out by hand from PyTorch's documented semantics; where PyTorch's
//! printed output is quoted, it is what `torch` 2.x prints for the same call.

use oxten::options::{
    ArangeOpts, ArangeStartOutOpts, ArangeStartStepOpts, AsStridedOpts, ContiguousOpts, DeepCloneOpts, EmptyLikeOpts,
    EmptyOpts, EmptyStridedOpts, FullOpts, OnesOpts, ToCopyOpts, ToDtypeOpts, ZerosOpts,
};
use oxten::{DType, Device, DimVec, ErrorKind, MemoryFormat, Result, Scalar, Tensor};

// Every test calls `oxten::init()` first. Registration normally happens lazily on the first
// dispatcher miss, but when several test threads miss at once, the threads that wait for another
// thread's registration are not retried by the dispatcher and report "no kernel is registered";
// registering up front avoids that race.

/// `torch.arange(n, dtype=torch.float32).reshape(sizes)`.
fn iota(sizes: &[i64]) -> Tensor {
    let n: i64 = sizes.iter().product();
    Tensor::from_vec((0..n).map(|i| i as f32).collect(), sizes).unwrap()
}

fn vals(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

/// Sizes or strides to compare with `Tensor::sizes()` / `strides()` inside tuples.
fn dv(x: &[i64]) -> DimVec {
    x.into()
}

fn msg(r: Result<Tensor>) -> String {
    r.unwrap_err().message
}

fn meta(sizes: &[i64]) -> Tensor {
    oxten::empty_with(sizes, EmptyOpts { device: Some(Device::Meta), ..Default::default() })
}

// ---------------------------------------------------------------- view / reshape

#[test]
fn view_aliases_and_writes_through() {
    oxten::init();
    let a = iota(&[2, 3]);
    let v = a.view(&[3, 2]);
    assert_eq!(v.sizes(), [3, 2]);
    assert_eq!(v.strides(), [2, 1]);
    assert!(v.storage().is_alias_of(a.storage()));
    // Row 1 of the [3, 2] view is flat elements 2 and 3 of `a`.
    v.select(0, 1).fill_scalar_(9.0);
    assert_eq!(vals(&a), [0.0, 1.0, 9.0, 9.0, 4.0, 5.0]);
}

#[test]
fn view_infers_one_minus_one() {
    oxten::init();
    let a = iota(&[2, 3]);
    assert_eq!(a.view(&[-1]).sizes(), [6]);
    assert_eq!(a.view(&[3, -1]).sizes(), [3, 2]);
    assert_eq!(a.view(&[1, -1, 1]).strides(), [6, 1, 1]);
}

#[test]
fn view_errors_have_pytorch_messages() {
    oxten::init();
    let a = iota(&[6]);
    let e = a.try_view(&[2, 5]).unwrap_err();
    assert_eq!(e.message, "shape '[2, 5]' is invalid for input of size 6");
    assert_eq!(e.op, "view");
    assert_eq!(msg(a.try_view(&[-1, -1])), "only one dimension can be inferred");
    assert_eq!(msg(a.try_view(&[-2, 3])), "invalid shape dimension -2");
}

#[test]
fn view_of_transposed_errors_but_reshape_copies() {
    oxten::init();
    // a = [[0, 1, 2], [3, 4, 5]]; a.t() = [[0, 3], [1, 4], [2, 5]] with strides (1, 3).
    let a = iota(&[2, 3]);
    let t = a.t();
    assert_eq!(t.strides(), [1, 3]);
    assert_eq!(
        msg(t.try_view(&[6])),
        "view size is not compatible with input tensor's size and stride (at least one dimension spans \
         across two contiguous subspaces). Use .reshape(...) instead."
    );
    let r = t.reshape(&[6]);
    assert_eq!(vals(&r), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(r.strides(), [1]);
    assert!(!r.storage().is_alias_of(a.storage()));
}

#[test]
fn reshape_of_contiguous_is_a_view() {
    oxten::init();
    let a = iota(&[2, 3]);
    let r = a.reshape(&[3, -1]);
    assert_eq!(r.sizes(), [3, 2]);
    assert!(r.storage().is_alias_of(a.storage()));
    // A reshape that only splits a dim of a transposed tensor is a view as well.
    let t = a.t(); // [3, 2], strides (1, 3)
    let s = t.reshape(&[3, 2, 1]);
    assert!(s.storage().is_alias_of(a.storage()));
    assert_eq!(s.strides()[..2], [1, 3]);
}

#[test]
fn view_of_sliced_tensor_follows_compute_stride() {
    oxten::init();
    // a: [2, 3, 4]; s = a[:, :, 0:2] has sizes [2, 3, 2], strides [12, 4, 1]. Dims 0 and 1
    // still merge (12 == 3 * 4), dims 1 and 2 do not.
    let a = iota(&[2, 3, 4]);
    let s = a.slice(2, Some(0), Some(2), 1);
    assert_eq!(s.strides(), [12, 4, 1]);
    let v = s.view(&[6, 2]);
    assert_eq!(v.strides(), [4, 1]);
    assert_eq!(vals(&v), [0.0, 1.0, 4.0, 5.0, 8.0, 9.0, 12.0, 13.0, 16.0, 17.0, 20.0, 21.0]);
    assert!(s.try_view(&[2, 6]).is_err());
    // reshape falls back to a copy there.
    let r = s.reshape(&[2, 6]);
    assert_eq!(vals(&r), [0.0, 1.0, 4.0, 5.0, 8.0, 9.0, 12.0, 13.0, 16.0, 17.0, 20.0, 21.0]);
    assert!(!r.storage().is_alias_of(a.storage()));
}

#[test]
fn view_of_zero_dim_and_empty_tensors() {
    oxten::init();
    let s = Tensor::scalar(3.0f32);
    let v = s.view(&[1, 1]);
    assert_eq!(v.sizes(), [1, 1]);
    assert_eq!(vals(&v), [3.0]);
    let e = oxten::empty(&[0, 3]);
    assert_eq!(e.view(&[3, 0]).sizes(), [3, 0]);
    assert!(msg(e.try_view(&[-1, 0])).contains("ambiguous"));
}

// ---------------------------------------------------------------- permute / transpose / t

#[test]
fn permute_reorders_sizes_and_strides() {
    oxten::init();
    let a = iota(&[2, 3, 4]); // strides (12, 4, 1)
    let p = a.permute(&[2, 0, 1]);
    assert_eq!(p.sizes(), [4, 2, 3]);
    assert_eq!(p.strides(), [1, 12, 4]);
    assert!(p.storage().is_alias_of(a.storage()));
    assert_eq!(a.permute(&[-1, 0, 1]).strides(), [1, 12, 4]);
    // p[1, 0, 2] = a[0, 2, 1] = 9
    assert_eq!(p.select(0, 1).select(0, 0).select(0, 2).item::<f32>().unwrap(), 9.0);
}

#[test]
fn permute_errors() {
    oxten::init();
    let a = iota(&[2, 3, 4]);
    assert_eq!(
        msg(a.try_permute(&[0, 1])),
        "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the \
         desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2"
    );
    assert_eq!(msg(a.try_permute(&[0, 0, 1])), "permute(): duplicate dims are not allowed.");
    assert_eq!(
        msg(a.try_permute(&[0, 1, 3])),
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
    );
}

#[test]
fn transpose_and_t() {
    oxten::init();
    let a = iota(&[2, 3, 4]);
    let t = a.transpose(0, -1);
    assert_eq!(t.sizes(), [4, 3, 2]);
    assert_eq!(t.strides(), [1, 4, 12]);
    // 0-dim tensors accept dims 0 and -1.
    let s = Tensor::scalar(1.0f32);
    assert_eq!(s.transpose(0, -1).sizes(), [0i64; 0]);
    // t() on 2-D swaps, on 1-D is the identity.
    let m = iota(&[2, 3]).t();
    assert_eq!((m.sizes(), m.strides()), (dv(&[3, 2]), dv(&[1, 3])));
    assert_eq!(iota(&[5]).t().sizes(), [5]);
    assert_eq!(msg(a.try_t()), "t() expects a tensor with <= 2 dimensions, but self is 3D");
}

// ---------------------------------------------------------------- expand

#[test]
fn expand_uses_stride_zero() {
    oxten::init();
    let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let e = a.expand(&[2, 3]);
    assert_eq!(e.sizes(), [2, 3]);
    assert_eq!(e.strides(), [0, 1]);
    assert_eq!(vals(&e), [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    // -1 keeps a size; size-1 dims broadcast; new leading dims are stride 0 when > 1.
    let c = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3, 1]).unwrap(); // strides (1, 1)
    let x = c.expand(&[2, -1, 4]);
    assert_eq!(x.sizes(), [2, 3, 4]);
    assert_eq!(x.strides(), [0, 1, 0]);
    // A new leading dim of size 1 gets the stride a contiguous dim would have there.
    assert_eq!(a.expand(&[1, 3]).strides(), [3, 1]);
    // Writes to the base show through the expansion.
    a.select(0, 0).fill_scalar_(7.0);
    assert_eq!(vals(&e), [7.0, 2.0, 3.0, 7.0, 2.0, 3.0]);
}

#[test]
fn expand_errors() {
    oxten::init();
    let a = iota(&[3]);
    assert_eq!(
        msg(a.try_expand(&[2, 4])),
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  \
         Target sizes: [2, 4].  Tensor sizes: [3]"
    );
    assert_eq!(
        msg(a.try_expand(&[-1, 3])),
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"
    );
    // Python prints the tensor type as torch.FloatTensor.
    assert_eq!(
        msg(iota(&[2, 3]).try_expand(&[3])),
        "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or \
         equal to the number of dimensions in the tensor (2)"
    );
}

#[test]
fn fill_through_an_expanded_view_fills_the_base() {
    oxten::init();
    // PyTorch's fill_ builds its TensorIterator with the overlap check off ("Fill is idempotent,
    // so overlap is okay"), so torch.zeros(3).expand(2, 3).fill_(7) succeeds.
    let base = oxten::zeros(&[3]);
    let e = base.expand(&[2, 3]);
    e.fill_scalar_(7.0);
    assert_eq!(vals(&base), [7.0, 7.0, 7.0]);
    assert_eq!(vals(&e), [7.0; 6]);
    // A large expansion (past the parallel grain) also works.
    let big = oxten::zeros(&[4]);
    big.expand(&[100_000, 4]).fill_scalar_(2.0);
    assert_eq!(vals(&big), [2.0; 4]);
}

// ---------------------------------------------------------------- squeeze / unsqueeze

#[test]
fn squeeze_and_unsqueeze() {
    oxten::init();
    let a = iota(&[1, 3, 1, 2]); // strides (6, 2, 2, 1)
    let s = a.squeeze();
    assert_eq!((s.sizes(), s.strides()), (dv(&[3, 2]), dv(&[2, 1])));
    let s2 = a.squeeze_dim(2);
    assert_eq!((s2.sizes(), s2.strides()), (dv(&[1, 3, 2]), dv(&[6, 2, 1])));
    // A dim that is not size 1 is left alone.
    assert_eq!(a.squeeze_dim(1).sizes(), [1, 3, 1, 2]);
    assert_eq!(msg(a.try_squeeze_dim(4)), "Dimension out of range (expected to be in range of [-4, 3], but got 4)");

    let b = iota(&[2, 3]); // strides (3, 1)
    let u0 = b.unsqueeze(0);
    assert_eq!((u0.sizes(), u0.strides()), (dv(&[1, 2, 3]), dv(&[6, 3, 1])));
    let u1 = b.unsqueeze(1);
    assert_eq!((u1.sizes(), u1.strides()), (dv(&[2, 1, 3]), dv(&[3, 3, 1])));
    let u2 = b.unsqueeze(-1);
    assert_eq!((u2.sizes(), u2.strides()), (dv(&[2, 3, 1]), dv(&[3, 1, 1])));
    assert!(u2.storage().is_alias_of(b.storage()));
    assert_eq!(msg(b.try_unsqueeze(3)), "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
    assert_eq!(Tensor::scalar(1.0f32).unsqueeze(0).sizes(), [1]);
}

// ---------------------------------------------------------------- slice / select / narrow

#[test]
fn slice_offsets_strides_and_clamping() {
    oxten::init();
    let a = iota(&[10]);
    let s = a.slice(0, Some(2), Some(8), 3);
    assert_eq!((s.sizes(), s.strides(), s.storage_offset()), (dv(&[2]), dv(&[3]), 2));
    assert_eq!(vals(&s), [2.0, 5.0]);
    let tail = a.slice(0, Some(-3), None, 1);
    assert_eq!((vals(&tail), tail.storage_offset()), (vec![7.0, 8.0, 9.0], 7));
    // Out-of-range bounds clamp; start past end gives an empty view.
    assert_eq!(vals(&a.slice(0, Some(8), Some(100), 1)), [8.0, 9.0]);
    let empty = a.slice(0, Some(6), Some(3), 1);
    assert_eq!(empty.sizes(), [0]);
    assert_eq!(vals(&a.slice(0, None, None, 1)).len(), 10);
    assert_eq!(msg(a.try_slice(0, None, None, 0)), "slice step must be positive");
    assert_eq!(msg(Tensor::scalar(1.0f32).try_slice(0, None, None, 1)), "slice() cannot be applied to a 0-dim tensor.");

    // b[:, 1::2] on a [4, 5] tensor: sizes [4, 2], strides [5, 2], offset 1.
    let b = iota(&[4, 5]);
    let c = b.slice(1, Some(1), None, 2);
    assert_eq!((c.sizes(), c.strides(), c.storage_offset()), (dv(&[4, 2]), dv(&[5, 2]), 1));
    assert_eq!(vals(&c), [1.0, 3.0, 6.0, 8.0, 11.0, 13.0, 16.0, 18.0]);
    // Writes go through to the base.
    c.fill_scalar_(-1.0);
    assert_eq!(vals(&b.select(0, 0)), [0.0, -1.0, 2.0, -1.0, 4.0]);
}

#[test]
fn select_and_its_errors() {
    oxten::init();
    let b = iota(&[4, 5]);
    let col = b.select(1, -1);
    assert_eq!((col.sizes(), col.strides(), col.storage_offset()), (dv(&[4]), dv(&[5]), 4));
    assert_eq!(vals(&col), [4.0, 9.0, 14.0, 19.0]);
    let row = b.select(0, 2);
    assert_eq!((row.sizes(), row.strides(), row.storage_offset()), (dv(&[5]), dv(&[1]), 10));

    let a = iota(&[3]);
    let e = a.try_select(0, 5).unwrap_err();
    assert_eq!(e.message, "select(): index 5 out of range for tensor of size [3] at dimension 0");
    assert_eq!(e.kind, ErrorKind::Index);
    assert_eq!(msg(a.try_select(0, -4)), "select(): index -4 out of range for tensor of size [3] at dimension 0");
    assert_eq!(a.select(0, -1).item::<f32>().unwrap(), 2.0);
}

#[test]
fn narrow_checks_then_slices() {
    oxten::init();
    let a = iota(&[5]);
    assert_eq!(msg(a.try_narrow(0, 4, 2)), "start (4) + length (2) exceeds dimension size (5).");
    let n = a.narrow(0, 1, 3);
    assert_eq!((vals(&n), n.storage_offset()), (vec![1.0, 2.0, 3.0], 1));
    assert_eq!(vals(&a.narrow(0, -2, 2)), [3.0, 4.0]);
    assert!(n.storage().is_alias_of(a.storage()));
}

// ---------------------------------------------------------------- as_strided

#[test]
fn as_strided_geometry_and_bounds() {
    oxten::init();
    let a = iota(&[6]);
    assert_eq!(vals(&a.as_strided(&[2, 2], &[1, 2])), [0.0, 2.0, 1.0, 3.0]);
    let shifted = a.as_strided_with(&[2, 2], &[1, 2], AsStridedOpts { storage_offset: Some(1) });
    assert_eq!(vals(&shifted), [1.0, 3.0, 2.0, 4.0]);
    // Without an offset the view starts where self starts.
    let s = a.slice(0, Some(2), None, 1);
    assert_eq!(vals(&s.as_strided(&[2], &[1])), [2.0, 3.0]);
    assert_eq!(
        msg(a.try_as_strided(&[3, 3], &[3, 1])),
        "setStorage: sizes [3, 3], strides [3, 1], storage offset 0, and itemsize 4 requiring a storage size \
         of 36 are out of bounds for storage of size 24"
    );
    assert_eq!(msg(a.try_as_strided(&[2], &[1, 1])), "mismatch in length of strides and shape");
}

// ---------------------------------------------------------------- factories

#[test]
fn zeros_ones_full_and_dtype_inference() {
    oxten::init();
    let z = oxten::zeros(&[2, 3]);
    assert_eq!((z.dtype(), z.strides()), (DType::F32, dv(&[3, 1])));
    assert_eq!(vals(&z), [0.0; 6]);
    let o = oxten::ones_with(&[2], OnesOpts { dtype: Some(DType::I32), ..Default::default() });
    assert_eq!(o.to_vec::<i32>().unwrap(), [1, 1]);
    let zi = oxten::zeros_with(&[2], ZerosOpts { dtype: Some(DType::I64), ..Default::default() });
    assert_eq!(zi.to_vec::<i64>().unwrap(), [0, 0]);

    // torch.full((2,), 2.5).dtype == float32, full((2,), 7) is int64, full((2,), True) is bool.
    let f = oxten::full(&[2], 2.5);
    assert_eq!((f.dtype(), vals(&f)), (DType::F32, vec![2.5, 2.5]));
    let i = oxten::full(&[2], 7);
    assert_eq!((i.dtype(), i.to_vec::<i64>().unwrap()), (DType::I64, vec![7, 7]));
    let b = oxten::full(&[2], true);
    assert_eq!((b.dtype(), b.to_vec::<bool>().unwrap()), (DType::Bool, vec![true, true]));
    let d = oxten::full_with(&[2], 7, FullOpts { dtype: Some(DType::F64), ..Default::default() });
    assert_eq!(d.to_vec::<f64>().unwrap(), [7.0, 7.0]);
}

#[test]
fn fill_converts_with_overflow_checks() {
    oxten::init();
    let u = oxten::zeros_with(&[2], ZerosOpts { dtype: Some(DType::U8), ..Default::default() });
    assert_eq!(msg(u.try_fill_scalar_(300)), "value cannot be converted to type uint8_t without overflow");
    // Negative integers wrap into uint8 (PyTorch: torch.zeros(2, dtype=torch.uint8).fill_(-1) -> 255).
    u.fill_scalar_(-1);
    assert_eq!(u.to_vec::<u8>().unwrap(), [255, 255]);
    // Floats truncate toward zero into integer tensors.
    let i = oxten::zeros_with(&[2], ZerosOpts { dtype: Some(DType::I32), ..Default::default() });
    i.fill_scalar_(-2.7);
    assert_eq!(i.to_vec::<i32>().unwrap(), [-2, -2]);
    // A strided (transposed) target is filled element by element.
    let t = iota(&[2, 3]).t();
    t.zero_();
    assert_eq!(vals(&t), [0.0; 6]);
}

#[test]
fn empty_defaults_formats_and_errors() {
    oxten::init();
    let e = oxten::empty(&[2, 3]);
    assert_eq!((e.dtype(), e.device(), e.strides()), (DType::F32, Device::Cpu, dv(&[3, 1])));
    let cl = oxten::empty_with(
        &[2, 3, 4, 5],
        EmptyOpts { memory_format: Some(MemoryFormat::ChannelsLast), ..Default::default() },
    );
    assert_eq!(cl.strides(), [60, 1, 15, 3]);
    assert!(cl.is_contiguous_as(MemoryFormat::ChannelsLast));
    assert_eq!(msg(oxten::try_empty(&[-1, 2])), "Trying to create tensor with negative dimension -1: [-1, 2]");
    assert_eq!(
        msg(oxten::try_empty_with(
            &[2],
            EmptyOpts { memory_format: Some(MemoryFormat::Preserve), ..Default::default() }
        )),
        "unsupported memory format option Preserve"
    );
    assert_eq!(
        msg(oxten::try_empty_with(
            &[2, 3],
            EmptyOpts { memory_format: Some(MemoryFormat::ChannelsLast), ..Default::default() }
        )),
        "required rank 4 tensor to use channels_last format"
    );
    assert!(oxten::try_empty_with(&[2], EmptyOpts { pin_memory: Some(true), ..Default::default() }).is_err());
    let s =
        oxten::empty_strided_with(&[2, 3], &[1, 2], EmptyStridedOpts { dtype: Some(DType::F64), ..Default::default() });
    assert_eq!((s.strides(), s.dtype()), (dv(&[1, 2]), DType::F64));
}

// ---------------------------------------------------------------- arange

#[test]
fn arange_values_and_dtypes() {
    oxten::init();
    // torch.arange(5) -> tensor([0, 1, 2, 3, 4]) (int64)
    let a = oxten::arange(5);
    assert_eq!((a.dtype(), a.to_vec::<i64>().unwrap()), (DType::I64, vec![0, 1, 2, 3, 4]));
    // torch.arange(0, 1, 0.25) -> tensor([0.0000, 0.2500, 0.5000, 0.7500]) (float32)
    let q = oxten::arange_start_step(0, 1, 0.25);
    assert_eq!((q.dtype(), vals(&q)), (DType::F32, vec![0.0, 0.25, 0.5, 0.75]));
    // torch.arange(10, 0, -3) -> tensor([10, 7, 4, 1])
    let d = oxten::arange_start_step(10, 0, Scalar::Int(-3));
    assert_eq!(d.to_vec::<i64>().unwrap(), [10, 7, 4, 1]);
    // torch.arange(1, 4) -> tensor([1, 2, 3]); torch.arange(2.5) -> tensor([0., 1., 2.])
    assert_eq!(oxten::arange_start(1, 4).to_vec::<i64>().unwrap(), [1, 2, 3]);
    let f = oxten::arange(2.5);
    assert_eq!((f.dtype(), vals(&f)), (DType::F32, vec![0.0, 1.0, 2.0]));
    let g =
        oxten::arange_start_step_with(1, 2, 0.5, ArangeStartStepOpts { dtype: Some(DType::F64), ..Default::default() });
    assert_eq!(g.to_vec::<f64>().unwrap(), [1.0, 1.5]);
    assert_eq!(oxten::arange(0).sizes(), [0]);
    // With an integer dtype and a float bound, the count comes from the doubles
    // (ceil(2.5) = 3, PyTorch's compute_arange_size) and the values from int64 arithmetic.
    let ints = oxten::arange_with(2.5, ArangeOpts { dtype: Some(DType::I32), ..Default::default() });
    assert_eq!(ints.to_vec::<i32>().unwrap(), [0, 1, 2]);
}

#[test]
fn arange_errors() {
    oxten::init();
    assert_eq!(msg(oxten::try_arange_start_step(0, 10, 0)), "step must be nonzero");
    assert_eq!(
        msg(oxten::try_arange_start_step(0, 10, -1)),
        "upper bound and larger bound inconsistent with step sign"
    );
    assert_eq!(msg(oxten::try_arange(f64::INFINITY)), "unsupported range: 0 -> inf");
    assert_eq!(
        msg(oxten::try_arange_with(3, ArangeOpts { dtype: Some(DType::Bool), ..Default::default() })),
        "\"arange_cpu\" not implemented for 'Bool'"
    );
    assert_eq!(
        msg(oxten::try_arange_start_step(0, 10, -0.5)),
        "upper bound and larger bound inconsistent with step sign"
    );
}

#[test]
fn arange_out_resizes_only_when_the_count_differs() {
    oxten::init();
    // An out with the right number of elements keeps its shape (PyTorch only resizes on a
    // numel mismatch) and is filled in row-major order.
    let out = oxten::empty(&[2, 2]);
    oxten::arange_start_out(0, 4, &out);
    assert_eq!((out.sizes(), vals(&out)), (dv(&[2, 2]), vec![0.0, 1.0, 2.0, 3.0]));
    let out = oxten::empty(&[7]);
    let r = oxten::arange_start_out_with(0, 8, &out, ArangeStartOutOpts { step: Scalar::Int(2) });
    assert!(r.is_same(&out));
    assert_eq!((out.sizes(), vals(&out)), (dv(&[4]), vec![0.0, 2.0, 4.0, 6.0]));
}

// ---------------------------------------------------------------- *_like, clone, contiguous

#[test]
fn empty_like_and_clone_preserve_channels_last() {
    oxten::init();
    let x = oxten::empty_with(
        &[2, 3, 4, 5],
        EmptyOpts { memory_format: Some(MemoryFormat::ChannelsLast), ..Default::default() },
    );
    x.copy_(&iota(&[2, 3, 4, 5]));
    assert_eq!(oxten::empty_like(&x).strides(), [60, 1, 15, 3]);
    let c = x.deep_clone();
    assert_eq!(c.strides(), [60, 1, 15, 3]);
    assert_eq!(vals(&c), vals(&x));
    assert!(!c.storage().is_alias_of(x.storage()));
    let rc = x.deep_clone_with(DeepCloneOpts { memory_format: Some(MemoryFormat::Contiguous) });
    assert_eq!(rc.strides(), [60, 20, 5, 1]);
    assert_eq!(vals(&rc), vals(&x));
}

#[test]
fn empty_like_and_clone_preserve_transposed_strides() {
    oxten::init();
    let t = iota(&[2, 3]).t(); // strides (1, 3)
    assert_eq!(oxten::empty_like(&t).strides(), [1, 3]);
    let c = t.deep_clone();
    assert_eq!((c.strides(), vals(&c)), (dv(&[1, 3]), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]));
    // Non-dense inputs get dense strides in the same dim order: a [4, 6] tensor transposed to
    // [6, 4] (strides (1, 6)) and sliced with step 2 in dim 0 is [3, 4] with strides (2, 6);
    // PyTorch's empty_like gives it strides (1, 3).
    let s = iota(&[4, 6]).t().slice(0, None, None, 2);
    assert_eq!(s.strides(), [2, 6]);
    assert_eq!(oxten::empty_like(&s).strides(), [1, 3]);
    let sc = s.deep_clone();
    assert_eq!(sc.strides(), [1, 3]);
    assert_eq!(vals(&sc), vals(&s));
    // Expanded inputs come back contiguous.
    let e = iota(&[3]).expand(&[2, 3]);
    assert_eq!(oxten::empty_like(&e).strides(), [3, 1]);
    // An explicit format and dtype are honoured.
    let l = oxten::empty_like_with(
        &t,
        EmptyLikeOpts { dtype: Some(DType::I16), memory_format: Some(MemoryFormat::Contiguous), ..Default::default() },
    );
    assert_eq!((l.dtype(), l.strides()), (DType::I16, dv(&[2, 1])));
}

#[test]
fn like_factories_take_dtype_from_self() {
    oxten::init();
    let i = oxten::arange(4); // int64
    assert_eq!(oxten::zeros_like(&i).to_vec::<i64>().unwrap(), [0, 0, 0, 0]);
    assert_eq!(oxten::ones_like(&i).to_vec::<i64>().unwrap(), [1, 1, 1, 1]);
    // full_like keeps self's dtype: torch.full_like(torch.arange(2), 2.7) -> tensor([2, 2])
    assert_eq!(oxten::full_like(&i.narrow(0, 0, 2), 2.7).to_vec::<i64>().unwrap(), [2, 2]);
}

#[test]
fn contiguous_returns_self_or_a_copy() {
    oxten::init();
    let a = iota(&[2, 3]);
    assert!(a.contiguous().is_same(&a));
    let t = a.t();
    let c = t.contiguous();
    assert!(!c.is_same(&t));
    assert_eq!((c.strides(), vals(&c)), (dv(&[2, 1]), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]));
    let x = iota(&[2, 3, 4, 5]);
    let cl = x.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast });
    assert_eq!(cl.strides(), [60, 1, 15, 3]);
    assert_eq!(vals(&cl), vals(&x));
    assert!(cl.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast }).is_same(&cl));
}

// ---------------------------------------------------------------- copy_ / to

#[test]
fn copy_broadcasts_and_converts() {
    oxten::init();
    let dst = oxten::zeros_with(&[2, 3], ZerosOpts { dtype: Some(DType::I32), ..Default::default() });
    let src = Tensor::from_vec(vec![1.5f32, -2.5, 3.9], &[3]).unwrap();
    let r = dst.copy_(&src);
    assert!(r.is_same(&dst));
    assert_eq!(dst.to_vec::<i32>().unwrap(), [1, -2, 3, 1, -2, 3]);
    // Writing into an expanded tensor is rejected (several elements share one location).
    let e = oxten::zeros(&[3]).expand(&[2, 3]);
    assert!(e.try_copy_(&iota(&[2, 3])).unwrap_err().message.contains("more than one element"));
}

#[test]
fn to_dtype_aliases_when_nothing_changes() {
    oxten::init();
    let x = iota(&[2, 3]);
    assert!(x.to_dtype(DType::F32).is_same(&x));
    let copied = x.to_dtype_with(DType::F32, ToDtypeOpts { copy: true, ..Default::default() });
    assert!(!copied.is_same(&x) && !copied.storage().is_alias_of(x.storage()));
    let d = x.to_dtype(DType::F64);
    assert_eq!(d.to_vec::<f64>().unwrap(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let i = Tensor::from_vec(vec![1.9f32, -1.9], &[2]).unwrap().to_dtype(DType::I64);
    assert_eq!(i.to_vec::<i64>().unwrap(), [1, -1]);
    // "Already in that format" means suggest_memory_format(): a transposed 2-D tensor suggests
    // contiguous_format, so PyTorch aliases even though it is not contiguous.
    let t = x.t();
    let contiguous = ToDtypeOpts { memory_format: Some(MemoryFormat::Contiguous), ..Default::default() };
    assert!(t.to_dtype_with(DType::F32, contiguous.clone()).is_same(&t));
    // A channels-last tensor does get copied into contiguous_format.
    let cl = iota(&[1, 2, 2, 2]).contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast });
    let r = cl.to_dtype_with(DType::F32, contiguous);
    assert!(!r.is_same(&cl));
    assert_eq!(r.strides(), [8, 4, 2, 1]);
    // Preserve keeps the transposed strides of a dense tensor.
    assert_eq!(t.to_dtype(DType::F64).strides(), [1, 3]);
}

#[test]
fn to_copy_changes_dtype_and_device() {
    oxten::init();
    let x = iota(&[2, 3]).t();
    let y = oxten::_to_copy_with(&x, ToCopyOpts { dtype: Some(DType::F64), ..Default::default() });
    assert_eq!((y.dtype(), y.strides()), (DType::F64, dv(&[1, 3])));
    assert_eq!(y.to_vec::<f64>().unwrap(), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let m = oxten::_to_copy_with(&x, ToCopyOpts { device: Some(Device::Meta), ..Default::default() });
    assert_eq!((m.device(), m.sizes(), m.strides()), (Device::Meta, dv(&[3, 2]), dv(&[1, 3])));
    let back = oxten::try__to_copy_with(&m, ToCopyOpts { device: Some(Device::Cpu), ..Default::default() });
    assert_eq!(msg(back), "Cannot copy out of meta tensor; no data!");
}

// ---------------------------------------------------------------- meta tensors

#[test]
fn meta_tensors_have_sizes_and_no_data() {
    oxten::init();
    let m = meta(&[2, 3]);
    assert!(m.is_meta());
    assert_eq!((m.sizes(), m.strides(), m.dtype()), (dv(&[2, 3]), dv(&[3, 1]), DType::F32));
    assert!(m.data_ptr().is_null());
    assert!(m.to_vec::<f32>().is_err());

    // Factories, fills, views and copies all run on meta without data.
    let z = oxten::zeros_with(&[4], ZerosOpts { device: Some(Device::Meta), ..Default::default() });
    assert!(z.is_meta());
    assert!(z.fill_scalar_(3.0).is_same(&z));
    let v = m.t().unsqueeze(0);
    assert_eq!((v.sizes(), v.strides(), v.device()), (dv(&[1, 3, 2]), dv(&[3, 1, 3]), Device::Meta));
    assert_eq!(m.reshape(&[6]).sizes(), [6]);
    assert_eq!(msg(m.try_view(&[4])), "shape '[4]' is invalid for input of size 6");
    let c = m.t().deep_clone();
    assert_eq!((c.device(), c.strides()), (Device::Meta, dv(&[1, 3])));
    let r = oxten::arange_start_step_with(
        0,
        10,
        Scalar::Int(3),
        ArangeStartStepOpts { device: Some(Device::Meta), ..Default::default() },
    );
    assert_eq!((r.device(), r.sizes(), r.dtype()), (Device::Meta, dv(&[4]), DType::I64));
    assert!(m.try_copy_(&iota(&[3])).is_ok());
    assert!(m.try_copy_(&iota(&[4])).is_err());
}
