// An out-of-tree backend implementing `mul.Tensor` with the wrong signature (a Scalar where the
// schema has a Tensor): the compile error points at the method.
use oxten::{DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::toy_backend::ToyKernels;

struct Mistyped;

impl ToyKernels for Mistyped {
    fn empty(
        _size: &[i64],
        _dtype: Option<DType>,
        _layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
        _memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
    fn empty_strided(
        _size: &[i64],
        _stride: &[i64],
        _dtype: Option<DType>,
        _layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
    fn copy_(_self: &Tensor, _src: &Tensor, _non_blocking: bool) -> Result<Tensor> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
    fn add(_self: &Tensor, _other: &Tensor, _alpha: Scalar) -> Result<Tensor> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
    fn mul(_self: &Tensor, _other: Scalar) -> Result<Tensor> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
    fn mm_out(_self: &Tensor, _mat2: &Tensor, _out: &Tensor) -> Result<()> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
    fn sigmoid_out(_iter: &oxten::iter::TensorIterator, _self: &Tensor) -> Result<()> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
    fn mul_autograd(_self: &Tensor, _other: &Tensor) -> Result<Tensor> {
        Err(oxten::Error::runtime("a compile-fail case: never run"))
    }
}

fn main() {}
