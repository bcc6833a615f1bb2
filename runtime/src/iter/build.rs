//! `TensorIteratorConfig::build`: PyTorch's build order, step by step (operands, overlap, shape,
//! resize marks, dtypes, then the fast setup or strides → reorder → allocate → coalesce).

use super::config::TensorIteratorConfig;
use super::copy::to_dtype;
use super::dtypes::{infer_size, result_type, scalar_type_name};
use super::iterator::TensorIterator;
use super::operand::Operand;
use super::outputs::{resize_as_requested, StructuredOutputs};
use super::overlap::{assert_no_internal_overlap, assert_no_partial_overlap};
use crate::device::{Device, MemoryFormat};
use crate::dtype::{can_cast, DType, DEFAULT_FLOAT};
use crate::error::{Error, Result};
use crate::tensor::{strides_for_format, Tensor};

/// The layouts the fast setup recognises when every operand has the same shape.
enum FastSetup {
    Contiguous,
    ChannelsLast,
    /// Dense with identical strides: outputs copy the strides of operand `.0`.
    NonOverlappingDense(usize),
}

struct Builder<'a> {
    cfg: &'a TensorIteratorConfig,
    ops: Vec<Operand>,
    nout: usize,
    /// Iteration shape: broadcast order until `reorder_dimensions`, then fastest dim first.
    shape: Vec<i64>,
    /// The broadcast shape in the operands' dim order.
    full_shape: Vec<i64>,
    /// `perm[i]` is the broadcast dim that iteration dim `i` walks.
    perm: Vec<usize>,
    all_same_shape: bool,
    all_scalars: bool,
    common_dtype: Option<DType>,
    device: Device,
}

pub(crate) fn build(cfg: TensorIteratorConfig, outs: &mut StructuredOutputs) -> Result<TensorIterator> {
    if cfg.misordered {
        return Err(Error::value("TensorIteratorConfig: all outputs must be added before any input"));
    }
    let nout = outs.len();
    let mut ops = Vec::with_capacity(nout + cfg.inputs.len());
    for i in 0..nout {
        ops.push(Operand::output(outs.maybe_get_output(i).cloned()));
    }
    for (t, wrapped) in &cfg.inputs {
        ops.push(Operand::input(t.clone(), *wrapped));
    }
    if cfg.is_reduction && ops[..nout].iter().any(|o| o.tensor.is_none()) {
        return Err(Error::value(
            "TensorIterator: a reduction's outputs must exist before building (see make_reduction)",
        ));
    }
    let mut b = Builder {
        cfg: &cfg,
        ops,
        nout,
        shape: Vec::new(),
        full_shape: Vec::new(),
        perm: Vec::new(),
        all_same_shape: false,
        all_scalars: false,
        common_dtype: None,
        device: Device::Cpu,
    };
    b.mark_read_write();
    b.compute_mem_overlaps()?;
    b.compute_shape()?;
    b.mark_resize_outputs()?;
    b.compute_types()?;
    b.full_shape = b.shape.clone();
    if !b.fast_set_up(outs)? {
        b.compute_strides()?;
        b.reorder_dimensions();
        b.allocate_or_resize_outputs(outs)?;
        b.coalesce_dimensions();
    }
    Ok(TensorIterator {
        operands: b.ops,
        noutputs: nout,
        shape: b.shape,
        full_shape: b.full_shape,
        common_dtype: b.common_dtype,
        device: b.device,
        is_reduction: cfg.is_reduction,
    })
}

impl Builder<'_> {
    fn inputs(&self) -> impl Iterator<Item = &Operand> {
        self.ops[self.nout..].iter()
    }

    /// An output that is the same tensor as an input is read-write.
    fn mark_read_write(&mut self) {
        for i in 0..self.nout {
            if let Some(t) = &self.ops[i].tensor {
                let rw = self.ops[self.nout..].iter().any(|o| o.tensor.as_ref().is_some_and(|x| x.is_same(t)));
                self.ops[i].is_read_write = rw;
            }
        }
    }

    fn compute_mem_overlaps(&self) -> Result<()> {
        if !self.cfg.check_mem_overlap {
            return Ok(());
        }
        for out in self.ops[..self.nout].iter().filter_map(|o| o.tensor.as_ref()) {
            assert_no_internal_overlap(out)?;
            for inp in self.inputs().filter_map(|o| o.tensor.as_ref()) {
                if !inp.is_same(out) {
                    assert_no_partial_overlap(out, inp)?;
                }
            }
        }
        Ok(())
    }

    fn compute_shape(&mut self) -> Result<()> {
        if let Some(s) = &self.cfg.static_shape {
            for t in self.inputs().filter_map(|o| o.tensor.as_ref()) {
                if infer_size(s, &t.sizes())? != *s {
                    return Err(Error::shape(format!(
                        "input with shape {:?} cannot be broadcast to the declared shape {s:?}",
                        &t.sizes()[..]
                    )));
                }
            }
            self.shape = s.clone();
            return Ok(());
        }
        self.all_same_shape = true;
        let (mut has_scalars, mut has_tensors) = (false, false);
        let mut shape: Vec<i64> = Vec::new();
        for op in &self.ops {
            let Some(t) = &op.tensor else { continue };
            // Outputs that may be resized do not take part (legacy `out=` resizing).
            if self.cfg.resize_outputs && op.is_output {
                continue;
            }
            let sizes = t.sizes();
            if sizes.is_empty() {
                has_scalars = true;
            } else {
                has_tensors = true;
            }
            if has_scalars && has_tensors {
                self.all_same_shape = false;
            }
            if shape.is_empty() {
                shape = sizes.to_vec();
            } else if sizes != &shape[..] {
                self.all_same_shape = false;
                shape = infer_size(&shape, &sizes)?;
            }
        }
        self.all_scalars = !has_tensors;
        self.shape = shape;
        Ok(())
    }

    /// Given outputs must have the broadcast shape, unless they are write-only and may be
    /// resized (or this is a reduction, whose outputs are smaller).
    fn mark_resize_outputs(&mut self) -> Result<()> {
        if self.cfg.static_shape.is_some() {
            return Ok(());
        }
        for i in 0..self.nout {
            let op = &self.ops[i];
            let Some(t) = &op.tensor else { continue };
            let sizes = t.sizes();
            if sizes != &self.shape[..] {
                if self.cfg.resize_outputs && !op.is_read_write {
                    self.ops[i].will_resize = true;
                    continue;
                }
                if !self.cfg.is_reduction {
                    return Err(Error::shape(format!(
                        "output with shape {:?} doesn't match the broadcast shape {:?}",
                        &sizes[..],
                        self.shape
                    )));
                }
            }
        }
        Ok(())
    }

    fn compute_types(&mut self) -> Result<()> {
        let cfg = self.cfg;
        let mut common_device = Device::Cpu;
        let mut common: Option<DType> = None;
        let mut out_dtype: Option<DType> = None;
        let (mut diff_in, mut diff_out, mut undefined_outputs) = (false, false, false);
        for op in &self.ops {
            let Some(t) = &op.tensor else {
                undefined_outputs |= cfg.static_dtype.is_none();
                continue;
            };
            if common_device == Device::Cpu && t.device() != Device::Cpu && !op.is_wrapped {
                common_device = t.device();
            }
            let (seen, diff) = if op.is_output { (&mut out_dtype, &mut diff_out) } else { (&mut common, &mut diff_in) };
            match *seen {
                None => *seen = Some(t.dtype()),
                Some(d) if d != t.dtype() => *diff = true,
                _ => {}
            }
        }
        if diff_in && !cfg.promote_inputs_to_common_dtype
            && (undefined_outputs || cfg.enforce_safe_casting_to_output || cfg.cast_common_dtype_to_outputs)
        {
            return Err(Error::dtype(
                "TensorIterator: the inputs have different dtypes; enable promote_inputs_to_common_dtype",
            ));
        }
        if cfg.check_all_same_dtype && (diff_in || diff_out || (common.is_some() && out_dtype.is_some() && common != out_dtype)) {
            let expected = common.or(out_dtype).expect("some operand has a dtype");
            for t in self.ops.iter().filter_map(|o| o.tensor.as_ref()) {
                if t.dtype() != expected {
                    return Err(Error::dtype(format!(
                        "Found dtype {} but expected {}",
                        scalar_type_name(t.dtype()),
                        scalar_type_name(expected)
                    )));
                }
            }
        }
        if (diff_in || self.all_scalars) && cfg.promote_inputs_to_common_dtype {
            let ins = self.inputs().filter_map(|o| o.tensor.as_ref().map(|t| (t.dtype(), t.dim(), o.is_wrapped)));
            common = result_type(ins.collect::<Vec<_>>()).or(common);
        }
        if cfg.promote_integer_inputs_to_float && common.is_some_and(|c| c.is_integral(true)) {
            common = Some(DEFAULT_FLOAT);
        }
        self.common_dtype = common;
        self.device = common_device;
        let mut cpu_scalars = 0;
        for op in &mut self.ops {
            let Some(t) = op.tensor.clone() else {
                op.dtype = Some(cfg.static_dtype.or(common).ok_or_else(|| {
                    Error::dtype("TensorIterator: cannot infer an output dtype without inputs or a static dtype")
                })?);
                continue;
            };
            if cfg.check_all_same_device && t.device() != common_device && !op.is_wrapped {
                let cpu_scalar = cfg.allow_cpu_scalars && !op.is_output && t.dim() == 0 && t.device() == Device::Cpu;
                if cpu_scalar {
                    cpu_scalars += 1;
                }
                if !cpu_scalar || cpu_scalars > 1 {
                    return Err(Error::device(format!(
                        "Expected all tensors to be on the same device, but found at least two devices, \
                         {common_device} and {}!",
                        t.device()
                    )));
                }
            }
            let Some(c) = common else { continue };
            if t.dtype() == c {
                continue;
            }
            if op.is_output && cfg.enforce_safe_casting_to_output && !can_cast(c, t.dtype()) {
                return Err(Error::dtype(format!(
                    "result type {} can't be cast to the desired output type {}",
                    scalar_type_name(c),
                    scalar_type_name(t.dtype())
                )));
            }
            let on_cpu = common_device == Device::Cpu;
            if op.is_output && cfg.cast_common_dtype_to_outputs {
                if on_cpu {
                    op.exchange(Tensor::empty(&t.sizes(), c, Device::Cpu, MemoryFormat::Contiguous)?);
                    op.needs_cast_back = true;
                } else {
                    op.dtype = Some(c);
                }
            }
            if !op.is_output && cfg.promote_inputs_to_common_dtype {
                if on_cpu {
                    op.exchange(to_dtype(&t, c)?);
                } else {
                    op.dtype = Some(c);
                }
            }
        }
        Ok(())
    }

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
    fn fast_set_up(&mut self, outs: &mut StructuredOutputs) -> Result<bool> {
        let Some(kind) = self.fast_setup_type() else { return Ok(false) };
        let shape = self.shape.clone();
        let strides: Option<Vec<i64>> = match kind {
            FastSetup::Contiguous => None,
            FastSetup::ChannelsLast => Some(strides_for_format(&shape, MemoryFormat::ChannelsLast).to_vec()),
            FastSetup::NonOverlappingDense(i) => self.ops[i].tensor.as_ref().map(|t| t.strides().to_vec()),
        };
        for i in 0..self.nout {
            self.set_output(outs, i, &shape, strides.as_deref())?;
        }
        let numel: i64 = shape.iter().product();
        self.perm = (0..shape.len()).rev().collect();
        if !shape.is_empty() {
            self.shape = vec![numel];
        }
        for op in &mut self.ops {
            let es = op.tensor.as_ref().map_or(1, |t| t.dtype().size() as i64);
            op.stride_bytes = if shape.is_empty() { Vec::new() } else { vec![es] };
        }
        Ok(true)
    }

    /// Calls the structured `set_output` hook, then points the operand at the result (or
    /// resizes its cast temporary).
    fn set_output(&mut self, outs: &mut StructuredOutputs, i: usize, sizes: &[i64], strides: Option<&[i64]>) -> Result<()> {
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
    fn broadcast_strides(&self, t: &Tensor) -> Result<Vec<i64>> {
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
        let mut st = vec![0; ndim];
        for i in 0..l.dim() {
            st[off + i] = if l.sizes[i] == 1 && self.full_shape[off + i] != 1 { 0 } else { l.strides[i] * es };
        }
        Ok(st)
    }

    fn compute_strides(&mut self) -> Result<()> {
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
    fn reorder_dimensions(&mut self) {
        let ndim = self.shape.len();
        self.perm = (0..ndim).rev().collect();
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
    fn allocate_or_resize_outputs(&mut self, outs: &mut StructuredOutputs) -> Result<()> {
        let ndim = self.shape.len();
        let inverted = self.perm.iter().enumerate().all(|(j, &p)| p == ndim - 1 - j);
        for i in 0..self.nout {
            let op = &self.ops[i];
            if op.tensor.is_none() || op.will_resize {
                let mut strides = vec![0i64; ndim];
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
    fn coalesce_dimensions(&mut self) {
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
        self.shape.truncate(prev + 1);
        for o in &mut self.ops {
            o.stride_bytes.truncate(prev + 1);
        }
    }
}
