//! Moving data between Rust values and CPU tensors, and printing.

use super::{Element, Tensor, TensorLayout};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::match_dtype;
use crate::storage::Storage;

impl Tensor {
    /// A contiguous CPU tensor holding `data` with shape `sizes`.
    ///
    /// ```
    /// use oxten_runtime::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// assert_eq!(t.sizes(), [2, 2]);
    /// assert_eq!(t.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, sizes: &[i64]) -> Result<Tensor> {
        Tensor::from_slice(&data, sizes)
    }

    /// Like [`Tensor::from_vec`], copying from a slice.
    pub fn from_slice<T: Element>(data: &[T], sizes: &[i64]) -> Result<Tensor> {
        let numel = super::checked_numel(sizes).ok();
        if numel != Some(data.len() as i64) {
            return Err(Error::shape(format!("shape {sizes:?} is invalid for input of size {}", data.len())));
        }
        let nbytes = std::mem::size_of_val(data);
        let storage = Storage::new_deferred(nbytes, Device::Cpu)?;
        // SAFETY: the storage was just allocated with exactly `nbytes` bytes and is not shared
        // yet; all of them are written before `assume_init`. T is a plain-old-data element type.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr() as *const u8, storage.data_ptr_for_overwrite(), nbytes);
            storage.assume_init();
        }
        Tensor::from_parts(storage, T::DTYPE, TensorLayout::contiguous(sizes)?)
    }

    /// A 0-dim CPU tensor.
    pub fn scalar<T: Element>(v: T) -> Tensor {
        Tensor::from_slice(&[v], &[]).expect("one element fits a 0-dim tensor")
    }

    /// The elements in logical (row-major) order, whatever the strides (copied to the host first
    /// for a device tensor). Errors if `T` is not the tensor's dtype or the tensor is meta.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::dtype(format!(
                "to_vec: tensor has dtype {} but {} was requested",
                self.dtype(),
                T::DTYPE
            )));
        }
        if self.device() != Device::Cpu {
            if self.device() == Device::Meta || !crate::alloc::allocator_for(self.device())?.has_data() {
                return Err(Error::device(format!("to_vec: tensor is on {}, which holds no data", self.device())));
            }
            // A device tensor's values come to the host first (`tensor.tolist()` on CUDA).
            return self.try_to_device(Device::Cpu)?.to_vec();
        }
        let l = self.layout();
        let n = l.numel() as usize;
        let mut out = crate::error::try_vec_with_capacity(n)?;
        let base = self.data_ptr() as *const T;
        if l.is_contiguous() && n > 0 {
            // SAFETY: a contiguous layout's `n` elements start at `base` and lie inside the
            // storage (`from_parts` checked the span); `out` has capacity `n` and `T` is a plain
            // element type, so copying the bytes then setting the length initialises it.
            unsafe {
                std::ptr::copy_nonoverlapping(base, out.as_mut_ptr(), n);
                out.set_len(n);
            }
            return Ok(out);
        }
        for_each_offset(&l.sizes, &l.strides, |off| {
            // SAFETY: every offset produced lies inside the layout's span, which `from_parts`
            // checked against the storage size; `base` points at element 0 of dtype T.
            out.push(unsafe { *base.offset(off as isize) })
        });
        Ok(out)
    }

    /// The elements converted to f64 (any dtype), in logical order.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        match_dtype!(self.dtype(), T => Ok(self.to_vec::<T>()?.into_iter().map(Element::to_f64).collect()))
    }

    /// The value of a one-element tensor.
    pub fn item<T: Element>(&self) -> Result<T> {
        if self.numel() != 1 {
            return Err(Error::value(format!("a Tensor with {} elements cannot be converted to Scalar", self.numel())));
        }
        Ok(self.to_vec::<T>()?[0])
    }
}

/// Calls `f` with the element offset of every index of a strided layout, in row-major order.
pub fn for_each_offset(sizes: &[i64], strides: &[i64], mut f: impl FnMut(i64)) {
    if sizes.contains(&0) {
        return;
    }
    let nd = sizes.len();
    let mut idx = vec![0i64; nd];
    let mut off = 0i64;
    loop {
        f(off);
        let mut d = nd;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            off += strides[d];
            if idx[d] < sizes[d] {
                break;
            }
            off -= strides[d] * sizes[d];
            idx[d] = 0;
        }
    }
}
