//! Broadcasting and the common-dtype rule TensorIterator uses (`at::native::result_type` over
//! the inputs).

use crate::dtype::{promote_types, DType, DEFAULT_FLOAT};
use crate::error::{Error, Result};

/// PyTorch's `ScalarType` name of a dtype (`Float`, `Long` …), used in error messages that
/// PyTorch prints with those names.
pub fn scalar_type_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "Bool",
        DType::U8 => "Byte",
        DType::I8 => "Char",
        DType::I16 => "Short",
        DType::I32 => "Int",
        DType::I64 => "Long",
        DType::F16 => "Half",
        DType::BF16 => "BFloat16",
        DType::F32 => "Float",
        DType::F64 => "Double",
    }
}

/// Broadcasts two shapes (numpy rule, sizes aligned from the right). `a` is the shape so far,
/// `b` the next operand's.
pub fn infer_size(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let off = n - 1 - i;
        let sa = if off < a.len() { a[a.len() - 1 - off] } else { 1 };
        let sb = if off < b.len() { b[b.len() - 1 - off] } else { 1 };
        *o = if sa == sb || sb == 1 {
            sa
        } else if sa == 1 {
            sb
        } else {
            return Err(Error::shape(format!(
                "The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton dimension {i}"
            )));
        };
    }
    Ok(out)
}

/// Promotion that ignores a missing side.
fn promote_opt(a: Option<DType>, b: DType) -> DType {
    match a {
        None => b,
        Some(a) => promote_types(a, b),
    }
}

/// `combine_categories(higher, lower)`: the higher-priority result wins unless the lower one is
/// of a higher category, in which case the two are promoted.
fn combine(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    let Some(h) = higher else { return lower };
    let Some(l) = lower else { return Some(h) };
    if h.is_floating_point() {
        return Some(h);
    }
    if h == DType::Bool || l.is_floating_point() {
        return Some(promote_types(h, l));
    }
    Some(h)
}

/// The common dtype of the inputs, each given as `(dtype, ndim, is_wrapped_number)`, with
/// PyTorch's precedence: dimensioned tensors, then 0-dim tensors, then wrapped scalars; a
/// lower-priority operand only counts when its category (bool < int < float) is higher, and a
/// floating wrapped scalar counts as the default float dtype.
///
/// Returns `None` when there are no inputs.
pub(crate) fn result_type(inputs: impl IntoIterator<Item = (DType, usize, bool)>) -> Option<DType> {
    let (mut dim, mut zero, mut wrapped) = (None, None, None);
    for (d, ndim, is_wrapped) in inputs {
        let d = if is_wrapped && d.is_floating_point() { DEFAULT_FLOAT } else { d };
        if ndim > 0 {
            dim = Some(promote_opt(dim, d));
        } else if is_wrapped {
            wrapped = Some(promote_opt(wrapped, d));
        } else {
            zero = Some(promote_opt(zero, d));
        }
    }
    combine(dim, combine(zero, wrapped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn precedence() {
        // f16 tensor + f64 0-dim tensor stays f16.
        assert_eq!(result_type([(F16, 1, false), (F64, 0, false)]), Some(F16));
        // i32 tensor + wrapped 2.5 gives the default float.
        assert_eq!(result_type([(I32, 1, false), (F64, 0, true)]), Some(F32));
        // i32 tensor + f64 0-dim tensor: the 0-dim tensor's category is higher, so promote.
        assert_eq!(result_type([(I32, 1, false), (F64, 0, false)]), Some(F64));
        // i32 tensor + i64 0-dim tensor keeps the tensor's width.
        assert_eq!(result_type([(I32, 1, false), (I64, 0, false)]), Some(I32));
        assert_eq!(result_type([(U8, 1, false), (I8, 1, false)]), Some(I16));
        assert_eq!(result_type([(Bool, 1, false), (I64, 0, true)]), Some(I64));
    }

    #[test]
    fn broadcast_message() {
        let e = infer_size(&[2, 3], &[2, 4]).unwrap_err();
        assert_eq!(
            e.message,
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
        );
        assert_eq!(infer_size(&[3, 1], &[4]).unwrap(), [3, 4]);
    }
}
