//! End-to-end behaviour of the core through the public API: structured functional / in-place /
//! out= variants, meta tensors, views and the version counter, factories reaching the device's
//! backend, and the error contract.

use oxten::options::{AddOpts, EmptyOpts};
use oxten::{DType, Device, ErrorKind, MemoryFormat, Tensor};

fn t(v: &[f32], s: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), s).unwrap()
}

#[test]
fn one_structured_declaration_gives_three_agreeing_variants() {
    let a = t(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
    let b = t(&[10., 20., 30.], &[3]);
    let f = a.add_with(&b, AddOpts { alpha: 2.into() });
    let out = oxten::empty(&[2, 3]);
    oxten::add_out_with(&a, &b, &out, oxten::options::AddOutOpts { alpha: 2.into() });
    let inplace = a.deep_clone();
    let r = inplace.add_with_(&b, oxten::options::AddInplaceOpts { alpha: 2.into() });
    let want = [21., 42., 63., 24., 45., 66.];
    assert_eq!(f.to_vec::<f32>().unwrap(), want);
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
    assert_eq!(inplace.to_vec::<f32>().unwrap(), want);
    assert!(r.is_same(&inplace), "in-place ops return self");
}

#[test]
fn out_variant_resizes_writes_through_views_and_rejects_unsafe_casts() {
    let a = t(&[1., 2., 3., 4.], &[2, 2]);
    // A wrongly sized out is resized (PyTorch's resize_out).
    let out = oxten::empty(&[7]);
    let r = oxten::add_out(&a, &a, &out);
    assert!(r.is_same(&out));
    assert_eq!(out.sizes(), [2, 2]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [2., 4., 6., 8.]);
    // A strided out (a transposed view of a base) is written through, strides kept.
    let base = oxten::zeros(&[2, 2]);
    let view = base.t();
    oxten::add_out(&a, &a, &view);
    assert_eq!(view.strides(), [1, 2]);
    assert_eq!(base.to_vec::<f32>().unwrap(), [2., 6., 4., 8.]);
    // A column of a wider base: only that column changes.
    let wide = oxten::zeros(&[2, 3]);
    let col = wide.select(1, 1);
    oxten::mul_out(&t(&[3., 4.], &[2]), &t(&[2., 2.], &[2]), &col);
    assert_eq!(wide.to_vec::<f32>().unwrap(), [0., 6., 0., 0., 8., 0.]);
    // A wider out dtype is fine (computed in f32, cast to f64) …
    let out64 = oxten::empty_with(&[2, 2], EmptyOpts { dtype: Some(DType::F64), ..Default::default() });
    oxten::add_out(&a, &a, &out64);
    assert_eq!(out64.to_vec::<f64>().unwrap(), [2., 4., 6., 8.]);
    // … but a float result cannot be cast into an integer out.
    let out_i = oxten::empty_with(&[2, 2], EmptyOpts { dtype: Some(DType::I64), ..Default::default() });
    let e = oxten::try_add_out(&a, &a, &out_i).unwrap_err();
    assert_eq!(e.to_string(), "add.out: result type Float can't be cast to the desired output type Long");
}

#[test]
fn out_tensors_of_the_result_shape_are_written_in_place_of_their_view() {
    let a = t(&[1., 2., 3.], &[3]);
    let b = t(&[10., 20., 30.], &[3]);
    // A contiguous out= view at a storage offset: only its three elements change.
    let big = oxten::zeros(&[6]);
    let v0 = big.version();
    let out = big.narrow(0, 2, 3);
    let r = oxten::add_out(&a, &b, &out);
    assert!(r.is_same(&out));
    assert_eq!(big.to_vec::<f32>().unwrap(), [0., 0., 11., 22., 33., 0.]);
    assert_eq!(big.version(), v0 + 1, "out= bumps the version of the out tensor's storage");
    // An out= tensor sharing storage with an input, disjoint from it, is fine …
    let x = t(&[1., 2., 3., 4., 5., 6.], &[6]);
    oxten::add_out(&x.narrow(0, 0, 3), &b, &x.narrow(0, 3, 3));
    assert_eq!(x.to_vec::<f32>().unwrap(), [1., 2., 3., 11., 22., 33.]);
    // … a partial overlap is an error, and nothing is written.
    let e = oxten::try_add_out(&x.narrow(0, 0, 3), &b, &x.narrow(0, 1, 3)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overlap, "{e}");
    assert_eq!(x.to_vec::<f32>().unwrap(), [1., 2., 3., 11., 22., 33.]);
    // A bool out= of a comparison (the declared output dtype) and an exact-size f32 out.
    let m = Tensor::from_vec(vec![true; 3], &[3]).unwrap();
    oxten::gt_tensor_out(&a, &t(&[0., 5., 3.], &[3]), &m);
    assert_eq!(m.to_vec::<bool>().unwrap(), [true, false, false]);
    let o = oxten::empty(&[3]);
    oxten::exp_out(&t(&[0., 0., 0.], &[3]), &o);
    assert_eq!(o.to_vec::<f32>().unwrap(), [1., 1., 1.]);
}

#[test]
fn inplace_cannot_broadcast_self() {
    let a = t(&[1., 2.], &[2, 1]);
    let b = t(&[1., 2., 3.], &[1, 3]);
    let e = a.try_add_(&b).unwrap_err();
    assert_eq!(e.to_string(), "add_.Tensor: output with shape [2, 1] doesn't match the broadcast shape [2, 3]");
    // In-place into an integer tensor of a float result is an unsafe cast.
    let i = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
    let e = i.try_mul_scalar_(2.5).unwrap_err();
    assert!(e.to_string().contains("can't be cast to the desired output type Long"), "{e}");
}

#[test]
fn meta_tensors_run_meta_functions_only() {
    let meta = |s: &[i64], d: DType| {
        oxten::empty_with(s, EmptyOpts { dtype: Some(d), device: Some(Device::Meta), ..Default::default() })
    };
    let c = meta(&[3, 1], DType::I32).add(&meta(&[1, 4], DType::F32));
    assert_eq!((c.sizes().to_vec(), c.dtype(), c.device()), (vec![3, 4], DType::F32, Device::Meta));
    assert!(c.data_ptr().is_null(), "meta tensors have no data");
    assert_eq!(c.storage().nbytes(), 3 * 4 * 4, "but they know how big their storage would be");
    // The same shape error as on CPU.
    let cpu_err = oxten::ones(&[2, 3]).try_add(&oxten::ones(&[4])).unwrap_err();
    let meta_err = meta(&[2, 3], DType::F32).try_add(&meta(&[4], DType::F32)).unwrap_err();
    assert_eq!(cpu_err, meta_err);
    // The same output strides as on CPU for mixed NCHW + NHWC inputs.
    let cl =
        |x: Tensor| x.contiguous_with(oxten::options::ContiguousOpts { memory_format: MemoryFormat::ChannelsLast });
    let cpu = cl(oxten::ones(&[2, 3, 4, 5])).add(&oxten::ones(&[2, 3, 4, 5]));
    let m = cl(meta(&[2, 3, 4, 5], DType::F32)).add(&meta(&[2, 3, 4, 5], DType::F32));
    assert_eq!(cpu.strides(), m.strides());
    assert_eq!(m.strides(), [60, 1, 15, 3], "the first input's channels_last layout wins");
    // Reductions and views work on meta too.
    let (v, i) = meta(&[5, 7], DType::BF16).max_dim(1, false);
    assert_eq!((v.sizes().to_vec(), v.dtype(), i.dtype()), (vec![5], DType::BF16, DType::I64));
    assert_eq!(meta(&[5, 7], DType::F32).t().strides(), [1, 7]);
}

#[test]
fn views_share_storage_and_the_version_counter() {
    let base = oxten::zeros(&[3, 4]);
    let v0 = base.version();
    let row = base.select(0, 1);
    assert!(row.storage().is_alias_of(base.storage()));
    row.fill_scalar_(5.0);
    assert_eq!(base.to_vec::<f32>().unwrap()[4..8], [5.0; 4]);
    assert_eq!(base.version(), v0 + 1, "in-place through a view bumps the shared counter");
    let col = base.narrow(1, 2, 1);
    col.add_scalar_(1.0);
    assert_eq!(base.version(), v0 + 2);
    assert_eq!(base.to_vec::<f32>().unwrap(), [0., 0., 1., 0., 5., 5., 6., 5., 0., 0., 1., 0.]);
    // out= bumps the out tensor's version too; a functional op bumps nothing.
    let before = base.version();
    let _ = base.add(&base);
    assert_eq!(base.version(), before);
    oxten::add_out(&col, &col, &col);
    assert_eq!(base.version(), before + 1);
    // A handle clone aliases; deep_clone copies.
    let alias = base.clone();
    let copy = base.deep_clone();
    base.zero_();
    assert_eq!(alias.sum().item::<f32>().unwrap(), 0.0);
    // [0,0,1,0 | 5,5,6,5 | 0,0,1,0] with column 2 doubled by add_out: 23 + (1 + 6 + 1) = 31.
    assert_eq!(copy.sum().item::<f32>().unwrap(), 31.0);
}

#[test]
fn factories_reach_the_backend_named_by_device() {
    let m = oxten::zeros_with(&[2, 2], oxten::options::ZerosOpts { device: Some(Device::Meta), ..Default::default() });
    assert_eq!(m.device(), Device::Meta);
    let c = oxten::full(&[2], 7);
    assert_eq!((c.dtype(), c.to_vec::<i64>().unwrap()), (DType::I64, vec![7, 7]));
    let e = oxten::try_empty_with(&[2], EmptyOpts { device: Some(Device::Cuda(0)), ..Default::default() }).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotImplemented);
    assert!(e.to_string().contains("'CUDA' backend"), "{e}");
}

#[test]
fn errors_name_the_operator_and_the_problem() {
    let e = oxten::ones(&[2, 3]).try_sum_dim_intlist(Some(&[2]), false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sum.dim_IntList: Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
    assert_eq!(e.kind, ErrorKind::Index);
    let e = oxten::ones(&[6]).try_view(&[4, -1]).unwrap_err();
    assert_eq!(e.to_string(), "view: shape '[4, -1]' is invalid for input of size 6");
    let r = std::panic::catch_unwind(|| oxten::ones(&[2]).add(&oxten::ones(&[3])));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.starts_with("add.Tensor: The size of tensor a (2) must match"), "{msg}");
}

#[test]
fn tensor_metadata_is_small() {
    // Sizes and strides live inline for up to five dims (no heap allocation for metadata).
    assert!(std::mem::size_of::<oxten::DimVec>() <= 56);
    let t5 = oxten::zeros(&[1, 2, 3, 4, 5]);
    assert!(matches!(t5.sizes(), oxten::DimVec::Inline { .. }));
}

/// The out= overloads `autogen:` derives from functional entries (`kthvalue.values`, `sum.out`,
/// `logit.out` …): the functional operator's results written into the out= tensors, resized as
/// `resize_output` resizes, with PyTorch's out= checks as errors naming the argument.
#[test]
fn autogen_out_overloads_write_the_functional_results() {
    let x = t(&[3., 1., 2., 5., 4., 0.], &[2, 3]);
    let empty = |dtype| oxten::empty_with(&[0], EmptyOpts { dtype: Some(dtype), ..Default::default() });
    // Two named outputs, resized from empty.
    let (v, i) = (empty(DType::F32), empty(DType::I64));
    let (rv, ri) = oxten::kthvalue_values(&x, 2, &v, &i);
    assert!(rv.is_same(&v) && ri.is_same(&i), "out= overloads return their out= tensors");
    assert_eq!((v.sizes().to_vec(), v.to_vec::<f32>().unwrap()), (vec![2], vec![2., 4.]));
    assert_eq!(i.to_vec::<i64>().unwrap(), [2, 1]);
    // Written through a strided view of the right shape, neighbours untouched.
    let base = oxten::zeros(&[2, 2]);
    let column = base.select(1, 1);
    let (min, max) = (empty(DType::F32), column.clone());
    oxten::aminmax_out_with(&x, &min, &max, oxten::options::AminmaxOutOpts { dim: Some(1), keepdim: false });
    assert_eq!(base.to_vec::<f32>().unwrap(), [0., 3., 0., 5.]);
    assert_eq!(min.to_vec::<f32>().unwrap(), [1., 0.]);
    // One output: the same values as the functional form.
    let s = empty(DType::F32);
    oxten::sum_out(&x, &s);
    assert_eq!(s.to_vec::<f32>().unwrap(), x.sum().to_vec::<f32>().unwrap());
    // Non-pointwise operators need the result's dtype; pointwise ones take a wider one.
    let e = oxten::try_sum_out(&x, &empty(DType::F64)).unwrap_err();
    assert_eq!(e.to_string(), "sum.out: Expected out tensor `out` to have dtype float, but got double instead");
    let wide = empty(DType::F64);
    oxten::logit_out(&t(&[0.5, 0.75], &[2]), &wide);
    assert_eq!(wide.to_vec::<f64>().unwrap(), [0.0, f64::from(3f32.ln())], "computed in float32, then widened");
    let e = oxten::try_logit_out(&t(&[0.5], &[1]), &empty(DType::I64)).unwrap_err();
    assert!(e.to_string().contains("can't be cast to the desired output type Long"), "{e}");
    // Memory shared with an input, or between out= tensors: PyTorch's overlap errors, nothing written.
    let m = Tensor::from_vec(vec![true, false, true, true, false, true], &[2, 3]).unwrap();
    let before = x.to_vec::<f32>().unwrap();
    let e = oxten::try_masked_select_out(&x, &m, &x.view(&[6])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overlap);
    assert_eq!(x.to_vec::<f32>().unwrap(), before);
    let both = empty(DType::F32);
    let e = oxten::try_aminmax_out(&x, &both, &both).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overlap, "{e}");
    let e = oxten::try_take_out(&x, &Tensor::from_vec(vec![0i64, 1], &[2]).unwrap(), &oxten::zeros(&[1]).expand(&[2]))
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overlap, "{e}");
    // Not differentiable, as every out= overload.
    let g = x.deep_clone();
    g.requires_grad_(true);
    let e = oxten::try_sum_out(&g, &empty(DType::F32)).unwrap_err();
    assert!(e.to_string().contains("don't support automatic differentiation"), "{e}");
}

/// A factory's `autogen:` out= overload drops its TensorOptions: it creates in `out`'s dtype and on
/// its device (`torch.zeros(2, 3, out=o)`), resizing `out`.
#[test]
fn autogen_factory_out_overloads_take_dtype_and_device_from_out() {
    let o = oxten::empty_with(&[5], EmptyOpts { dtype: Some(DType::I64), ..Default::default() });
    oxten::zeros_out(&[2, 3], &o);
    assert_eq!((o.sizes().to_vec(), o.dtype(), o.to_vec::<i64>().unwrap()), (vec![2, 3], DType::I64, vec![0; 6]));
    let f = oxten::empty(&[0]);
    oxten::arange_out(4, &f);
    assert_eq!((f.dtype(), f.to_vec::<f32>().unwrap()), (DType::F32, vec![0., 1., 2., 3.]));
    oxten::full_out(&[2], 2.5, &f);
    assert_eq!(f.to_vec::<f32>().unwrap(), [2.5, 2.5]);
    let l = oxten::empty_with(&[0], EmptyOpts { dtype: Some(DType::F64), ..Default::default() });
    oxten::linspace_out(0, 1, 5, &l);
    assert_eq!(l.to_vec::<f64>().unwrap(), [0.0, 0.25, 0.5, 0.75, 1.0]);
    let like = oxten::empty(&[0]);
    oxten::ones_like_out(&t(&[7., 8., 9.], &[3]), &like);
    assert_eq!(like.to_vec::<f32>().unwrap(), [1., 1., 1.]);
    let e = oxten::empty(&[0]);
    oxten::eye_m_out(2, 3, &e);
    assert_eq!(e.to_vec::<f32>().unwrap(), [1., 0., 0., 0., 1., 0.]);
    // A Meta out gets a Meta result: only shapes.
    let m = oxten::empty_with(&[0], EmptyOpts { device: Some(Device::Meta), ..Default::default() });
    oxten::ones_out(&[4], &m);
    assert_eq!((m.device(), m.sizes().to_vec()), (Device::Meta, vec![4]));
    // `tril_indices`' dtype defaults to long, and its out= form drops it as well (PyTorch's
    // `tril_indices.out(int row, int col, int offset=0, *, Tensor(a!) out)`): out's dtype rules.
    let i = oxten::empty_with(&[0], EmptyOpts { dtype: Some(DType::I32), ..Default::default() });
    oxten::tril_indices_out(3, 3, &i);
    assert_eq!((i.dtype(), i.to_vec::<i32>().unwrap()), (DType::I32, vec![0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2]));
}

/// The out= forms of the `*_copy` view operators and other functionals added with `autogen:`:
/// the copy's values in `out`, never a view of the input.
#[test]
fn autogen_out_overloads_of_view_copies_write_copies() {
    let x = t(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
    let o = oxten::empty(&[0]);
    oxten::t_copy_out(&x, &o);
    assert_eq!((o.sizes().to_vec(), o.to_vec::<f32>().unwrap()), (vec![3, 2], vec![1., 4., 2., 5., 3., 6.]));
    o.zero_();
    assert_eq!(x.to_vec::<f32>().unwrap(), [1., 2., 3., 4., 5., 6.], "out is not a view of x");
    oxten::view_copy_out(&x, &[3, 2], &o);
    assert_eq!((o.sizes().to_vec(), o.to_vec::<f32>().unwrap()), (vec![3, 2], vec![1., 2., 3., 4., 5., 6.]));
    oxten::rot90_out(&x, &o);
    assert_eq!((o.sizes().to_vec(), o.to_vec::<f32>().unwrap()), (vec![3, 2], vec![3., 6., 2., 5., 1., 4.]));
    let f64_out = oxten::empty_with(&[2], EmptyOpts { dtype: Some(DType::F64), ..Default::default() });
    let e = oxten::try_diagonal_copy_out(&x, &f64_out).unwrap_err();
    assert!(e.to_string().contains("diagonal_copy.out"), "{e}");
}
