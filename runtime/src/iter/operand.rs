//! One operand of a [`TensorIterator`](super::TensorIterator): the tensor a kernel sees, the
//! user's tensor when they differ, and its byte strides in iteration order.

use crate::dimvec::DimVec;
use crate::dtype::DType;
use crate::tensor::Tensor;

#[derive(Clone)]
pub(crate) struct Operand {
    /// The tensor the kernel reads or writes: the user's tensor, a dtype-converted copy of an
    /// input, a temporary output in the common dtype, or a reduction view. `None` for an output
    /// that has not been allocated yet.
    pub tensor: Option<Tensor>,
    /// The user's tensor when `tensor` is something else (temporaries, converted inputs, views).
    pub original: Option<Tensor>,
    /// The dtype the kernel sees for this operand (`None` until known).
    pub dtype: Option<DType>,
    /// Byte strides, one per iteration dim (empty until computed).
    pub stride_bytes: DimVec,
    pub is_output: bool,
    /// An output that is also an input (in-place).
    pub is_read_write: bool,
    /// A given output whose sizes differ from the broadcast shape and that will be resized.
    pub will_resize: bool,
    /// A 0-dim tensor standing for a Rust scalar: lowest promotion priority, any device.
    pub is_wrapped: bool,
    /// The output's data goes through a temporary that `cast_outputs` copies back.
    pub needs_cast_back: bool,
    /// `tensor`'s storage offset in bytes, when the build already read it (saves a layout lock
    /// per operand when the kernel runs).
    pub offset_bytes: Option<isize>,
    /// An output this build allocated: contiguous from offset 0 over all of its storage.
    pub fresh: bool,
}

impl Operand {
    pub fn output(t: Option<Tensor>) -> Operand {
        let dtype = t.as_ref().map(Tensor::dtype);
        Operand {
            tensor: t,
            original: None,
            dtype,
            stride_bytes: DimVec::new(),
            is_output: true,
            is_read_write: false,
            will_resize: false,
            is_wrapped: false,
            needs_cast_back: false,
            offset_bytes: None,
            fresh: false,
        }
    }

    pub fn input(t: Tensor, is_wrapped: bool) -> Operand {
        Operand {
            dtype: Some(t.dtype()),
            tensor: Some(t),
            original: None,
            stride_bytes: DimVec::new(),
            is_output: false,
            is_read_write: false,
            will_resize: false,
            is_wrapped,
            needs_cast_back: false,
            offset_bytes: None,
            fresh: false,
        }
    }

    /// The user-visible tensor.
    pub fn user_tensor(&self) -> Option<&Tensor> {
        self.original.as_ref().or(self.tensor.as_ref())
    }

    /// Replaces the tensor the kernel sees, remembering the user's tensor.
    pub fn exchange(&mut self, t: Tensor) {
        if self.original.is_none() {
            self.original = self.tensor.take();
        }
        self.dtype = Some(t.dtype());
        self.tensor = Some(t);
        self.offset_bytes = None;
        self.fresh = false;
    }
}
