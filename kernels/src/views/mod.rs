//! View operators: results share `self`'s storage (and so its version counter), only sizes,
//! strides and the storage offset change.
//!
//! Every kernel here is a `CompositeExplicitAutograd` (or `CompositeImplicitAutograd`) kernel on
//! [`crate::Composite`], so the same code serves CPU and meta tensors: nothing reads or writes
//! element data. The geometry is computed here and handed to [`strided_view`], which applies the
//! checks PyTorch's `as_strided` applies before it aliases the storage.
//!
//! One file per operator family:
//! - `as_strided`: the general primitive;
//! - `view`: `view` and `reshape`, with PyTorch's `computeStride` rule for which
//!   reshapes can be views;
//! - `permute`: `permute`, `transpose`, `t`;
//! - `expand`: `expand` (stride 0 on broadcast dims);
//! - `squeeze`: `squeeze`, `squeeze.dim`, `unsqueeze`;
//! - `slice`: `slice.Tensor`, `select.int`, `narrow`.

mod as_strided;
mod copies;
mod diagonal;
mod expand;
mod permute;
mod scatter;
mod slice;
mod squeeze;
mod view;

use oxten_runtime::{DType, Device, Error, Result, Tensor};

/// Aliases `self_`'s storage with a new geometry after the checks PyTorch's `as_strided`
/// performs (`setStrided` and `checkInBoundsForStorage`), so that a bad geometry is reported
/// with PyTorch's wording instead of failing later inside the runtime.
pub(crate) fn strided_view(self_: &Tensor, sizes: &[i64], strides: &[i64], offset: i64) -> Result<Tensor> {
    if sizes.len() != strides.len() {
        return Err(Error::shape("mismatch in length of strides and shape"));
    }
    check_sizes_nonnegative(sizes)?;
    if strides.iter().any(|&s| s < 0) {
        return Err(Error::value(format!(
            "as_strided: Negative strides are not supported at the moment, got strides: {strides:?}"
        )));
    }
    if offset < 0 {
        return Err(Error::value(format!("Tensor: invalid storage offset {offset}")));
    }
    let itemsize = self_.dtype().size() as i64;
    let needed = storage_nbytes(sizes, strides, itemsize);
    if needed != 0 {
        // Zero-element views never touch storage, so any offset is fine for them (as in
        // PyTorch); otherwise the last element must lie inside the storage.
        let have = self_.storage().nbytes() as i64;
        let total = needed + offset * itemsize;
        if total > have {
            return Err(Error::shape(format!(
                "setStorage: sizes {sizes:?}, strides {strides:?}, storage offset {offset}, and itemsize \
                 {itemsize} requiring a storage size of {total} are out of bounds for storage of size {have}"
            )));
        }
    }
    self_.alias_with_layout(sizes, strides, offset)
}

/// Bytes a geometry spans from its first element (`computeStorageNbytes`): zero when any size is
/// zero, else `itemsize * (1 + Σ (size-1)·stride)`.
fn storage_nbytes(sizes: &[i64], strides: &[i64], itemsize: i64) -> i64 {
    if sizes.contains(&0) {
        return 0;
    }
    let span: i64 = sizes.iter().zip(strides).map(|(&n, &s)| (n - 1) * s).sum();
    itemsize * (1 + span)
}

/// PyTorch's `check_size_nonnegative`, shared with the factories.
pub(crate) fn check_sizes_nonnegative(sizes: &[i64]) -> Result<()> {
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        return Err(Error::value(format!("Trying to create tensor with negative dimension {s}: {sizes:?}")));
    }
    Ok(())
}

/// The name Python gives a tensor's type in messages such as `expand`'s
/// (`torch.FloatTensor`); PyTorch rewrites its C++ `CPUFloatType` into this form before users
/// see it. Non-CPU tensors keep the C++ form (`MetaFloatType`).
pub(crate) fn type_string(dtype: DType, device: Device) -> String {
    let name = crate::iter::scalar_type_name(dtype);
    match device {
        Device::Cpu => format!("torch.{name}Tensor"),
        Device::Meta => format!("Meta{name}Type"),
        Device::Cuda(_) => format!("torch.cuda.{name}Tensor"),
        Device::PrivateUse1(_) => format!("PrivateUse1{name}Type"),
    }
}

/// `infer_size`: replaces the single `-1` in `shape` with whatever makes the element count equal
/// `numel`, with PyTorch's errors for a second `-1`, other negative sizes, an ambiguous `-1`
/// on an empty tensor, and a count that cannot match.
pub(crate) fn infer_size(shape: &[i64], numel: i64) -> Result<Vec<i64>> {
    let mut out = shape.to_vec();
    let mut infer_dim = None;
    let mut known: i64 = 1;
    for (d, &s) in shape.iter().enumerate() {
        if s == -1 {
            if infer_dim.is_some() {
                return Err(Error::shape("only one dimension can be inferred"));
            }
            infer_dim = Some(d);
        } else if s >= 0 {
            known = known.saturating_mul(s);
        } else {
            return Err(Error::shape(format!("invalid shape dimension {s}")));
        }
    }
    let fits = numel == known || (infer_dim.is_some() && known > 0 && numel % known == 0);
    if !fits {
        return Err(Error::shape(format!("shape '{shape:?}' is invalid for input of size {numel}")));
    }
    if let Some(d) = infer_dim {
        // With a zero among the given sizes the -1 could be anything; NumPy refuses too.
        if known == 0 {
            return Err(Error::shape(format!(
                "cannot reshape tensor of 0 elements into shape {shape:?} because the unspecified \
                 dimension size -1 can be any value and is ambiguous"
            )));
        }
        out[d] = numel / known;
    }
    Ok(out)
}

/// PyTorch's `computeStride`: strides that let a tensor of `old_sizes`/`old_strides` be viewed
/// as `new_sizes` without copying, or `None` when some new dim would have to span two
/// memory-discontiguous pieces of the old layout.
///
/// The old dims are grouped into chunks inside which each dim steps exactly over the dims to its
/// right (size-1 dims never break a chunk). A view is possible exactly when the new dims can be
/// cut into consecutive groups whose element counts equal the chunks' counts; each new dim then
/// gets the stride "elements to its right within the chunk × the chunk's innermost stride".
pub(crate) fn compute_stride(old_sizes: &[i64], old_strides: &[i64], new_sizes: &[i64]) -> Option<Vec<i64>> {
    if old_sizes.is_empty() {
        // A 0-dim tensor has one element: any all-ones shape views it with unit strides.
        return Some(vec![1; new_sizes.len()]);
    }
    let numel: i64 = old_sizes.iter().product();
    if numel == 0 {
        // Strides carry no information without elements; keep them when the shape is the same
        // (like NumPy), otherwise use the strides a fresh contiguous tensor would get.
        if old_sizes == new_sizes {
            return Some(old_strides.to_vec());
        }
        let mut strides = vec![1i64; new_sizes.len()];
        for d in (0..new_sizes.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * new_sizes[d + 1].max(1);
        }
        return Some(strides);
    }

    let mut new_strides = vec![0i64; new_sizes.len()];
    // Next new dim to assign, counted from the right (as a signed index so -1 means "done").
    let mut view_d = new_sizes.len() as isize - 1;
    let mut chunk_stride = *old_strides.last()?;
    let mut chunk_numel: i64 = 1;
    let mut view_numel: i64 = 1;
    for old_d in (0..old_sizes.len()).rev() {
        chunk_numel *= old_sizes[old_d];
        let chunk_ends =
            old_d == 0 || (old_sizes[old_d - 1] != 1 && old_strides[old_d - 1] != chunk_numel * chunk_stride);
        if !chunk_ends {
            continue;
        }
        // Give the new dims (right to left) strides inside this chunk until they hold as many
        // elements as the chunk; trailing size-1 new dims are absorbed too.
        while view_d >= 0 && (view_numel < chunk_numel || new_sizes[view_d as usize] == 1) {
            new_strides[view_d as usize] = view_numel * chunk_stride;
            view_numel *= new_sizes[view_d as usize];
            view_d -= 1;
        }
        if view_numel != chunk_numel {
            return None;
        }
        if old_d > 0 {
            chunk_stride = old_strides[old_d - 1];
            chunk_numel = 1;
            view_numel = 1;
        }
    }
    if view_d != -1 {
        return None;
    }
    Some(new_strides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_stride_contiguous_and_split() {
        // contiguous [2, 3, 4] -> [6, 4]
        assert_eq!(compute_stride(&[2, 3, 4], &[12, 4, 1], &[6, 4]), Some(vec![4, 1]));
        // [4, 6] viewed as [2, 2, 3, 2]
        assert_eq!(compute_stride(&[4, 6], &[6, 1], &[2, 2, 3, 2]), Some(vec![12, 6, 2, 1]));
    }

    #[test]
    fn compute_stride_transposed() {
        // [3, 2] transposed from [2, 3] (strides [1, 3]): flattening is impossible …
        assert_eq!(compute_stride(&[3, 2], &[1, 3], &[6]), None);
        // … but inserting a size-1 dim is fine (its stride is whatever the walk gives it).
        assert_eq!(compute_stride(&[3, 2], &[1, 3], &[3, 1, 2]), Some(vec![1, 6, 3]));
    }

    #[test]
    fn compute_stride_chunks() {
        // [2, 3, 4] sliced in the last dim to [2, 3, 2] (strides [12, 4, 1]): chunks are
        // {dim 0, dim 1} (12 = 3*4) and {dim 2}: merging 0 and 1 works, merging 1 and 2 does not.
        assert_eq!(compute_stride(&[2, 3, 2], &[12, 4, 1], &[6, 2]), Some(vec![4, 1]));
        assert_eq!(compute_stride(&[2, 3, 2], &[12, 4, 1], &[2, 6]), None);
    }

    #[test]
    fn compute_stride_zero_dim_and_empty() {
        assert_eq!(compute_stride(&[], &[], &[1, 1]), Some(vec![1, 1]));
        assert_eq!(compute_stride(&[0, 3], &[3, 1], &[3, 0]), Some(vec![1, 1]));
        assert_eq!(compute_stride(&[0, 3], &[7, 1], &[0, 3]), Some(vec![7, 1]));
    }

    #[test]
    fn infer_size_rules() {
        assert_eq!(infer_size(&[-1, 3], 6).unwrap(), vec![2, 3]);
        assert_eq!(infer_size(&[2, 5], 6).unwrap_err().message, "shape '[2, 5]' is invalid for input of size 6");
        assert_eq!(infer_size(&[-1, -1], 6).unwrap_err().message, "only one dimension can be inferred");
        assert_eq!(infer_size(&[-2, 3], 6).unwrap_err().message, "invalid shape dimension -2");
        assert!(infer_size(&[-1, 0], 0).unwrap_err().message.contains("ambiguous"));
        assert_eq!(infer_size(&[0, 4], 0).unwrap(), vec![0, 4]);
    }
}
