//! `TensorIteratorConfig::build`: PyTorch's build order, step by step (operands, overlap, shape,
//! resize marks, dtypes; the layout steps that follow live in `strides.rs`).

use super::config::TensorIteratorConfig;
use super::copy_stub::to_dtype;
use super::dtypes::{infer_size, result_type, scalar_type_name};
use super::iterator::{TensorIterator, MAX_INLINE_OPERANDS};
use super::operand::Operand;
use super::outputs::StructuredOutputs;
use super::overlap::{assert_no_internal_overlap, assert_no_partial_overlap};
use super::small::{Small, SmallVec};
use crate::device::{Device, MemoryFormat};
use crate::dimvec::DimVec;
use crate::dtype::{can_cast, DType, DEFAULT_FLOAT};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

pub(super) struct Builder<'a> {
    pub(super) cfg: &'a TensorIteratorConfig,
    pub(super) ops: SmallVec<Operand, MAX_INLINE_OPERANDS>,
    pub(super) nout: usize,
    /// Iteration shape: broadcast order until `reorder_dimensions`, then fastest dim first.
    pub(super) shape: DimVec,
    /// The broadcast shape in the operands' dim order.
    pub(super) full_shape: DimVec,
    /// `perm[i]` is the broadcast dim that iteration dim `i` walks.
    pub(super) perm: Small<usize, 8>,
    pub(super) all_same_shape: bool,
    pub(super) all_scalars: bool,
    pub(super) common_dtype: Option<DType>,
    pub(super) device: Device,
}

pub(crate) fn build(mut cfg: TensorIteratorConfig, outs: &mut StructuredOutputs) -> Result<TensorIterator> {
    if cfg.misordered {
        return Err(Error::value("TensorIteratorConfig: all outputs must be added before any input"));
    }
    if let Some(case) = fast_check(&cfg, outs) {
        return fast_build(cfg, outs, case);
    }
    let nout = outs.len();
    let mut ops = SmallVec::new();
    for i in 0..nout {
        ops.push(Operand::output(outs.maybe_get_output(i).cloned()));
    }
    for (t, wrapped) in std::mem::take(&mut cfg.inputs) {
        ops.push(Operand::input(t, wrapped));
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
        shape: DimVec::new(),
        full_shape: DimVec::new(),
        perm: Small::filled(0, 0),
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

/// What [`fast_check`] found out about an iteration that qualifies for [`fast_build`].
struct FastCase {
    sizes: DimVec,
    dtype: DType,
    out_dtype: DType,
    /// Storage offset (bytes) of each input.
    offsets: [isize; MAX_INLINE_OPERANDS],
    /// Which outputs are one of the inputs (in place).
    read_write: [bool; MAX_INLINE_OPERANDS],
    /// Storage offset (bytes) of each given output that is not an input (`out=`).
    out_offsets: [Option<isize>; MAX_INLINE_OPERANDS],
}

/// The common case: CPU inputs that are all contiguous with one shape and one dtype (no wrapped
/// scalars, no promotion to do), and outputs that are to be allocated, are one of the inputs (in
/// place, sharing no memory with the other inputs) or are `out=` tensors of the result's sizes
/// and dtype, contiguous and sharing no memory with the inputs. Everything the general path
/// checks holds by construction, and it would end in its own fast setup with the same result:
/// contiguous outputs, one flat dim. `None` when the case does not apply.
fn fast_check(cfg: &TensorIteratorConfig, outs: &StructuredOutputs) -> Option<FastCase> {
    if cfg.is_reduction || cfg.static_shape.is_some() || cfg.inputs.is_empty() {
        return None;
    }
    let nin = cfg.inputs.len();
    let nout = outs.len();
    if nin > MAX_INLINE_OPERANDS || nout > MAX_INLINE_OPERANDS {
        return None;
    }
    let (first, wrapped) = &cfg.inputs[0];
    let dtype = first.dtype();
    if *wrapped || first.device() != Device::Cpu || (cfg.promote_integer_inputs_to_float && dtype.is_integral(true)) {
        return None;
    }
    let es_in = dtype.size() as i64;
    let (sizes, off0) = first.with_layout(|l| l.is_contiguous().then(|| (l.sizes.clone(), l.offset)))?;
    // Storage offsets of the inputs (in bytes), read with their layouts.
    let mut offsets = [0isize; MAX_INLINE_OPERANDS];
    offsets[0] = (off0 * es_in) as isize;
    for (k, (t, wrapped)) in cfg.inputs.iter().enumerate().skip(1) {
        if *wrapped || t.dtype() != dtype || t.device() != Device::Cpu {
            return None;
        }
        let off = t.with_layout(|l| (l.is_contiguous() && l.sizes == sizes).then_some(l.offset))?;
        offsets[k] = (off * es_in) as isize;
    }
    let out_dtype = cfg.static_dtype.unwrap_or(dtype);
    let mut read_write = [false; MAX_INLINE_OPERANDS];
    let mut out_offsets = [None; MAX_INLINE_OPERANDS];
    for i in 0..nout {
        let Some(o) = outs.maybe_get_output(i) else { continue };
        if cfg.inputs.iter().any(|(t, _)| t.is_same(o)) {
            // In place: of the computation's dtype and sharing no memory with the other inputs
            // (so no overlap check is needed).
            let ok = o.dtype() == out_dtype
                && out_dtype == dtype
                && cfg.inputs.iter().all(|(t, _)| t.is_same(o) || !t.storage().is_alias_of(o.storage()));
            if !ok {
                return None;
            }
            read_write[i] = true;
        } else {
            // A separate `out=` tensor: already of the result's dtype, device and sizes (nothing
            // to resize), contiguous, and sharing no memory with any input (nothing to check
            // for overlap).
            if o.dtype() != out_dtype
                || o.device() != Device::Cpu
                || cfg.inputs.iter().any(|(t, _)| t.storage().is_alias_of(o.storage()))
            {
                return None;
            }
            let off = o.with_layout(|l| (l.is_contiguous() && l.sizes == sizes).then_some(l.offset))?;
            out_offsets[i] = Some((off * out_dtype.size() as i64) as isize);
        }
    }
    Some(FastCase { sizes, dtype, out_dtype, offsets, read_write, out_offsets })
}

/// Builds the iteration [`fast_check`] qualified.
fn fast_build(mut cfg: TensorIteratorConfig, outs: &mut StructuredOutputs, case: FastCase) -> Result<TensorIterator> {
    let FastCase { sizes, dtype, out_dtype, offsets, read_write, out_offsets } = case;
    let nout = outs.len();
    let flat = |es: usize| if sizes.is_empty() { DimVec::new() } else { DimVec::from_slice(&[es as i64]) };
    // Each operand is written whole into its slot (no field-by-field updates of a moved value:
    // this is the per-call cost of every small elementwise op).
    let mut ops: SmallVec<Operand, MAX_INLINE_OPERANDS> = SmallVec::new();
    for (i, &rw) in read_write.iter().enumerate().take(nout) {
        outs.set_output(i, &sizes, None, out_dtype, Device::Cpu)?;
        // A functional output was allocated just now by `set_output`: contiguous from offset 0
        // over its whole storage.
        let fresh = !rw && out_offsets[i].is_none();
        ops.push(Operand {
            tensor: Some(outs.output(i).clone()),
            original: None,
            dtype: Some(out_dtype),
            stride_bytes: flat(out_dtype.size()),
            is_output: true,
            is_read_write: rw,
            will_resize: false,
            is_wrapped: false,
            needs_cast_back: false,
            offset_bytes: if fresh { Some(0) } else { out_offsets[i] },
            fresh,
        });
    }
    for (k, (t, _)) in std::mem::take(&mut cfg.inputs).into_iter().enumerate() {
        ops.push(Operand {
            tensor: Some(t),
            original: None,
            dtype: Some(dtype),
            stride_bytes: flat(dtype.size()),
            is_output: false,
            is_read_write: false,
            will_resize: false,
            is_wrapped: false,
            needs_cast_back: false,
            offset_bytes: Some(offsets[k]),
            fresh: false,
        });
    }
    let numel: i64 = sizes.iter().product();
    Ok(TensorIterator {
        operands: ops,
        noutputs: nout,
        shape: if sizes.is_empty() { DimVec::new() } else { DimVec::from_slice(&[numel]) },
        full_shape: sizes,
        common_dtype: Some(dtype),
        device: Device::Cpu,
        is_reduction: false,
    })
}

impl Builder<'_> {
    pub(super) fn inputs(&self) -> impl Iterator<Item = &Operand> {
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
            self.shape = s[..].into();
            return Ok(());
        }
        self.all_same_shape = true;
        let (mut has_scalars, mut has_tensors) = (false, false);
        let mut shape = DimVec::new();
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
                shape = sizes;
            } else if sizes != shape[..] {
                self.all_same_shape = false;
                shape = infer_size(&shape, &sizes)?.into();
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
            if sizes != self.shape[..] {
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
        if cfg.check_all_same_dtype
            && (diff_in || diff_out || (common.is_some() && out_dtype.is_some() && common != out_dtype))
        {
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
        if diff_in
            && !cfg.promote_inputs_to_common_dtype
            && (undefined_outputs || cfg.enforce_safe_casting_to_output || cfg.cast_common_dtype_to_outputs)
        {
            return Err(Error::dtype(
                "TensorIterator: the inputs have different dtypes; enable promote_inputs_to_common_dtype",
            ));
        }
        if (diff_in || self.all_scalars) && cfg.promote_inputs_to_common_dtype {
            let ins = self.inputs().filter_map(|o| o.tensor.as_ref().map(|t| (t.dtype(), t.dim(), o.is_wrapped)));
            common = result_type(ins).or(common);
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
                    op.exchange(Tensor::empty_deferred(&t.sizes(), c, Device::Cpu, MemoryFormat::Contiguous)?);
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
}
