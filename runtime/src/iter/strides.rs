//! The second half of `build`: the fast setup for same-shape dense operands, and otherwise
//! strides over the broadcast shape, PyTorch's stride-sorted dim order, output allocation in
//! that order, and coalescing of dims.

use super::build::Builder;
use super::operand::Operand;
use super::outputs::{resize_as_requested, StructuredOutputs};
use super::small::Small;
use crate::device::MemoryFormat;
use crate::dimvec::DimVec;
use crate::error::{Error, Result};
use crate::tensor::{strides_for_format, Tensor};

/// The layouts the fast setup recognises when every operand has the same shape.
enum FastSetup {
    Contiguous,
    ChannelsLast,
    /// Dense with identical strides: outputs copy the strides of operand `.0`.
    NonOverlappingDense(usize),
}

impl Builder<'_> {
    fn fast_setup_type(&self) -> Option<FastSetup> {
        if self.cfg.is_reduction || !self.all_same_shape {
            return None;
        }
        let counted = || self.ops.iter().filter(|o| !o.will_resize).filter_map(|o| o.tensor.as_ref());
        let contiguous = counted().all(|t| t.is_contiguous());
        if self.cfg.enforce_linear_iteration {
            return contiguous.then_some(FastSetup::Contiguous);
        }
        if contiguous {
            return Some(FastSetup::Contiguous);
        }
        if counted().all(|t| t.is_contiguous_as(MemoryFormat::ChannelsLast)) {
            return Some(FastSetup::ChannelsLast);
        }
        if !counted().all(|t| t.is_non_overlapping_and_dense()) {
            return None;
        }
        // Identical strides everywhere (inputs first, then outputs, as PyTorch checks them).
        let mut reference: Option<usize> = None;
        for i in (0..self.ops.len()).rev() {
            let op = &self.ops[i];
            let Some(t) = &op.tensor else { continue };
            if op.will_resize {
                continue;
            }
            match reference {
                None => reference = Some(i),
                Some(r) if self.ops[r].tensor.as_ref().is_some_and(|x| x.strides() != t.strides()) => return None,
                _ => {}
            }
        }
        let last_defined = (0..self.ops.len()).rev().find(|&i| self.ops[i].tensor.is_some())?;
        Some(FastSetup::NonOverlappingDense(last_defined))
    }

    /// All operands share one shape and one dense layout: allocate outputs in it and iterate
    /// over one flat dim.
    pub(super) fn fast_set_up(&mut self, outs: &mut StructuredOutputs) -> Result<bool> {
        let Some(kind) = self.fast_setup_type() else {
            return Ok(false);
        };
        let shape = self.shape.clone();
        let strides: Option<DimVec> = match kind {
            FastSetup::Contiguous => None,
            FastSetup::ChannelsLast => Some(strides_for_format(&shape, MemoryFormat::ChannelsLast)),
            FastSetup::NonOverlappingDense(i) => self.ops[i].tensor.as_ref().map(|t| t.strides()),
        };
        for i in 0..self.nout {
            self.set_output(outs, i, &shape, strides.as_deref())?;
        }
        let numel: i64 = shape.iter().product();
        self.perm = Small::filled(shape.len(), 0);
        for (i, p) in self.perm.iter_mut().enumerate() {
            *p = shape.len() - 1 - i;
        }
        if !shape.is_empty() {
            self.shape = DimVec::from_slice(&[numel]);
        }
        for op in &mut self.ops {
            let es = op.tensor.as_ref().map_or(1, |t| t.dtype().size() as i64);
            op.stride_bytes = if shape.is_empty() { DimVec::new() } else { DimVec::from_slice(&[es]) };
        }
        Ok(true)
    }

    /// Calls the structured `set_output` hook, then points the operand at the result (or
    /// resizes its cast temporary).
    fn set_output(
        &mut self,
        outs: &mut StructuredOutputs,
        i: usize,
        sizes: &[i64],
        strides: Option<&[i64]>,
    ) -> Result<()> {
        let op = &self.ops[i];
        let dtype = match op.user_tensor() {
            Some(t) => t.dtype(),
            None => op.dtype.expect("compute_types gave every output a dtype"),
        };
        outs.set_output(i, sizes, strides, dtype, self.device)?;
        let user = outs.output(i).clone();
        let op = &mut self.ops[i];
        if op.original.is_some() {
            if op.will_resize {
                if let Some(tmp) = &op.tensor {
                    resize_as_requested(tmp, sizes, strides)?;
                }
            }
            op.original = Some(user);
        } else {
            op.tensor = Some(user);
        }
        Ok(())
    }

    /// Byte strides of `t` over the broadcast shape (0 on broadcast dims), in broadcast order.
    fn broadcast_strides(&self, t: &Tensor) -> Result<DimVec> {
        let ndim = self.full_shape.len();
        let l = t.layout();
        if l.dim() > ndim {
            return Err(Error::shape(format!(
                "operand with shape {:?} has more dims than the iteration shape {:?}",
                &l.sizes[..],
                self.full_shape
            )));
        }
        let es = t.dtype().size() as i64;
        let off = ndim - l.dim();
        let mut st = DimVec::filled(ndim, 0);
        for i in 0..l.dim() {
            st[off + i] = if l.sizes[i] == 1 && self.full_shape[off + i] != 1 { 0 } else { l.strides[i] * es };
        }
        Ok(st)
    }

    pub(super) fn compute_strides(&mut self) -> Result<()> {
        for i in 0..self.ops.len() {
            if self.ops[i].will_resize {
                continue;
            }
            if let Some(t) = &self.ops[i].tensor {
                self.ops[i].stride_bytes = self.broadcast_strides(t)?;
            }
        }
        Ok(())
    }

    /// PyTorch's `reorder_dimensions`: an insertion sort of the dims by the operands' strides
    /// (fastest first), where a stride 0 defers to the next operand, ties go to the smaller
    /// size, and a reduction's reduced dims move to the front.
    pub(super) fn reorder_dimensions(&mut self) {
        let ndim = self.shape.len();
        self.perm = Small::filled(ndim, 0);
        for (i, p) in self.perm.iter_mut().enumerate() {
            *p = ndim - 1 - i;
        }
        if ndim <= 1 || self.cfg.enforce_linear_iteration {
            self.permute_dimensions();
            return;
        }
        let should_swap = |dim0: usize, dim1: usize| -> i32 {
            for op in &self.ops {
                if op.stride_bytes.is_empty() || op.will_resize {
                    continue;
                }
                let (s0, s1) = (op.stride_bytes[dim0], op.stride_bytes[dim1]);
                if self.cfg.is_reduction && op.is_output && ((s0 == 0) != (s1 == 0)) {
                    return if s1 == 0 { 1 } else { -1 };
                }
                if s0 == 0 || s1 == 0 {
                    continue;
                }
                if s0 < s1 {
                    return -1;
                }
                if s0 > s1 {
                    return 1;
                }
                if self.shape[dim0] > self.shape[dim1] {
                    return 1;
                }
            }
            0
        };
        let mut perm = self.perm.clone();
        for i in 1..ndim {
            let mut dim1 = i;
            for dim0 in (0..i).rev() {
                match should_swap(perm[dim0], perm[dim1]) {
                    c if c > 0 => {
                        perm.swap(dim0, dim1);
                        dim1 = dim0;
                    }
                    c if c < 0 => break,
                    _ => {}
                }
            }
        }
        self.perm = perm;
        self.permute_dimensions();
    }

    fn permute_dimensions(&mut self) {
        let perm = &self.perm;
        self.shape = perm.iter().map(|&p| self.full_shape[p]).collect();
        for op in &mut self.ops {
            if !op.stride_bytes.is_empty() {
                op.stride_bytes = perm.iter().map(|&p| op.stride_bytes[p]).collect();
            }
        }
    }

    /// Allocates undefined outputs and resizes the ones marked for it, contiguous in the
    /// iteration (stride-sorted) order; every output is then told to `set_output`.
    pub(super) fn allocate_or_resize_outputs(&mut self, outs: &mut StructuredOutputs) -> Result<()> {
        let ndim = self.shape.len();
        let inverted = self.perm.iter().enumerate().all(|(j, &p)| p == ndim - 1 - j);
        for i in 0..self.nout {
            let op = &self.ops[i];
            if op.tensor.is_none() || op.will_resize {
                let mut strides = DimVec::filled(ndim, 0);
                let mut next = 1i64;
                for d in 0..ndim {
                    strides[self.perm[d]] = next;
                    next *= self.shape[d];
                }
                let sizes = self.full_shape.clone();
                self.set_output(outs, i, &sizes, if inverted { None } else { Some(&strides) })?;
            } else {
                let sizes = op.tensor.as_ref().map(|t| t.sizes()).unwrap_or_default();
                self.set_output(outs, i, &sizes, None)?;
            }
            let t = self.ops[i].tensor.clone().expect("set_output defined the output");
            let st = self.broadcast_strides(&t)?;
            self.ops[i].stride_bytes = self.perm.iter().map(|&p| st[p]).collect();
        }
        Ok(())
    }

    /// Merges adjacent dims that are size 1 or that every operand walks as one (PyTorch's
    /// `coalesce_dimensions`).
    pub(super) fn coalesce_dimensions(&mut self) {
        let ndim = self.shape.len();
        if ndim <= 1 {
            return;
        }
        let can_coalesce = |ops: &[Operand], shape: &[i64], d0: usize, d1: usize| {
            let (s0, s1) = (shape[d0], shape[d1]);
            s0 == 1 || s1 == 1 || ops.iter().all(|o| s0 * o.stride_bytes[d0] == o.stride_bytes[d1])
        };
        let mut prev = 0;
        for dim in 1..ndim {
            if can_coalesce(&self.ops, &self.shape, prev, dim) {
                if self.shape[prev] == 1 {
                    for o in &mut self.ops {
                        o.stride_bytes[prev] = o.stride_bytes[dim];
                    }
                }
                self.shape[prev] *= self.shape[dim];
            } else {
                prev += 1;
                if prev != dim {
                    for o in &mut self.ops {
                        o.stride_bytes[prev] = o.stride_bytes[dim];
                    }
                    self.shape[prev] = self.shape[dim];
                }
            }
        }
        self.shape = DimVec::from_slice(&self.shape[..prev + 1]);
        for o in &mut self.ops {
            o.stride_bytes = DimVec::from_slice(&o.stride_bytes[..prev + 1]);
        }
    }
}
