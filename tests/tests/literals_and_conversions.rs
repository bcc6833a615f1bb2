//! `tensor!`, `Tensor::from` and `TryFrom<&Tensor>`: shapes and dtypes follow `torch.tensor`'s
//! defaults (float literals float32, integer literals int64), typed data keeps its dtype, and
//! conversions back check shapes and convert dtypes.

use half::bf16;
use ndarray::{array, s, Array2, Array3, ArrayD};
use oxten::{tensor, DType, Tensor};

#[test]
fn the_macro_builds_nested_literals_with_pytorchs_default_dtypes() {
    let m = tensor![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    assert_eq!((m.sizes().to_vec(), m.dtype()), (vec![2, 3], DType::F32));
    assert_eq!(m.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let i = tensor![1, -2, 3];
    assert_eq!((i.sizes().to_vec(), i.dtype(), i.to_vec::<i64>().unwrap()), (vec![3], DType::I64, vec![1, -2, 3]));
    // One level of brackets inside is a dimension of size 1, as in `torch.tensor([[1, 2]])`.
    assert_eq!(tensor![[1, 2]].sizes(), [1, 2]);
    // Typed literals keep their type; a suffix picks the dtype.
    assert_eq!(tensor![1u8, 2u8].dtype(), DType::U8);
    assert_eq!(tensor![true, false].dtype(), DType::Bool);
    let d = tensor![[0.1, 0.2]; f64];
    assert_eq!((d.dtype(), d.to_vec::<f64>().unwrap()), (DType::F64, vec![0.1, 0.2]));
    assert_eq!(tensor![1.5, 2.5; bf16].to_vec::<bf16>().unwrap(), [bf16::from_f32(1.5), bf16::from_f32(2.5)]);
    assert_eq!(tensor![3, 4; f32].to_vec::<f32>().unwrap(), [3.0, 4.0]);
    // Three dimensions, and an empty inner dimension.
    assert_eq!(tensor![[[1], [2]], [[3], [4]]].sizes(), [2, 2, 1]);
    let empty: [[f64; 0]; 2] = [[], []];
    assert_eq!(Tensor::from(empty).sizes(), [2, 0]);
}

#[test]
fn from_builds_tensors_from_numbers_arrays_and_vectors() {
    let s = Tensor::from(2.5);
    assert_eq!((s.dim(), s.dtype(), s.item::<f32>().unwrap()), (0, DType::F32, 2.5));
    assert_eq!(Tensor::from([[1, 2], [3, 4]]).sizes(), [2, 2]);
    // Typed data keeps its dtype.
    let v = Tensor::from(vec![1.0f64, 2.0]);
    assert_eq!((v.sizes().to_vec(), v.dtype()), (vec![2], DType::F64));
    assert_eq!(Tensor::from(&[7i32, 8][..]).dtype(), DType::I32);
}

#[test]
fn try_from_gives_vectors_and_numbers_converted_from_the_dtype() {
    let t = tensor![1.5, -2.5, 3.0];
    assert_eq!(Vec::<f32>::try_from(&t).unwrap(), [1.5, -2.5, 3.0]);
    // Converted as `to_dtype` does (float to int truncates toward zero).
    assert_eq!(Vec::<i64>::try_from(&t).unwrap(), [1, -2, 3]);
    let m = tensor![[1, 2], [3, 4]];
    assert_eq!(Vec::<Vec<i64>>::try_from(&m).unwrap(), [vec![1, 2], vec![3, 4]]);
    let e = Vec::<f32>::try_from(&m).unwrap_err();
    assert!(e.to_string().contains("at most 1 dimension, got shape [2, 2]"), "{e}");
    assert!(Vec::<Vec<f32>>::try_from(&t).unwrap_err().to_string().contains("expected a 2-D tensor, got shape [3]"));
    assert_eq!(f64::try_from(&tensor![[7]]).unwrap(), 7.0);
    assert!(bool::try_from(&Tensor::from(0.5)).unwrap());
    let e = f32::try_from(&t).unwrap_err();
    assert!(e.to_string().contains("a Tensor with 3 elements cannot be converted to Scalar"), "{e}");
    // 0-dim and empty.
    assert_eq!(Vec::<f32>::try_from(&Tensor::from(4.0)).unwrap(), [4.0]);
    let empty: [[f32; 0]; 2] = [[], []];
    assert_eq!(Vec::<Vec<f32>>::try_from(&Tensor::from(empty)).unwrap(), [Vec::<f32>::new(), Vec::new()]);
}

#[test]
fn tensor_lists_take_tensors_references_and_vectors() {
    let (a, b) = (tensor![1.0, 2.0], tensor![3.0]);
    let want = [1.0f32, 2.0, 3.0];
    assert_eq!(oxten::cat(&[a.clone(), b.clone()], 0).to_vec::<f32>().unwrap(), want);
    assert_eq!(oxten::cat(&[&a, &b], 0).to_vec::<f32>().unwrap(), want);
    let held: Vec<Tensor> = vec![a.clone(), b];
    assert_eq!(oxten::cat(&held, 0).to_vec::<f32>().unwrap(), want);
    assert_eq!(oxten::stack(&[&a, &a], 0).sizes(), [2, 2]);
    // autograd::grad too, with its options in a struct.
    let x = tensor![2.0].requires_grad_(true);
    let y = x.mul(&x).mul(&x);
    let g = oxten::autograd::grad_with(
        &[&y],
        &[&x],
        oxten::autograd::GradOpts { create_graph: true, ..Default::default() },
    )
    .unwrap();
    let g = g[0].clone().unwrap();
    assert_eq!(g.item::<f32>().unwrap(), 12.0);
    let gg = oxten::autograd::grad(&[&g], &[&x]).unwrap()[0].clone().unwrap();
    assert_eq!(gg.item::<f32>().unwrap(), 12.0);
}

// ---- ndarray (the `ndarray` feature) ----

#[test]
fn ndarray_round_trips_keep_shape_and_logical_order() {
    let a: Array2<f32> = array![[1., 2., 3.], [4., 5., 6.]];
    let t = Tensor::from(&a);
    assert_eq!(t.sizes(), [2, 3]);
    assert_eq!(t.to_vec::<f32>().unwrap(), [1., 2., 3., 4., 5., 6.]);
    // A transposed (non-contiguous) view, both ways.
    let tt = Tensor::from(a.t());
    assert_eq!(tt.to_vec::<f32>().unwrap(), [1., 4., 2., 5., 3., 6.]);
    let back: Array2<f32> = (&t.t()).try_into().unwrap();
    assert_eq!(back, a.t());
    // A strided slice of an array.
    let sliced = Tensor::from(a.slice(s![.., ..;2]));
    assert_eq!(sliced.to_vec::<f32>().unwrap(), [1., 3., 4., 6.]);
    let dynamic: ArrayD<f32> = (&t).try_into().unwrap();
    assert_eq!(dynamic.shape(), [2, 3]);
}

#[test]
fn ndarray_mismatches_are_errors() {
    let t = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap();
    let e = Array2::<f32>::try_from(&t).unwrap_err().to_string();
    assert!(e.contains("dtype"), "{e}");
    let e = Array3::<i64>::try_from(&t).unwrap_err().to_string();
    assert!(e.contains("cannot convert a 2-dim tensor to an ndarray array of 3 dimensions"), "{e}");
    let scalar = ndarray::arr0(2.5f64);
    assert_eq!(Tensor::from(&scalar).dim(), 0);
}

// Operators that answer with a host value (`-> bool`, `-> Scalar` schemas); expected values are
// PyTorch 2.15's (`torch.equal`, `torch.allclose`, `Tensor.item`, `torch.is_nonzero`).

#[test]
fn equal_compares_sizes_then_promoted_values() {
    assert!(tensor![1, 2].equal(&tensor![1.0, 2.0]));
    assert!(tensor![true].equal(&tensor![1]));
    assert!(!tensor![1, 2].equal(&tensor![1]));
    // No broadcasting: [2] and [1, 2] differ in size.
    assert!(!tensor![1, 2].equal(&tensor![[1, 2]]));
    let nan = tensor![f32::NAN];
    assert!(!nan.equal(&nan), "NaN equals nothing, itself included");
    assert!(tensor![-0.0].equal(&tensor![0.0]));
    assert!(oxten::zeros(&[0, 3]).equal(&oxten::zeros(&[0, 3]).to_dtype(DType::I64)));
    // A strided view against a copy.
    let m = tensor![[1, 2], [3, 4]];
    assert!(m.t().equal(&tensor![[1, 3], [2, 4]]));
    // Gradients are not involved: inputs that require grad are fine.
    let x = tensor![1.0, 2.0].requires_grad_(true);
    assert!(oxten::equal(&x, &tensor![1.0, 2.0]));
}

#[test]
fn allclose_is_isclose_over_the_broadcast_shapes() {
    let a = tensor![1.0, 2.0];
    assert!(a.allclose(&tensor![1.0, 2.000001]));
    assert!(!a.allclose(&tensor![1.0, 2.1]));
    assert!(a.allclose_with(&tensor![1.0, 2.1], oxten::options::AllcloseOpts { atol: 0.2, ..Default::default() }));
    assert!(tensor![[1.0, 2.0]].allclose(&a));
    let nan = tensor![f32::NAN];
    assert!(!nan.allclose(&nan));
    assert!(nan.allclose_with(&nan, oxten::options::AllcloseOpts { equal_nan: true, ..Default::default() }));
    let e = a.try_allclose(&tensor![1, 2]).unwrap_err().to_string();
    assert!(e.contains("allclose") && e.contains("Float did not match Long"), "{e}");
    let e = a.try_allclose(&tensor![1.0, 2.0, 3.0]).unwrap_err().to_string();
    assert!(e.contains("The size of tensor a (2) must match the size of tensor b (3)"), "{e}");
}

#[test]
fn item_reads_one_element_as_a_scalar_of_its_kind() {
    use oxten::Scalar;
    assert_eq!(oxten::item(&tensor![[3]]), Scalar::Int(3));
    // i64 values stay exact (not read through f64).
    assert_eq!(oxten::item(&tensor![i64::MAX - 1]), Scalar::Int(i64::MAX - 1));
    assert_eq!(oxten::item(&tensor![-7i8]), Scalar::Int(-7));
    assert_eq!(oxten::item(&tensor![true]), Scalar::Bool(true));
    assert_eq!(oxten::item(&tensor![2.5].to_dtype(DType::F16)), Scalar::Float(2.5));
    assert_eq!(oxten::item(&tensor![0.1f32]), Scalar::Float(f64::from(0.1f32)));
    let e = oxten::try_item(&oxten::zeros(&[0])).unwrap_err().to_string();
    assert!(e.contains("item") && e.contains("a Tensor with 0 elements cannot be converted to Scalar"), "{e}");
    let meta = oxten::zeros(&[1]).to_device(oxten::Device::Meta);
    assert!(oxten::try_item(&meta).is_err());
    assert!(oxten::try_equal(&meta, &meta).is_err());
}

#[test]
fn is_nonzero_is_the_truth_of_one_element() {
    assert!(tensor![[0.5]].is_nonzero());
    assert!(!tensor![0].is_nonzero());
    assert!(tensor![f32::NAN].is_nonzero(), "NaN is true, as in Python");
    assert!(!tensor![false].is_nonzero());
    let e = tensor![1.0, 2.0].try_is_nonzero().unwrap_err().to_string();
    assert!(e.contains("Boolean value of Tensor with more than one value is ambiguous"), "{e}");
    let e = oxten::zeros(&[0]).try_is_nonzero().unwrap_err().to_string();
    assert!(e.contains("Boolean value of Tensor with no values is ambiguous"), "{e}");
    assert!(tensor![1.0].is_same_size(&tensor![2]));
    assert!(!tensor![1.0].is_same_size(&tensor![[2]]));
}
