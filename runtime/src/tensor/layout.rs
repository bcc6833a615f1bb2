//! Sizes, strides and storage offset, and the layout facts derived from them (contiguity,
//! channels-last, dense), with PyTorch's rules for strides that carry no information.

use crate::device::MemoryFormat;
use crate::dimvec::DimVec;
use crate::error::{Error, Result};

/// The geometry of a tensor over its storage, with the cached layout flags PyTorch keeps on
/// `TensorImpl`. The flags are recomputed whenever sizes or strides change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorLayout {
    pub sizes: DimVec,
    pub strides: DimVec,
    /// In elements.
    pub offset: i64,
    numel: i64,
    flags: u8,
}

const CONTIGUOUS: u8 = 1;
const CHANNELS_LAST: u8 = 2;
const CHANNELS_LAST_3D: u8 = 4;
const NON_OVERLAPPING_AND_DENSE: u8 = 8;

impl TensorLayout {
    /// A layout after checking it the way PyTorch does: as many strides as sizes, sizes and
    /// strides non-negative, a non-negative offset, and an element count and storage extent
    /// (`offset + 1 + Σ (size-1)·stride`) that fit in `i64`. Every tensor's layout is built here,
    /// so no later size, stride or offset arithmetic can overflow.
    pub fn new(sizes: DimVec, strides: DimVec, offset: i64) -> Result<TensorLayout> {
        check_geometry(&sizes, &strides, offset)?;
        let numel = sizes.iter().product();
        let mut flags = 0;
        if compute_contiguous(&sizes, &strides) {
            flags |= CONTIGUOUS | NON_OVERLAPPING_AND_DENSE;
        }
        if sizes.len() == 4 && is_channels_last_contiguous(&sizes, &strides) {
            flags |= CHANNELS_LAST | NON_OVERLAPPING_AND_DENSE;
        }
        if sizes.len() == 5 && is_channels_last_contiguous(&sizes, &strides) {
            flags |= CHANNELS_LAST_3D | NON_OVERLAPPING_AND_DENSE;
        }
        if flags & NON_OVERLAPPING_AND_DENSE == 0 && compute_non_overlapping_and_dense(&sizes, &strides) {
            flags |= NON_OVERLAPPING_AND_DENSE;
        }
        Ok(TensorLayout { sizes, strides, offset, numel, flags })
    }
    /// A row-major layout for `sizes` (checked like [`new`](Self::new)).
    #[inline]
    pub fn contiguous(sizes: &[i64]) -> Result<TensorLayout> {
        let numel = checked_numel(sizes)?;
        let strides = contiguous_strides(sizes);
        if sizes.len() >= 4 {
            // Channels-last flags may also hold (size-1 dims); compute them all.
            return TensorLayout::new(sizes.into(), strides, 0);
        }
        Ok(TensorLayout {
            numel,
            sizes: sizes.into(),
            strides,
            offset: 0,
            flags: CONTIGUOUS | NON_OVERLAPPING_AND_DENSE,
        })
    }
    /// Bytes of storage the layout needs for elements of `elem_size` bytes: `(offset + span) ·
    /// elem_size`, 0 for an empty tensor. [`new`](Self::new) checked the element extent; the
    /// byte count is checked here.
    #[inline]
    pub fn storage_nbytes(&self, elem_size: usize) -> Result<usize> {
        if self.numel == 0 {
            return Ok(0);
        }
        let elems = (self.offset + self.storage_span()) as u64;
        elems.checked_mul(elem_size as u64).filter(|&n| n <= isize::MAX as u64).map(|n| n as usize).ok_or_else(|| {
            Error::new(
                crate::error::ErrorKind::OutOfMemory,
                format!(
                    "out of memory: a tensor of sizes {:?} and strides {:?} needs {elems} elements of {elem_size} \
                         bytes, more than memory can address",
                    &self.sizes[..],
                    &self.strides[..]
                ),
            )
        })
    }
    pub fn numel(&self) -> i64 {
        self.numel
    }
    pub fn dim(&self) -> usize {
        self.sizes.len()
    }
    pub fn is_contiguous(&self) -> bool {
        self.flags & CONTIGUOUS != 0
    }
    /// `is_contiguous(memory_format=...)`.
    pub fn is_contiguous_as(&self, format: MemoryFormat) -> bool {
        match format {
            MemoryFormat::Contiguous | MemoryFormat::Preserve => self.is_contiguous(),
            MemoryFormat::ChannelsLast => self.flags & CHANNELS_LAST != 0,
            MemoryFormat::ChannelsLast3d => self.flags & CHANNELS_LAST_3D != 0,
        }
    }
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        self.flags & NON_OVERLAPPING_AND_DENSE != 0
    }
    /// `suggest_memory_format()`: channels-last when the strides look channels-last (by
    /// PyTorch's rules, which send ambiguous N111 and 1x1 layouts to contiguous).
    pub fn suggest_memory_format(&self) -> MemoryFormat {
        match self.sizes.len() {
            4 if is_channels_last_strides(&self.sizes, &self.strides) => MemoryFormat::ChannelsLast,
            5 if is_channels_last_strides(&self.sizes, &self.strides) => MemoryFormat::ChannelsLast3d,
            _ => MemoryFormat::Contiguous,
        }
    }
    /// Number of storage elements the layout spans from `offset` (0 when empty).
    pub fn storage_span(&self) -> i64 {
        storage_span(&self.sizes, &self.strides)
    }
}

/// Elements needed to hold a tensor of these sizes and strides: `1 + Σ (size-1)·stride`.
/// Saturates at `i64::MAX` (a layout from [`TensorLayout::new`] never gets there).
pub fn storage_span(sizes: &[i64], strides: &[i64]) -> i64 {
    checked_span(sizes, strides).unwrap_or(i64::MAX)
}

fn checked_span(sizes: &[i64], strides: &[i64]) -> Option<i64> {
    if sizes.contains(&0) {
        return Some(0);
    }
    sizes.iter().zip(strides).try_fold(1i64, |acc, (&s, &st)| acc.checked_add((s - 1).checked_mul(st)?))
}

/// The element count of `sizes`, or PyTorch's error when it does not fit in `i64`. Negative
/// sizes are an error too.
#[inline]
pub fn checked_numel(sizes: &[i64]) -> Result<i64> {
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        return Err(Error::value(format!("Trying to create tensor with negative dimension {s}: {sizes:?}")));
    }
    if sizes.contains(&0) {
        return Ok(0);
    }
    sizes.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s)).ok_or_else(|| {
        Error::value(format!("the number of elements of a tensor of size {sizes:?} does not fit in int64"))
    })
}

/// The checks of [`TensorLayout::new`].
pub fn check_geometry(sizes: &[i64], strides: &[i64], offset: i64) -> Result<()> {
    if sizes.len() != strides.len() {
        return Err(Error::shape(format!(
            "mismatch in length of strides and shape: sizes {sizes:?} and strides {strides:?}"
        )));
    }
    checked_numel(sizes)?;
    if let Some(st) = strides.iter().find(|&&st| st < 0) {
        return Err(Error::value(format!("negative strides are not supported, got stride {st} in {strides:?}")));
    }
    if offset < 0 {
        return Err(Error::value(format!("storage offset must be non-negative, got {offset}")));
    }
    if checked_span(sizes, strides).and_then(|span| span.checked_add(offset)).is_none() {
        return Err(Error::value(format!(
            "a tensor of sizes {sizes:?}, strides {strides:?} and storage offset {offset} reaches past the largest int64 element index"
        )));
    }
    Ok(())
}

/// Row-major strides.
#[inline]
pub fn contiguous_strides(sizes: &[i64]) -> DimVec {
    let mut buf = [0i64; 5];
    if sizes.len() <= buf.len() {
        // Built on the stack: no per-element pushes for the usual ranks.
        let mut acc = 1i64;
        for i in (0..sizes.len()).rev() {
            buf[i] = acc;
            // Only an empty tensor's strides can exceed its element count; saturate them.
            acc = acc.saturating_mul(sizes[i].max(1));
        }
        return DimVec::from_slice(&buf[..sizes.len()]);
    }
    let mut strides = DimVec::filled(sizes.len(), 1);
    let mut acc = 1i64;
    for i in (0..sizes.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(sizes[i].max(1));
    }
    strides
}

/// Strides for `format` (channels-last puts C innermost: NCHW sizes get `(HWC, 1, WC, C)`).
pub fn strides_for_format(sizes: &[i64], format: MemoryFormat) -> DimVec {
    let order: &[usize] = match (format, sizes.len()) {
        (MemoryFormat::ChannelsLast, 4) => &[1, 3, 2, 0],
        (MemoryFormat::ChannelsLast3d, 5) => &[1, 4, 3, 2, 0],
        _ => return contiguous_strides(sizes),
    };
    let mut strides = DimVec::filled(sizes.len(), 1);
    let mut acc = 1i64;
    for &d in order {
        strides[d] = acc;
        acc = acc.saturating_mul(sizes[d].max(1));
    }
    strides
}

/// Strides of size-1 dims are ignored; any tensor with a zero-size dim is contiguous.
pub fn compute_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.contains(&0) {
        return true;
    }
    let mut expected = 1i64;
    for i in (0..sizes.len()).rev() {
        if sizes[i] != 1 {
            if strides[i] != expected {
                return false;
            }
            expected = expected.saturating_mul(sizes[i]);
        }
    }
    true
}

/// Whether the layout is exactly the channels-last layout (ignoring size-1 strides).
fn is_channels_last_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    let order: &[usize] = if sizes.len() == 4 { &[1, 3, 2, 0] } else { &[1, 4, 3, 2, 0] };
    if sizes.contains(&0) {
        return true;
    }
    let mut expected = 1i64;
    for &d in order {
        if sizes[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected = expected.saturating_mul(sizes[d]);
        }
    }
    true
}

/// PyTorch's `is_channels_last_strides_2d/3d`: used by `suggest_memory_format`. Walks the dims
/// from innermost channels-last order; rejects decreasing strides and the N111 ambiguity.
pub fn is_channels_last_strides(sizes: &[i64], strides: &[i64]) -> bool {
    let order: &[usize] = match sizes.len() {
        4 => &[1, 3, 2, 0],
        5 => &[1, 4, 3, 2, 0],
        _ => return false,
    };
    let mut min = 0i64;
    if strides[1] == 0 {
        return false;
    }
    for &d in order {
        if sizes[d] == 0 {
            return false;
        }
        if strides[d] < min {
            return false;
        }
        // N111 (or NC11 with C==1 …): falls back to contiguous, like PyTorch.
        if d == 0 && min == strides[1] {
            return false;
        }
        min = strides[d];
        if sizes[d] > 1 {
            min = min.saturating_mul(sizes[d]);
        }
    }
    true
}

/// Whether the elements occupy a dense block with no two sharing memory, in some dim order.
pub fn compute_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> bool {
    let n = sizes.len();
    if n == 1 {
        return sizes[0] < 2 || strides[0] == 1;
    }
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by(|&a, &b| {
        // size-1 dims go last; otherwise by stride.
        match (sizes[a] < 2, sizes[b] < 2) {
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ => strides[a].cmp(&strides[b]),
        }
    });
    let mut expected = 1i64;
    for &d in &perm {
        if sizes[d] == 1 {
            continue;
        }
        if strides[d] != expected {
            return false;
        }
        expected = expected.saturating_mul(sizes[d]);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(sizes: &[i64], strides: &[i64]) -> TensorLayout {
        TensorLayout::new(sizes.into(), strides.into(), 0).unwrap()
    }

    #[test]
    fn channels_last_strides() {
        assert_eq!(strides_for_format(&[2, 3, 4, 5], MemoryFormat::ChannelsLast), [60, 1, 15, 3]);
        let l = lay(&[2, 3, 4, 5], &[60, 1, 15, 3]);
        assert!(l.is_contiguous_as(MemoryFormat::ChannelsLast));
        assert!(!l.is_contiguous());
        assert_eq!(l.suggest_memory_format(), MemoryFormat::ChannelsLast);
    }

    #[test]
    fn ambiguous_layouts_follow_pytorch() {
        // N111: both contiguous and channels-last; suggest says contiguous.
        let l = lay(&[4, 1, 1, 1], &[1, 1, 1, 1]);
        assert!(l.is_contiguous());
        assert!(l.is_contiguous_as(MemoryFormat::ChannelsLast));
        assert_eq!(l.suggest_memory_format(), MemoryFormat::Contiguous);
        // NC11 contiguous: also channels-last contiguous, but suggested as contiguous.
        let l = lay(&[2, 3, 1, 1], &[3, 1, 1, 1]);
        assert!(l.is_contiguous());
        assert!(l.is_contiguous_as(MemoryFormat::ChannelsLast));
        assert_eq!(l.suggest_memory_format(), MemoryFormat::Contiguous);
        // A real channels-last NC11 (strides [3,1,3,3]) is channels-last.
        let l = lay(&[2, 3, 1, 1], &[3, 1, 3, 3]);
        assert_eq!(l.suggest_memory_format(), MemoryFormat::ChannelsLast);
    }

    #[test]
    fn dense_but_permuted() {
        let l = lay(&[3, 4], &[1, 3]); // transposed
        assert!(!l.is_contiguous());
        assert!(l.is_non_overlapping_and_dense());
        let l = lay(&[3, 4], &[0, 1]); // expanded
        assert!(!l.is_non_overlapping_and_dense());
    }
}
