//! The hand-written part of the backend: the kernels of `supported:` (factories and `copy_`),
//! and the two hooks the generated recording kernels call ([`LazyKernels::lazy_value`] and
//! [`LazyKernels::lazy_tensor`]).

use crate::backend::{ir, LazyKernels};
use crate::graph::{data, token, value_of, Geometry, Node, Op, State, Value, View};
use crate::{execute, storage, LAZY};
use oxten::{DType, Device, Error, Layout, MemoryFormat, Result, Tensor};

/// The lazy backend (a marker type: the state lives in the storage table and the nodes).
pub(crate) struct Lazy;

/// Whether `t` covers its whole storage densely from offset 0, so that writing all of it
/// replaces the storage's contents.
fn covers_storage(t: &Tensor) -> bool {
    t.storage_offset() == 0
        && t.is_non_overlapping_and_dense()
        && (t.numel() as usize).checked_mul(t.dtype().size()) == Some(t.storage().nbytes())
}

/// `dst.copy_(src)` for a lazy `dst`: the storage's new contents are `src`'s node when `src` is
/// exactly what the storage should hold, else a write node over the old contents.
fn write(dst: &Tensor, src: Value) -> Result<()> {
    let key = token(dst);
    if covers_storage(dst) {
        let geometry = Geometry::of(dst);
        let node = if src.is_whole() && src.node.geometry == geometry {
            src.node
        } else {
            Node::new(geometry, State::Pending(Op::Write { base: None, view: View::of(dst), src }))
        };
        storage::bind(key, node);
        return Ok(());
    }
    let old = value_of(dst).map(|v| v.node)?;
    let node = Node::new(
        old.geometry.clone(),
        State::Pending(Op::Write { base: Some(Value::whole(old)), view: View::of(dst), src }),
    );
    storage::bind(key, node);
    Ok(())
}

/// The copies between the lazy device and the CPU (the copy kernel and `register_copy`'s).
pub(crate) fn copy_between(dst: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<()> {
    match (dst.device(), src.device()) {
        (LAZY, Device::Cpu) => write(dst, data(src)?),
        // Broadcasting and dtype conversion happen when the write node runs.
        (LAZY, LAZY) => write(dst, value_of(src)?),
        (Device::Cpu, LAZY) => {
            let _below = oxten::autograd::NoGradGuard::new();
            dst.try_copy_(&execute::materialize(&value_of(src)?)?)?;
            Ok(())
        }
        (d, s) => Err(Error::device(format!("lazy: copy_ from {s} to {d} is not supported (copy through the CPU)"))),
    }
}

impl LazyKernels for Lazy {
    type Value = Value;

    fn lazy_value(op: &str, t: &Tensor) -> Result<Value> {
        match t.device() {
            LAZY => value_of(t),
            // Numbers and 0-dim CPU tensors mix with any device, as in PyTorch.
            Device::Cpu if t.dim() == 0 => data(t),
            d => Err(Error::device(format!(
                "{op}: expected all tensors to be on the same device, but found tensors on {LAZY} and {d}"
            ))),
        }
    }

    fn lazy_tensor(node: ir::Node<Value>, meta: &Tensor) -> Result<Tensor> {
        let out = Tensor::empty_strided(&meta.sizes(), &meta.strides(), meta.dtype(), LAZY)?;
        storage::bind(token(&out), Node::new(Geometry::of(meta), State::Pending(Op::Ir(Box::new(node)))));
        Ok(out)
    }

    fn empty(
        size: &[i64],
        dtype: Option<DType>,
        _layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        Tensor::empty(size, dtype.unwrap_or(DType::F32), LAZY, memory_format.unwrap_or(MemoryFormat::Contiguous))
    }

    fn empty_strided(
        size: &[i64],
        stride: &[i64],
        dtype: Option<DType>,
        _layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        Tensor::empty_strided(size, stride, dtype.unwrap_or(DType::F32), LAZY)
    }

    fn copy_(self_: &Tensor, src: &Tensor, non_blocking: bool) -> Result<Tensor> {
        // The meta function checks what a copy checks (broadcastable shapes, overlap).
        let metas = oxten::backend::MetaArgs::default();
        oxten::ops::copy_::call(&metas.like(self_)?, &metas.like(src)?, non_blocking)?;
        copy_between(self_, src, non_blocking)?;
        Ok(self_.clone())
    }
}
