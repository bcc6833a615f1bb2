//! TensorIterator error cases: broadcasting, overlap, in-place shapes, operand order, devices.

use oxten::iter::{binary_op_config, cpu_kernel_binary, StructuredOutputs, TensorIteratorConfig};
use oxten::{DType, Device, ErrorKind, MemoryFormat, Tensor};

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

#[test]
fn broadcast_mismatch_message() {
    let a = f32s(&[0.0; 6], &[2, 3]);
    let b = f32s(&[0.0; 8], &[2, 4]);
    let mut outs = StructuredOutputs::functional(1);
    let e = binary_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert_eq!(e.message, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
}

#[test]
fn expanded_output_is_internal_overlap() {
    let base = f32s(&[0.0; 3], &[1, 3]);
    let expanded = base.alias_with_layout(&[2, 3], &[0, 1], 0).unwrap();
    let a = f32s(&[1.0; 6], &[2, 3]);
    let e = binary_op_config().add_output(&expanded).add_input(&a).add_input(&a).build().err().unwrap();
    assert_eq!(e.kind, ErrorKind::Overlap);
    assert_eq!(
        e.message,
        "unsupported operation: more than one element of the written-to tensor refers to a single memory location. \
         Please clone() the tensor before performing the operation."
    );
    // Without the overlap check it builds.
    assert!(binary_op_config()
        .check_mem_overlap(false)
        .add_output(&expanded)
        .add_input(&a)
        .add_input(&a)
        .build()
        .is_ok());
}

#[test]
fn partial_overlap_between_output_and_input() {
    let x = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0], &[5]);
    let head = x.alias_with_layout(&[4], &[1], 0).unwrap();
    let tail = x.alias_with_layout(&[4], &[1], 1).unwrap();
    let e = binary_op_config().add_output(&head).add_input(&tail).add_input(&tail).build().err().unwrap();
    assert_eq!(e.kind, ErrorKind::Overlap);
    assert_eq!(
        e.message,
        "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory \
         location. Please clone() the tensor before performing the operation."
    );
}

#[test]
fn full_aliasing_is_fine() {
    let x = f32s(&[1.0, 2.0, 3.0], &[3]);
    let alias = x.alias_with_layout(&[3], &[1], 0).unwrap();
    let mut outs = StructuredOutputs::inplace(&x);
    let iter = binary_op_config().add_input(&x).add_input(&alias).build_structured(&mut outs).unwrap();
    cpu_kernel_binary::<f32, f32, f32>(&iter, |a, b| a + b);
    assert_eq!(x.to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0]);
}

#[test]
fn inplace_shape_mismatch() {
    let a = f32s(&[1.0, 2.0], &[2, 1]);
    let b = f32s(&[0.0; 6], &[2, 3]);
    let mut outs = StructuredOutputs::inplace(&a);
    let e = binary_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert_eq!(e.message, "output with shape [2, 1] doesn't match the broadcast shape [2, 3]");
    // Broadcasting the other operand into self is fine.
    let c = f32s(&[10.0, 20.0], &[2, 1]);
    let big = f32s(&[1.0; 6], &[2, 3]);
    let mut outs = StructuredOutputs::inplace(&big);
    let iter = binary_op_config().add_input(&big).add_input(&c).build_structured(&mut outs).unwrap();
    cpu_kernel_binary::<f32, f32, f32>(&iter, |a, b| a + b);
    assert_eq!(big.to_vec::<f32>().unwrap(), [11.0, 11.0, 11.0, 21.0, 21.0, 21.0]);
}

#[test]
fn outputs_must_come_first() {
    let a = f32s(&[1.0], &[1]);
    let e = TensorIteratorConfig::new().add_input(&a).add_output(&a).build().err().unwrap();
    assert!(e.message.contains("outputs must be added before"), "{}", e.message);
    let mut outs = StructuredOutputs::functional(1);
    assert!(TensorIteratorConfig::new().add_output(&a).add_input(&a).build_structured(&mut outs).is_err());
}

#[test]
fn devices_must_agree() {
    let cpu = f32s(&[1.0, 2.0], &[2]);
    let meta = Tensor::empty(&[2], DType::F32, Device::Meta, MemoryFormat::Contiguous).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let e = binary_op_config().add_input(&meta).add_input(&cpu).build_structured(&mut outs).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Device);
    assert_eq!(
        e.message,
        "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!"
    );
    // One 0-dim CPU tensor is allowed with allow_cpu_scalars (binary ops have it), two are not.
    let s = Tensor::scalar(1.0f32);
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_op_config().add_input(&meta).add_input(&s).build_structured(&mut outs).unwrap();
    assert!(iter.is_meta());
    let mut outs = StructuredOutputs::functional(1);
    let e = binary_op_config().add_input(&s).add_input(&meta).add_input(&s).build_structured(&mut outs);
    assert!(e.is_err());
}

#[test]
fn mixed_dtypes_need_promotion() {
    let a = f32s(&[1.0], &[1]);
    let b = Tensor::from_vec(vec![1i64], &[1]).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let e = TensorIteratorConfig::new().add_input(&a).add_input(&b).build_structured(&mut outs).err().unwrap();
    assert_eq!(e.message, "Found dtype Long but expected Float");
}

#[test]
#[should_panic(expected = "operand 1 has dtype float32 but the kernel was instantiated for int32")]
fn kernel_dtype_mismatch_panics() {
    let a = f32s(&[1.0], &[1]);
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_op_config().add_input(&a).add_input(&a).build_structured(&mut outs).unwrap();
    cpu_kernel_binary::<i32, i32, f32>(&iter, |x, y| (x + y) as f32);
}
