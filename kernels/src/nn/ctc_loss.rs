//! The connectionist temporal classification loss (Graves et al., 2006): `_ctc_loss` (the
//! negative log-likelihood of each target sequence under per-frame log-probabilities, and the
//! forward variables `log α`), `_ctc_loss_backward` (the backward variables `log β` and the
//! gradient with respect to the log-probabilities, eq. 16 of the paper), and the `ctc_loss`
//! composites that reduce it as PyTorch does (mean: each loss divided by its target length).
//!
//! Everything is in log space with PyTorch's log-sum-exp recurrences over the extended target
//! `l'` (a blank before, between and after the labels), computed in `f64` per sequence and
//! rounded to the input's dtype. Batches are independent; an input of length 0 has likelihood 1
//! for an empty target and 0 otherwise.

use crate::generated::decls::{
    CtcLossBackwardCpu, CtcLossForwardCpu, CtcLossIntlistCompositeImplicit, CtcLossTensorCompositeImplicit,
};
use crate::support::not_implemented;
use crate::{Composite, Cpu};
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

const WHERE: &str = "ctc_loss_allocate_outputs";

/// The validated shape of a CTC call: `[T, N, C]` log-probabilities, where each sequence's
/// labels start in the flattened targets and how far apart they are.
struct Plan {
    frames: usize,
    batch: usize,
    labels: usize,
    blank: usize,
    input_lengths: Vec<usize>,
    target_lengths: Vec<usize>,
    /// Each sequence's labels, read from the targets.
    targets: Vec<Vec<usize>>,
    max_target: usize,
}

fn plan(
    log_probs: &Tensor,
    targets: &Tensor,
    input_lengths: &[i64],
    target_lengths: &[i64],
    blank: i64,
) -> Result<Plan> {
    if !matches!(log_probs.dtype(), DType::F32 | DType::F64) {
        return Err(not_implemented("ctc_loss_cpu", log_probs.dtype()));
    }
    if !matches!(targets.dtype(), DType::I64 | DType::I32) {
        return Err(Error::dtype(format!(
            "Expected tensor for argument #2 'targets' to have one of the following scalar types: Long, Int; but got {} instead (while checking arguments for {WHERE})",
            crate::iter::scalar_type_name(targets.dtype())
        )));
    }
    if log_probs.dim() != 3 {
        return Err(Error::runtime(format!(
            "Expected 3-dimensional tensor, but got {}-dimensional tensor for argument #1 'log_probs' (while checking arguments for {WHERE})",
            log_probs.dim()
        )));
    }
    if !(1..=2).contains(&targets.dim()) {
        return Err(Error::runtime(format!(
            "Expected 1 to 2 dimensions, but got {}-dimensional tensor for argument #2 'targets' (while checking arguments for {WHERE})",
            targets.dim()
        )));
    }
    let [frames, batch, labels] = [0, 1, 2].map(|d| log_probs.sizes()[d] as usize);
    if blank < 0 || blank as usize >= labels {
        return Err(Error::runtime("blank must be in label range"));
    }
    if input_lengths.len() != batch {
        return Err(Error::runtime("input_lengths must be of size batch_size"));
    }
    if target_lengths.len() != batch {
        return Err(Error::runtime("target_lengths must be of size batch_size"));
    }
    for &l in target_lengths {
        if l < 0 {
            return Err(Error::runtime(format!(
                "Expected target_lengths to have value at least 0, but got value {l} (while checking arguments for {WHERE})"
            )));
        }
    }
    for &l in input_lengths {
        if l < 0 || l as usize > frames {
            let (bound, which) = if l < 0 { (0, "least") } else { (frames, "most") };
            return Err(Error::runtime(format!(
                "Expected input_lengths to have value at {which} {bound}, but got value {l} (while checking arguments for {WHERE})"
            )));
        }
    }
    let max_target = target_lengths.iter().copied().max().unwrap_or(0) as usize;
    let flat = ops::to_dtype::call(targets, DType::I64, false, false, None)?.to_vec::<i64>()?;
    let mut sequences = Vec::with_capacity(batch);
    if targets.dim() == 1 {
        // Concatenated targets: they must add up to exactly the targets' length.
        let total = target_lengths.iter().try_fold(0i64, |a, &b| a.checked_add(b));
        if total != Some(targets.sizes()[0]) {
            return Err(Error::runtime(format!(
                "Expected tensor to have size {} at dimension 0, but got size {} for argument #2 'targets' (while checking arguments for {WHERE})",
                total.map_or("beyond i64".to_string(), |t| t.to_string()),
                targets.sizes()[0]
            )));
        }
        let mut at = 0usize;
        for &l in target_lengths {
            sequences.push(&flat[at..at + l as usize]);
            at += l as usize;
        }
    } else {
        if targets.sizes()[0] as usize != batch {
            return Err(Error::runtime(format!(
                "Expected tensor to have size {batch} at dimension 0, but got size {} for argument #2 'targets' (while checking arguments for {WHERE})",
                targets.sizes()[0]
            )));
        }
        let width = targets.sizes()[1] as usize;
        if width < max_target {
            return Err(Error::runtime(format!(
                "Expected tensor to have size at least {max_target} at dimension 1, but got size {width} for argument #2 'targets' (while checking arguments for {WHERE})"
            )));
        }
        for (b, &l) in target_lengths.iter().enumerate() {
            sequences.push(&flat[b * width..b * width + l as usize]);
        }
    }
    let mut targets_of = Vec::with_capacity(batch);
    for seq in sequences {
        if let Some(&bad) = seq.iter().find(|&&c| c < 0 || c as usize >= labels) {
            return Err(Error::index(format!(
                "ctc_loss: target label {bad} is out of the range [0, {labels}) of classes"
            )));
        }
        targets_of.push(seq.iter().map(|&c| c as usize).collect());
    }
    Ok(Plan {
        frames,
        batch,
        labels,
        blank: blank as usize,
        input_lengths: input_lengths.iter().map(|&l| l as usize).collect(),
        target_lengths: target_lengths.iter().map(|&l| l as usize).collect(),
        targets: targets_of,
        max_target,
    })
}

/// `log(e^a + e^b + e^c)` around the largest (0 when all are −∞, so the sum stays −∞).
fn log_sum_exp3(a: f64, b: f64, c: f64) -> f64 {
    let mut m = a.max(b).max(c);
    if m == f64::NEG_INFINITY {
        m = 0.0;
    }
    ((a - m).exp() + (b - m).exp() + (c - m).exp()).ln() + m
}

impl Plan {
    /// The extended target's symbol at `s`: blank at even positions, the labels between.
    fn prime(&self, b: usize, s: usize) -> usize {
        if s.is_multiple_of(2) {
            self.blank
        } else {
            self.targets[b][s / 2]
        }
    }

    /// Extended positions per frame in `log α` / `log β`.
    fn width(&self) -> usize {
        2 * self.max_target + 1
    }
}

impl CtcLossForwardCpu for Cpu {
    fn ctc_loss_forward(
        log_probs: &Tensor,
        targets: &Tensor,
        input_lengths: &[i64],
        target_lengths: &[i64],
        blank: i64,
        _zero_infinity: bool,
    ) -> Result<(Tensor, Tensor)> {
        let p = plan(log_probs, targets, input_lengths, target_lengths, blank)?;
        let lp = log_probs.to_f64_vec()?;
        let at = |t: usize, b: usize, c: usize| lp[(t * p.batch + b) * p.labels + c];
        let w = p.width();
        let len = p.batch * p.frames * w;
        let mut alpha = oxten_runtime::error::try_vec_with_capacity(len)?;
        alpha.resize(len, f64::NEG_INFINITY);
        let mut nll = Vec::with_capacity(p.batch);
        for b in 0..p.batch {
            let (il, tl) = (p.input_lengths[b], p.target_lengths[b]);
            if il == 0 {
                nll.push(if tl == 0 { 0.0 } else { f64::INFINITY });
                continue;
            }
            let la = &mut alpha[b * p.frames * w..(b + 1) * p.frames * w];
            la[0] = at(0, b, p.blank);
            if tl > 0 {
                la[1] = at(0, b, p.prime(b, 1));
            }
            for t in 1..il {
                for s in 0..2 * tl + 1 {
                    let symbol = p.prime(b, s);
                    let prev = &la[(t - 1) * w..t * w];
                    let stay = prev[s];
                    let step = if s > 0 { prev[s - 1] } else { f64::NEG_INFINITY };
                    // Skipping a blank is allowed between different labels only.
                    let skip = if s > 1 && symbol != p.prime(b, s - 2) { prev[s - 2] } else { f64::NEG_INFINITY };
                    la[t * w + s] = log_sum_exp3(stay, step, skip) + at(t, b, symbol);
                }
            }
            let last = &la[(il - 1) * w..il * w];
            let likelihood =
                if tl == 0 { last[0] } else { log_sum_exp3(last[2 * tl], last[2 * tl - 1], f64::NEG_INFINITY) };
            nll.push(-likelihood);
        }
        let dtype = log_probs.dtype();
        let nll = Tensor::from_vec(nll, &[p.batch as i64])?.try_to_dtype(dtype)?;
        let alpha = Tensor::from_vec(alpha, &[p.batch as i64, p.frames as i64, w as i64])?.try_to_dtype(dtype)?;
        Ok((nll, alpha))
    }
}

impl CtcLossBackwardCpu for Cpu {
    #[allow(clippy::too_many_arguments)]
    fn ctc_loss_backward(
        grad: &Tensor,
        log_probs: &Tensor,
        targets: &Tensor,
        input_lengths: &[i64],
        target_lengths: &[i64],
        neg_log_likelihood: &Tensor,
        log_alpha: &Tensor,
        blank: i64,
        zero_infinity: bool,
    ) -> Result<Tensor> {
        let p = plan(log_probs, targets, input_lengths, target_lengths, blank)?;
        let w = p.width();
        if neg_log_likelihood.sizes() != [p.batch as i64]
            || log_alpha.sizes() != [p.batch as i64, p.frames as i64, w as i64]
        {
            return Err(Error::shape(format!(
                "_ctc_loss_backward: expected neg_log_likelihood of shape [{}] and log_alpha of shape [{}, {}, {w}], but got {:?} and {:?}",
                p.batch,
                p.batch,
                p.frames,
                neg_log_likelihood.sizes(),
                log_alpha.sizes()
            )));
        }
        let grad_out = ops::expand::call(grad, &[p.batch as i64], false)?.to_f64_vec()?;
        let lp = log_probs.to_f64_vec()?;
        let alpha = log_alpha.to_f64_vec()?;
        let nll = neg_log_likelihood.to_f64_vec()?;
        let at = |t: usize, b: usize, c: usize| lp[(t * p.batch + b) * p.labels + c];
        let len = p.frames * p.batch * p.labels;
        // Per frame and class, log Σ α β over the extended positions holding that class.
        let mut out = oxten_runtime::error::try_vec_with_capacity(len)?;
        out.resize(len, f64::NEG_INFINITY);
        let mut beta = vec![f64::NEG_INFINITY; p.frames * w];
        for b in 0..p.batch {
            let (il, tl) = (p.input_lengths[b], p.target_lengths[b]);
            let g = |t: usize, c: usize| (t * p.batch + b) * p.labels + c;
            if il == 0 || (zero_infinity && nll[b] == f64::INFINITY) {
                for t in 0..p.frames {
                    out[g(t, 0)..g(t, 0) + p.labels].fill(0.0);
                }
                continue;
            }
            let la = &alpha[b * p.frames * w..(b + 1) * p.frames * w];
            beta.fill(f64::NEG_INFINITY);
            let add = |out: &mut [f64], t: usize, c: usize, v: f64| {
                let cur = &mut out[g(t, c)];
                *cur = if *cur == f64::NEG_INFINITY {
                    v
                } else {
                    let m = cur.max(v);
                    ((*cur - m).exp() + (v - m).exp()).ln() + m
                };
            };
            let end = il - 1;
            beta[end * w + 2 * tl] = at(end, b, p.blank);
            add(&mut out, end, p.blank, la[end * w + 2 * tl] + beta[end * w + 2 * tl]);
            if tl > 0 {
                let symbol = p.prime(b, 2 * tl - 1);
                beta[end * w + 2 * tl - 1] = at(end, b, symbol);
                add(&mut out, end, symbol, la[end * w + 2 * tl - 1] + beta[end * w + 2 * tl - 1]);
            }
            for t in (0..end).rev() {
                for s in (0..2 * tl + 1).rev() {
                    let symbol = p.prime(b, s);
                    let next = &beta[(t + 1) * w..(t + 2) * w];
                    let stay = next[s];
                    let step = if s < 2 * tl { next[s + 1] } else { f64::NEG_INFINITY };
                    let skip =
                        if s + 1 < 2 * tl && p.prime(b, s + 2) != symbol { next[s + 2] } else { f64::NEG_INFINITY };
                    let v = log_sum_exp3(stay, step, skip) + at(t, b, symbol);
                    beta[t * w + s] = v;
                    add(&mut out, t, symbol, la[t * w + s] + v);
                }
            }
            // ∂nll/∂lp = exp(lp) − exp(log Σ αβ + nll − lp) (the inputs being log-softmax outputs).
            for t in 0..il {
                for c in 0..p.labels {
                    let l = at(t, b, c);
                    out[g(t, c)] = ((l).exp() - (out[g(t, c)] + nll[b] - l).exp()) * grad_out[b];
                }
            }
            for t in il..p.frames {
                out[g(t, 0)..g(t, 0) + p.labels].fill(0.0);
            }
        }
        Tensor::from_vec(out, &[p.frames as i64, p.batch as i64, p.labels as i64])?.try_to_dtype(log_probs.dtype())
    }
}

/// PyTorch's `ctc_loss_impl`: a batch of one for 2-D log-probabilities, targets as `Long`,
/// infinite losses zeroed with `zero_infinity`, then the reduction (mean divides each loss by
/// its target length, at least 1, before averaging).
#[allow(clippy::too_many_arguments)]
fn ctc_loss_reduced(
    log_probs: &Tensor,
    targets: &Tensor,
    input_lengths: &[i64],
    target_lengths: &[i64],
    blank: i64,
    reduction: i64,
    zero_infinity: bool,
) -> Result<Tensor> {
    let batched = log_probs.dim() == 3;
    let lp = if batched { log_probs.clone() } else { ops::unsqueeze::call(log_probs, 1)? };
    let tg = if batched { targets.clone() } else { ops::unsqueeze::call(targets, 0)? };
    // PyTorch converts the targets to Long whatever their dtype.
    let tg = ops::to_dtype::call(&tg, DType::I64, false, false, None)?;
    let (mut res, _) = ops::_ctc_loss::call(&lp, &tg, input_lengths, target_lengths, blank, zero_infinity)?;
    if zero_infinity {
        let infinite = ops::eq_scalar::call(&res, Scalar::Float(f64::INFINITY))?;
        res = ops::where_scalarself::call(&infinite, Scalar::Int(0), &res)?;
    }
    if !batched {
        res = ops::squeeze_dim::call(&res, 0)?;
    }
    if reduction == super::REDUCTION_MEAN {
        let lengths: Vec<f64> = target_lengths.iter().map(|&l| l.max(1) as f64).collect();
        let lengths = Tensor::from_vec(lengths, &[target_lengths.len() as i64])?
            .try_to_dtype(res.dtype())?
            .try_to_device(res.device())?;
        res = ops::div::call(&res, &lengths)?;
    }
    super::composite_losses::reduce(res, reduction)
}

/// The lengths a `Tensor` argument lists (integral, moved to the CPU).
fn lengths(what: &str, t: &Tensor) -> Result<Vec<i64>> {
    if !t.dtype().is_integral(false) {
        return Err(Error::runtime(format!("{what} must be integral")));
    }
    ops::to_dtype::call(t, DType::I64, false, false, None)?.to_vec::<i64>()
}

impl CtcLossIntlistCompositeImplicit for Composite {
    fn ctc_loss_intlist(
        log_probs: &Tensor,
        targets: &Tensor,
        input_lengths: &[i64],
        target_lengths: &[i64],
        blank: i64,
        reduction: i64,
        zero_infinity: bool,
    ) -> Result<Tensor> {
        ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    }
}

impl CtcLossTensorCompositeImplicit for Composite {
    fn ctc_loss_tensor(
        log_probs: &Tensor,
        targets: &Tensor,
        input_lengths: &Tensor,
        target_lengths: &Tensor,
        blank: i64,
        reduction: i64,
        zero_infinity: bool,
    ) -> Result<Tensor> {
        let (il, tl) = (lengths("input_lengths", input_lengths)?, lengths("target_lengths", target_lengths)?);
        ctc_loss_reduced(log_probs, targets, &il, &tl, blank, reduction, zero_infinity)
    }
}
