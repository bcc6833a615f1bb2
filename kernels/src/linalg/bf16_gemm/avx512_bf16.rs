//! The bf16 product on AVX-512 BF16's `vdpbf16ps`.
//!
//! `vdpbf16ps acc, a, b` adds `a[2j] * b[2j] + a[2j + 1] * b[2j + 1]` to f32 lane `j` of `acc`:
//! 32 bf16 multiply-adds per instruction where an f32 FMA does 16, at the same issue rate on the
//! CPUs that have it (`gen/benches/isa.rs`). The products of two bf16 values are exact in f32, so
//! each lane gains two f32 additions, as a sequential f32 loop over `k` would.
//!
//! Both operands are packed into panels whose 32-bit words hold a pair of elements along `k`
//! (`k = 2p` in the low half, `2p + 1` in the high half; an odd `k` is padded with a zero): the
//! left operand into panels of [`MR`] rows (`[p][row]`), the right one into panels of [`NR`]
//! columns (`[p][column]`), both padded with zeros to whole panels. A micro-tile of
//! `MR x NR` outputs stays in 24 zmm registers over the whole of `k`: each step loads one pair
//! of rows of the right panel (two zmm) and broadcasts one word per row of the left panel. The
//! finished tile is scaled by `alpha`, `beta * dst` is added, and each value is rounded to bf16
//! once (nearest-even, NaN kept quiet), as the portable path does.
//!
//! Work is cut into blocks of left panels (about [`LHS_BLOCK_BYTES`], kept in L2 while the
//! block walks its right panels, each of which stays in L1/L2 across the block's rows) and of
//! [`RHS_BLOCK_PANELS`] right panels, spread over oxten's thread pool. Like the instruction in
//! oneDNN's kernels, `vdpbf16ps` treats subnormal inputs as zero and flushes subnormal sums.

use super::super::engine::{Dims, Mat};
use gemm::Parallelism;
use oxten_runtime::dtype::bf16;
use oxten_runtime::{Error, Result};
use std::arch::x86_64::*;
use std::cell::RefCell;

/// Rows of a micro-tile.
const MR: usize = 12;
/// Columns of a micro-tile: two zmm registers of f32.
const NR: usize = 32;

/// Pairs along `k` of one slice of the work: a right micro-panel of this depth (16 KiB) and a
/// left one (6 KiB) stay in L1 while their tile is computed.
const KC_PAIRS: usize = 128;
/// Bytes of left panels (one slice deep) one block of work keeps in L2.
const LHS_BLOCK_BYTES: usize = 48 << 10;
/// Right panels (of [`NR`] columns) per block of work.
const RHS_BLOCK_PANELS: usize = 8;
/// Packing buffers up to this many bytes stay allocated on their thread for the next product.
const KEEP_BYTES: usize = 32 << 20;

/// Whether this CPU has the instructions the kernel uses.
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("avx512bf16")
}

thread_local! {
    /// This thread's packing buffer, reused across products (allocating and faulting in fresh
    /// pages for every product costs more than a small product).
    static PACK: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// This thread's f32 sums of a block of tiles.
    static TILES: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a buffer of `len` initialized elements (contents unspecified) that starts on a
/// cache line, this thread's cached one in `cache` when it is free. (Vector loads that straddle
/// two cache lines cost two: an allocator's 16-byte alignment made the kernel 45% slower.)
fn with_buffer<T: Copy + Default + 'static, R>(
    cache: &'static std::thread::LocalKey<RefCell<Vec<T>>>,
    len: usize,
    f: impl FnOnce(&mut [T]) -> R,
) -> Result<R> {
    let size = std::mem::size_of::<T>();
    let slack = 64 / size;
    let oom =
        || Error::out_of_memory((len as u128 + slack as u128) * size as u128, "host memory (bf16 product scratch)");
    let want = len.checked_add(slack).ok_or_else(oom)?;
    let mut buf = cache.with(|b| b.try_borrow_mut().map(|mut b| std::mem::take(&mut *b)).unwrap_or_default());
    if buf.len() < want {
        buf.try_reserve_exact(want - buf.len()).map_err(|_| oom())?;
        buf.resize(want, T::default());
    }
    let skip = buf.as_ptr().align_offset(64).min(slack);
    let r = f(&mut buf[skip..skip + len]);
    if buf.capacity() * size <= KEEP_BYTES {
        cache.with(|b| {
            if let Ok(mut b) = b.try_borrow_mut() {
                if b.capacity() < buf.capacity() {
                    *b = buf;
                }
            }
        });
    }
    Ok(r)
}

/// An address shared with the pool's tasks, which write disjoint parts of what it points to.
#[derive(Clone, Copy)]
struct Shared<T>(T);
// SAFETY: a matrix or buffer address; every task reads the operands and writes only its own
// panels or tiles (see `product`).
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}
impl<T: Copy> Shared<T> {
    /// The value (a method, so that closures capture the whole `Shared`).
    fn get(&self) -> T {
        self.0
    }
}

/// `dst = alpha * lhs @ rhs + beta * dst` (`dst` not read when `beta` is `None`).
///
/// # Safety
/// As for [`super::product`]; the CPU must pass [`available`].
pub(super) unsafe fn product(
    d: Dims,
    dst: Mat<bf16>,
    lhs: Mat<bf16>,
    rhs: Mat<bf16>,
    alpha: f32,
    beta: Option<f32>,
    par: Parallelism,
) -> Result<()> {
    if dst.rs == 1 && dst.cs != 1 && d.n > 1 {
        // Tiles are stored a row at a time: compute the transpose, whose rows are contiguous.
        let t = |x: Mat<bf16>| Mat { ptr: x.ptr, rs: x.cs, cs: x.rs };
        let d = Dims { m: d.n, n: d.m, k: d.k };
        // SAFETY: the same elements, addressed through swapped strides.
        return unsafe { product(d, t(dst), t(rhs), t(lhs), alpha, beta, par) };
    }
    let too_large = || Error::out_of_memory(u128::MAX, "host memory (bf16 product packing)");
    let kp = d.k.div_ceil(2);
    let (mp, np) = (d.m.div_ceil(MR), d.n.div_ceil(NR));
    let lhs_panel = kp.checked_mul(MR).ok_or_else(too_large)?;
    let rhs_panel = kp.checked_mul(NR).ok_or_else(too_large)?;
    let lhs_len = mp.checked_mul(lhs_panel).ok_or_else(too_large)?;
    let total = np.checked_mul(rhs_panel).and_then(|r| r.checked_add(lhs_len)).ok_or_else(too_large)?;
    let parallel = !matches!(par, Parallelism::None) && oxten_runtime::parallel::threads_now() > 1;
    let each = |n: usize, f: &(dyn Fn(usize) + Sync)| {
        if parallel {
            oxten_runtime::parallel::for_each(n, f);
        } else {
            (0..n).for_each(f);
        }
    };
    with_buffer(&PACK, total, |buf| {
        let (lhs_pack, rhs_pack) = buf.split_at_mut(lhs_len);
        let (lhs_pack, rhs_pack) = (Shared(lhs_pack.as_mut_ptr()), Shared(rhs_pack.as_mut_ptr()));
        let dst = Shared(dst);
        let (a, b) = (lhs, rhs);
        let left =
            Side { src: a.ptr, lane_stride: a.rs, depth_stride: a.cs, lanes: d.m, width: MR, k: d.k, pack: lhs_pack };
        let right =
            Side { src: b.ptr, lane_stride: b.cs, depth_stride: b.rs, lanes: d.n, width: NR, k: d.k, pack: rhs_pack };
        let left_tasks = left.tasks();
        each(left_tasks + right.tasks(), &|t| {
            // SAFETY: the operands address `m x k` and `k x n` valid elements (caller); each
            // task writes its own words of the buffer; `available` held.
            unsafe {
                if t < left_tasks {
                    left.pack_task(t)
                } else {
                    right.pack_task(t - left_tasks)
                }
            }
        });
        let kc = KC_PAIRS.min(kp);
        let rows_per_block = (LHS_BLOCK_BYTES / (kc * MR * 4)).clamp(1, mp);
        let cols_per_block = RHS_BLOCK_PANELS.min(np);
        let col_blocks = np.div_ceil(cols_per_block);
        let failed = std::sync::Mutex::new(None);
        each(mp.div_ceil(rows_per_block) * col_blocks, &|t| {
            let (bi, bj) = (t / col_blocks, t % col_blocks);
            let (rows, cols) = (
                bi * rows_per_block..mp.min((bi + 1) * rows_per_block),
                bj * cols_per_block..np.min((bj + 1) * cols_per_block),
            );
            let tiles = rows.len() * cols.len();
            // The f32 sums of the block's tiles, carried from one slice of `k` to the next.
            let r = with_buffer(&TILES, tiles * MR * NR, |acc| {
                for p0 in (0..kp).step_by(kc) {
                    let len = kc.min(kp - p0);
                    for (tj, j) in cols.clone().enumerate() {
                        for (ti, i) in rows.clone().enumerate() {
                            let tile = &mut acc.as_chunks_mut::<{ MR * NR }>().0[tj * rows.len() + ti];
                            // SAFETY: the panels were packed above (the pack pass finished
                            // before this one began) and hold pairs `p0..p0 + len`; the CPU
                            // passed `available`.
                            unsafe {
                                micro_tile(
                                    len,
                                    lhs_pack.get().add(i * lhs_panel + p0 * MR),
                                    rhs_pack.get().add(j * rhs_panel + p0 * NR),
                                    tile,
                                    p0 > 0,
                                );
                            }
                            if p0 + len == kp {
                                let (r0, c0) = (i * MR, j * NR);
                                let out = dst.get();
                                // SAFETY: tile (i, j) of `dst` is written by this task only;
                                // the CPU passed `available`.
                                unsafe {
                                    store_tile(
                                        tile,
                                        Mat { ptr: out.at(r0, c0), ..out },
                                        (d.m - r0).min(MR),
                                        (d.n - c0).min(NR),
                                        alpha,
                                        beta,
                                    )
                                };
                            }
                        }
                    }
                }
            });
            if let Err(e) = r {
                failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
            }
        });
        failed.into_inner().unwrap_or_else(|e| e.into_inner()).map_or(Ok(()), Err)
    })?
}

/// Pairs along `k` per packing task when an operand is packed by slices of `k`.
const PACK_PAIRS: usize = 64;

/// One operand as the packing sees it: `lanes` lines (rows of the left operand, columns of the
/// right one) of `k` elements, consecutive lines `lane_stride` elements apart and consecutive
/// elements of a line `depth_stride` apart, packed into panels of `width` lanes, each
/// `k.div_ceil(2) * width` words laid out `[pair][lane]` (lanes past the end zero).
#[derive(Clone, Copy)]
struct Side {
    src: *const bf16,
    lane_stride: isize,
    depth_stride: isize,
    lanes: usize,
    width: usize,
    k: usize,
    pack: Shared<*mut u32>,
}

// SAFETY: addresses of the operand (only read) and of the packing buffer, of which every task
// writes its own words (see `pack_task`).
unsafe impl Sync for Side {}

impl Side {
    /// Whether lanes are contiguous, so that a pair of lines along `k` is interleaved from two
    /// contiguous runs (vectorizes); such an operand is packed by slices of `k`, all panels at
    /// once, reading each pair of lines front to back.
    fn lanes_contiguous(&self) -> bool {
        self.lane_stride == 1 || self.lanes == 1
    }

    fn pairs(&self) -> usize {
        self.k.div_ceil(2)
    }

    fn tasks(&self) -> usize {
        if self.lanes_contiguous() {
            self.pairs().div_ceil(PACK_PAIRS)
        } else {
            self.lanes.div_ceil(self.width)
        }
    }

    fn at(&self, lane: usize, e: usize) -> *const bf16 {
        self.src.wrapping_offset(lane as isize * self.lane_stride + e as isize * self.depth_stride)
    }

    /// Packs task `t`'s part: pairs `t * PACK_PAIRS..` of every panel, or panel `t` whole.
    ///
    /// # Safety
    /// The operand addresses `lanes x k` valid elements; the buffer holds every panel; tasks
    /// run at most once each; the CPU has AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn pack_task(&self, t: usize) {
        let (kp, w) = (self.pairs(), self.width);
        let panel_len = kp * w;
        let bits = |p: *const bf16| -> u32 {
            // SAFETY: callers pass addresses of valid elements.
            unsafe { (*p).to_bits() as u32 }
        };
        if self.lanes_contiguous() {
            for p in t * PACK_PAIRS..kp.min((t + 1) * PACK_PAIRS) {
                for (j, l0) in (0..self.lanes).step_by(w).enumerate() {
                    let lanes = (self.lanes - l0).min(w);
                    // SAFETY: pair `p` of panel `j` belongs to this task alone.
                    let words =
                        unsafe { std::slice::from_raw_parts_mut(self.pack.get().add(j * panel_len + p * w), w) };
                    // SAFETY: elements (l0..l0 + lanes, 2p) are valid and contiguous.
                    let lo = unsafe { std::slice::from_raw_parts(self.at(l0, 2 * p), lanes) };
                    if 2 * p + 1 < self.k {
                        // SAFETY: as above, for element 2p + 1.
                        let hi = unsafe { std::slice::from_raw_parts(self.at(l0, 2 * p + 1), lanes) };
                        for ((o, l), h) in words.iter_mut().zip(lo).zip(hi) {
                            *o = l.to_bits() as u32 | (h.to_bits() as u32) << 16;
                        }
                    } else {
                        for (o, l) in words.iter_mut().zip(lo) {
                            *o = l.to_bits() as u32;
                        }
                    }
                    if lanes < w {
                        words[lanes..].fill(0);
                    }
                }
            }
            return;
        }
        let l0 = t * w;
        let lanes = (self.lanes - l0).min(w);
        // SAFETY: panel `t` belongs to this task alone.
        let out = unsafe { std::slice::from_raw_parts_mut(self.pack.get().add(t * panel_len), panel_len) };
        let even = self.k / 2;
        for (p, words) in out.chunks_exact_mut(w).enumerate() {
            if p < even {
                for (lane, o) in words[..lanes].iter_mut().enumerate() {
                    let e = self.at(l0 + lane, 2 * p);
                    *o = if self.depth_stride == 1 {
                        // SAFETY: elements 2p and 2p + 1 of the line are valid and adjacent: one
                        // unaligned word, the even one in the low half (little-endian).
                        unsafe { e.cast::<u32>().read_unaligned() }
                    } else {
                        bits(e) | bits(self.at(l0 + lane, 2 * p + 1)) << 16
                    };
                }
            } else {
                for (lane, o) in words[..lanes].iter_mut().enumerate() {
                    *o = bits(self.at(l0 + lane, 2 * p));
                }
            }
            if lanes < w {
                words[lanes..].fill(0);
            }
        }
    }
}

/// The `MR x NR` product of one left panel and one right panel over `kp` pairs, into `tile`
/// (row-major), or added to it when `accumulate`.
///
/// # Safety
/// `a` and `b` address packed panels of at least `kp` pairs; the CPU has AVX-512 F and BF16.
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn micro_tile(kp: usize, mut a: *const u32, mut b: *const u32, tile: &mut [f32; MR * NR], accumulate: bool) {
    let mut acc = [_mm512_setzero_ps(); 2 * MR];
    if accumulate {
        for (i, v) in acc.iter_mut().enumerate() {
            // SAFETY: `tile` holds `2 * MR` vectors of 16 floats.
            *v = unsafe { _mm512_loadu_ps(tile.as_ptr().add(16 * i)) };
        }
    }
    for _ in 0..kp {
        // SAFETY: pair `p` of the right panel is `NR` words at `b`, of the left panel `MR`
        // words at `a`. `__m512i` and `__m512bh` are both 64 bytes of plain bits.
        unsafe {
            let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(b.cast()));
            let b1: __m512bh = std::mem::transmute(_mm512_loadu_si512(b.add(16).cast()));
            for r in 0..MR {
                let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(a.add(r).read() as i32));
                acc[2 * r] = _mm512_dpbf16_ps(acc[2 * r], x, b0);
                acc[2 * r + 1] = _mm512_dpbf16_ps(acc[2 * r + 1], x, b1);
            }
            a = a.add(MR);
            b = b.add(NR);
        }
    }
    for (i, v) in acc.iter().enumerate() {
        // SAFETY: `tile` holds `2 * MR` vectors of 16 floats.
        unsafe { _mm512_storeu_ps(tile.as_mut_ptr().add(16 * i), *v) };
    }
}

/// Writes `alpha * tile + beta * dst`, rounded to bf16, to the `rows x cols` block at `dst`.
///
/// # Safety
/// `dst` addresses `rows x cols` valid elements; the CPU has AVX-512 F, BW and VL.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn store_tile(tile: &[f32; MR * NR], dst: Mat<bf16>, rows: usize, cols: usize, alpha: f32, beta: Option<f32>) {
    if dst.cs != 1 && cols > 1 {
        for r in 0..rows {
            for c in 0..cols {
                let p = dst.at(r, c);
                let mut v = alpha * tile[r * NR + c];
                if let Some(beta) = beta {
                    // SAFETY: (r, c) is in the block.
                    v += beta * super::widen(unsafe { *p });
                }
                // SAFETY: as above.
                unsafe { *p = super::narrow(v) };
            }
        }
        return;
    }
    for r in 0..rows {
        for h in 0..NR / 16 {
            let valid = cols.saturating_sub(16 * h).min(16);
            if valid == 0 {
                break;
            }
            let mask: __mmask16 = if valid == 16 { u16::MAX } else { (1u16 << valid) - 1 };
            let p = dst.at(r, 16 * h).cast::<i16>();
            // SAFETY: `tile` row `r` holds `NR` floats; the masked loads and stores touch the
            // block's `valid` elements of row `r` only.
            unsafe {
                let mut v = _mm512_loadu_ps(tile.as_ptr().add(r * NR + 16 * h));
                if alpha != 1.0 {
                    v = _mm512_mul_ps(v, _mm512_set1_ps(alpha));
                }
                if let Some(beta) = beta {
                    let old = _mm256_maskz_loadu_epi16(mask, p);
                    let old = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(old)));
                    v = _mm512_add_ps(v, _mm512_mul_ps(_mm512_set1_ps(beta), old));
                }
                let bits = _mm512_castps_si512(v);
                let high = _mm512_srli_epi32::<16>(bits);
                let lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
                let rounded =
                    _mm512_srli_epi32::<16>(_mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))));
                let quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
                let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
                let out = _mm512_mask_blend_epi32(nan, rounded, quiet);
                _mm256_mask_storeu_epi16(p, mask, _mm512_cvtepi32_epi16(out));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` pseudo-random bf16 values in [-2, 2).
    fn values(len: usize, seed: u32) -> Vec<bf16> {
        let mut s = seed.wrapping_mul(2654435761).wrapping_add(12345);
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                bf16::from_f32(((s >> 8) as f32 / (1u32 << 24) as f32) * 4.0 - 2.0)
            })
            .collect()
    }

    /// The product in f64 from the bf16 values, rounded to bf16 once.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        d: Dims,
        a: &[bf16],
        (ars, acs): (isize, isize),
        b: &[bf16],
        (brs, bcs): (isize, isize),
        c: &[bf16],
        (crs, ccs): (isize, isize),
        alpha: f32,
        beta: Option<f32>,
    ) -> Vec<(usize, f64)> {
        let mut out = Vec::new();
        for i in 0..d.m {
            for j in 0..d.n {
                let mut s = 0f64;
                for k in 0..d.k {
                    s += a[(i as isize * ars + k as isize * acs) as usize].to_f64()
                        * b[(k as isize * brs + j as isize * bcs) as usize].to_f64();
                }
                let at = (i as isize * crs + j as isize * ccs) as usize;
                let mut v = alpha as f64 * s;
                if let Some(beta) = beta {
                    v += beta as f64 * c[at].to_f64();
                }
                out.push((at, v));
            }
        }
        out
    }

    fn check(d: Dims, a_rm: bool, b_rm: bool, c_rm: bool, alpha: f32, beta: Option<f32>, par: Parallelism) {
        if !available() {
            return;
        }
        let st = |rows: usize, cols: usize, rm: bool| if rm { (cols as isize, 1) } else { (1, rows as isize) };
        let (sa, sb, sc) = (st(d.m, d.k, a_rm), st(d.k, d.n, b_rm), st(d.m, d.n, c_rm));
        let mut a = values(d.m * d.k, 1);
        let mut b = values(d.k * d.n, 2);
        let mut c = values(d.m * d.n, 3);
        let expect = reference(d, &a, sa, &b, sb, &c, sc, alpha, beta);
        let mat = |v: &mut Vec<bf16>, (rs, cs): (isize, isize)| Mat { ptr: v.as_mut_ptr(), rs, cs };
        let (ma, mb, mc) = (mat(&mut a, sa), mat(&mut b, sb), mat(&mut c, sc));
        // SAFETY: the buffers hold the matrices with these strides; `available` held.
        unsafe { product(d, mc, ma, mb, alpha, beta, par).unwrap() };
        for (at, want) in expect {
            let got = c[at].to_f64();
            // One bf16 rounding of the result plus f32 accumulation error.
            let tol = want.abs() * (1.0 / 128.0) + 1e-3 * (d.k as f64).sqrt();
            assert!((got - want).abs() <= tol, "{d:?} at {at}: {got} vs {want}");
        }
    }

    #[test]
    fn matches_a_wide_reference_over_shapes_and_layouts() {
        for &(m, k, n) in &[(1, 1, 1), (3, 5, 7), (12, 2, 32), (13, 33, 65), (40, 17, 31), (64, 128, 96), (20, 601, 40)]
        {
            for layout in 0..8 {
                let (a, b, c) = (layout & 1 == 0, layout & 2 == 0, layout & 4 == 0);
                check(Dims { m, k, n }, a, b, c, 1.0, None, Parallelism::None);
            }
            check(Dims { m, k, n }, true, true, true, 0.5, Some(-1.5), Parallelism::None);
            check(Dims { m, k, n }, false, true, false, 2.0, Some(1.0), Parallelism::Rayon(0));
        }
    }

    #[test]
    fn rounds_once_to_nearest_even_and_keeps_nan() {
        if !available() {
            return;
        }
        // 1 + 2^-8 is halfway between two bf16 values: nearest-even rounds it down to 1; the
        // sum over k is exact in f32, so a second rounding would be visible.
        let d = Dims { m: 1, k: 2, n: 2 };
        let mut a = [bf16::from_f32(1.0), bf16::from_f32(1.0 / 256.0)];
        let mut b = [bf16::from_f32(1.0), bf16::from_f32(f32::NAN), bf16::from_f32(1.0), bf16::from_f32(1.0)];
        let mut c = [bf16::ZERO; 2];
        let m = |p: *mut bf16, rs, cs| Mat { ptr: p, rs, cs };
        // SAFETY: the arrays hold the matrices; `available` held.
        unsafe {
            product(
                d,
                m(c.as_mut_ptr(), 2, 1),
                m(a.as_mut_ptr(), 2, 1),
                m(b.as_mut_ptr(), 2, 1),
                1.0,
                None,
                Parallelism::None,
            )
            .unwrap()
        };
        assert_eq!(c[0].to_f32(), 1.0);
        assert!(c[1].is_nan());
    }
}
