//! TensorIterator on meta tensors: shapes, dtypes and errors as on CPU, no data touched.

use oxten::iter::{
    binary_op_config, cpu_kernel_binary, make_reduction, reduction_output_shape, sum_kernel, StructuredOutputs,
};
use oxten::{DType, Device, MemoryFormat, Scalar, Tensor};

fn meta(shape: &[i64], d: DType) -> Tensor {
    Tensor::empty(shape, d, Device::Meta, MemoryFormat::Contiguous).unwrap()
}

fn cpu(shape: &[i64], d: DType) -> Tensor {
    Tensor::empty(shape, d, Device::Cpu, MemoryFormat::Contiguous).unwrap()
}

#[test]
fn binary_meta_allocates_a_meta_output() {
    let a = meta(&[3, 1], DType::I32);
    let b = meta(&[1, 4], DType::F32);
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).unwrap();
    assert!(iter.is_meta());
    assert_eq!(iter.device(), Device::Meta);
    assert_eq!(iter.common_dtype(), DType::F32);
    let out = outs.output(0);
    assert!(out.is_meta());
    assert_eq!((out.sizes().to_vec(), out.strides().to_vec(), out.dtype()), (vec![3, 4], vec![4, 1], DType::F32));
    assert!(out.data_ptr().is_null());
    // Kernels are no-ops.
    cpu_kernel_binary::<f32, f32, f32>(&iter, |_, _| panic!("no data on meta"));
    iter.for_each(|_, _, _, _| panic!("no data on meta"), 1);
    iter.cast_outputs().unwrap();
}

#[test]
fn meta_errors_match_cpu() {
    let shapes: [(&[i64], &[i64]); 2] = [(&[3, 2], &[3, 4]), (&[5], &[2, 4])];
    for (sa, sb) in shapes {
        let run = |mk: fn(&[i64], DType) -> Tensor| {
            let mut outs = StructuredOutputs::functional(1);
            binary_op_config()
                .add_input(&mk(sa, DType::F32))
                .add_input(&mk(sb, DType::I64))
                .build_structured(&mut outs)
                .err()
                .unwrap()
        };
        let (em, ec) = (run(meta), run(cpu));
        assert_eq!(em, ec);
    }
    // Unsafe cast and in-place shape errors too.
    let a = meta(&[2, 1], DType::I32);
    let mut outs = StructuredOutputs::inplace(&a);
    let e = binary_op_config()
        .add_input(&a)
        .add_input(&meta(&[2, 3], DType::I32))
        .build_structured(&mut outs)
        .err()
        .unwrap();
    assert_eq!(e.message, "output with shape [2, 1] doesn't match the broadcast shape [2, 3]");
    let mut outs = StructuredOutputs::inplace(&a);
    let e = binary_op_config()
        .add_input(&a)
        .add_input_scalar(Scalar::Float(1.5))
        .build_structured(&mut outs)
        .err()
        .unwrap();
    assert_eq!(e.message, "result type Float can't be cast to the desired output type Int");
}

#[test]
fn meta_out_is_resized_with_the_dtype_kept() {
    let out = meta(&[1], DType::F64);
    let mut outs = StructuredOutputs::out(&[&out]);
    let iter = binary_op_config()
        .add_input(&meta(&[2, 3], DType::F32))
        .add_input_scalar(Scalar::Int(2))
        .build_structured(&mut outs)
        .unwrap();
    assert_eq!(out.sizes(), [2, 3]);
    assert_eq!(out.dtype(), DType::F64);
    assert_eq!(iter.dtype(0), DType::F32);
    assert!(!iter.has_cast_outputs());
    // Channels-last propagates on meta as on CPU.
    let cl = Tensor::empty(&[2, 3, 4, 5], DType::F16, Device::Meta, MemoryFormat::ChannelsLast).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    binary_op_config().add_input(&cl).add_input(&meta(&[3, 1, 1], DType::F16)).build_structured(&mut outs).unwrap();
    assert_eq!(outs.output(0).strides(), [60, 1, 15, 3]);
}

#[test]
fn meta_reduction() {
    let x = meta(&[4, 5, 6], DType::F32);
    let (shape, _) = reduction_output_shape(&x.sizes(), Some(&[1]), false).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    outs.set_output(0, &shape, None, DType::F32, Device::Meta).unwrap();
    let iter = make_reduction(outs.output(0), &x, Some(&[1]), false).unwrap();
    assert!(iter.is_meta());
    sum_kernel(&iter);
    assert_eq!(outs.output(0).sizes(), [4, 6]);
}
