//! `result_type`: the dtype an operator over these tensors and scalars computes in.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// `torch.result_type` over several arguments: dimensioned tensors take precedence over 0-dim
/// tensors, which take precedence over Rust scalars; a lower tier only matters when its category
/// (bool < integral < floating) is higher, and a floating scalar then counts as the default
/// float dtype.
///
/// ```
/// use oxten_runtime::{result_type, DType, Scalar, Tensor};
/// let i = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
/// let h = Tensor::from_vec(vec![half::f16::ONE], &[1]).unwrap();
/// assert_eq!(result_type(&[&i], &[Scalar::Float(2.5)]).unwrap(), DType::F32);
/// assert_eq!(result_type(&[&h], &[Scalar::Float(2.5)]).unwrap(), DType::F16);
/// assert_eq!(result_type(&[&i, &Tensor::scalar(1.0f64)], &[]).unwrap(), DType::F64);
/// ```
pub fn result_type(tensors: &[&Tensor], scalars: &[Scalar]) -> Result<DType> {
    let args = tensors.iter().map(|t| (t.dtype(), t.dim(), false)).chain(scalars.iter().map(|s| (s.dtype(), 0, true)));
    crate::iter::result_type_raw(args).ok_or_else(|| Error::value("result_type needs at least one argument"))
}
