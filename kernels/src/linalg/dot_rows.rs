//! Small f32 products whose operands both run along `k` (`h.mm(w.t())` with a narrow `w`: a
//! classifier layer), computed as dot products of contiguous rows with AVX-512.
//!
//! `gemm` vectorizes along one side of the output and packs the operand on that side first. With
//! 10 outputs per row (a 10-class linear layer) that side is 10 wide: `gemm` packs `w` into
//! 64-row panels and runs its narrowest edge kernel, and `h (64 x 256) @ w.t() (256 x 10)` took
//! 11 µs. Here each output is the dot product of a row of `lhs` with a column of `rhs`, both
//! contiguous, four rows by four columns at a time (sixteen 16-lane accumulators, enough to hide
//! the multiply-add latency; eight loads per sixteen fused multiply-adds), with nothing packed:
//! 4.4 µs for that product (4 x 2 tiles with a mask computed at every step took 6.2 µs). CPUs
//! without AVX-512 keep `gemm`.

use super::engine::{Dims, Mat};
use crate::iter::{simd_level, SimdLevel};

/// Lanes per accumulator: one AVX-512 register of f32.
const LANES: usize = 16;
/// Rows of `lhs` and columns of `rhs` per tile.
const TILE_ROWS: usize = 4;
const TILE_COLS: usize = 4;

/// Products up to this many multiply-adds take this path when it applies.
const MAX_WORK: usize = 1 << 20;

/// Whether [`product`] should compute this product: AVX-512, `lhs` rows and `rhs` columns
/// contiguous, one side of the output narrower than `gemm`'s 16-lane vectors, and `k` long
/// enough for whole vectors.
pub(super) fn applies(d: Dims, lhs: Mat<f32>, rhs: Mat<f32>) -> bool {
    lhs.cs == 1
        && rhs.rs == 1
        && d.m.min(d.n) < LANES
        && d.k >= 2 * LANES
        && d.work() <= MAX_WORK
        && simd_level() == SimdLevel::Avx512
}

/// `dst = alpha * (lhs @ rhs) + beta * dst` (`dst` not read when `beta` is `None`).
///
/// # Safety
/// `lhs`, `rhs` and `dst` address `m x k`, `k x n` and `m x n` valid f32 elements with their
/// strides; [`applies`] returned true (AVX-512, unit stride along `k` for both operands); `dst`
/// overlaps neither operand.
pub(super) unsafe fn product(d: Dims, dst: Mat<f32>, lhs: Mat<f32>, rhs: Mat<f32>, alpha: f32, beta: Option<f32>) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded from the caller; `applies` checked that the CPU has AVX-512.
    unsafe {
        avx512::product(Dot { d, dst, lhs, rhs, alpha, beta })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (d, dst, lhs, rhs, alpha, beta);
        unreachable!("`applies` is false off x86-64");
    }
}

#[derive(Clone, Copy)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Dot {
    d: Dims,
    dst: Mat<f32>,
    lhs: Mat<f32>,
    rhs: Mat<f32>,
    alpha: f32,
    beta: Option<f32>,
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Dot, LANES, TILE_COLS, TILE_ROWS};
    use std::arch::x86_64::*;

    /// # Safety
    /// As for [`super::product`].
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn product(p: Dot) {
        let m = p.d.m;
        let full_m = m / TILE_ROWS * TILE_ROWS;
        for i in (0..full_m).step_by(TILE_ROWS) {
            // SAFETY: rows `i..i + TILE_ROWS` lie inside the output (`i + TILE_ROWS <= full_m
            // <= m`); the operands are the caller's contract.
            unsafe { rows::<TILE_ROWS>(&p, i) };
        }
        for i in full_m..m {
            // SAFETY: row `i < m` lies inside the output; the operands as above.
            unsafe { rows::<1>(&p, i) };
        }
    }

    /// Outputs `(i..i + R, 0..n)`: whole `TILE_COLS`-column tiles, then the columns left (a
    /// tile of two, then one).
    ///
    /// # Safety
    /// Rows `i..i + R` are inside the output; the operands as in [`super::product`].
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn rows<const R: usize>(p: &Dot, i: usize) {
        let n = p.d.n;
        let mut j = 0;
        while j + TILE_COLS <= n {
            // SAFETY: columns `j..j + TILE_COLS` lie inside the output; rows and operands are
            // the caller's contract.
            unsafe { tile::<R, TILE_COLS>(p, i, j) };
            j += TILE_COLS;
        }
        if j + 2 <= n {
            // SAFETY: columns `j..j + 2` lie inside the output; rows and operands as above.
            unsafe { tile::<R, 2>(p, i, j) };
            j += 2;
        }
        if j < n {
            // SAFETY: column `j < n` lies inside the output; rows and operands as above.
            unsafe { tile::<R, 1>(p, i, j) };
        }
    }

    /// Outputs `(i..i + R, j..j + C)`.
    ///
    /// # Safety
    /// Rows `i..i + R` and columns `j..j + C` are inside the output; the operands as in
    /// [`super::product`].
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn tile<const R: usize, const C: usize>(p: &Dot, i: usize, j: usize) {
        let k = p.d.k;
        let a: [*const f32; R] = std::array::from_fn(|r| p.lhs.at(i + r, 0).cast_const());
        let b: [*const f32; C] = std::array::from_fn(|c| p.rhs.at(0, j + c).cast_const());
        let mut acc = [[_mm512_setzero_ps(); C]; R];
        let step = |acc: &mut [[__m512; C]; R], k0: usize, mask: __mmask16| {
            // SAFETY: row `i + r` of `lhs` and column `j + c` of `rhs` hold `k` contiguous
            // elements (unit stride along `k`) and `k0 < k`; masked-off lanes are not read.
            let av: [__m512; R] = std::array::from_fn(|r| unsafe { _mm512_maskz_loadu_ps(mask, a[r].add(k0)) });
            // SAFETY: as above, for the columns of `rhs`.
            let bv: [__m512; C] = std::array::from_fn(|c| unsafe { _mm512_maskz_loadu_ps(mask, b[c].add(k0)) });
            for r in 0..R {
                for c in 0..C {
                    acc[r][c] = _mm512_fmadd_ps(av[r], bv[c], acc[r][c]);
                }
            }
        };
        let full_k = k / LANES * LANES;
        for k0 in (0..full_k).step_by(LANES) {
            step(&mut acc, k0, !0);
        }
        if full_k < k {
            // The `k % 16` elements left (masked lanes read as zero).
            step(&mut acc, full_k, (1u16 << (k - full_k)) - 1);
        }
        for (r, row) in acc.iter().enumerate() {
            for (c, &sums) in row.iter().enumerate() {
                let v = _mm512_reduce_add_ps(sums);
                let q = p.dst.at(i + r, j + c);
                // SAFETY: `(i + r, j + c)` is inside the output (the caller's contract).
                unsafe {
                    *q = match p.beta {
                        None => p.alpha * v,
                        Some(beta) => p.alpha * v + beta * *q,
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `alpha * a @ b + beta * c` in f64, for row-major `a` (`m x k`) and `b` given as `n` rows
    /// of `k` (the transposed layout the kernel reads).
    fn reference(d: Dims, a: &[f32], bt: &[f32], c: &[f32], alpha: f32, beta: Option<f32>) -> Vec<f64> {
        let Dims { m, n, k } = d;
        let mut out = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k).map(|t| a[i * k + t] as f64 * bt[j * k + t] as f64).sum();
                out[i * n + j] = alpha as f64 * dot + beta.map_or(0.0, |b| b as f64 * c[i * n + j] as f64);
            }
        }
        out
    }

    fn fill(len: usize, seed: usize) -> Vec<f32> {
        (0..len).map(|i| ((i * 7919 + seed * 104729) % 1000) as f32 / 500.0 - 1.0).collect()
    }

    #[test]
    fn matches_a_float64_reference_on_every_tile_shape() {
        if simd_level() != SimdLevel::Avx512 {
            return; // the path is not taken without AVX-512
        }
        // Tiles of 4 x 4 with row edges and column edges of 1, 2 and 3; `k` with and without a
        // partial vector.
        for &(m, n, k) in &[(64, 10, 256), (5, 33, 37), (15, 1, 100), (1, 15, 32), (7, 3, 47), (2, 9, 1000)] {
            for beta in [None, Some(0.5f32)] {
                // `lhs` rows are `k + 3` apart and `rhs` columns `k + 5` apart (sliced tensors).
                let (lda, ldb) = (k + 3, k + 5);
                let a = fill(m * lda, 1);
                let b = fill(n * ldb, 2);
                let c0 = fill(m * n, 3);
                let mut c = c0.clone();
                let d = Dims { m, n, k };
                let lhs = Mat { ptr: a.as_ptr().cast_mut(), rs: lda as isize, cs: 1 };
                let rhs = Mat { ptr: b.as_ptr().cast_mut(), rs: 1, cs: ldb as isize };
                let dst = Mat { ptr: c.as_mut_ptr(), rs: n as isize, cs: 1 };
                assert!(applies(d, lhs, rhs), "{m}x{n}x{k}");
                // SAFETY: the three buffers hold the matrices with the strides given.
                unsafe { product(d, dst, lhs, rhs, 2.0, beta) };
                let dense_a: Vec<f32> = (0..m).flat_map(|i| a[i * lda..i * lda + k].to_vec()).collect();
                let dense_b: Vec<f32> = (0..n).flat_map(|j| b[j * ldb..j * ldb + k].to_vec()).collect();
                let want = reference(d, &dense_a, &dense_b, &c0, 2.0, beta);
                for (idx, (&got, &w)) in c.iter().zip(&want).enumerate() {
                    assert!(
                        (got as f64 - w).abs() <= 1e-5 * (k as f64).sqrt() * (1.0 + w.abs()),
                        "{m}x{n}x{k} beta {beta:?} element {idx}: {got} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn wide_or_short_products_stay_with_gemm() {
        let a = [0f32; 4];
        let mat = |rs, cs| Mat { ptr: a.as_ptr().cast_mut(), rs, cs };
        // Both sides of the output 16 or more, `k` too short, or an operand not contiguous
        // along `k`.
        assert!(!applies(Dims { m: 16, n: 16, k: 256 }, mat(256, 1), mat(1, 256)));
        assert!(!applies(Dims { m: 64, n: 10, k: 31 }, mat(31, 1), mat(1, 31)));
        assert!(!applies(Dims { m: 64, n: 10, k: 256 }, mat(1, 64), mat(1, 256)));
        assert!(!applies(Dims { m: 64, n: 10, k: 256 }, mat(256, 1), mat(10, 1)));
    }
}
