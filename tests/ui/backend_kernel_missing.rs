// An out-of-tree backend whose backend YAML lists `add.Tensor`, `mul.Tensor` and the structured
// `mm.out` and `sigmoid.out` (and `mul.Tensor` under `autograd:`), but whose implementation of
// the generated trait leaves them out:
// the compile error names the operators.
use oxten::{DType, Device, Layout, MemoryFormat, Result, Tensor};
use oxten_tests::toy_backend::ToyKernels;

struct Partial;

impl ToyKernels for Partial {
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
}

fn main() {}
