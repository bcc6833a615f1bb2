//! `Tensor`: a cheap-to-clone handle to sizes, strides and a storage offset over a shared
//! [`Storage`], with a dtype, a device and a dispatch key set.
//!
//! Cloning a `Tensor` aliases it (like assignment in Python). Views made by `view`, `permute`,
//! `select` … share the storage and its version counter, so writes through a view are seen by
//! its base. The operator methods (`add`, `sum`, `view` …) are generated from
//! `native_functions.yaml` into [`crate::ops`].

mod arith;
mod convert;
mod data;
mod element;
mod layout;
#[cfg(feature = "ndarray")]
mod ndarray_interop;
mod print;
pub use convert::{dtype_names, from_literal, Literal};

pub use element::Element;
pub use layout::{
    check_geometry, checked_numel, compute_contiguous, compute_non_overlapping_and_dense, contiguous_strides,
    is_channels_last_strides, storage_span, strides_for_format, TensorLayout,
};

use crate::device::{Device, MemoryFormat};
use crate::dimvec::DimVec;
use crate::dispatch::KeySet;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::storage::Storage;
use std::sync::{Arc, RwLock, Weak};

/// The shared state behind a [`Tensor`] handle.
pub struct TensorImpl {
    storage: Storage,
    dtype: DType,
    keys: KeySet,
    /// Sizes/strides/offset can change in place (`resize_`, `as_strided_`), which every handle to
    /// this tensor observes; the lock makes that sound. Kernels take one snapshot per call.
    layout: RwLock<TensorLayout>,
    /// Autograd metadata (grad, grad_fn, hooks, view info), allocated only when needed.
    autograd: crate::autograd::AutogradSlot,
}

/// A multi-dimensional array. See the [module docs](self).
#[derive(Clone)]
pub struct Tensor(Arc<TensorImpl>);

impl Tensor {
    /// Wraps storage with a layout. Checks that the layout fits in the storage.
    pub fn from_parts(storage: Storage, dtype: DType, layout: TensorLayout) -> Result<Tensor> {
        let keys = KeySet::for_device(storage.device());
        // Tensors created in inference mode are inference tensors.
        Tensor::from_parts_with(storage, dtype, layout, keys, crate::autograd::AutogradSlot::for_new_tensor())
    }

    fn from_parts_with(
        storage: Storage,
        dtype: DType,
        layout: TensorLayout,
        keys: KeySet,
        autograd: crate::autograd::AutogradSlot,
    ) -> Result<Tensor> {
        let need = layout.storage_nbytes(dtype.size())?;
        if need > storage.nbytes() {
            return Err(Error::shape(format!(
                "setStorage: sizes {:?}, strides {:?} and storage offset {} of a {} tensor need {need} bytes, but the storage has {}",
                &layout.sizes[..],
                &layout.strides[..],
                layout.offset,
                dtype.name(),
                storage.nbytes()
            )));
        }
        Ok(Tensor::wrap_fitted(storage, dtype, layout, keys, autograd))
    }

    /// [`from_parts_with`](Self::from_parts_with) for a storage the caller sized from `layout`
    /// itself (a new tensor's allocation), so the fit needs no second check.
    #[inline]
    fn wrap_fitted(
        storage: Storage,
        dtype: DType,
        layout: TensorLayout,
        keys: KeySet,
        autograd: crate::autograd::AutogradSlot,
    ) -> Tensor {
        Tensor(Arc::new(TensorImpl { storage, dtype, keys, layout: RwLock::new(layout), autograd }))
    }

    /// Allocates a zero-filled tensor with the given sizes and strides (`empty_strided`).
    pub fn empty_strided(sizes: &[i64], strides: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::empty_strided_impl(sizes, strides, dtype, device, false)
    }

    /// Like [`empty_strided`](Self::empty_strided), but the storage is *deferred*
    /// ([`Storage::new_deferred`]): it still reads as zeros, but is only zero-filled if someone
    /// reads it before a kernel has overwritten all of it. Kernel outputs are allocated this way,
    /// so that they are written once.
    pub fn empty_strided_deferred(sizes: &[i64], strides: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::empty_strided_impl(sizes, strides, dtype, device, true)
    }

    /// A contiguous tensor (the common case of `empty` and kernel outputs): strides and layout
    /// flags are built directly.
    fn empty_contiguous_impl(sizes: &[i64], dtype: DType, device: Device, deferred: bool) -> Result<Tensor> {
        let layout = TensorLayout::contiguous(sizes)?;
        let nbytes = layout.storage_nbytes(dtype.size())?;
        let storage = if deferred { Storage::new_deferred(nbytes, device)? } else { Storage::new(nbytes, device)? };
        let keys = KeySet::for_device(storage.device());
        Ok(Tensor::wrap_fitted(storage, dtype, layout, keys, crate::autograd::AutogradSlot::for_new_tensor()))
    }

    fn empty_strided_impl(
        sizes: &[i64],
        strides: &[i64],
        dtype: DType,
        device: Device,
        deferred: bool,
    ) -> Result<Tensor> {
        let layout = TensorLayout::new(sizes.into(), strides.into(), 0)?;
        let nbytes = layout.storage_nbytes(dtype.size())?;
        let storage = if deferred { Storage::new_deferred(nbytes, device)? } else { Storage::new(nbytes, device)? };
        Tensor::from_parts(storage, dtype, layout)
    }

    /// Like [`empty`](Self::empty) with a deferred storage (see
    /// [`empty_strided_deferred`](Self::empty_strided_deferred)).
    pub fn empty_deferred(sizes: &[i64], dtype: DType, device: Device, format: MemoryFormat) -> Result<Tensor> {
        Tensor::check_format(sizes, format)?;
        if matches!(format, MemoryFormat::Contiguous | MemoryFormat::Preserve) {
            return Tensor::empty_contiguous_impl(sizes, dtype, device, true);
        }
        Tensor::empty_strided_deferred(sizes, &strides_for_format(sizes, format), dtype, device)
    }

    /// Allocates a zero-filled tensor laid out in `format` (`empty(memory_format=...)`).
    pub fn empty(sizes: &[i64], dtype: DType, device: Device, format: MemoryFormat) -> Result<Tensor> {
        Tensor::check_format(sizes, format)?;
        if matches!(format, MemoryFormat::Contiguous | MemoryFormat::Preserve) {
            return Tensor::empty_contiguous_impl(sizes, dtype, device, false);
        }
        Tensor::empty_strided(sizes, &strides_for_format(sizes, format), dtype, device)
    }

    fn check_format(sizes: &[i64], format: MemoryFormat) -> Result<()> {
        check_sizes(sizes)?;
        match (format, sizes.len()) {
            (MemoryFormat::ChannelsLast, n) if n != 4 => {
                return Err(Error::value(format!(
                    "required rank 4 tensor to use channels_last format, got sizes {sizes:?}"
                )))
            }
            (MemoryFormat::ChannelsLast3d, n) if n != 5 => {
                return Err(Error::value(format!(
                    "required rank 5 tensor to use channels_last_3d format, got sizes {sizes:?}"
                )))
            }
            _ => {}
        }
        Ok(())
    }

    /// `self.to(device)` (the `to.dtype_layout` operator with only `device`): `self` itself when
    /// it is already on `device`, otherwise a copy there that keeps the dtype and the strides of
    /// dense layouts. Moving between devices runs the copy kernel registered for the pair; an
    /// error names both devices when there is none.
    pub fn try_to_device(&self, device: Device) -> Result<Tensor> {
        crate::ops::to_dtype_layout::call(self, None, None, Some(device), None, false, false, None)
    }
    /// [`try_to_device`](Self::try_to_device), panicking on error.
    pub fn to_device(&self, device: Device) -> Tensor {
        self.try_to_device(device).unwrap_or_else(|e| panic!("{e}"))
    }
    /// `self.cpu()`: [`to_device`](Self::to_device) with the CPU.
    pub fn cpu(&self) -> Tensor {
        self.to_device(Device::Cpu)
    }

    /// A tensor with this one's dtype and layout over a byte-for-byte copy of its storage on
    /// `device`, moved through the two devices' allocators (staged through host memory when
    /// neither side is the host): the primitive a backend's cross-device copy kernel can build on.
    pub fn storage_copy_to(&self, device: Device) -> Result<Tensor> {
        let l = self.layout();
        let n = self.storage().nbytes();
        let (from, to) = (self.storage().allocator(), crate::alloc::allocator_for(device)?);
        if !(from.has_data() && to.has_data()) {
            return Err(Error::device(format!(
                "cannot copy the data of a {} tensor to {device}: meta tensors have none",
                self.device()
            )));
        }
        let storage = Storage::new_deferred(n, device)?;
        let mut staging = vec![0u8; n];
        // SAFETY: `staging` is `n` bytes of host memory; the source storage holds `n` bytes of
        // its allocator's memory and the new one `n` bytes of the destination's, all distinct.
        // Every byte of the new storage is written before `assume_init`, and nobody else sees it.
        unsafe {
            from.copy_to_host(staging.as_mut_ptr(), self.storage().data_ptr(), n)?;
            to.copy_from_host(storage.data_ptr_for_overwrite(), staging.as_ptr(), n)?;
            storage.assume_init();
        }
        Tensor::from_parts(storage, self.dtype(), l)
    }

    /// A new handle over the same storage with another geometry: the primitive behind every
    /// view op. Bounds are checked against the storage. Views of inference tensors are inference
    /// tensors and views of normal tensors are normal (also when taken in inference mode).
    pub fn alias_with_layout(&self, sizes: &[i64], strides: &[i64], offset: i64) -> Result<Tensor> {
        Tensor::from_parts_with(
            self.0.storage.clone(),
            self.0.dtype,
            TensorLayout::new(sizes.into(), strides.into(), offset)?,
            self.0.keys,
            crate::autograd::AutogradSlot::alias_of(&self.0.autograd),
        )
    }

    /// An empty vector with room for `n` tensor handles, for ops that return one view per piece
    /// (`split`, `chunk`). The handles themselves are allocated one by one later, and Rust aborts
    /// the process when such an allocation fails; so the memory all `n` of them will take is
    /// asked of the system up front (without touching it) and refused as an out-of-memory error.
    /// An empty dim of size 2^40 split into pieces of 1 is then an error, not an abort.
    pub fn try_reserve_handles(n: usize) -> Result<Vec<Tensor>> {
        /// Bytes one view costs: the handle's shared state and its sizes and strides.
        const BYTES_PER_HANDLE: usize = std::mem::size_of::<TensorImpl>() + 64;
        let probe: Vec<[u8; BYTES_PER_HANDLE]> = crate::error::try_vec_with_capacity(n)?;
        drop(probe);
        crate::error::try_vec_with_capacity(n)
    }

    /// The autograd slot of this tensor (see [`crate::autograd`]).
    pub(crate) fn autograd_slot(&self) -> &crate::autograd::AutogradSlot {
        &self.0.autograd
    }
    /// Number of handles to this tensor (not counting views, which are other tensors).
    pub fn use_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
    /// A handle that does not keep the tensor alive.
    pub fn downgrade(&self) -> WeakTensor {
        WeakTensor(Arc::downgrade(&self.0))
    }

    // ----- metadata -----

    #[inline]
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }
    #[inline]
    pub fn device(&self) -> Device {
        self.0.storage.device()
    }
    #[inline]
    pub fn key_set(&self) -> KeySet {
        self.0.keys
    }
    #[inline]
    pub fn storage(&self) -> &Storage {
        &self.0.storage
    }
    /// A snapshot of sizes, strides, offset and layout flags.
    pub fn layout(&self) -> TensorLayout {
        self.read_layout().clone()
    }
    /// Runs `f` on the layout under one read lock, without copying it (for hot paths that need
    /// several layout facts at once).
    #[inline]
    pub(crate) fn with_layout<R>(&self, f: impl FnOnce(&TensorLayout) -> R) -> R {
        f(&self.read_layout())
    }
    #[inline]
    fn read_layout(&self) -> std::sync::RwLockReadGuard<'_, TensorLayout> {
        self.0.layout.read().unwrap_or_else(|e| e.into_inner())
    }
    #[inline]
    pub fn sizes(&self) -> DimVec {
        self.read_layout().sizes.clone()
    }
    #[inline]
    pub fn strides(&self) -> DimVec {
        self.read_layout().strides.clone()
    }
    #[inline]
    pub fn storage_offset(&self) -> i64 {
        self.read_layout().offset
    }
    #[inline]
    pub fn dim(&self) -> usize {
        self.read_layout().dim()
    }
    #[inline]
    pub fn numel(&self) -> i64 {
        self.read_layout().numel()
    }
    /// The size of dim `d` (negative `d` counts from the end).
    pub fn size(&self, d: i64) -> Result<i64> {
        let l = self.read_layout();
        if l.dim() == 0 {
            return Err(Error::index(format!("dimension specified as {d} but tensor has no dimensions")));
        }
        let d = wrap_dim(d, l.dim())?;
        Ok(l.sizes[d])
    }
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.read_layout().is_contiguous()
    }
    pub fn is_contiguous_as(&self, format: MemoryFormat) -> bool {
        self.read_layout().is_contiguous_as(format)
    }
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        self.read_layout().is_non_overlapping_and_dense()
    }
    pub fn suggest_memory_format(&self) -> MemoryFormat {
        self.read_layout().suggest_memory_format()
    }
    pub fn is_meta(&self) -> bool {
        self.device() == Device::Meta
    }
    /// Whether both handles refer to the same tensor (not merely the same storage).
    #[inline]
    pub fn is_same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// The tensor's identity: the address of the state its handles share (PyTorch's
    /// `TensorImpl*`). Distinct for live tensors, views included; it may be reused once the tensor
    /// and every [`WeakTensor`] to it are gone.
    #[inline]
    pub fn impl_id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
    /// The version counter shared with every view of this tensor's storage.
    pub fn version(&self) -> u64 {
        self.0.storage.version()
    }
    /// Records an in-place modification.
    pub fn bump_version(&self) {
        self.0.storage.bump_version()
    }

    /// Address of element 0 (null on meta).
    pub fn data_ptr(&self) -> *mut u8 {
        let base = self.0.storage.data_ptr();
        if base.is_null() {
            return base;
        }
        let off = self.storage_offset() as usize * self.dtype().size();
        // SAFETY: `from_parts` and `set_layout_` check that offset+span fits in the storage, so
        // the offset pointer stays inside (or one past) the allocation.
        unsafe { base.add(off) }
    }

    /// Address of element 0 for a kernel that writes this whole tensor before anything reads it,
    /// and whether [`Storage::assume_init`] must be called once it has: a deferred storage that
    /// this tensor covers exactly (offset 0, dense, every byte an element) is not zero-filled.
    /// Otherwise this is [`data_ptr`](Self::data_ptr).
    ///
    /// # Safety
    /// When the flag is true the caller must write every element through the pointer before any
    /// of them is read, then call `self.storage().assume_init()`, and no other handle may read or
    /// write the storage meanwhile (see [`Storage::data_ptr_for_overwrite`]).
    pub unsafe fn data_ptr_for_overwrite(&self) -> (*mut u8, bool) {
        let st = &self.0.storage;
        if st.is_deferred() {
            let l = self.read_layout();
            let covers = l.offset == 0
                && l.is_non_overlapping_and_dense()
                && l.storage_nbytes(self.0.dtype.size()).is_ok_and(|n| n == st.nbytes());
            if covers {
                // SAFETY: forwarded to the caller; the tensor's elements are all of the bytes.
                return (unsafe { st.data_ptr_for_overwrite() }, true);
            }
        }
        (self.data_ptr(), false)
    }

    // ----- in-place metadata changes -----

    /// Sets sizes/strides/offset in place (`as_strided_`), growing the storage if needed.
    pub fn set_layout_(&self, sizes: &[i64], strides: &[i64], offset: i64) -> Result<()> {
        let layout = TensorLayout::new(sizes.into(), strides.into(), offset)?;
        self.0.storage.grow(layout.storage_nbytes(self.dtype().size())?)?;
        *self.0.layout.write().unwrap_or_else(|e| e.into_inner()) = layout;
        Ok(())
    }

    /// `resize_`: keeps the data if the size is unchanged; otherwise gives the tensor
    /// `format` strides and grows the storage as needed. Existing elements are kept in storage
    /// order, as in PyTorch.
    pub fn resize_(&self, sizes: &[i64], format: MemoryFormat) -> Result<()> {
        if self.sizes() == sizes && format == MemoryFormat::Preserve {
            return Ok(());
        }
        let format = if format == MemoryFormat::Preserve { MemoryFormat::Contiguous } else { format };
        let strides = strides_for_format(sizes, format);
        self.set_layout_(sizes, &strides, self.storage_offset())
    }
}

/// A weak handle to a tensor ([`Tensor::downgrade`]).
#[derive(Clone)]
pub struct WeakTensor(Weak<TensorImpl>);

impl WeakTensor {
    /// The tensor, if some strong handle still keeps it alive.
    pub fn upgrade(&self) -> Option<Tensor> {
        self.0.upgrade().map(Tensor)
    }
}

/// Wraps a possibly negative dim index into `0..ndim` (a 0-dim tensor accepts -1 and 0).
pub fn wrap_dim(d: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64;
    if d < -n || d >= n {
        return Err(Error::index(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
            -n,
            n - 1
        )));
    }
    Ok(if d < 0 { (d + n) as usize } else { d as usize })
}

fn check_sizes(sizes: &[i64]) -> Result<()> {
    layout::checked_numel(sizes).map(|_| ())
}

/// Lets tensor-list arguments take `&[Tensor]`, `&[&Tensor]` and `&Vec<Tensor>` alike.
impl AsRef<Tensor> for Tensor {
    fn as_ref(&self) -> &Tensor {
        self
    }
}

/// What a tensor is, without its values (which `Display` prints, copying device tensors to the
/// host): `Tensor { shape: [2, 3], dtype: float32, device: cpu, requires_grad: false }`.
impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("shape", &&self.sizes()[..])
            .field("dtype", &format_args!("{}", self.dtype()))
            .field("device", &format_args!("{}", self.device()))
            .field("requires_grad", &self.requires_grad())
            .finish()
    }
}

/// Unit tests of the unsafe paths (element reads through strided views, storage growth), small
/// enough for Miri (see the README's contributor section).
#[cfg(test)]
mod tests {
    use super::*;

    fn iota(n: usize) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), &[n as i64]).unwrap()
    }

    #[test]
    fn strided_views_read_the_right_elements() {
        let t = iota(12);
        // A transposed 3x4 view, an expanded row and an offset, stepped slice.
        let tr = t.alias_with_layout(&[4, 3], &[1, 4], 0).unwrap();
        assert_eq!(tr.to_vec::<f32>().unwrap(), [0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]);
        let ex = t.alias_with_layout(&[2, 3], &[0, 1], 5).unwrap();
        assert_eq!(ex.to_vec::<f32>().unwrap(), [5., 6., 7., 5., 6., 7.]);
        let st = t.alias_with_layout(&[3], &[4], 3).unwrap();
        assert_eq!(st.to_vec::<f32>().unwrap(), [3., 7., 11.]);
        // One past the end of the storage is refused, not read.
        assert!(t.alias_with_layout(&[3], &[4], 4).is_err());
        assert!(t.alias_with_layout(&[2], &[i64::MAX], 0).is_err());
    }

    #[test]
    fn resize_grows_the_storage_and_keeps_the_elements() {
        let t = iota(3);
        t.resize_(&[2, 4], MemoryFormat::Contiguous).unwrap();
        assert_eq!(t.storage().nbytes(), 32);
        assert_eq!(t.to_vec::<f32>().unwrap(), [0., 1., 2., 0., 0., 0., 0., 0.]);
        assert!(t.resize_(&[i64::MAX], MemoryFormat::Contiguous).is_err());
        assert_eq!(t.sizes(), [2, 4]);
    }

    #[test]
    fn layouts_that_overflow_are_errors() {
        assert!(TensorLayout::new([1 << 32, 1 << 32].as_slice().into(), [1, 1].as_slice().into(), 0).is_err());
        assert!(TensorLayout::new([3].as_slice().into(), [1].as_slice().into(), i64::MAX - 1).is_err());
        assert!(TensorLayout::new([3].as_slice().into(), [-1].as_slice().into(), 0).is_err());
        assert!(TensorLayout::contiguous(&[0, 1 << 40, 1 << 40]).is_ok_and(|l| l.numel() == 0));
        let e = Tensor::empty(&[1 << 31, 1 << 31], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::OutOfMemory);
    }
}
