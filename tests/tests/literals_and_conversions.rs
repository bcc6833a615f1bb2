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
