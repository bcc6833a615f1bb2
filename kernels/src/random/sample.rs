//! Turning Philox words into samples: uniform floats, Box-Muller normals, integer ranges and
//! Bernoulli draws, written as straight-line loops over fixed-size batches so that the compiler
//! vectorizes them (the `f32` logarithm and sine/cosine are polynomials here, not libm calls).
//!
//! Each sampler fills one chunk of output elements that starts at a block boundary, from the
//! blocks `first ..` of a [`PhiloxStream`]; which words make which element is fixed per sampler
//! (documented on each), so a value depends only on the stream and the element's position.

use oxten_runtime::generator::{PhiloxStream, PHILOX_LANES};

/// Words per batch of blocks.
pub(super) const BATCH_WORDS: usize = 4 * PHILOX_LANES;

/// Fills one chunk of output elements from the blocks `first ..` of a stream; the chunk starts
/// at a block boundary. Each implementation fixes which words make which element.
///
/// `fill` is `#[inline(always)]` in every implementation, so that the whole sampler is compiled
/// into the per-instruction-set wrappers of [`super::fill_chunk`] (closures inside it must stay
/// small, or they would be compiled once, for baseline x86-64, and called).
pub(super) trait Sampler<T>: Sync {
    /// Elements per Philox block (4 words): 1, 2 or 4.
    const PER_BLOCK: usize;
    fn fill(&self, stream: &PhiloxStream, first: u64, out: &mut [T]);
}

/// `f(word)` per element: element `4b + j` from word `j` of block `b`.
pub(super) struct Words32<F>(pub F);

impl<T, F: Fn(u32) -> T + Sync> Sampler<T> for Words32<F> {
    const PER_BLOCK: usize = 4;
    #[inline(always)]
    fn fill(&self, stream: &PhiloxStream, first: u64, out: &mut [T]) {
        let mut words = [0u32; BATCH_WORDS];
        for (b, chunk) in out.chunks_mut(BATCH_WORDS).enumerate() {
            stream.blocks(first + (b * PHILOX_LANES) as u64, &mut words);
            for (o, &w) in chunk.iter_mut().zip(words.iter()) {
                *o = (self.0)(w);
            }
        }
    }
}

/// `f(u64)` per element: element `2b + j` from words `2j` (high half) and `2j + 1` of block `b`.
pub(super) struct Words64<F>(pub F);

impl<T, F: Fn(u64) -> T + Sync> Sampler<T> for Words64<F> {
    const PER_BLOCK: usize = 2;
    #[inline(always)]
    fn fill(&self, stream: &PhiloxStream, first: u64, out: &mut [T]) {
        let mut words = [0u32; BATCH_WORDS];
        for (b, chunk) in out.chunks_mut(BATCH_WORDS / 2).enumerate() {
            stream.blocks(first + (b * PHILOX_LANES) as u64, &mut words);
            for (k, o) in chunk.iter_mut().enumerate() {
                *o = (self.0)((u64::from(words[2 * k]) << 32) | u64::from(words[2 * k + 1]));
            }
        }
    }
}

/// `f(index, word)` per element, like [`Words32`], where `index` is the element's position in
/// the whole output (for per-element parameters).
pub(super) struct IndexedWords32<F>(pub F);

impl<T, F: Fn(usize, u32) -> T + Sync> Sampler<T> for IndexedWords32<F> {
    const PER_BLOCK: usize = 4;
    #[inline(always)]
    fn fill(&self, stream: &PhiloxStream, first: u64, out: &mut [T]) {
        let at = first as usize * 4;
        let mut words = [0u32; BATCH_WORDS];
        for (b, chunk) in out.chunks_mut(BATCH_WORDS).enumerate() {
            stream.blocks(first + (b * PHILOX_LANES) as u64, &mut words);
            let base = at + b * BATCH_WORDS;
            for (k, (o, &w)) in chunk.iter_mut().zip(words.iter()).enumerate() {
                *o = (self.0)(base + k, w);
            }
        }
    }
}

/// `round(z * std + mean)` for standard normals `z` computed in `f32` (Box-Muller): element
/// `4b + j` of block `b` from the word pairs (0, 1) and (2, 3).
pub(super) struct NormalF32<R> {
    pub mean: f32,
    pub std: f32,
    pub round: R,
}

impl<T, R: Fn(f32) -> T + Sync> Sampler<T> for NormalF32<R> {
    const PER_BLOCK: usize = 4;
    #[inline(always)]
    fn fill(&self, stream: &PhiloxStream, first: u64, out: &mut [T]) {
        let mut words = [0u32; BATCH_WORDS];
        let mut z = [0f32; BATCH_WORDS];
        for (b, chunk) in out.chunks_mut(BATCH_WORDS).enumerate() {
            stream.blocks(first + (b * PHILOX_LANES) as u64, &mut words);
            box_muller_batch(&words, &mut z);
            for (o, &v) in chunk.iter_mut().zip(z.iter()) {
                *o = (self.round)(v * self.std + self.mean);
            }
        }
    }
}

/// `z * std + mean` for standard normals `z` computed in `f64` (53-bit uniforms, libm's `ln`
/// and `sin_cos`): elements `2b`, `2b + 1` from block `b`.
pub(super) struct NormalF64 {
    pub mean: f64,
    pub std: f64,
}

impl Sampler<f64> for NormalF64 {
    const PER_BLOCK: usize = 2;
    #[inline(always)]
    fn fill(&self, stream: &PhiloxStream, first: u64, out: &mut [f64]) {
        let mut words = [0u32; BATCH_WORDS];
        for (b, chunk) in out.chunks_mut(BATCH_WORDS / 2).enumerate() {
            stream.blocks(first + (b * PHILOX_LANES) as u64, &mut words);
            for (k, pair) in chunk.chunks_mut(2).enumerate() {
                let (z0, z1) = box_muller_f64(&words[4 * k..4 * k + 4]);
                pair[0] = z0 * self.std + self.mean;
                if pair.len() > 1 {
                    pair[1] = z1 * self.std + self.mean;
                }
            }
        }
    }
}

/// `[0, 1)` from the top 24 bits of a word (every value a multiple of 2^-24).
#[inline(always)]
pub(super) fn unit_f32(w: u32) -> f32 {
    (w >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// `[0, 1)` with `digits` significant bits (24 for `f32`, 11 for `f16`, 8 for `bf16`), so that
/// every value is exact in the target type and never rounds up to 1.
#[inline(always)]
pub(super) fn unit_bits(w: u32, digits: u32) -> f32 {
    (w >> (32 - digits)) as f32 * f32::from_bits((127 - digits) << 23)
}

/// `[0, 1)` from the top 53 bits of a 64-bit draw.
#[inline(always)]
pub(super) fn unit_f64(u: u64) -> f64 {
    // Below 2^53, so the signed conversion (which vectorizes) is exact.
    (u >> 11) as i64 as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// Two words as one 64-bit draw (the first is the high half).
#[inline(always)]
fn join(hi: u32, lo: u32) -> u64 {
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Natural logarithm of a positive normal `f32` (Cephes `logf`: about 1 ulp), branch-free.
#[inline(always)]
pub(super) fn ln_f32(x: f32) -> f32 {
    const SQRTHF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let bits = x.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 126;
    // Mantissa in [0.5, 1).
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    let small = m < SQRTHF;
    e -= small as i32;
    let m = if small { m + m - 1.0 } else { m - 1.0 };
    let e = e as f32;
    let z = m * m;
    let mut y = 7.037_683_6e-2;
    y = y * m - 1.151_461e-1;
    y = y * m + 1.167_699_87e-1;
    y = y * m - 1.242_014_1e-1;
    y = y * m + 1.424_932_3e-1;
    y = y * m - 1.666_805_8e-1;
    y = y * m + 2.000_071_4e-1;
    y = y * m - 2.499_999_4e-1;
    y = y * m + 3.333_333e-1;
    y = y * m * z;
    y += -2.121_944_4e-4 * e;
    y += -0.5 * z;
    m + y + 0.693_359_4 * e
}

/// `(sin 2πt, cos 2πt)` for `t` in `[0, 1)` (Cephes polynomials on `[-π/4, π/4]` after an exact
/// quarter-turn reduction of `t`), branch-free.
#[inline(always)]
pub(super) fn sincos_turns_f32(t: f32) -> (f32, f32) {
    let q4 = t * 4.0; // exact
                      // round(q4) as a truncation (q4 >= 0), which vectorizes where `round` is a libm call.
    let qi = (q4 + 0.5) as i32; // 0 ..= 4
    let x = (q4 - qi as f32) * std::f32::consts::FRAC_PI_2; // [-π/4, π/4]
    let z = x * x;
    let s = x + x * z * (-1.666_665_5e-1 + z * (8.332_161e-3 + z * -1.951_529_6e-4));
    let c = 1.0 - 0.5 * z + z * z * (4.166_664_6e-2 + z * (-1.388_731_6e-3 + z * 2.443_315_7e-5));
    // Rotate by q quarter turns: sin(x + qπ/2), cos(x + qπ/2).
    let qi = qi & 3;
    let swap = qi & 1 == 1;
    let (s1, c1) = if swap { (c, s) } else { (s, c) };
    let neg_s = qi == 2 || qi == 3;
    let neg_c = qi == 1 || qi == 2;
    (if neg_s { -s1 } else { s1 }, if neg_c { -c1 } else { c1 })
}

/// Box-Muller in `f32`: two standard normals from two words (`u1 = 1 - U` in `(0, 1]` for the
/// radius, `U2` for the angle).
#[inline(always)]
pub(super) fn box_muller_f32(w1: u32, w2: u32) -> (f32, f32) {
    let u1 = 1.0 - unit_f32(w1);
    let r = (-2.0 * ln_f32(u1)).sqrt();
    let (s, c) = sincos_turns_f32(unit_f32(w2));
    (r * c, r * s)
}

/// Box-Muller in `f64` from four words (53-bit uniforms), with libm's `ln` and `sin_cos`.
#[inline(always)]
pub(super) fn box_muller_f64(w: &[u32]) -> (f64, f64) {
    let u1 = 1.0 - unit_f64(join(w[0], w[1]));
    let r = (-2.0 * u1.ln()).sqrt();
    let (s, c) = (std::f64::consts::TAU * unit_f64(join(w[2], w[3]))).sin_cos();
    (r * c, r * s)
}

/// Box-Muller over a batch: `z[2j], z[2j + 1]` from words `2j, 2j + 1`.
#[inline(always)]
pub(super) fn box_muller_batch(words: &[u32; BATCH_WORDS], z: &mut [f32; BATCH_WORDS]) {
    for j in 0..BATCH_WORDS / 2 {
        let (a, b) = box_muller_f32(words[2 * j], words[2 * j + 1]);
        z[2 * j] = a;
        z[2 * j + 1] = b;
    }
}

/// The Bernoulli threshold of `p` in `[0, 1]`: a word `w` is a success iff `w < threshold`,
/// i.e. iff the uniform `w / 2^32` is below `p`.
pub(super) fn bernoulli_threshold(p: f64) -> u64 {
    (p * 4_294_967_296.0).ceil() as u64
}

// No unsafe code here, so nothing for Miri to check; its value scans would take hours under it.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn ln_is_accurate() {
        let mut worst = 0f64;
        for k in 1..=(1u32 << 24) {
            if k % 7 != 0 && k > 4096 {
                continue;
            }
            let x = k as f32 / 16_777_216.0;
            let err = (f64::from(ln_f32(x)) - f64::from(x).ln()).abs();
            worst = worst.max(err / f64::from(x).ln().abs().max(1e-30));
        }
        assert!(worst < 4e-7, "worst relative error {worst}");
        assert_eq!(ln_f32(1.0), 0.0);
    }

    #[test]
    fn sincos_is_accurate() {
        let mut worst = 0f64;
        for k in 0..(1u32 << 20) {
            let t = k as f32 / (1u32 << 20) as f32;
            let (s, c) = sincos_turns_f32(t);
            let (es, ec) = (std::f64::consts::TAU * f64::from(t)).sin_cos();
            worst = worst.max((f64::from(s) - es).abs()).max((f64::from(c) - ec).abs());
        }
        assert!(worst < 3e-7, "worst absolute error {worst}");
    }

    #[test]
    fn uniforms_stay_below_one() {
        assert_eq!(unit_f32(u32::MAX), 1.0 - 2f32.powi(-24));
        assert_eq!(unit_bits(u32::MAX, 11), 1.0 - 2f32.powi(-11));
        assert_eq!(unit_bits(u32::MAX, 8), 1.0 - 2f32.powi(-8));
        assert!(unit_f64(u64::MAX) < 1.0);
        assert_eq!(unit_f32(0), 0.0);
        // u1 = 1 - U is never 0, so the radius is finite.
        let (a, b) = box_muller_f32(u32::MAX, 0);
        assert!(a.is_finite() && b.is_finite());
        assert_eq!(bernoulli_threshold(1.0), 1 << 32);
        assert_eq!(bernoulli_threshold(0.0), 0);
    }
}
