//! Losses: `nll_loss_forward` / `nll_loss_backward` (structured), the `nll_loss`,
//! `nll_loss_nd` and `cross_entropy_loss` composites, `mse_loss` (+ backward) and
//! `binary_cross_entropy_with_logits`.
//!
//! Checks and messages are PyTorch's, in PyTorch's order. `reduction` is PyTorch's int: 0 none,
//! 1 mean, 2 sum; like PyTorch, `nll_loss` treats any other value as a sum and
//! `binary_cross_entropy_with_logits` as none, while `mse_loss` and `cross_entropy_loss` reject
//! it.
//!
//! `nll_loss` reads one input element per target: the picked values are gathered in the
//! input's dtype and summed in f64, so f16/bf16 (and f32) accumulate more precisely than
//! PyTorch's running sum in the input dtype. Inputs with more than two dims (`nll_loss_nd`,
//! `cross_entropy_loss` on images) are flattened to `[N * d1 * …, C]` rows, which gives
//! `nll_loss2d`'s results without a separate kernel.

use super::{expect_dtype, float_dispatch, not_implemented, REDUCTION_MEAN, REDUCTION_NONE, REDUCTION_SUM};
use crate::generated::decls::{
    BinaryCrossEntropyWithLogitsCompositeExplicit, CrossEntropyLossCompositeImplicit, MseLossBackwardCpu,
    MseLossBackwardMeta, MseLossBackwardOutCpu, MseLossBackwardOutMeta, MseLossOutCpu, MseLossOutMetaFn,
    NllLossBackwardGradInputMetaFn, NllLossBackwardOutCpuCpu, NllLossCompositeImplicit, NllLossForwardOutCpuCpu,
    NllLossForwardOutputMetaFn, NllLossNdCompositeImplicit,
};
use crate::iter::{
    binary_op_config, copy_, cpu_kernel_binary_math, cpu_kernel_ternary, infer_size, scalar_type_name,
    ternary_op_config, OpMath, StructuredOutputs, TensorIterator,
};
use crate::logical::promote::{result_type, Arg};
use crate::math::{self as m, Float};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{can_cast, ops, DType, Error, MemoryFormat, Result, Scalar, Tensor};

// ---------------------------------------------------------------------------------------------
// nll_loss_forward / nll_loss_backward
// ---------------------------------------------------------------------------------------------

/// `[3, 4]`, as PyTorch prints sizes.
fn sizes_str(t: &Tensor) -> String {
    format!("{:?}", &t.sizes()[..])
}

/// `target.size(0)` for a 0-dim target, as PyTorch reports it.
fn no_dims_error() -> Error {
    Error::index("Dimension specified as 0 but tensor has no dimensions")
}

/// Checks shared by both meta functions: input 1-D or 2-D, target 0-D or 1-D.
fn nll_check_ranks(self_: &Tensor, target: &Tensor) -> Result<()> {
    if self_.dim() == 0 || self_.dim() > 2 {
        return Err(Error::runtime("input tensor should be 1D or 2D"));
    }
    if target.dim() > 1 {
        return Err(Error::runtime("0D or 1D target tensor expected, multi-target not supported"));
    }
    Ok(())
}

/// `size mismatch (got input: [3, 4], target: [2])` unless the batch sizes agree (or a 1-D
/// input has a 0-D target).
fn nll_check_batch(self_: &Tensor, target: &Tensor) -> Result<()> {
    if self_.dim() == 1 && target.dim() == 0 {
        return Ok(());
    }
    if target.dim() == 0 {
        return Err(no_dims_error());
    }
    if self_.sizes()[0] != target.sizes()[0] {
        return Err(Error::runtime(format!(
            "size mismatch (got input: {}, target: {})",
            sizes_str(self_),
            sizes_str(target)
        )));
    }
    Ok(())
}

impl NllLossForwardOutputMetaFn for Meta {
    fn nll_loss_forward_output(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        _ignore_index: i64,
    ) -> Result<()> {
        nll_check_ranks(self_, target)?;
        if self_.dim() == 1 && target.dim() == 1 {
            if target.sizes()[0] != 1 {
                return Err(Error::value(format!(
                    "For 1D input, 1D target must have size 1, but got target size: {}",
                    target.sizes()[0]
                )));
            }
        } else {
            nll_check_batch(self_, target)?;
        }
        let n_classes = self_.sizes()[self_.dim() - 1];
        if let Some(w) = weight {
            if w.dim() != 1 || w.numel() != n_classes {
                return Err(Error::runtime(format!(
                    "weight tensor should be defined either for all {n_classes} classes or no classes but got weight \
                     tensor of shape: {}",
                    sizes_str(w)
                )));
            }
        }
        let (dtype, device) = (self_.dtype(), self_.device());
        if reduction == REDUCTION_NONE && self_.dim() == 2 {
            outs.set_output(0, &[self_.sizes()[0]], None, dtype, device)?;
        } else {
            outs.set_output(0, &[], None, dtype, device)?;
        }
        outs.set_output(1, &[], None, dtype, device)
    }
}

/// The targets as i64 (`Long` or `Byte` targets are accepted, as in PyTorch's CPU kernels).
fn targets(target: &Tensor, long_only_message: bool) -> Result<Vec<i64>> {
    match target.dtype() {
        DType::I64 => target.to_vec::<i64>(),
        DType::U8 => Ok(target.to_vec::<u8>()?.into_iter().map(i64::from).collect()),
        other if long_only_message => {
            Err(Error::dtype(format!("expected scalar type Long but found {}", scalar_type_name(other))))
        }
        other => Err(Error::runtime(format!(
            "expected target dtype to be Long or Byte, but got {}",
            scalar_type_name(other)
        ))),
    }
}

/// `Target 5 is out of bounds.` unless `0 <= t < n_classes`.
pub(super) fn check_target(t: i64, n_classes: i64) -> Result<()> {
    if t < 0 || t >= n_classes {
        return Err(Error::index(format!("Target {t} is out of bounds.")));
    }
    Ok(())
}

/// The values of `t` (any floating dtype) at the element offsets `offsets`, as f64.
///
/// # Safety
/// Every offset must address an element of `t` (in elements, from `t.data_ptr()`).
unsafe fn gather_f64<S: OpMath<Math = M>, M: Float>(t: &Tensor, offsets: &[isize]) -> Vec<f64> {
    let p = t.data_ptr() as *const S;
    // SAFETY: the caller guarantees that each offset addresses an element of `t`.
    offsets.iter().map(|&o| unsafe { (*p.offset(o)).to_math().to_f64() }).collect()
}

/// A floating tensor's values as f64, in logical order.
fn values_f64(t: &Tensor) -> Result<Vec<f64>> {
    t.to_f64_vec()
}

/// Writes `values` (logical order) into `out`, converting to its dtype.
fn write_values(out: &Tensor, values: Vec<f64>) -> Result<()> {
    let src = Tensor::from_vec(values, &out.sizes())?;
    copy_(out, &src)
}

impl NllLossForwardOutCpuCpu for Cpu {
    fn nll_loss_forward_out_cpu(
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        ignore_index: i64,
        output: &Tensor,
        total_weight: &Tensor,
    ) -> Result<()> {
        let dtype = self_.dtype();
        let tgt = targets(target, false)?;
        if !dtype.is_floating_point() {
            return Err(not_implemented("nll_loss_out_frame", dtype));
        }
        let w = match weight {
            Some(w) => {
                expect_dtype(dtype, w.dtype())?;
                Some(values_f64(w)?)
            }
            None => None,
        };
        let sizes = self_.sizes();
        let strides = self_.strides();
        let n_classes = sizes[sizes.len() - 1];
        let (rows, row_stride, col_stride) =
            if self_.dim() == 2 { (sizes[0] as usize, strides[0], strides[1]) } else { (1, 0, strides[0]) };
        // One picked element per row that is not ignored (all targets checked first).
        let mut offsets = Vec::with_capacity(rows);
        for (i, &t) in tgt.iter().enumerate().take(rows) {
            if t != ignore_index {
                check_target(t, n_classes)?;
                offsets.push(i as isize * row_stride as isize + t as isize * col_stride as isize);
            }
        }
        // SAFETY: every offset is `row * stride0 + target * stride1` with `row < rows` and
        // `0 <= target < n_classes`, an element of `self_`.
        let picked = float_dispatch!("nll_loss_out_frame", dtype, gather_picked(self_, &offsets));
        let weight_of = |t: i64| w.as_ref().map_or(1.0, |w| w[t as usize]);

        if reduction == REDUCTION_NONE && self_.dim() == 2 {
            let mut out = vec![0.0; rows];
            let mut k = 0;
            for (i, &t) in tgt.iter().enumerate().take(rows) {
                if t != ignore_index {
                    out[i] = -picked[k] * weight_of(t);
                    k += 1;
                }
            }
            write_values(output, out)?;
            return write_values(total_weight, vec![0.0]);
        }
        if target.numel() == 0 {
            // Nothing to average: the mean of no elements is NaN, a sum is 0.
            let v = if reduction == REDUCTION_MEAN { f64::NAN } else { 0.0 };
            write_values(output, vec![v])?;
            return write_values(total_weight, vec![0.0]);
        }
        let (mut loss, mut total) = (0.0f64, 0.0f64);
        let mut k = 0;
        for &t in tgt.iter().take(rows) {
            if t != ignore_index {
                let wt = weight_of(t);
                loss -= picked[k] * wt;
                total += wt;
                k += 1;
            }
        }
        if reduction == REDUCTION_MEAN {
            loss /= total;
        }
        write_values(output, vec![loss])?;
        write_values(total_weight, vec![total])
    }
}

/// [`gather_f64`] with the safety contract forwarded (a function so that `float_dispatch!` can
/// name it).
fn gather_picked<S: OpMath<Math = M>, M: Float>(t: &Tensor, offsets: &[isize]) -> Vec<f64> {
    // SAFETY: callers pass offsets of elements of `t` (checked against its sizes).
    unsafe { gather_f64::<S, M>(t, offsets) }
}

impl NllLossBackwardGradInputMetaFn for Meta {
    fn nll_loss_backward_grad_input(
        outs: &mut StructuredOutputs,
        grad_output: &Tensor,
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        _ignore_index: i64,
        total_weight: &Tensor,
    ) -> Result<()> {
        nll_check_ranks(self_, target)?;
        nll_check_batch(self_, target)?;
        if total_weight.numel() != 1 {
            return Err(Error::runtime(format!(
                "expected total_weight to be a  single element tensor, got: {} ({} elements)",
                sizes_str(total_weight),
                total_weight.numel()
            )));
        }
        let n_classes = self_.sizes()[self_.dim() - 1];
        if weight.is_some_and(|w| w.numel() != n_classes) {
            return Err(Error::runtime("weight tensor should be defined either for all or no classes"));
        }
        if reduction == REDUCTION_NONE && self_.dim() == 2 {
            let batch = self_.sizes()[0];
            if grad_output.dim() != 1 || grad_output.sizes()[0] != batch {
                return Err(Error::runtime(format!(
                    "Expected a tensor of dimension 1 and tensor.size[0] == {batch} but got: dimension {} and \
                     tensor.size[0] = {}",
                    grad_output.dim(),
                    grad_output.sizes().first().copied().unwrap_or(1)
                )));
            }
        } else if grad_output.dim() > 1 || grad_output.numel() != 1 {
            return Err(Error::runtime(format!(
                "Expected a single element grad_output tensor, but got: {}",
                sizes_str(grad_output)
            )));
        }
        outs.set_output(0, &self_.sizes(), None, self_.dtype(), self_.device())
    }
}

impl NllLossBackwardOutCpuCpu for Cpu {
    fn nll_loss_backward_out_cpu(
        grad_output: &Tensor,
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        ignore_index: i64,
        total_weight: &Tensor,
        grad_input: &Tensor,
    ) -> Result<()> {
        let dtype = grad_input.dtype();
        if !dtype.is_floating_point() {
            return Err(not_implemented("nll_loss_backward_out_frame", dtype));
        }
        let tgt = targets(target, true)?;
        expect_dtype(dtype, grad_output.dtype())?;
        expect_dtype(dtype, total_weight.dtype())?;
        let w = match weight {
            Some(w) => {
                expect_dtype(dtype, w.dtype())?;
                Some(values_f64(w)?)
            }
            None => None,
        };
        let weight_of = |t: i64| w.as_ref().map_or(1.0, |w| w[t as usize]);
        let sizes = self_.sizes();
        let n_classes = sizes[sizes.len() - 1];
        let rows = if self_.dim() == 2 { sizes[0] as usize } else { 1 };
        let c = n_classes as usize;
        let mut gi = vec![0.0f64; rows * c];
        let go = values_f64(grad_output)?;
        if reduction == REDUCTION_NONE && self_.dim() == 2 {
            for (i, &t) in tgt.iter().enumerate().take(rows) {
                if t != ignore_index {
                    // PyTorch writes out of bounds here; an error is the safe equivalent.
                    check_target(t, n_classes)?;
                    gi[i * c + t as usize] = -weight_of(t) * go[i];
                }
            }
        } else {
            let tw = values_f64(total_weight)?[0];
            let g = -(if reduction == REDUCTION_MEAN { go[0] / tw } else { go[0] });
            for (i, &t) in tgt.iter().enumerate().take(rows) {
                if t != ignore_index {
                    check_target(t, n_classes)?;
                    gi[i * c + t as usize] = weight_of(t) * g;
                }
            }
        }
        write_values(grad_input, gi)
    }
}

/// `nll_loss`: the loss output of `nll_loss_forward`.
impl NllLossCompositeImplicit for Composite {
    fn nll_loss(
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        ignore_index: i64,
    ) -> Result<Tensor> {
        Ok(ops::nll_loss_forward::call(self_, target, weight, reduction, ignore_index)?.0)
    }
}

/// `[N, C, d1, …]` input and `[N, d1, …]` target as `[N * d1 * …, C]` rows and their targets:
/// the class dim moved last, the rest flattened.
fn flatten_classes(self_: &Tensor, target: &Tensor) -> Result<(Tensor, Tensor)> {
    let sizes = self_.sizes();
    let nd = sizes.len() as i64;
    let mut perm: Vec<i64> = vec![0];
    perm.extend(2..nd);
    perm.push(1);
    let rows: i64 = sizes[0] * sizes[2..].iter().product::<i64>();
    let x = ops::reshape::call(&ops::permute::call(self_, &perm)?, &[rows, sizes[1]])?;
    let t = ops::reshape::call(target, &[rows])?;
    Ok((x, t))
}

/// `nll_loss_nd`: `nll_loss` for inputs of any rank (`[C]`, `[N, C]`, `[N, C, d1, …]`).
fn nll_loss_nd_impl(
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
) -> Result<Tensor> {
    let nd = self_.dim();
    if nd < 1 {
        return Err(Error::value(format!("Expected 1 or more dimensions (got {nd})")));
    }
    if nd != 1 {
        if target.dim() == 0 {
            return Err(no_dims_error());
        }
        if self_.sizes()[0] != target.sizes()[0] {
            return Err(Error::value(format!(
                "Expected input batch_size ({}) to match target batch_size ({}).",
                self_.sizes()[0],
                target.sizes()[0]
            )));
        }
    }
    if nd <= 2 {
        return ops::nll_loss::call(self_, target, weight, reduction, ignore_index);
    }
    let (s, ts) = (self_.sizes(), target.sizes());
    if nd == 4 {
        // PyTorch's `nll_loss2d` checks.
        if target.dim() != 3 {
            return Err(Error::runtime(format!(
                "only batches of spatial targets supported (3D tensors) but got targets of dimension: {}",
                target.dim()
            )));
        }
        if weight.is_some_and(|w| w.numel() != s[1]) {
            return Err(Error::runtime("weight tensor should be defined either for all or no classes"));
        }
        if s[0] != ts[0] || s[2] != ts[1] || s[3] != ts[2] {
            return Err(Error::runtime(format!(
                "size mismatch (got input: {} , target: {}",
                sizes_str(self_),
                sizes_str(target)
            )));
        }
    } else if ts[1..] != s[2..] {
        let mut expected = vec![s[0]];
        expected.extend_from_slice(&s[2..]);
        return Err(Error::runtime(format!("Expected target size {expected:?}, got {}", sizes_str(target))));
    }
    let (x, t) = flatten_classes(self_, target)?;
    let out = ops::nll_loss::call(&x, &t, weight, reduction, ignore_index)?;
    if reduction == REDUCTION_NONE {
        let mut out_size = vec![s[0]];
        out_size.extend_from_slice(&s[2..]);
        ops::reshape::call(&out, &out_size)
    } else {
        Ok(out)
    }
}

impl NllLossNdCompositeImplicit for Composite {
    fn nll_loss_nd(
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        ignore_index: i64,
    ) -> Result<Tensor> {
        nll_loss_nd_impl(self_, target, weight, reduction, ignore_index)
    }
}

// ---------------------------------------------------------------------------------------------
// cross_entropy_loss
// ---------------------------------------------------------------------------------------------

fn invalid_ce_reduction(reduction: i64) -> Error {
    Error::runtime(format!("Invalid reduction type encountered in cross_entropy: {reduction}"))
}

fn check_label_smoothing(label_smoothing: f64) -> Result<()> {
    if label_smoothing > 1.0 {
        return Err(Error::runtime(format!(
            "label_smoothing must be between 0.0 and 1.0. Got: {}",
            fmt_double(label_smoothing)
        )));
    }
    Ok(())
}

/// C++'s default printing of a double (`1.1`, `0.5`, `1`).
fn fmt_double(v: f64) -> String {
    let s = format!("{v}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// `weight` viewed to broadcast along `class_dim` of an `ndim`-dim input.
fn weight_view(weight: &Tensor, ndim: usize, class_dim: usize) -> Result<Tensor> {
    let mut shape = vec![1i64; ndim];
    shape[class_dim] = weight.sizes()[0];
    ops::view::call(weight, &shape)
}

/// `-(input * target * weight)` summed as `reduction` asks (class-probability targets).
fn cross_entropy_prob_target(
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    label_smoothing: f64,
) -> Result<Tensor> {
    let class_dim = if self_.dim() == 1 { 0 } else { 1 };
    let n_classes = self_.size(class_dim)?;
    if let Some(w) = weight {
        if w.dim() != 1 || w.numel() != n_classes {
            return Err(Error::runtime(format!(
                "cross_entropy: weight tensor should be defined either for all {n_classes} classes or no classes but \
                 got weight tensor of shape: {}",
                sizes_str(w)
            )));
        }
    }
    let input = ops::log_softmax::call(self_, class_dim, Some(self_.dtype()))?;
    let target = if label_smoothing > 0.0 {
        check_label_smoothing(label_smoothing)?;
        ops::add_scalar::call(
            &ops::mul_scalar::call(target, Scalar::Float(1.0 - label_smoothing))?,
            Scalar::Float(label_smoothing / n_classes as f64),
            Scalar::Int(1),
        )?
    } else {
        target.clone()
    };
    let mut prod = ops::mul::call(&input, &target)?;
    if let Some(w) = weight {
        let w = if input.dim() > 1 { weight_view(w, input.dim(), 1)? } else { w.clone() };
        prod = ops::mul::call(&prod, &w)?;
    }
    match reduction {
        REDUCTION_MEAN => {
            let total = ops::neg::call(&ops::sum::call(&prod, None)?)?;
            if input.numel() == 0 {
                ops::fill_scalar_::call(&total, Scalar::Float(f64::NAN))
            } else {
                ops::div_scalar::call(&total, Scalar::Int(input.numel() / n_classes))
            }
        }
        REDUCTION_SUM => ops::neg::call(&ops::sum::call(&prod, None)?),
        REDUCTION_NONE => ops::neg::call(&ops::sum_dim_intlist::call(&prod, Some(&[class_dim]), false, None)?),
        other => Err(invalid_ce_reduction(other)),
    }
}

/// Class-index targets with label smoothing: `(1 - ε) * nll + ε / C * smooth`, where `smooth`
/// is the (weighted) sum of `-log_softmax` over the classes, 0 for ignored targets.
fn cross_entropy_label_smoothing(
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
    label_smoothing: f64,
) -> Result<Tensor> {
    let class_dim = if self_.dim() == 1 { 0 } else { 1 };
    let input = ops::log_softmax::call(self_, class_dim, Some(self_.dtype()))?;
    let nll = ops::nll_loss_nd::call(&input, target, weight, reduction, ignore_index)?;
    let n_classes = input.size(class_dim)?;
    let ignore_mask = ops::eq_scalar::call(target, Scalar::Int(ignore_index))?;
    let per_class = match weight {
        Some(w) => ops::mul::call(&input, &weight_view(w, input.dim(), class_dim as usize)?)?,
        None => input.clone(),
    };
    let smooth = ops::neg::call(&ops::sum_dim_intlist::call(&per_class, Some(&[class_dim]), false, None)?)?;
    let zero = ops::zeros_like::call(&smooth, None, None, None, None, None)?;
    let smooth = ops::where_self::call(&ignore_mask, &zero, &smooth)?;
    let ret = match reduction {
        REDUCTION_MEAN => {
            let total = ops::sum::call(&smooth, None)?;
            match weight {
                // The sum of the weights of the targets that are not ignored: `nll_loss`'s
                // total weight.
                Some(w) => {
                    let detached = input.detach();
                    let (x, t) = if detached.dim() > 2 {
                        flatten_classes(&detached, target)?
                    } else {
                        (detached, target.clone())
                    };
                    let (_, weight_sum) = ops::nll_loss_forward::call(&x, &t, Some(w), REDUCTION_SUM, ignore_index)?;
                    ops::div::call(&total, &weight_sum)?
                }
                None => {
                    let kept = ops::sum::call(&ops::logical_not::call(&ignore_mask)?, None)?;
                    ops::div::call(&total, &kept)?
                }
            }
        }
        REDUCTION_SUM => ops::sum::call(&smooth, None)?,
        REDUCTION_NONE => smooth,
        other => return Err(invalid_ce_reduction(other)),
    };
    let a = ops::mul_scalar::call(&nll, Scalar::Float(1.0 - label_smoothing))?;
    let b = ops::mul_scalar::call(&ret, Scalar::Float(label_smoothing / n_classes as f64))?;
    ops::add::call(&a, &b, Scalar::Int(1))
}

impl CrossEntropyLossCompositeImplicit for Composite {
    fn cross_entropy_loss(
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        ignore_index: i64,
        label_smoothing: f64,
    ) -> Result<Tensor> {
        if self_.sizes() == target.sizes() {
            // Same shapes: class probabilities.
            if !target.dtype().is_floating_point() {
                return Err(Error::runtime(format!(
                    "Expected floating point type for target with class probabilities, got {}",
                    scalar_type_name(target.dtype())
                )));
            }
            if ignore_index >= 0 {
                return Err(Error::runtime("ignore_index is not supported for floating point target"));
            }
            cross_entropy_prob_target(self_, target, weight, reduction, label_smoothing)
        } else if label_smoothing > 0.0 {
            check_label_smoothing(label_smoothing)?;
            cross_entropy_label_smoothing(self_, target, weight, reduction, ignore_index, label_smoothing)
        } else {
            let class_dim = if self_.dim() == 1 { 0 } else { 1 };
            let input = ops::log_softmax::call(self_, class_dim, Some(self_.dtype()))?;
            ops::nll_loss_nd::call(&input, target, weight, reduction, ignore_index)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// mse_loss
// ---------------------------------------------------------------------------------------------

fn check_mse_reduction(reduction: i64) -> Result<()> {
    if !(REDUCTION_NONE..=REDUCTION_SUM).contains(&reduction) {
        return Err(Error::value(format!(
            "mse_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}"
        )));
    }
    Ok(())
}

/// `mse_loss`'s meta function. PyTorch's is a binary TensorIterator over the input and the
/// target (broadcasting, promotion, the `out=` cast check); a reduced loss is a 0-dim tensor of
/// that dtype (or of the `out=` tensor's dtype, which the result is cast to).
impl MseLossOutMetaFn for Meta {
    fn mse_loss_out(outs: &mut StructuredOutputs, self_: &Tensor, target: &Tensor, reduction: i64) -> Result<()> {
        check_mse_reduction(reduction)?;
        if reduction == REDUCTION_NONE {
            binary_op_config().add_input(self_).add_input(target).build_structured(outs)?;
            return Ok(());
        }
        infer_size(&self_.sizes(), &target.sizes())?;
        let common = result_type(&[Arg::Tensor(self_), Arg::Tensor(target)]);
        let dtype = match outs.maybe_get_output(0) {
            Some(o) if !can_cast(common, o.dtype()) => {
                return Err(Error::dtype(format!(
                    "result type {} can't be cast to the desired output type {}",
                    scalar_type_name(common),
                    scalar_type_name(o.dtype())
                )));
            }
            Some(o) => o.dtype(),
            None => common,
        };
        outs.set_output(0, &[], None, dtype, self_.device())
    }
}

/// `(a - b)²`.
#[inline(never)]
fn mse_loop<S: OpMath<Math = M>, M: Float>(iter: &TensorIterator) {
    cpu_kernel_binary_math::<S>(iter, |a, b| {
        let d = a - b;
        d * d
    });
}

/// The element losses of `mse_loss` into `iter`'s output.
fn mse_elementwise(iter: &TensorIterator) -> Result<()> {
    float_dispatch!("mse_cpu", iter.common_dtype(), mse_loop(iter));
    iter.cast_outputs()
}

impl MseLossOutCpu for Cpu {
    fn mse_loss_out(self_: &Tensor, target: &Tensor, reduction: i64, out: &Tensor) -> Result<()> {
        if reduction == REDUCTION_NONE {
            let iter = binary_op_config().add_output(out).add_input(self_).add_input(target).build()?;
            return mse_elementwise(&iter);
        }
        let mut louts = StructuredOutputs::functional(1);
        let iter = binary_op_config().add_input(self_).add_input(target).build_structured(&mut louts)?;
        mse_elementwise(&iter)?;
        let loss = louts.into_outputs().remove(0);
        if reduction == REDUCTION_MEAN {
            ops::mean_out::call(&loss, None, false, None, out)?;
        } else {
            ops::sum_intlist_out::call(&loss, None, false, None, out)?;
        }
        Ok(())
    }
}

/// `norm * (x - t) * g`, in the math type for floats.
#[inline(never)]
fn mse_backward_float<S: OpMath<Math = M>, M: Float>(iter: &TensorIterator, norm: f64) {
    let norm = M::from_f64(norm);
    cpu_kernel_ternary::<S, S, S, S>(iter, move |x, t, g| {
        S::from_math(norm * (x.to_math() - t.to_math()) * g.to_math())
    });
}

/// Integer inputs, as PyTorch: the norm is truncated to the integer type (so a mean gives 0
/// unless there is one element), arithmetic wraps.
#[inline(never)]
fn mse_backward_int<T: m::Element + oxten_runtime::Element>(iter: &TensorIterator, norm: f64) {
    let norm = <T as m::Element>::from_f64(norm);
    cpu_kernel_ternary::<T, T, T, T>(iter, move |x, t, g| m::mul(m::mul(norm, m::sub(x, t)), g));
}

/// `mse_loss_backward`'s result and iterator: `grad_input`, or a new contiguous tensor shaped
/// and typed like the input (as PyTorch's `zeros_like(input)`), with the three operands
/// broadcast and promoted (all the Meta kernels do).
fn mse_backward_iter(
    grad_output: &Tensor,
    self_: &Tensor,
    target: &Tensor,
    grad_input: Option<&Tensor>,
) -> Result<(Tensor, TensorIterator)> {
    let out = match grad_input {
        Some(g) => g.clone(),
        None => Tensor::empty(&self_.sizes(), self_.dtype(), self_.device(), MemoryFormat::Contiguous)?,
    };
    let iter =
        ternary_op_config().add_output(&out).add_input(self_).add_input(target).add_input(grad_output).build()?;
    Ok((out, iter))
}

/// `mse_loss_backward` on the CPU: `norm * (self - target) * grad_output` with `norm = 2 /
/// numel` for a mean and 2 otherwise.
fn mse_backward_impl(
    grad_output: &Tensor,
    self_: &Tensor,
    target: &Tensor,
    reduction: i64,
    grad_input: Option<&Tensor>,
) -> Result<Tensor> {
    let norm = if reduction == REDUCTION_MEAN { 2.0 / self_.numel() as f64 } else { 2.0 };
    let (out, iter) = mse_backward_iter(grad_output, self_, target, grad_input)?;
    let dtype = iter.common_dtype();
    match dtype {
        DType::F32 => mse_backward_float::<f32, f32>(&iter, norm),
        DType::F64 => mse_backward_float::<f64, f64>(&iter, norm),
        DType::F16 => mse_backward_float::<oxten_runtime::dtype::f16, f32>(&iter, norm),
        DType::BF16 => mse_backward_float::<oxten_runtime::dtype::bf16, f32>(&iter, norm),
        DType::U8 => mse_backward_int::<u8>(&iter, norm),
        DType::I8 => mse_backward_int::<i8>(&iter, norm),
        DType::I16 => mse_backward_int::<i16>(&iter, norm),
        DType::I32 => mse_backward_int::<i32>(&iter, norm),
        DType::I64 => mse_backward_int::<i64>(&iter, norm),
        DType::Bool => return Err(not_implemented("mse_backward_cpu", dtype)),
    }
    iter.cast_outputs()?;
    Ok(out)
}

impl MseLossBackwardCpu for Cpu {
    fn mse_loss_backward(grad_output: &Tensor, self_: &Tensor, target: &Tensor, reduction: i64) -> Result<Tensor> {
        mse_backward_impl(grad_output, self_, target, reduction, None)
    }
}

impl MseLossBackwardMeta for Meta {
    fn mse_loss_backward(grad_output: &Tensor, self_: &Tensor, target: &Tensor, _reduction: i64) -> Result<Tensor> {
        Ok(mse_backward_iter(grad_output, self_, target, None)?.0)
    }
}

impl MseLossBackwardOutCpu for Cpu {
    fn mse_loss_backward_out(
        grad_output: &Tensor,
        self_: &Tensor,
        target: &Tensor,
        reduction: i64,
        grad_input: &Tensor,
    ) -> Result<Tensor> {
        mse_backward_impl(grad_output, self_, target, reduction, Some(grad_input))
    }
}

impl MseLossBackwardOutMeta for Meta {
    fn mse_loss_backward_out(
        grad_output: &Tensor,
        self_: &Tensor,
        target: &Tensor,
        _reduction: i64,
        grad_input: &Tensor,
    ) -> Result<Tensor> {
        Ok(mse_backward_iter(grad_output, self_, target, Some(grad_input))?.0)
    }
}

// ---------------------------------------------------------------------------------------------
// binary_cross_entropy_with_logits
// ---------------------------------------------------------------------------------------------

/// PyTorch's composite, step for step (and so with its broadcasting rules: the target and the
/// weights may broadcast up to the input's shape, the input up to the target's):
///
/// `loss = (1 - target) * input - log_weight * log_sigmoid(input)` with `log_weight = 1 +
/// (pos_weight - 1) * target`, times `weight`, then reduced. `log_sigmoid(x) = min(x, 0) -
/// log1p(exp(-|x|))` is evaluated without overflow for any `x`.
impl BinaryCrossEntropyWithLogitsCompositeExplicit for Composite {
    fn binary_cross_entropy_with_logits(
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        pos_weight: Option<&Tensor>,
        reduction: i64,
    ) -> Result<Tensor> {
        if !self_.dtype().is_floating_point() {
            return Err(not_implemented("log_sigmoid_cpu", self_.dtype()));
        }
        let one = Scalar::Int(1);
        // log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), PyTorch's formula (exact in f64 too).
        let log1p_exp = ops::softplus::call(&ops::neg::call(&ops::abs::call(self_)?)?, one, Scalar::Int(20))?;
        let log_sigmoid = ops::sub::call(&ops::clamp::call(self_, None, Some(Scalar::Int(0)))?, &log1p_exp, one)?;
        if let Some(pw) = pos_weight {
            let log_weight = ops::mul::call(&ops::sub_scalar::call(pw, one, one)?, target)?;
            ops::add_scalar_::call(&log_weight, one, one)?;
            ops::mul_::call(&log_sigmoid, &log_weight)?;
        }
        // `1 - target`, computed as `-(target - 1)` (the same value).
        let loss = ops::neg::call(&ops::sub_scalar::call(target, one, one)?)?;
        ops::mul_::call(&loss, self_)?;
        ops::sub_::call(&loss, &log_sigmoid, one)?;
        if let Some(w) = weight {
            ops::mul_::call(&loss, w)?;
        }
        match reduction {
            REDUCTION_MEAN => ops::mean_dim::call(&loss, None, false, None),
            REDUCTION_SUM => ops::sum::call(&loss, None),
            _ => Ok(loss),
        }
    }
}
