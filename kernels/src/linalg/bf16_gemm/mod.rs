//! bf16 matrix products, accumulated in f32 and rounded to bf16 once, as PyTorch's CPU kernels
//! do.
//!
//! Two implementations, chosen at run time:
//! - [`avx512_bf16`]: a native kernel on `vdpbf16ps` (AVX-512 BF16), which multiplies pairs of
//!   bf16 values and adds both products to an f32 lane, twice the multiply-adds of an f32 FMA
//!   per instruction. Operands are packed into panels that keep pairs of elements along `k`
//!   side by side. Used when the CPU reports AVX-512 F, BW and BF16.
//! - [`widened`]: both operands widened to f32, the f32 `gemm` kernel, one rounding pass. The
//!   fallback on every other CPU.
//!
//! `OXTEN_BF16_GEMM=widened` in the environment forces the fallback (for comparisons).

#[cfg(target_arch = "x86_64")]
mod avx512_bf16;
mod widened;

use super::engine::{Dims, Mat};
use gemm::Parallelism;
use oxten_runtime::dtype::bf16;
use oxten_runtime::Result;
#[cfg(target_arch = "x86_64")]
use std::sync::OnceLock;

/// Whether the native kernel runs on this CPU: never off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn native() -> bool {
    false
}

/// bf16 → f32 (exact).
#[inline(always)]
pub(in crate::linalg) fn widen(v: bf16) -> f32 {
    f32::from_bits((v.to_bits() as u32) << 16)
}

/// f32 → bf16, rounding to nearest-even, NaN kept quiet. Branch-free so that loops over slices
/// vectorize (`bf16::from_f32` is a scalar loop).
#[inline(always)]
pub(in crate::linalg) fn narrow(x: f32) -> bf16 {
    let b = x.to_bits();
    let rounded = b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16;
    let quiet_nan = (b >> 16) | 0x40;
    bf16::from_bits(if x.is_nan() { quiet_nan } else { rounded } as u16)
}

/// Widens a slice (`dst.len() == src.len()`).
#[inline]
pub(in crate::linalg) fn widen_slice(src: &[bf16], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = widen(*s);
    }
}

/// Narrows a slice (`dst.len() == src.len()`).
#[inline]
pub(in crate::linalg) fn narrow_slice(src: &[f32], dst: &mut [bf16]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = narrow(*s);
    }
}

/// A zero-filled buffer of `len` elements, or oxten's out-of-memory error.
fn zeroed<T: Copy + Default>(len: usize) -> Result<Vec<T>> {
    let mut v = oxten_runtime::error::try_vec_with_capacity(len)?;
    v.resize(len, T::default());
    Ok(v)
}

/// Whether the native kernel runs on this CPU (detected once). Callers that would otherwise
/// widen bf16 data themselves (the convolutions) ask before handing bf16 blocks to [`product`].
#[cfg(target_arch = "x86_64")]
pub(crate) fn native() -> bool {
    static NATIVE: OnceLock<bool> = OnceLock::new();
    *NATIVE
        .get_or_init(|| avx512_bf16::available() && std::env::var("OXTEN_BF16_GEMM").map_or(true, |v| v != "widened"))
}

/// `dst = alpha * lhs @ rhs + beta * dst` (`dst` not read when `beta` is `None`) for bf16
/// operands, with `alpha` and `beta` already converted as PyTorch converts them.
///
/// # Safety
/// As for [`super::engine::product`].
pub(crate) unsafe fn product(
    d: Dims,
    dst: Mat<bf16>,
    lhs: Mat<bf16>,
    rhs: Mat<bf16>,
    alpha: f32,
    beta: Option<f32>,
    par: Parallelism,
) -> Result<()> {
    if d.m == 0 || d.n == 0 {
        return Ok(());
    }
    #[cfg(target_arch = "x86_64")]
    if native() && d.k > 0 {
        // SAFETY: forwarded from the caller; `native` checked the CPU's features.
        return unsafe { avx512_bf16::product(d, dst, lhs, rhs, alpha, beta, par) };
    }
    // SAFETY: forwarded from the caller.
    unsafe { widened::product(d, dst, lhs, rhs, alpha, beta, par) }
}
