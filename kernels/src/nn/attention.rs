//! Scaled dot-product attention: the `scaled_dot_product_attention` composite, the math
//! decomposition `_scaled_dot_product_attention_math`, and the fused CPU kernels
//! `_scaled_dot_product_flash_attention_for_cpu` (+ backward).
//!
//! The fused forward pass never forms the `L × S` score matrix. Each task takes one block of
//! [`BQ`] query rows of one (batch, head) and walks the keys in blocks of [`BK`]: scores of the
//! block (`Q Kᵀ · scale`, one `gemm` call), the mask, then the online softmax — each row keeps its
//! running maximum `m` and sum `l`, and the partial output is rescaled by `exp(m_old - m_new)`
//! when the maximum grows — and `P V` added to the output (a second `gemm`). The output is
//! divided by `l` at the end, and `logsumexp = m + ln l` is kept for the backward pass, which
//! recomputes each score block from it (`P = exp(S - logsumexp)`) instead of storing `P`:
//! `dV += Pᵀ dO`, `dS = P ∘ (dO Vᵀ - rowsum(dO ∘ O))`, `dQ += dS K · scale`,
//! `dK += dSᵀ Q · scale`, one task per (batch, head). Causal masking skips the blocks above the
//! diagonal in both passes.
//!
//! f32 and f64 compute in their own type; f16 and bf16 are computed in f32 and rounded once.
//! Rows that can attend to nothing (every score masked) give zeros, as PyTorch's kernels do.

use crate::cpu::simd;
use crate::generated::decls::{
    ScaledDotProductAttentionCompositeImplicit, SdpaFlashBackwardCpuCpu, SdpaFlashBackwardMetaMeta, SdpaFlashCpuCpu,
    SdpaFlashMetaMeta, SdpaMathCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::support::type_meta_name;
use crate::{Composite, Cpu, Meta};
use gemm::Parallelism;
use oxten_runtime::{ops, DType, Device, Error, MemoryFormat, Result, Scalar, Tensor};

/// Query rows per block (and per forward task).
const BQ: usize = 64;
/// Key rows per block.
const BK: usize = 128;

/// The element type the kernels compute in (f32, or f64 for f64 inputs).
trait Acc:
    Copy
    + Send
    + Sync
    + 'static
    + PartialOrd
    + std::ops::Mul<Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const NEG_INF: Self;
    const DTYPE: DType;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn of(x: f64) -> Self;
}

macro_rules! acc {
    ($t:ty, $d:expr) => {
        impl Acc for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const NEG_INF: $t = <$t>::NEG_INFINITY;
            const DTYPE: DType = $d;
            // The crate's vectorizable exponential (f32: within 1 ulp; f64: libm's), so that
            // [`exp_shifted`]'s loop vectorizes.
            #[inline(always)]
            fn exp(self) -> $t {
                crate::math::Float::exp(self)
            }
            fn ln(self) -> $t {
                <$t>::ln(self)
            }
            fn of(x: f64) -> $t {
                x as $t
            }
        }
    };
}
acc!(f32, DType::F32);
acc!(f64, DType::F64);

/// `row[i] = exp(row[i] - shift)`; returns the sum of the new values. The softmax numerators of
/// both passes: run through [`simd::run`] so that the exponential vectorizes for the CPU's best
/// instruction set (libm's scalar `expf` was 4% of a GPT step), with the sum in `LANES`
/// independent partial sums.
fn exp_shifted<T: Acc>(row: &mut [T], shift: T) -> T {
    let mut sum = T::ZERO;
    // SAFETY: `simd::run` picks an instruction set this CPU has; `ExpShifted::run` has no
    // preconditions (it only touches `row` and `sum`, which it borrows).
    unsafe { simd::run(ExpShifted { row, shift, sum: &mut sum }) };
    sum
}

struct ExpShifted<'a, T> {
    row: &'a mut [T],
    shift: T,
    sum: &'a mut T,
}

impl<T: Acc> simd::InnerLoop for ExpShifted<'_, T> {
    /// # Safety
    /// None: the loop reads and writes only the borrowed `row` and `sum` (`unsafe` is the
    /// trait's, for the raw-pointer loops).
    #[inline(always)]
    unsafe fn run(self) {
        // Chunks of 64: the exponentials vectorize (and unroll) as a plain map, then the chunk
        // is summed into 16 lanes.
        const CHUNK: usize = 64;
        const LANES: usize = 16;
        let ExpShifted { row, shift, sum } = self;
        let mut lanes = [T::ZERO; LANES];
        let mut chunks = row.chunks_exact_mut(CHUNK);
        for chunk in &mut chunks {
            for x in chunk.iter_mut() {
                *x = (*x - shift).exp();
            }
            for part in chunk.chunks_exact(LANES) {
                for (acc, &x) in lanes.iter_mut().zip(part) {
                    *acc = *acc + x;
                }
            }
        }
        let mut total = lanes.iter().fold(T::ZERO, |a, &b| a + b);
        for x in chunks.into_remainder() {
            *x = (*x - shift).exp();
            total = total + *x;
        }
        *sum = total;
    }
}

/// `dst[m × n] (row stride ldd) = [dst +] s · A[m × k] · B[k × n]`, operands by address and
/// (row, column) strides in elements, on the calling thread.
///
/// # Safety
/// Every element the strides address must be inside its allocation; `dst` must not overlap the
/// operands or be written by another thread meanwhile.
#[allow(clippy::too_many_arguments)]
unsafe fn mm<T: Acc>(
    (m, n, k): (usize, usize, usize),
    dst: *mut T,
    ldd: usize,
    accumulate: bool,
    a: (*const T, isize, isize),
    b: (*const T, isize, isize),
    s: T,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                // SAFETY: row i of dst has n elements (the caller's contract).
                unsafe { std::slice::from_raw_parts_mut(dst.add(i * ldd), n) }.fill(T::ZERO);
            }
        }
        return;
    }
    // SAFETY: the caller's contract; `gemm` reads `a` and `b` and writes `dst` through the given
    // strides only.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            ldd as isize,
            accumulate,
            a.0,
            a.2,
            a.1,
            b.0,
            b.2,
            b.1,
            T::ONE,
            s,
            false,
            false,
            false,
            Parallelism::None,
        )
    }
}

/// A raw address shared by parallel tasks that write disjoint parts of it.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: the tasks of one kernel write pairwise-disjoint elements (their own rows or their own
// (batch, head) slices) and only read the inputs.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}
impl<T> Shared<T> {
    fn get(self) -> *mut T {
        self.0
    }
}

/// The sizes of one attention problem: batch, heads, query rows, key rows, head dims.
#[derive(Clone, Copy, Debug)]
struct Dims {
    b: usize,
    h: usize,
    l: usize,
    s: usize,
    e: usize,
    ev: usize,
}

/// An additive mask seen as `[B, H, L, S]` through (possibly zero) strides.
#[derive(Clone, Copy)]
struct Mask<T> {
    ptr: Shared<T>,
    strides: [isize; 4],
}

impl<T: Acc> Mask<T> {
    /// The mask value for (batch, head) `bh` at row `i`, column `j`.
    #[inline]
    fn at(&self, d: &Dims, bh: usize, i: usize, j: usize) -> T {
        let (b, h) = (bh / d.h, bh % d.h);
        let off = b as isize * self.strides[0]
            + h as isize * self.strides[1]
            + i as isize * self.strides[2]
            + j as isize * self.strides[3];
        // SAFETY: `off` addresses an element of the expanded `[B, H, L, S]` view, inside its storage.
        unsafe { *self.ptr.get().offset(off) }
    }
}

/// Query, key and value share one dtype.
fn check_dtypes(query: &Tensor, key: &Tensor, value: &Tensor) -> Result<()> {
    if query.dtype() != key.dtype() || query.dtype() != value.dtype() {
        return Err(Error::dtype(format!(
            "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
            type_meta_name(query.dtype()),
            type_meta_name(key.dtype()),
            type_meta_name(value.dtype())
        )));
    }
    Ok(())
}

/// The checks of the fused kernels (PyTorch's `sdp_utils` messages where it has them) and the
/// problem's sizes.
fn check(query: &Tensor, key: &Tensor, value: &Tensor, attn_mask: Option<&Tensor>, is_causal: bool) -> Result<Dims> {
    for (name, t) in [("query", query), ("key", key), ("value", value)] {
        if t.dim() != 4 {
            return Err(Error::runtime(format!(
                "scaled_dot_product_attention: expected {name} to be 4-dimensional [batch, heads, seq, dim], got {}-dimensional",
                t.dim()
            )));
        }
    }
    check_dtypes(query, key, value)?;
    if !query.dtype().is_floating_point() {
        return Err(Error::dtype(format!(
            "scaled_dot_product_attention: expected a floating dtype, got {}",
            scalar_type_name(query.dtype())
        )));
    }
    check_causal_mask(attn_mask, is_causal)?;
    let (q, k, v) = (query.sizes(), key.sizes(), value.sizes());
    if k[0] != q[0] || v[0] != q[0] || k[1] != q[1] || v[1] != q[1] || v[2] != k[2] || k[3] != q[3] {
        return Err(Error::shape(format!(
            "scaled_dot_product_attention: query {:?}, key {:?} and value {:?} do not fit [B, H, L, E], [B, H, S, E], [B, H, S, Ev]",
            &q[..],
            &k[..],
            &v[..]
        )));
    }
    let u = |x: i64| x as usize;
    Ok(Dims { b: u(q[0]), h: u(q[1]), l: u(q[2]), s: u(k[2]), e: u(q[3]), ev: u(v[3]) })
}

/// The compute dtype of a floating input dtype.
fn acc_dtype(d: DType) -> DType {
    if d == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// `t` in `dtype`, contiguous.
fn dense(t: &Tensor, dtype: DType) -> Result<Tensor> {
    t.try_to_dtype(dtype)?.try_contiguous()
}

/// The additive mask in `dtype` (a bool mask becomes 0 / -inf), expanded to `[B, H, L, S]`.
fn additive_mask(mask: &Tensor, d: &Dims, dtype: DType) -> Result<Tensor> {
    let m = if mask.dtype() == DType::Bool {
        // `Tensor::empty` reads as zeros.
        let z = Tensor::empty(&mask.sizes(), dtype, Device::Cpu, MemoryFormat::Contiguous)?;
        z.try_masked_fill_scalar(&mask.try_logical_not()?, Scalar::Float(f64::NEG_INFINITY))?
    } else {
        mask.try_to_dtype(dtype)?
    };
    let i = |x: usize| x as i64;
    m.try_expand(&[i(d.b), i(d.h), i(d.l), i(d.s)]).map_err(|e| {
        Error::shape(format!(
            "scaled_dot_product_attention: attn_mask does not broadcast to [B, H, L, S]: {}",
            e.message
        ))
    })
}

/// The score scale.
fn scale_of(scale: Option<f64>, e: usize) -> f64 {
    scale.unwrap_or_else(|| 1.0 / (e as f64).sqrt())
}

/// The mask of a score block: `-inf` above the causal diagonal, plus the additive mask.
#[inline]
#[allow(clippy::too_many_arguments)]
fn mask_block<T: Acc>(
    sc: &mut [T],
    d: &Dims,
    bh: usize,
    (q0, bq): (usize, usize),
    (k0, bk): (usize, usize),
    causal: bool,
    mask: Option<&Mask<T>>,
) {
    if !causal && mask.is_none() {
        return;
    }
    for i in 0..bq {
        let row = &mut sc[i * BK..i * BK + bk];
        if let Some(m) = mask {
            for (j, s) in row.iter_mut().enumerate() {
                *s = *s + m.at(d, bh, q0 + i, k0 + j);
            }
        }
        if causal {
            let first_masked = (q0 + i + 1).saturating_sub(k0).min(bk);
            row[first_masked..].fill(T::NEG_INF);
        }
    }
}

/// The fused forward pass over dense `q`, `k`, `v` of type `T`: the output (`[B, H, L, Ev]`) and
/// the logsumexp of each row (`[B, H, L]`).
fn forward<T: Acc>(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    d: Dims,
    causal: bool,
    mask: Option<&Tensor>,
    scale: f64,
) -> Result<(Tensor, Tensor)> {
    let i = |x: usize| x as i64;
    let out = Tensor::empty(&[i(d.b), i(d.h), i(d.l), i(d.ev)], T::DTYPE, Device::Cpu, MemoryFormat::Contiguous)?;
    let lse = Tensor::empty(&[i(d.b), i(d.h), i(d.l)], T::DTYPE, Device::Cpu, MemoryFormat::Contiguous)?;
    let (qp, kp, vp) = (Shared(q.data_ptr() as *mut T), Shared(k.data_ptr() as *mut T), Shared(v.data_ptr() as *mut T));
    let (op, lp) = (Shared(out.data_ptr() as *mut T), Shared(lse.data_ptr() as *mut T));
    let mask = mask.map(|m| Mask::<T> {
        ptr: Shared(m.data_ptr() as *mut T),
        strides: [m.strides()[0] as isize, m.strides()[1] as isize, m.strides()[2] as isize, m.strides()[3] as isize],
    });
    let s = T::of(scale);
    let qblocks = d.l.div_ceil(BQ);
    oxten_runtime::parallel::for_each(d.b * d.h * qblocks, |task| {
        let (bh, qb) = (task / qblocks, task % qblocks);
        let (q0, bq) = (qb * BQ, BQ.min(d.l - qb * BQ));
        let mut sc = vec![T::ZERO; BQ * BK];
        let mut acc = vec![T::ZERO; BQ * d.ev];
        let mut m = [T::NEG_INF; BQ];
        let mut l = [T::ZERO; BQ];
        // The (batch, head) slices and this block's query rows.
        let qrow = qp.get().wrapping_add((bh * d.l + q0) * d.e);
        let kbh = kp.get().wrapping_add(bh * d.s * d.e);
        let vbh = vp.get().wrapping_add(bh * d.s * d.ev);
        let kend = if causal { d.s.min(q0 + bq) } else { d.s };
        for k0 in (0..kend).step_by(BK) {
            let bk = BK.min(kend - k0);
            // SAFETY: rows q0..q0+bq of Q and k0..k0+bk of K lie in this (batch, head)'s slice
            // of the dense inputs; `sc` holds BQ rows of BK.
            unsafe {
                mm(
                    (bq, bk, d.e),
                    sc.as_mut_ptr(),
                    BK,
                    false,
                    (qrow, d.e as isize, 1),
                    (kbh.wrapping_add(k0 * d.e), 1, d.e as isize),
                    s,
                )
            };
            mask_block(&mut sc, &d, bh, (q0, bq), (k0, bk), causal, mask.as_ref());
            for r in 0..bq {
                let row = &mut sc[r * BK..r * BK + bk];
                let mx = row.iter().fold(m[r], |a, &x| if x > a { x } else { a });
                if mx == T::NEG_INF {
                    row.fill(T::ZERO);
                    continue;
                }
                let corr = if m[r] == T::NEG_INF { T::ZERO } else { (m[r] - mx).exp() };
                let sum = exp_shifted(row, mx);
                l[r] = l[r] * corr + sum;
                m[r] = mx;
                if corr != T::ONE {
                    acc[r * d.ev..(r + 1) * d.ev].iter_mut().for_each(|a| *a = *a * corr);
                }
            }
            // SAFETY: `sc` holds bq rows of bk probabilities (row stride BK), V's rows k0..k0+bk
            // lie in this slice, `acc` holds bq rows of Ev.
            unsafe {
                mm(
                    (bq, d.ev, bk),
                    acc.as_mut_ptr(),
                    d.ev,
                    true,
                    (sc.as_ptr(), BK as isize, 1),
                    (vbh.wrapping_add(k0 * d.ev), d.ev as isize, 1),
                    T::ONE,
                )
            };
        }
        for r in 0..bq {
            let row = (bh * d.l + q0 + r) * d.ev;
            let inv = if l[r] == T::ZERO { T::ZERO } else { T::ONE / l[r] };
            for c in 0..d.ev {
                // SAFETY: row q0 + r of this (batch, head)'s output; tasks write disjoint rows.
                unsafe { *op.get().add(row + c) = acc[r * d.ev + c] * inv };
            }
            let v = if l[r] == T::ZERO { T::NEG_INF } else { m[r] + l[r].ln() };
            // SAFETY: as above, for the row's logsumexp.
            unsafe { *lp.get().add(bh * d.l + q0 + r) = v };
        }
    });
    Ok((out, lse))
}

/// The fused backward pass: the gradients of `q`, `k` and `v` (dense, type `T`).
#[allow(clippy::too_many_arguments)]
fn backward<T: Acc>(
    go: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    o: &Tensor,
    lse: &Tensor,
    d: Dims,
    causal: bool,
    mask: Option<&Tensor>,
    scale: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let i = |x: usize| x as i64;
    let new = |sizes: &[i64]| Tensor::empty(sizes, T::DTYPE, Device::Cpu, MemoryFormat::Contiguous);
    let (dq, dk, dv) = (
        new(&[i(d.b), i(d.h), i(d.l), i(d.e)])?,
        new(&[i(d.b), i(d.h), i(d.s), i(d.e)])?,
        new(&[i(d.b), i(d.h), i(d.s), i(d.ev)])?,
    );
    let p = |t: &Tensor| Shared(t.data_ptr() as *mut T);
    let (gop, qp, kp, vp, opp, lp) = (p(go), p(q), p(k), p(v), p(o), p(lse));
    let (dqp, dkp, dvp) = (p(&dq), p(&dk), p(&dv));
    let mask = mask.map(|m| Mask::<T> {
        ptr: Shared(m.data_ptr() as *mut T),
        strides: [m.strides()[0] as isize, m.strides()[1] as isize, m.strides()[2] as isize, m.strides()[3] as isize],
    });
    let s = T::of(scale);
    oxten_runtime::parallel::for_each(d.b * d.h, |bh| {
        // This (batch, head)'s slices: rows of E (q, k, dq, dk) or Ev (v, o, do, dv).
        let at = |base: Shared<T>, rows: usize, width: usize| base.get().wrapping_add(bh * rows * width);
        let (qb, kb, vb) = (at(qp, d.l, d.e), at(kp, d.s, d.e), at(vp, d.s, d.ev));
        let (gob, ob, lb) = (at(gop, d.l, d.ev), at(opp, d.l, d.ev), at(lp, d.l, 1));
        let (dqb, dkb, dvb) = (at(dqp, d.l, d.e), at(dkp, d.s, d.e), at(dvp, d.s, d.ev));
        // SAFETY (for every slice below): each task reads and writes only its (batch, head)'s
        // rows of the dense tensors, whose sizes `Dims` describes.
        let row = |ptr: *mut T, r: usize, w: usize| unsafe { std::slice::from_raw_parts_mut(ptr.add(r * w), w) };
        // D_i = rowsum(dO ∘ O), and zeroed gradients (the blocks accumulate into them).
        let dsum: Vec<T> = (0..d.l)
            .map(|r| row(gob, r, d.ev).iter().zip(row(ob, r, d.ev).iter()).fold(T::ZERO, |a, (&x, &y)| a + x * y))
            .collect();
        for r in 0..d.l {
            row(dqb, r, d.e).fill(T::ZERO);
        }
        let mut sc = vec![T::ZERO; BQ * BK];
        let mut dp = vec![T::ZERO; BQ * BK];
        for k0 in (0..d.s).step_by(BK) {
            let bk = BK.min(d.s - k0);
            for r in k0..k0 + bk {
                row(dkb, r, d.e).fill(T::ZERO);
                row(dvb, r, d.ev).fill(T::ZERO);
            }
            // Causal: query rows before k0 attend to none of these keys.
            let qstart = if causal { k0 / BQ * BQ } else { 0 };
            for q0 in (qstart..d.l).step_by(BQ) {
                let bq = BQ.min(d.l - q0);
                // SAFETY: the operands are rows of this (batch, head)'s slices (see above);
                // `sc` and `dp` hold BQ rows of BK.
                unsafe {
                    mm(
                        (bq, bk, d.e),
                        sc.as_mut_ptr(),
                        BK,
                        false,
                        (qb.add(q0 * d.e), d.e as isize, 1),
                        (kb.add(k0 * d.e), 1, d.e as isize),
                        s,
                    )
                };
                mask_block(&mut sc, &d, bh, (q0, bq), (k0, bk), causal, mask.as_ref());
                for r in 0..bq {
                    // SAFETY: the row's logsumexp, inside this slice.
                    let lse_r = unsafe { *lb.add(q0 + r) };
                    let srow = &mut sc[r * BK..r * BK + bk];
                    if lse_r == T::NEG_INF {
                        srow.fill(T::ZERO);
                    } else {
                        exp_shifted(srow, lse_r);
                    }
                }
                // SAFETY: as above. dV_j += Pᵀ dO_i.
                unsafe {
                    mm(
                        (bk, d.ev, bq),
                        dvb.add(k0 * d.ev),
                        d.ev,
                        true,
                        (sc.as_ptr(), 1, BK as isize),
                        (gob.add(q0 * d.ev), d.ev as isize, 1),
                        T::ONE,
                    );
                    // dP = dO_i V_jᵀ.
                    mm(
                        (bq, bk, d.ev),
                        dp.as_mut_ptr(),
                        BK,
                        false,
                        (gob.add(q0 * d.ev), d.ev as isize, 1),
                        (vb.add(k0 * d.ev), 1, d.ev as isize),
                        T::ONE,
                    );
                }
                // dS = P ∘ (dP - D_i), in place of P.
                for r in 0..bq {
                    let di = dsum[q0 + r];
                    for j in 0..bk {
                        let x = r * BK + j;
                        sc[x] = sc[x] * (dp[x] - di);
                    }
                }
                // SAFETY: as above. dQ_i += dS K_j · scale; dK_j += dSᵀ Q_i · scale.
                unsafe {
                    mm(
                        (bq, d.e, bk),
                        dqb.add(q0 * d.e),
                        d.e,
                        true,
                        (sc.as_ptr(), BK as isize, 1),
                        (kb.add(k0 * d.e), d.e as isize, 1),
                        s,
                    );
                    mm(
                        (bk, d.e, bq),
                        dkb.add(k0 * d.e),
                        d.e,
                        true,
                        (sc.as_ptr(), 1, BK as isize),
                        (qb.add(q0 * d.e), d.e as isize, 1),
                        s,
                    );
                }
            }
        }
    });
    Ok((dq, dk, dv))
}

/// The fused kernels take f32 or f64 buffers: `dtype`'s compute dtype, and whether it is f64.
fn is_f64(dtype: DType) -> bool {
    acc_dtype(dtype) == DType::F64
}

impl SdpaFlashCpuCpu for Cpu {
    fn sdpa_flash_cpu(
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        dropout_p: f64,
        is_causal: bool,
        attn_mask: Option<&Tensor>,
        scale: Option<f64>,
    ) -> Result<(Tensor, Tensor)> {
        let d = check(query, key, value, attn_mask, is_causal)?;
        if dropout_p != 0.0 {
            return Err(Error::runtime(
                "_scaled_dot_product_flash_attention_for_cpu: dropout is not supported; use the math path",
            ));
        }
        let dt = query.dtype();
        let acc = acc_dtype(dt);
        let (q, k, v) = (dense(query, acc)?, dense(key, acc)?, dense(value, acc)?);
        let mask = attn_mask.map(|m| additive_mask(m, &d, acc)).transpose()?;
        let scale = scale_of(scale, d.e);
        let (out, lse) = if is_f64(dt) {
            forward::<f64>(&q, &k, &v, d, is_causal, mask.as_ref(), scale)?
        } else {
            forward::<f32>(&q, &k, &v, d, is_causal, mask.as_ref(), scale)?
        };
        Ok((out.try_to_dtype(dt)?, lse))
    }
}

impl SdpaFlashMetaMeta for Meta {
    fn sdpa_flash_meta(
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        _dropout_p: f64,
        is_causal: bool,
        attn_mask: Option<&Tensor>,
        _scale: Option<f64>,
    ) -> Result<(Tensor, Tensor)> {
        let d = check(query, key, value, attn_mask, is_causal)?;
        let i = |x: usize| x as i64;
        let dev = query.device();
        Ok((
            Tensor::empty(&[i(d.b), i(d.h), i(d.l), i(d.ev)], query.dtype(), dev, MemoryFormat::Contiguous)?,
            Tensor::empty(&[i(d.b), i(d.h), i(d.l)], acc_dtype(query.dtype()), dev, MemoryFormat::Contiguous)?,
        ))
    }
}

impl SdpaFlashBackwardCpuCpu for Cpu {
    fn sdpa_flash_backward_cpu(
        grad_out: &Tensor,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        out: &Tensor,
        logsumexp: &Tensor,
        dropout_p: f64,
        is_causal: bool,
        attn_mask: Option<&Tensor>,
        scale: Option<f64>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let d = check(query, key, value, attn_mask, is_causal)?;
        if dropout_p != 0.0 {
            return Err(Error::runtime(
                "_scaled_dot_product_flash_attention_for_cpu_backward: dropout is not supported",
            ));
        }
        let want = [d.b as i64, d.h as i64, d.l as i64, d.ev as i64];
        if grad_out.sizes() != want || out.sizes() != want || logsumexp.sizes() != want[..3] {
            return Err(Error::shape(format!(
                "_scaled_dot_product_flash_attention_for_cpu_backward: grad_out and out must be {want:?} and logsumexp {:?}, got {:?}, {:?} and {:?}",
                &want[..3],
                &grad_out.sizes()[..],
                &out.sizes()[..],
                &logsumexp.sizes()[..]
            )));
        }
        let dt = query.dtype();
        let acc = acc_dtype(dt);
        let t = |x: &Tensor| dense(x, acc);
        let (go, q, k, v, o, lse) = (t(grad_out)?, t(query)?, t(key)?, t(value)?, t(out)?, t(logsumexp)?);
        let mask = attn_mask.map(|m| additive_mask(m, &d, acc)).transpose()?;
        let scale = scale_of(scale, d.e);
        let (dq, dk, dv) = if is_f64(dt) {
            backward::<f64>(&go, &q, &k, &v, &o, &lse, d, is_causal, mask.as_ref(), scale)?
        } else {
            backward::<f32>(&go, &q, &k, &v, &o, &lse, d, is_causal, mask.as_ref(), scale)?
        };
        Ok((dq.try_to_dtype(dt)?, dk.try_to_dtype(dt)?, dv.try_to_dtype(dt)?))
    }
}

impl SdpaFlashBackwardMetaMeta for Meta {
    fn sdpa_flash_backward_meta(
        _grad_out: &Tensor,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        _out: &Tensor,
        _logsumexp: &Tensor,
        _dropout_p: f64,
        is_causal: bool,
        attn_mask: Option<&Tensor>,
        _scale: Option<f64>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        check(query, key, value, attn_mask, is_causal)?;
        let like = |t: &Tensor| Tensor::empty(&t.sizes(), t.dtype(), t.device(), MemoryFormat::Contiguous);
        Ok((like(query)?, like(key)?, like(value)?))
    }
}

// ---------------------------------------------------------------------------------------------
// composites
// ---------------------------------------------------------------------------------------------

/// `key`/`value` with each of their heads repeated for the query heads that share it
/// (grouped-query attention), or unchanged when the head counts match.
fn repeat_kv_heads(t: &Tensor, query_heads: i64) -> Result<Tensor> {
    let sizes = t.sizes();
    let n = sizes.len();
    if n < 3 || sizes[n - 3] == query_heads {
        return Ok(t.clone());
    }
    let heads = sizes[n - 3];
    if heads == 0 || query_heads % heads != 0 {
        return Err(Error::runtime(format!(
            "scaled_dot_product_attention: enable_gqa needs the query's heads ({query_heads}) to be a multiple of the key's and value's ({heads})"
        )));
    }
    // [.., Hk, S, E] -> [.., Hk, G, S, E] (a broadcast view) -> [.., Hk * G, S, E] (a copy).
    let mut grouped: Vec<i64> = sizes[..n - 2].to_vec();
    grouped.push(query_heads / heads);
    grouped.extend_from_slice(&sizes[n - 2..]);
    let mut merged: Vec<i64> = sizes[..n - 3].to_vec();
    merged.extend_from_slice(&[query_heads, sizes[n - 2], sizes[n - 1]]);
    t.try_unsqueeze(n as i64 - 2)?.try_expand(&grouped)?.try_reshape(&merged)
}

/// `is_causal` and an explicit mask exclude each other.
fn check_causal_mask(attn_mask: Option<&Tensor>, is_causal: bool) -> Result<()> {
    if is_causal && attn_mask.is_some() {
        return Err(Error::runtime(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
        ));
    }
    Ok(())
}

/// `key` and `value` with their heads repeated for the query's under `enable_gqa`.
fn gqa_key_value(query: &Tensor, key: &Tensor, value: &Tensor, enable_gqa: bool) -> Result<(Tensor, Tensor)> {
    if enable_gqa && query.dim() >= 3 {
        let h = query.sizes()[query.dim() - 3];
        Ok((repeat_kv_heads(key, h)?, repeat_kv_heads(value, h)?))
    } else {
        Ok((key.clone(), value.clone()))
    }
}

impl ScaledDotProductAttentionCompositeImplicit for Composite {
    fn scaled_dot_product_attention(
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        attn_mask: Option<&Tensor>,
        dropout_p: f64,
        is_causal: bool,
        scale: Option<f64>,
        enable_gqa: bool,
    ) -> Result<Tensor> {
        check_dtypes(query, key, value)?;
        check_causal_mask(attn_mask, is_causal)?;
        let (key, value) = gqa_key_value(query, key, value, enable_gqa)?;
        let fused = query.device() == Device::Cpu
            && [query.dim(), key.dim(), value.dim()] == [4, 4, 4]
            && query.dtype().is_floating_point()
            && dropout_p == 0.0
            && !attn_mask.is_some_and(Tensor::requires_grad)
            && query.sizes()[..2] == key.sizes()[..2]
            && key.sizes()[..3] == value.sizes()[..3];
        if fused {
            return Ok(ops::_scaled_dot_product_flash_attention_for_cpu::call(
                query, &key, &value, dropout_p, is_causal, attn_mask, scale,
            )?
            .0);
        }
        Ok(ops::_scaled_dot_product_attention_math::call(
            query, &key, &value, attn_mask, dropout_p, is_causal, None, scale, false,
        )?
        .0)
    }
}

impl SdpaMathCompositeImplicit for Composite {
    /// PyTorch's `_scaled_dot_product_attention_math`: both operands scaled by `√scale` (which
    /// keeps half-precision scores in range), the causal or given mask, a softmax that gives zero
    /// rows where every score is masked, dropout, and the product with `value`. Returns the output
    /// and the attention weights.
    fn sdpa_math(
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        attn_mask: Option<&Tensor>,
        dropout_p: f64,
        is_causal: bool,
        dropout_mask: Option<&Tensor>,
        scale: Option<f64>,
        enable_gqa: bool,
    ) -> Result<(Tensor, Tensor)> {
        check_dtypes(query, key, value)?;
        if query.dim() < 2 || key.dim() < 2 || value.dim() < 2 {
            return Err(Error::runtime(
                "scaled_dot_product_attention: query, key and value need at least 2 dimensions",
            ));
        }
        check_causal_mask(attn_mask, is_causal)?;
        let (key, value) = gqa_key_value(query, key, value, enable_gqa)?;
        let e = query.sizes()[query.dim() - 1] as usize;
        let root = scale_of(scale, e).sqrt();
        let q = query.try_mul_scalar(root)?;
        let kt = key.try_mul_scalar(root)?.try_transpose(-2, -1)?;
        let mut scores = q.try_matmul(&kt)?;
        let (l, s) = (query.sizes()[query.dim() - 2], key.sizes()[key.dim() - 2]);
        let mask = if is_causal {
            let ones = Tensor::empty(&[l, s], DType::Bool, query.device(), MemoryFormat::Contiguous)?;
            ops::fill_scalar_::call(&ones, Scalar::Bool(true))?;
            Some(ones.try_tril()?)
        } else {
            attn_mask.cloned()
        };
        if let Some(m) = &mask {
            scores = if m.dtype() == DType::Bool {
                scores.try_masked_fill_scalar(&m.try_logical_not()?, Scalar::Float(f64::NEG_INFINITY))?
            } else {
                scores.try_add(m)?
            };
        }
        // A row whose every score is -inf attends to nothing: zeros instead of softmax's NaN.
        let dead = scores.try_amax(&[-1], true)?.try_eq_scalar(Scalar::Float(f64::NEG_INFINITY))?;
        let live = scores.try_masked_fill_scalar(&dead, Scalar::Float(0.0))?;
        let mut weights = live.try_softmax(-1)?.try_masked_fill_scalar(&dead, Scalar::Float(0.0))?;
        if dropout_p > 0.0 {
            weights = match dropout_mask {
                Some(keep) => weights.try_mul(keep)?.try_div_scalar(1.0 - dropout_p)?,
                None => ops::dropout::call(&weights, dropout_p, true)?,
            };
        }
        Ok((weights.try_matmul(&value)?, weights))
    }
}
