//! `_foreach_*` operators and the fused Adam/AdamW steps: one call for a list of tensors (an
//! optimizer's parameters and state).
//!
//! When every tensor involved is a contiguous CPU tensor of one floating dtype (f32 or f64) the
//! whole list runs as one parallel loop over `(tensor, chunk)` work items, each element read and
//! written once: for `_fused_adam(w)_` that is one pass over parameter, gradient and moments
//! instead of the single-tensor path's eight. Otherwise each index falls back to the
//! single-tensor operator, so every dtype and layout still works.
//!
//! The fused loops read and write through raw pointers: the output list may alias an input
//! (`_foreach_mul_(xs, xs)`), which rules out slices, and chunks of one tensor never overlap.

#[cfg(feature = "cuda")]
mod cuda;

use crate::generated::decls::{
    ForeachAddListInplaceCpu, ForeachAddScalarInplaceCpu, ForeachAddScalarlistInplaceCpu,
    ForeachAddcdivScalarInplaceCpu, ForeachAddcdivScalarlistInplaceCpu, ForeachAddcdivTensorInplaceCompositeImplicit,
    ForeachAddcmulScalarInplaceCpu, ForeachAddcmulScalarlistInplaceCpu, ForeachAddcmulTensorInplaceCompositeImplicit,
    ForeachDivListInplaceCpu, ForeachDivScalarInplaceCpu, ForeachDivScalarlistInplaceCpu, ForeachLerpScalarInplaceCpu,
    ForeachMulListInplaceCpu, ForeachMulScalarInplaceCpu, ForeachMulScalarlistInplaceCpu, ForeachMulTensorInplaceCpu,
    ForeachNormCpu, ForeachSqrtCpu, ForeachZeroInplaceCpu, FusedAdamInplaceCpu, FusedAdamwInplaceCpu,
};
use crate::math::Float;
use crate::{Composite, Cpu};
use oxten_runtime::options::{AddInplaceOpts, AddcdivInplaceOpts, AddcmulInplaceOpts};
use oxten_runtime::{ops, DType, Device, Error, Result, Scalar, Tensor};
use rayon::prelude::*;

/// Elements per work item of the fused loops.
const CHUNK: usize = 1 << 14;

/// The lists line up: the same length, and the same number of elements at each index.
fn check_lists(op: &str, lists: &[&[Tensor]]) -> Result<()> {
    let n = lists[0].len();
    if n == 0 {
        return Err(Error::value(format!("{op}: Tensor list must have at least one tensor.")));
    }
    for l in &lists[1..] {
        if l.len() != n {
            return Err(Error::value(format!(
                "{op}: Tensor lists must have the same number of tensors, got {n} and {}",
                l.len()
            )));
        }
    }
    for i in 0..n {
        for l in &lists[1..] {
            if l[i].sizes() != lists[0][i].sizes() {
                return Err(Error::value(format!(
                    "{op}: Tensors at index {i} must have the same shape, got {:?} and {:?}",
                    &lists[0][i].sizes()[..],
                    &l[i].sizes()[..]
                )));
            }
        }
    }
    Ok(())
}

/// The dtype of the fused loop, when every tensor qualifies for it.
fn fused_dtype(lists: &[&[Tensor]]) -> Option<DType> {
    let dtype = lists[0][0].dtype();
    let ok = matches!(dtype, DType::F32 | DType::F64)
        && lists.iter().all(|l| {
            l.iter().all(|t| {
                t.device() == Device::Cpu && t.dtype() == dtype && t.is_contiguous() && !t.data_ptr().is_null()
            })
        });
    ok.then_some(dtype)
}

/// A raw element pointer that may cross threads.
#[derive(Clone, Copy)]
struct Ptr<T>(*mut T);
// SAFETY: the pointers address tensor storage that outlives the parallel loop; each work item
// touches a disjoint range of every output tensor.
unsafe impl<T> Send for Ptr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Ptr<T> {}

/// Runs `f(i, outs, ins, start, len)` over every `(tensor i, chunk)` of the lists in parallel:
/// `outs` and `ins` are the element pointers of index `i`'s tensors.
fn fused_loop<T: Copy + Send + Sync>(
    outs: &[&[Tensor]],
    ins: &[&[Tensor]],
    f: impl Fn(usize, &[Ptr<T>], &[Ptr<T>], usize, usize) + Sync,
) {
    let n = outs[0].len();
    let ptrs = |lists: &[&[Tensor]], i: usize| -> Vec<Ptr<T>> {
        lists.iter().map(|l| Ptr(l[i].data_ptr() as *mut T)).collect()
    };
    let items: Vec<(usize, usize, usize)> = (0..n)
        .flat_map(|i| {
            let numel = outs[0][i].numel() as usize;
            (0..numel).step_by(CHUNK).map(move |s| (i, s, CHUNK.min(numel - s)))
        })
        .collect();
    // Per index: the output pointers and the input pointers.
    type Pointers<T> = (Vec<Ptr<T>>, Vec<Ptr<T>>);
    let table: Vec<Pointers<T>> = (0..n).map(|i| (ptrs(outs, i), ptrs(ins, i))).collect();
    items.par_iter().for_each(|&(i, start, len)| f(i, &table[i].0, &table[i].1, start, len));
}

/// An elementwise in-place update `self[i] = f(i, self[i], ins[i]...)` over the lists, fused
/// when possible, else `fallback(i)` per index.
fn elementwise(
    op: &str,
    self_: &[Tensor],
    ins: &[&[Tensor]],
    f32_op: impl Fn(usize, f32, &[f32]) -> f32 + Sync,
    f64_op: impl Fn(usize, f64, &[f64]) -> f64 + Sync,
    fallback: impl Fn(usize) -> Result<()>,
) -> Result<()> {
    let mut all: Vec<&[Tensor]> = vec![self_];
    all.extend_from_slice(ins);
    check_lists(op, &all)?;
    match fused_dtype(&all) {
        Some(DType::F32) => run::<f32>(self_, ins, &f32_op),
        Some(_) => run::<f64>(self_, ins, &f64_op),
        None => (0..self_.len()).try_for_each(fallback)?,
    }
    Ok(())
}

fn run<T: Copy + Send + Sync>(self_: &[Tensor], ins: &[&[Tensor]], f: &(impl Fn(usize, T, &[T]) -> T + Sync)) {
    // One loop per arity, so that `f` inlines with a fixed-size argument array and the loop
    // vectorizes (a loop over a runtime-length slice of arguments does not).
    fused_loop::<T>(&[self_], ins, |i, outs, inp, start, len| {
        let o = outs[0].0;
        match *inp {
            [] => {
                for k in start..start + len {
                    // SAFETY: `k` < numel of the contiguous output; no other work item writes `k`.
                    unsafe { *o.add(k) = f(i, *o.add(k), &[]) }
                }
            }
            [a] => {
                for k in start..start + len {
                    // SAFETY: as above, and `k` < numel of the input, which has the output's shape
                    // (it may be the output itself: each element is read before it is written).
                    unsafe { *o.add(k) = f(i, *o.add(k), &[*a.0.add(k)]) }
                }
            }
            [a, b] => {
                for k in start..start + len {
                    // SAFETY: as above, for both inputs.
                    unsafe { *o.add(k) = f(i, *o.add(k), &[*a.0.add(k), *b.0.add(k)]) }
                }
            }
            _ => unreachable!("elementwise foreach ops take at most two list inputs"),
        }
    });
}

fn s32(s: Scalar) -> f32 {
    s.to_f64() as f32
}

impl ForeachAddScalarInplaceCpu for Cpu {
    fn foreach_add_scalar_(self_: &[Tensor], scalar: Scalar) -> Result<()> {
        let (a, b) = (s32(scalar), scalar.to_f64());
        elementwise(
            "_foreach_add_",
            self_,
            &[],
            |_, x, _| x + a,
            |_, x, _| x + b,
            |i| self_[i].try_add_scalar_(scalar).map(drop),
        )
    }
}

impl ForeachAddListInplaceCpu for Cpu {
    fn foreach_add_list_(self_: &[Tensor], other: &[Tensor], alpha: Scalar) -> Result<()> {
        let (a, b) = (s32(alpha), alpha.to_f64());
        elementwise(
            "_foreach_add_",
            self_,
            &[other],
            |_, x, o| x + a * o[0],
            |_, x, o| x + b * o[0],
            |i| self_[i].try_add_with_(&other[i], AddInplaceOpts { alpha }).map(drop),
        )
    }
}

impl ForeachMulScalarInplaceCpu for Cpu {
    fn foreach_mul_scalar_(self_: &[Tensor], scalar: Scalar) -> Result<()> {
        let (a, b) = (s32(scalar), scalar.to_f64());
        elementwise(
            "_foreach_mul_",
            self_,
            &[],
            |_, x, _| x * a,
            |_, x, _| x * b,
            |i| self_[i].try_mul_scalar_(scalar).map(drop),
        )
    }
}

impl ForeachMulListInplaceCpu for Cpu {
    fn foreach_mul_list_(self_: &[Tensor], other: &[Tensor]) -> Result<()> {
        elementwise(
            "_foreach_mul_",
            self_,
            &[other],
            |_, x, o| x * o[0],
            |_, x, o| x * o[0],
            |i| self_[i].try_mul_(&other[i]).map(drop),
        )
    }
}

impl ForeachDivScalarInplaceCpu for Cpu {
    fn foreach_div_scalar_(self_: &[Tensor], scalar: Scalar) -> Result<()> {
        let (a, b) = (s32(scalar), scalar.to_f64());
        elementwise(
            "_foreach_div_",
            self_,
            &[],
            |_, x, _| x / a,
            |_, x, _| x / b,
            |i| self_[i].try_div_scalar_(scalar).map(drop),
        )
    }
}

/// The per-index scalars as f32 and f64, after checking there is one per tensor.
fn scalar_lists(op: &str, self_: &[Tensor], scalars: &[Scalar]) -> Result<(Vec<f32>, Vec<f64>)> {
    if scalars.len() != self_.len() {
        return Err(Error::value(format!("{op}: Tensor list must have same number of elements as scalar list.")));
    }
    Ok((scalars.iter().map(|&s| s32(s)).collect(), scalars.iter().map(|s| s.to_f64()).collect()))
}

impl ForeachAddScalarlistInplaceCpu for Cpu {
    fn foreach_add_scalarlist_(self_: &[Tensor], scalars: &[Scalar]) -> Result<()> {
        let (a, b) = scalar_lists("_foreach_add_", self_, scalars)?;
        elementwise(
            "_foreach_add_",
            self_,
            &[],
            |i, x, _| x + a[i],
            |i, x, _| x + b[i],
            |i| self_[i].try_add_scalar_(scalars[i]).map(drop),
        )
    }
}

impl ForeachMulScalarlistInplaceCpu for Cpu {
    fn foreach_mul_scalarlist_(self_: &[Tensor], scalars: &[Scalar]) -> Result<()> {
        let (a, b) = scalar_lists("_foreach_mul_", self_, scalars)?;
        elementwise(
            "_foreach_mul_",
            self_,
            &[],
            |i, x, _| x * a[i],
            |i, x, _| x * b[i],
            |i| self_[i].try_mul_scalar_(scalars[i]).map(drop),
        )
    }
}

/// `other` must be 0-dim, as PyTorch requires of this overload.
fn check_scalar_tensor(op: &str, other: &Tensor) -> Result<()> {
    if other.dim() != 0 {
        return Err(Error::value(format!(
            "{op}: scalar tensor expected to be 0 dim but it has {} dimensions and {} elements.",
            other.dim(),
            other.numel()
        )));
    }
    Ok(())
}

impl ForeachMulTensorInplaceCpu for Cpu {
    /// A CPU `other` is read once and the list takes the fused scalar path; elsewhere each
    /// tensor is multiplied by it where it lives.
    fn foreach_mul_tensor_(self_: &[Tensor], other: &Tensor) -> Result<()> {
        check_scalar_tensor("_foreach_mul_", other)?;
        check_lists("_foreach_mul_", &[self_])?;
        if other.device() == Device::Cpu && self_.iter().all(|t| t.device() == Device::Cpu) {
            return Self::foreach_mul_scalar_(self_, crate::support::item_scalar(other)?);
        }
        self_.iter().try_for_each(|t| t.try_mul_(other).map(drop))
    }
}

impl ForeachDivListInplaceCpu for Cpu {
    fn foreach_div_list_(self_: &[Tensor], other: &[Tensor]) -> Result<()> {
        elementwise(
            "_foreach_div_",
            self_,
            &[other],
            |_, x, o| x / o[0],
            |_, x, o| x / o[0],
            |i| self_[i].try_div_(&other[i]).map(drop),
        )
    }
}

impl ForeachDivScalarlistInplaceCpu for Cpu {
    fn foreach_div_scalarlist_(self_: &[Tensor], scalars: &[Scalar]) -> Result<()> {
        let (a, b) = scalar_lists("_foreach_div_", self_, scalars)?;
        elementwise(
            "_foreach_div_",
            self_,
            &[],
            |i, x, _| x / a[i],
            |i, x, _| x / b[i],
            |i| self_[i].try_div_scalar_(scalars[i]).map(drop),
        )
    }
}

impl ForeachAddcmulScalarlistInplaceCpu for Cpu {
    fn foreach_addcmul_scalarlist_(
        self_: &[Tensor],
        tensor1: &[Tensor],
        tensor2: &[Tensor],
        scalars: &[Scalar],
    ) -> Result<()> {
        let (a, b) = scalar_lists("_foreach_addcmul_", self_, scalars)?;
        elementwise(
            "_foreach_addcmul_",
            self_,
            &[tensor1, tensor2],
            |i, x, t| x + a[i] * t[0] * t[1],
            |i, x, t| x + b[i] * t[0] * t[1],
            |i| {
                let value = scalars[i];
                self_[i].try_addcmul_with_(&tensor1[i], &tensor2[i], AddcmulInplaceOpts { value }).map(drop)
            },
        )
    }
}

impl ForeachAddcdivScalarlistInplaceCpu for Cpu {
    fn foreach_addcdiv_scalarlist_(
        self_: &[Tensor],
        tensor1: &[Tensor],
        tensor2: &[Tensor],
        scalars: &[Scalar],
    ) -> Result<()> {
        let (a, b) = scalar_lists("_foreach_addcdiv_", self_, scalars)?;
        elementwise(
            "_foreach_addcdiv_",
            self_,
            &[tensor1, tensor2],
            |i, x, t| x + a[i] * (t[0] / t[1]),
            |i, x, t| x + b[i] * (t[0] / t[1]),
            |i| {
                let value = scalars[i];
                self_[i].try_addcdiv_with_(&tensor1[i], &tensor2[i], AddcdivInplaceOpts { value }).map(drop)
            },
        )
    }
}

/// The scalars packed in a 1-D tensor (one per tensor of `self_`), read on the host.
fn unpack_scalars(self_: &[Tensor], scalars: &Tensor) -> Result<Vec<Scalar>> {
    if scalars.dim() != 1 {
        return Err(Error::value(format!(
            "Expected packed scalar Tensor to be of dimension 1. Got {} instead.",
            scalars.dim()
        )));
    }
    if scalars.numel() as usize != self_.len() {
        return Err(Error::value(format!(
            "Expected length of scalars to match input of length {} but got {} instead.",
            self_.len(),
            scalars.numel()
        )));
    }
    // Scalars of the packed tensor's category, as `Tensor::item` gives them.
    let host = scalars.try_to_device(Device::Cpu)?;
    (0..host.numel()).map(|i| crate::support::item_scalar(&host.try_select(0, i)?)).collect()
}

impl ForeachAddcmulTensorInplaceCompositeImplicit for Composite {
    fn foreach_addcmul_tensor_(
        self_: &[Tensor],
        tensor1: &[Tensor],
        tensor2: &[Tensor],
        scalars: &Tensor,
    ) -> Result<()> {
        ops::_foreach_addcmul_scalarlist_::call(self_, tensor1, tensor2, &unpack_scalars(self_, scalars)?)
    }
}

impl ForeachAddcdivTensorInplaceCompositeImplicit for Composite {
    fn foreach_addcdiv_tensor_(
        self_: &[Tensor],
        tensor1: &[Tensor],
        tensor2: &[Tensor],
        scalars: &Tensor,
    ) -> Result<()> {
        ops::_foreach_addcdiv_scalarlist_::call(self_, tensor1, tensor2, &unpack_scalars(self_, scalars)?)
    }
}

/// `lerp` as the pointwise kernel computes it (two-sided, so weight 1 gives `end` exactly).
fn lerp<T: Float>(x: T, end: T, w: T) -> T {
    if w.to_f64().abs() < 0.5 {
        x + w * (end - x)
    } else {
        end - (end - x) * (T::one() - w)
    }
}

impl ForeachLerpScalarInplaceCpu for Cpu {
    fn foreach_lerp_scalar_(self_: &[Tensor], tensors1: &[Tensor], weight: Scalar) -> Result<()> {
        let (a, b) = (s32(weight), weight.to_f64());
        elementwise(
            "_foreach_lerp_",
            self_,
            &[tensors1],
            |_, x, e| lerp(x, e[0], a),
            |_, x, e| lerp(x, e[0], b),
            |i| self_[i].try_lerp_scalar_(&tensors1[i], weight).map(drop),
        )
    }
}

impl ForeachAddcmulScalarInplaceCpu for Cpu {
    fn foreach_addcmul_scalar_(self_: &[Tensor], tensor1: &[Tensor], tensor2: &[Tensor], value: Scalar) -> Result<()> {
        let (a, b) = (s32(value), value.to_f64());
        elementwise(
            "_foreach_addcmul_",
            self_,
            &[tensor1, tensor2],
            |_, x, t| x + a * t[0] * t[1],
            |_, x, t| x + b * t[0] * t[1],
            |i| self_[i].try_addcmul_with_(&tensor1[i], &tensor2[i], AddcmulInplaceOpts { value }).map(drop),
        )
    }
}

impl ForeachAddcdivScalarInplaceCpu for Cpu {
    fn foreach_addcdiv_scalar_(self_: &[Tensor], tensor1: &[Tensor], tensor2: &[Tensor], value: Scalar) -> Result<()> {
        let (a, b) = (s32(value), value.to_f64());
        elementwise(
            "_foreach_addcdiv_",
            self_,
            &[tensor1, tensor2],
            |_, x, t| x + a * (t[0] / t[1]),
            |_, x, t| x + b * (t[0] / t[1]),
            |i| self_[i].try_addcdiv_with_(&tensor1[i], &tensor2[i], AddcdivInplaceOpts { value }).map(drop),
        )
    }
}

impl ForeachZeroInplaceCpu for Cpu {
    fn foreach_zero_(self_: &[Tensor]) -> Result<()> {
        elementwise("_foreach_zero_", self_, &[], |_, _, _| 0.0, |_, _, _| 0.0, |i| self_[i].try_zero_().map(drop))
    }
}

impl ForeachSqrtCpu for Cpu {
    fn foreach_sqrt(self_: &[Tensor]) -> Result<Vec<Tensor>> {
        check_lists("_foreach_sqrt", &[self_])?;
        self_.iter().map(|t| t.try_sqrt()).collect()
    }
}

impl ForeachNormCpu for Cpu {
    fn foreach_norm(self_: &[Tensor], ord: Scalar, dtype: Option<DType>) -> Result<Vec<Tensor>> {
        check_lists("_foreach_norm", &[self_])?;
        self_.par_iter().map(|t| ops::linalg_vector_norm::call(t, ord, None, false, dtype)).collect()
    }
}

/// The hyperparameters of one fused Adam(W) step.
#[derive(Clone, Copy)]
struct AdamStep {
    lr: f64,
    beta1: f64,
    beta2: f64,
    weight_decay: f64,
    eps: f64,
    amsgrad: bool,
    maximize: bool,
    decoupled: bool,
}

/// One Adam(W) update of elements `start..start + len` of one parameter (`p, g, m, v, vmax`).
///
/// # Safety
/// The pointers address contiguous tensors of at least `start + len` elements; `p`, `m`, `v`
/// and `vmax` are distinct storages no other thread writes in this range.
#[inline(never)]
unsafe fn adam_chunk<T: Float>(ptrs: &[Ptr<T>], start: usize, len: usize, h: &AdamStep, step: f64) {
    let lit = T::from_f64;
    let b2 = lit(h.beta2);
    let (one_b1, one_b2) = (lit(1.0 - h.beta1), lit(1.0 - h.beta2));
    let bc1 = 1.0 - h.beta1.powf(step);
    let bc2_sqrt = lit((1.0 - h.beta2.powf(step)).sqrt());
    let step_size = lit(h.lr / bc1);
    let (wd, decay) = (lit(h.weight_decay), lit(1.0 - h.lr * h.weight_decay));
    let eps = lit(h.eps);
    let [p, g, m, v, vmax] = [ptrs[0].0, ptrs[1].0, ptrs[2].0, ptrs[3].0, ptrs[4].0];
    for k in start..start + len {
        // SAFETY: `k` is in range of every tensor (the caller's contract).
        unsafe {
            let mut param = *p.add(k);
            let mut grad = *g.add(k);
            if h.maximize {
                grad = -grad;
            }
            if h.weight_decay != 0.0 {
                if h.decoupled {
                    param = param * decay;
                } else {
                    grad = grad + wd * param;
                }
            }
            let mk = *m.add(k);
            let mk = mk + one_b1 * (grad - mk);
            let vk = b2 * *v.add(k) + one_b2 * grad * grad;
            *m.add(k) = mk;
            *v.add(k) = vk;
            let second = if h.amsgrad {
                let vm = (*vmax.add(k)).maximum(vk);
                *vmax.add(k) = vm;
                vm
            } else {
                vk
            };
            let denom = second.sqrt() / bc2_sqrt + eps;
            *p.add(k) = param - step_size * mk / denom;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn fused_adam(
    op: &str,
    params: &[Tensor],
    grads: &[Tensor],
    exp_avgs: &[Tensor],
    exp_avg_sqs: &[Tensor],
    max_exp_avg_sqs: &[Tensor],
    state_steps: &[Tensor],
    h: AdamStep,
    grad_scale: Option<&Tensor>,
    found_inf: Option<&Tensor>,
) -> Result<()> {
    if grad_scale.is_some() || found_inf.is_some() {
        return Err(Error::runtime(format!("{op}: grad_scale and found_inf are not supported")));
    }
    check_lists(op, &[params, grads, exp_avgs, exp_avg_sqs])?;
    // Gradients are only read: a strided one (a transposed weight's) is made contiguous.
    let grads: Vec<Tensor> = grads.iter().map(|g| g.try_contiguous()).collect::<Result<_>>()?;
    let grads = &grads[..];
    if h.amsgrad {
        check_lists(op, &[params, max_exp_avg_sqs])?;
    }
    if state_steps.len() != params.len() {
        return Err(Error::value(format!("{op}: one state_step per parameter is needed")));
    }
    let steps: Vec<f64> =
        state_steps.iter().map(|s| s.try_to_dtype(DType::F64)?.item::<f64>()).collect::<Result<_>>()?;
    let lists: Vec<&[Tensor]> = if h.amsgrad {
        vec![params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs]
    } else {
        vec![params, grads, exp_avgs, exp_avg_sqs]
    };
    let Some(dtype) = fused_dtype(&lists) else {
        return Err(Error::dtype(format!(
            "{op}: the fused step needs contiguous float32 or float64 CPU tensors of one dtype"
        )));
    };
    // The moments and the parameter are written; they must not share storage.
    let written: Vec<usize> = lists
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != 1)
        .flat_map(|(_, l)| l.iter().map(|t| t.data_ptr() as usize))
        .collect();
    let mut sorted = written.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::value(format!("{op}: parameters and optimizer state must not share memory")));
    }
    let padded: Vec<&[Tensor]> =
        if h.amsgrad { lists.clone() } else { vec![params, grads, exp_avgs, exp_avg_sqs, exp_avg_sqs] };
    match dtype {
        DType::F32 => fused_loop::<f32>(&padded, &[], |i, ptrs, _, start, len| {
            // SAFETY: the lists were checked: contiguous, same shapes, distinct written storage.
            unsafe { adam_chunk::<f32>(ptrs, start, len, &h, steps[i]) }
        }),
        _ => fused_loop::<f64>(&padded, &[], |i, ptrs, _, start, len| {
            // SAFETY: as above.
            unsafe { adam_chunk::<f64>(ptrs, start, len, &h, steps[i]) }
        }),
    }
    Ok(())
}

impl FusedAdamwInplaceCpu for Cpu {
    #[allow(clippy::too_many_arguments)]
    fn fused_adamw_(
        self_: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_avg_sqs: &[Tensor],
        max_exp_avg_sqs: &[Tensor],
        state_steps: &[Tensor],
        lr: f64,
        beta1: f64,
        beta2: f64,
        weight_decay: f64,
        eps: f64,
        amsgrad: bool,
        maximize: bool,
        grad_scale: Option<&Tensor>,
        found_inf: Option<&Tensor>,
    ) -> Result<()> {
        let h = AdamStep { lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled: true };
        fused_adam(
            "_fused_adamw_",
            self_,
            grads,
            exp_avgs,
            exp_avg_sqs,
            max_exp_avg_sqs,
            state_steps,
            h,
            grad_scale,
            found_inf,
        )
    }
}

impl FusedAdamInplaceCpu for Cpu {
    #[allow(clippy::too_many_arguments)]
    fn fused_adam_(
        self_: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_avg_sqs: &[Tensor],
        max_exp_avg_sqs: &[Tensor],
        state_steps: &[Tensor],
        lr: f64,
        beta1: f64,
        beta2: f64,
        weight_decay: f64,
        eps: f64,
        amsgrad: bool,
        maximize: bool,
        grad_scale: Option<&Tensor>,
        found_inf: Option<&Tensor>,
    ) -> Result<()> {
        let h = AdamStep { lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled: false };
        fused_adam(
            "_fused_adam_",
            self_,
            grads,
            exp_avgs,
            exp_avg_sqs,
            max_exp_avg_sqs,
            state_steps,
            h,
            grad_scale,
            found_inf,
        )
    }
}
