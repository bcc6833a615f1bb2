//! Type promotion through TensorIterator, casting to outputs, and the structured output modes.

use half::{bf16, f16};
use oxten::iter::{
    binary_float_op_config, binary_op_config, comparison_op_config, cpu_kernel_binary, cpu_kernel_binary_math,
    cpu_kernel_unary_math, unary_float_op_config, unary_op_config, OutputMode, StructuredOutputs,
};
use oxten::{DType, Device, ErrorKind, MemoryFormat, Scalar, Tensor};

fn functional_binary(a: &Tensor, b: &Tensor) -> (oxten::iter::TensorIterator, StructuredOutputs) {
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_op_config().add_input(a).add_input(b).build_structured(&mut outs).unwrap();
    (iter, outs)
}

#[test]
fn int_tensor_plus_wrapped_float_is_default_float() {
    let a = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter =
        binary_op_config().add_input(&a).add_input_scalar(Scalar::Float(2.5)).build_structured(&mut outs).unwrap();
    assert_eq!(iter.common_dtype(), DType::F32);
    assert_eq!(iter.dtype(1), DType::F32);
    assert_eq!(iter.dtype(2), DType::F32);
    cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x + y);
    let out = outs.into_outputs().remove(0);
    assert_eq!(out.dtype(), DType::F32);
    assert_eq!(out.to_vec::<f32>().unwrap(), [3.5, 4.5, 5.5]);
    // The user's input is untouched and still reported as the input.
    assert_eq!(iter.input(0).dtype(), DType::I32);
}

#[test]
fn int_tensor_plus_float64_zero_dim_tensor() {
    // A real (not wrapped) 0-dim f64 tensor is of a higher category than the i32 tensor, so
    // PyTorch promotes the two: float64 (torch.ones(3, dtype=torch.int32) + torch.tensor(2.5,
    // dtype=torch.float64) is float64). A wrapped scalar would give float32 (test above).
    let a = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    let (iter, _) = functional_binary(&a, &Tensor::scalar(2.5f64));
    assert_eq!(iter.common_dtype(), DType::F64);
    // …but an i64 0-dim tensor does not widen an i32 tensor.
    let (iter, _) = functional_binary(&a, &Tensor::scalar(7i64));
    assert_eq!(iter.common_dtype(), DType::I32);
}

#[test]
fn half_tensor_keeps_its_width_against_zero_dim_floats() {
    let a = Tensor::from_vec(vec![f16::from_f32(1.5), f16::from_f32(-2.0)], &[2]).unwrap();
    for zero_dim in [Tensor::scalar(0.25f32), Tensor::scalar(0.25f64)] {
        let (iter, outs) = functional_binary(&a, &zero_dim);
        assert_eq!(iter.common_dtype(), DType::F16);
        cpu_kernel_binary_math::<f16>(&iter, |x, y| x + y);
        let out = outs.output(0);
        assert_eq!(out.dtype(), DType::F16);
        assert_eq!(out.to_vec::<f16>().unwrap(), [f16::from_f32(1.75), f16::from_f32(-1.75)]);
    }
}

#[test]
fn u8_plus_i8_is_i16() {
    let a = Tensor::from_vec(vec![200u8, 0, 255], &[3]).unwrap();
    let b = Tensor::from_vec(vec![-100i8, -128, 127], &[3]).unwrap();
    let (iter, outs) = functional_binary(&a, &b);
    assert_eq!(iter.common_dtype(), DType::I16);
    cpu_kernel_binary::<i16, i16, i16>(&iter, |x, y| x + y);
    assert_eq!(outs.output(0).to_vec::<i16>().unwrap(), [100, -128, 382]);
}

#[test]
fn bool_comparison_gives_bool() {
    let a = Tensor::from_vec(vec![false, true, true], &[3]).unwrap();
    let b = Tensor::from_vec(vec![true, true, false], &[3]).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter = comparison_op_config(false).add_input(&a).add_input(&b).build_structured(&mut outs).unwrap();
    assert_eq!(iter.dtype(0), DType::Bool);
    cpu_kernel_binary::<bool, bool, bool>(&iter, |x, y| !x & y);
    assert_eq!(outs.output(0).to_vec::<bool>().unwrap(), [true, false, false]);

    // f32 < i64 0-dim: inputs promoted to f32, output bool.
    let x = Tensor::from_vec(vec![1.0f32, 5.0, 3.0], &[3]).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter =
        comparison_op_config(false).add_input(&x).add_input(&Tensor::scalar(3i64)).build_structured(&mut outs).unwrap();
    assert_eq!((iter.dtype(0), iter.dtype(1), iter.dtype(2)), (DType::Bool, DType::F32, DType::F32));
    cpu_kernel_binary::<f32, f32, bool>(&iter, |x, y| x < y);
    assert_eq!(outs.output(0).to_vec::<bool>().unwrap(), [true, false, false]);

    // torch.lt(x, 3, out=float_tensor): computed into a f32 temporary and cast back.
    let out = Tensor::empty(&[3], DType::F64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let mut outs = StructuredOutputs::out(&[&out]);
    let iter =
        comparison_op_config(true).add_input(&x).add_input_scalar(Scalar::Int(3)).build_structured(&mut outs).unwrap();
    assert_eq!(iter.dtype(0), DType::F32);
    cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| (x < y) as u8 as f32);
    iter.cast_outputs().unwrap();
    assert_eq!(out.to_vec::<f64>().unwrap(), [1.0, 0.0, 0.0]);
}

#[test]
fn unsafe_cast_to_out_is_an_error() {
    let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let out = Tensor::empty(&[2], DType::I64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let mut outs = StructuredOutputs::out(&[&out]);
    let e = binary_op_config().add_input(&a).add_input(&a).build_structured(&mut outs).err().unwrap();
    assert_eq!(e.kind, ErrorKind::DType);
    assert_eq!(e.message, "result type Float can't be cast to the desired output type Long");

    // In place on an int tensor with a float operand: same check.
    let i = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let mut outs = StructuredOutputs::inplace(&i);
    let e = binary_op_config()
        .add_input(&i)
        .add_input_scalar(Scalar::Float(0.5))
        .build_structured(&mut outs)
        .err()
        .unwrap();
    assert_eq!(e.message, "result type Float can't be cast to the desired output type Int");
}

#[test]
fn wider_out_goes_through_a_temporary() {
    let a = Tensor::from_vec(vec![1.5f32, 2.25], &[2]).unwrap();
    let out = Tensor::empty(&[7], DType::F64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let mut outs = StructuredOutputs::out(&[&out]);
    let iter = binary_op_config().add_input(&a).add_input(&a).build_structured(&mut outs).unwrap();
    assert!(iter.has_cast_outputs());
    assert_eq!(iter.dtype(0), DType::F32);
    assert!(iter.output(0).is_same(&out));
    assert!(!iter.operand(0).is_same(&out));
    cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x * y);
    assert_eq!(out.to_vec::<f64>().unwrap(), [0.0; 2], "nothing written before cast_outputs");
    iter.cast_outputs().unwrap();
    assert_eq!(out.sizes(), [2]);
    assert_eq!(out.to_vec::<f64>().unwrap(), [2.25, 5.0625]);
    assert!(outs.into_outputs()[0].is_same(&out));
}

#[test]
fn inplace_with_wider_operand_casts_back() {
    // a.add_(b) with a f32 and b f64: computed in f64, written back as f32.
    let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let b = Tensor::from_vec(vec![0.1f64, 0.2], &[2]).unwrap();
    let mut outs = StructuredOutputs::inplace(&a);
    assert_eq!(outs.mode(), OutputMode::Inplace);
    let iter = binary_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).unwrap();
    assert_eq!(iter.common_dtype(), DType::F64);
    cpu_kernel_binary::<f64, f64, f64>(&iter, |x, y| x + y);
    iter.cast_outputs().unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), [1.1f32, 2.2f32]);
    assert!(outs.into_outputs()[0].is_same(&a));
}

#[test]
fn integer_inputs_to_float() {
    let a = Tensor::from_vec(vec![1i32, 7], &[2]).unwrap();
    let b = Tensor::from_vec(vec![2i64, 2], &[2]).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_float_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).unwrap();
    assert_eq!(iter.common_dtype(), DType::F32);
    cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x / y);
    assert_eq!(outs.output(0).to_vec::<f32>().unwrap(), [0.5, 3.5]);

    let x = Tensor::from_vec(vec![4i64, 9], &[2]).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter = unary_float_op_config().add_input(&x).build_structured(&mut outs).unwrap();
    cpu_kernel_unary_math::<f32>(&iter, f32::sqrt);
    assert_eq!(outs.output(0).to_vec::<f32>().unwrap(), [2.0, 3.0]);

    let h = Tensor::from_vec(vec![bf16::from_f32(4.0)], &[1]).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter = unary_float_op_config().add_input(&h).build_structured(&mut outs).unwrap();
    cpu_kernel_unary_math::<bf16>(&iter, f32::sqrt);
    assert_eq!(outs.output(0).to_vec::<bf16>().unwrap(), [bf16::from_f32(2.0)]);
}

#[test]
fn same_dtype_check_of_unary_ops() {
    let x = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    let out = Tensor::empty(&[1], DType::I64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let mut outs = StructuredOutputs::out(&[&out]);
    let e = unary_op_config().add_input(&x).build_structured(&mut outs).err().unwrap();
    assert_eq!(e.message, "Found dtype Long but expected Float");
}

#[test]
fn structured_out_checks_and_resizes() {
    let out = Tensor::empty(&[3], DType::I64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let mut outs = StructuredOutputs::out(&[&out]);
    assert!(outs.maybe_get_output(0).unwrap().is_same(&out));
    let e = outs.set_output(0, &[2, 2], None, DType::F32, Device::Cpu).unwrap_err();
    assert_eq!(e.message, "Expected out tensor to have dtype float32, but got int64 instead");
    let e = outs.set_output(0, &[2, 2], None, DType::I64, Device::Meta).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Device);
    outs.set_output(0, &[2, 2], Some(&[1, 2]), DType::I64, Device::Cpu).unwrap();
    assert_eq!((out.sizes().to_vec(), out.strides().to_vec()), (vec![2, 2], vec![1, 2]));
    // Same sizes: no restride.
    outs.set_output(0, &[2, 2], Some(&[2, 1]), DType::I64, Device::Cpu).unwrap();
    assert_eq!(out.strides(), [1, 2]);

    let mut f = StructuredOutputs::functional(2);
    assert!(f.maybe_get_output(0).is_none());
    f.set_output(0, &[2, 3], Some(&[1, 2]), DType::F16, Device::Cpu).unwrap();
    f.set_output(1, &[4], None, DType::I64, Device::Meta).unwrap();
    let v = f.into_outputs();
    assert_eq!((v[0].strides().to_vec(), v[0].dtype()), (vec![1, 2], DType::F16));
    assert!(v[1].is_meta());

    let s = Tensor::from_vec(vec![1.0f32, 2.0], &[2, 1]).unwrap();
    let mut i = StructuredOutputs::inplace(&s);
    let e = i.set_output(0, &[2, 3], None, DType::F32, Device::Cpu).unwrap_err();
    assert_eq!(e.message, "output with shape [2, 1] doesn't match the broadcast shape [2, 3]");
    assert!(i.set_output(0, &[2, 1], None, DType::F64, Device::Cpu).is_err());
    i.set_output(0, &[2, 1], None, DType::F32, Device::Cpu).unwrap();
    assert!(i.output(0).is_same(&s));
}
