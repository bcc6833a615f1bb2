//! Conversions between tensors and `ndarray` arrays (the `ndarray` feature), both ways copying
//! the elements in logical order, so any strides on either side work.
//!
//! Tested in `tests/tests/literals_and_conversions.rs` (the conversions of views need kernels).
//!
//! ```ignore
//! let a: ndarray::Array2<f32> = (&t).try_into()?;   // dtype and rank must match
//! let t = Tensor::from(a.view());                    // any layout, any rank
//! ```

use super::{Element, Tensor};
use crate::error::{Error, Result};
use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

impl<T: Element, D: Dimension> TryFrom<&Tensor> for ArrayBase<ndarray::OwnedRepr<T>, D> {
    type Error = Error;

    /// The tensor's elements as an array of rank `D` (`IxDyn` for any rank). Errors if `T` is not
    /// the tensor's dtype, the ranks differ, or the tensor holds no data (meta).
    fn try_from(t: &Tensor) -> Result<Self> {
        let shape: Vec<usize> = t.sizes().iter().map(|&s| s as usize).collect();
        let values = t.to_vec::<T>()?;
        let array = ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(|e| Error::shape(format!("ndarray: {e}")))?;
        array.into_dimensionality::<D>().map_err(|_| {
            Error::shape(format!(
                "cannot convert a {}-dim tensor to an ndarray array of {} dimensions",
                shape.len(),
                D::NDIM.map_or("any number of".to_string(), |n| n.to_string())
            ))
        })
    }
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> From<&ArrayBase<S, D>> for Tensor {
    /// A contiguous CPU tensor with the array's shape and elements (copied in logical order).
    fn from(a: &ArrayBase<S, D>) -> Tensor {
        let shape: Vec<i64> = a.shape().iter().map(|&s| s as i64).collect();
        let values: Vec<T> = a.iter().copied().collect();
        Tensor::from_vec(values, &shape).expect("an array's shape matches its element count")
    }
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> From<ArrayBase<S, D>> for Tensor {
    /// See the `&ArrayBase` conversion.
    fn from(a: ArrayBase<S, D>) -> Tensor {
        Tensor::from(&a)
    }
}
