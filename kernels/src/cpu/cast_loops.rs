//! Element conversions between every pair of dtypes (see [`CastTo`] for the rules), and the
//! loops `copy_` runs: a typed conversion loop per dtype pair, plain word copies for equal
//! dtypes, and a cache-tiled path for 2-D transposes.

use super::opmath::ReducedFloat;
use super::simd::{self, Map1};
use half::{bf16, f16};
use oxten_runtime::iter::GRAIN_SIZE;
use oxten_runtime::iter::{parallel_chunks, SendPtr, TensorIterator};
use oxten_runtime::match_dtype;
use oxten_runtime::tensor::Element;
use std::mem::size_of;

/// Conversion from `Self` to `D` with C's (PyTorch's `static_cast`) rules: float → int
/// truncates toward zero (out of range is undefined in C; here float → 8/16-bit ints wrap
/// through i64 and wider ones saturate, NaN gives 0); int → int wraps; anything → bool is
/// `x != 0`; bool → number is 0 or 1; to f16/bf16 rounds to nearest-even.
pub trait CastTo<D>: Copy {
    fn cast(self) -> D;
}

macro_rules! cast_prim {
    ($s:ty => $($d:ty),*) => {$(
        impl CastTo<$d> for $s {
            #[inline(always)]
            fn cast(self) -> $d { self as $d }
        }
    )*};
}
cast_prim!(u8 => u8, i8, i16, i32, i64, f32, f64);
cast_prim!(i8 => u8, i8, i16, i32, i64, f32, f64);
cast_prim!(i16 => u8, i8, i16, i32, i64, f32, f64);
cast_prim!(i32 => u8, i8, i16, i32, i64, f32, f64);
cast_prim!(i64 => u8, i8, i16, i32, i64, f32, f64);
cast_prim!(f32 => i32, i64, f32, f64);
cast_prim!(f64 => i32, i64, f32, f64);

// Float → 8- and 16-bit integers go through i64 first, so that e.g. -2.7 → u8 wraps (254) the
// way x86 builds of PyTorch do instead of saturating to 0.
macro_rules! cast_float_small {
    ($s:ty => $($d:ty),*) => {$(
        impl CastTo<$d> for $s {
            #[inline(always)]
            fn cast(self) -> $d { self as i64 as $d }
        }
    )*};
}
cast_float_small!(f32 => u8, i8, i16);
cast_float_small!(f64 => u8, i8, i16);

macro_rules! cast_bool {
    ($($d:ty: $zero:expr),*) => {$(
        impl CastTo<$d> for bool {
            #[inline(always)]
            fn cast(self) -> $d { self as u8 as $d }
        }
        impl CastTo<bool> for $d {
            #[inline(always)]
            #[allow(clippy::float_cmp)]
            fn cast(self) -> bool { self != $zero }
        }
    )*};
}
cast_bool!(u8: 0, i8: 0, i16: 0, i32: 0, i64: 0, f32: 0.0, f64: 0.0);
impl CastTo<bool> for bool {
    #[inline(always)]
    fn cast(self) -> bool {
        self
    }
}

// f16 / bf16 from and to everything.
macro_rules! cast_half {
    ($h:ty) => {
        impl CastTo<$h> for $h {
            #[inline(always)]
            fn cast(self) -> $h { self }
        }
        cast_half!(@from $h; u8 => f32, i8 => f32, i16 => f32, i32 => f64, i64 => f64, f32 => f32, f64 => f64);
        cast_half!(@to $h; u8, i8, i16, i32, i64, f32, f64);
        impl CastTo<$h> for bool {
            #[inline(always)]
            fn cast(self) -> $h { <$h>::from_f32(self as u8 as f32) }
        }
        impl CastTo<bool> for $h {
            #[inline(always)]
            fn cast(self) -> bool { self.to_f32() != 0.0 }
        }
    };
    (@from $h:ty; $($s:ty => $via:ident),*) => {$(
        impl CastTo<$h> for $s {
            #[inline(always)]
            fn cast(self) -> $h { cast_half!(@make $h, $via, self) }
        }
    )*};
    (@make $h:ty, f32, $v:expr) => { <$h as ReducedFloat>::from_f32($v as f32) };
    (@make $h:ty, f64, $v:expr) => { <$h>::from_f64($v as f64) };
    (@to $h:ty; $($d:ty),*) => {$(
        impl CastTo<$d> for $h {
            #[inline(always)]
            fn cast(self) -> $d { CastTo::<$d>::cast(<$h as ReducedFloat>::to_f32(self)) }
        }
    )*};
}
cast_half!(f16);
cast_half!(bf16);
impl CastTo<bf16> for f16 {
    #[inline(always)]
    fn cast(self) -> bf16 {
        bf16::from_f32(self.to_f32())
    }
}
impl CastTo<f16> for bf16 {
    #[inline(always)]
    fn cast(self) -> f16 {
        f16::from_f32(self.to_f32())
    }
}

/// Converts one element (any dtype pair).
#[inline(always)]
pub(crate) fn cast_elem<S: CastTo<D>, D>(s: S) -> D {
    s.cast()
}

/// Runs the conversion loop for an iterator with one output of dtype `D` and one input of dtype
/// `S` (any strides).
fn cast_loop<S: Element + CastTo<D>, D: Element>(iter: &TensorIterator) {
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            let nt = ptrs.len();
            let (ed, es) = (size_of::<D>() as isize, size_of::<S>() as isize);
            for j in 0..n1 {
                let o = ptrs[0].wrapping_offset(j as isize * s[nt]);
                let a = ptrs[1].wrapping_offset(j as isize * s[nt + 1]);
                // SAFETY: the iterator's pointers and byte strides address `n0` valid elements of
                // the output (dtype D) and input (dtype S); copy_ made sure they do not overlap.
                unsafe {
                    if s[0] == ed && s[1] == es {
                        // Vectorized per instruction-set level (bf16/f16 rounding, int ↔ float).
                        simd::run(Map1 { o: o as *mut D, a: a as *const S, n: n0, f: cast_elem::<S, D> });
                    } else {
                        for i in 0..n0 {
                            let v: S = *(a.offset(i as isize * s[1]) as *const S);
                            *(o.offset(i as isize * s[0]) as *mut D) = cast_elem(v);
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// Same-dtype copy over arbitrary strides, moving elements as plain `W`-sized words.
fn same_dtype_loop<W: Copy>(iter: &TensorIterator) {
    let e = size_of::<W>() as isize;
    if transposed_2d(iter, e) {
        return tiled_copy::<W>(iter);
    }
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            let nt = ptrs.len();
            for j in 0..n1 {
                let o = ptrs[0].wrapping_offset(j as isize * s[nt]);
                let a = ptrs[1].wrapping_offset(j as isize * s[nt + 1]);
                // SAFETY: as in `cast_loop`; both operands hold `W`-sized elements.
                unsafe {
                    if s[0] == e && s[1] == e {
                        std::ptr::copy_nonoverlapping(a as *const W, o as *mut W, n0);
                    } else {
                        for i in 0..n0 {
                            *(o.offset(i as isize * s[0]) as *mut W) = *(a.offset(i as isize * s[1]) as *const W);
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// A 2-D iteration where the output is contiguous along dim 0 and the input along dim 1 (a
/// transpose, e.g. `x.t().contiguous()`).
fn transposed_2d(iter: &TensorIterator, e: isize) -> bool {
    let (so, si) = (iter.strides(0), iter.strides(1));
    iter.ndim() == 2 && !iter.is_meta() && so[0] == e as i64 && si[1] == e as i64 && si[0] != e as i64
}

/// Side of the square tiles of [`tiled_copy`]: 64×64 tiles of 8-byte elements are 32 KiB.
const TILE: usize = 64;

/// Copies a transpose tile by tile so that both sides stay in cache, with tile rows split
/// across threads.
fn tiled_copy<W: Copy>(iter: &TensorIterator) {
    let (n0, n1) = (iter.shape()[0] as usize, iter.shape()[1] as usize);
    let (so, si) = (iter.strides(0), iter.strides(1));
    let (o1, i0) = (so[1] as isize, si[0] as isize);
    // SAFETY: the tiles below cover the whole iteration, i.e. every element of the output (a
    // given `copy_` destination, written only here); `assume_init` follows.
    let (dst, deferred) = unsafe { iter.operand(0).data_ptr_for_overwrite() };
    let (dst, src) = (SendPtr(dst), SendPtr(iter.data_ptr(1)));
    let bands = n1.div_ceil(TILE);
    let chunks = parallel_chunks(n0 * n1, GRAIN_SIZE).min(bands);
    let per = bands.div_ceil(chunks.max(1));
    let tiles = Tiles { n0, n1, i0, o1, per, bands };
    let run = |c: usize| {
        // SAFETY: `c` is one of the `chunks` chunks of the iteration; pointers and strides come
        // from the iterator.
        unsafe { tiles.copy_chunk::<W>(c, src.get() as *const u8, dst.get()) };
    };
    if chunks <= 1 {
        run(0);
    } else {
        oxten_runtime::parallel::for_each(chunks, run);
    }
    if deferred {
        // SAFETY: every element of the output was written above.
        unsafe { iter.operand(0).storage().assume_init() };
    }
}

/// Writes the transpose of a `rows x cols` matrix of 4-byte elements: element `(i, j)` of the
/// source (at `src + i * src_row + j`) goes to `dst + j * dst_row + i`, strides in elements.
/// This is [`tiled_copy`]'s transpose on one thread, for kernels that transpose blocks of their
/// own results as they go (the matrix products' column-major staging matrix).
///
/// # Safety
/// Both matrices must be valid for those strides (`rows` x `cols` elements read at `src`,
/// `cols` x `rows` written at `dst`) and must not overlap.
pub unsafe fn transpose_4byte(
    rows: usize,
    cols: usize,
    src: *const u32,
    src_row: isize,
    dst: *mut u32,
    dst_row: isize,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    let bands = cols.div_ceil(TILE);
    let tiles = Tiles { n0: rows, n1: cols, i0: src_row * 4, o1: dst_row * 4, per: bands, bands };
    // SAFETY: one chunk holding every band, so all of the caller's matrix (valid, by the
    // caller's contract) is copied.
    unsafe { tiles.copy_chunk::<u32>(0, src as *const u8, dst as *mut u8) }
}

/// The tiling of a 2-D transpose (see [`tiled_copy`]): `bands` bands of `TILE` output
/// columns, `per` bands per chunk; byte strides `i0` (input, dim 0) and `o1` (output, dim 1).
#[derive(Clone, Copy)]
struct Tiles {
    n0: usize,
    n1: usize,
    i0: isize,
    o1: isize,
    per: usize,
    bands: usize,
}

impl Tiles {
    /// Copies chunk `c`'s bands: whole 8 x 8 blocks through `block(src, src_row, dst,
    /// dst_row)`, then the tile edges one element at a time.
    ///
    /// # Safety
    /// `a` and `o` are the input and output of the iteration the tiling was made for, with
    /// elements of `W` bytes; chunks write disjoint output rows.
    #[inline(always)]
    unsafe fn band<W: Copy>(
        &self,
        c: usize,
        a: *const u8,
        o: *mut u8,
        block: impl Fn(*const u8, isize, *mut u8, isize),
    ) {
        let Tiles { n0, n1, i0, o1, per, bands } = *self;
        let e = size_of::<W>();
        for band in c * per..((c + 1) * per).min(bands) {
            let j_end = ((band + 1) * TILE).min(n1);
            for i_start in (0..n0).step_by(TILE) {
                let i_end = (i_start + TILE).min(n0);
                // Whole 8 x 8 blocks as register transposes, then the tile's edges one by one.
                let (i_blocks, j_blocks) = ((i_end - i_start) / 8 * 8, (j_end - band * TILE) / 8 * 8);
                for jb in (band * TILE..band * TILE + j_blocks).step_by(8) {
                    for ib in (i_start..i_start + i_blocks).step_by(8) {
                        // The block's rows ib..ib + 8 and columns jb..jb + 8 lie in the
                        // iteration shape (as below).
                        let (s, d) = (
                            a.wrapping_offset(ib as isize * i0 + (jb * e) as isize),
                            o.wrapping_offset((ib * e) as isize + jb as isize * o1),
                        );
                        block(s, i0, d, o1);
                    }
                }
                for j in band * TILE..j_end {
                    // Columns covered by the blocks only have their rows below the blocks left.
                    let i_from = if j < band * TILE + j_blocks { i_start + i_blocks } else { i_start };
                    for i in i_from..i_end {
                        // SAFETY: (i, j) lies in the iteration shape, so both addresses are valid
                        // elements (strides in bytes, elements of size W, output contiguous along
                        // dim 0 and input along dim 1); bands are disjoint output rows.
                        unsafe {
                            let src_p = a.offset(i as isize * i0).add(j * e);
                            let dst_p = o.add(i * e).offset(j as isize * o1);
                            *(dst_p as *mut W) = *(src_p as *const W);
                        }
                    }
                }
            }
        }
    }

    /// Copies chunk `c`'s bands with the fastest whole-block transpose for `W`: AVX registers
    /// for 4-byte elements where the CPU has them, [`transpose8`] otherwise.
    ///
    /// # Safety
    /// As for [`Tiles::band`].
    unsafe fn copy_chunk<W: Copy>(&self, c: usize, a: *const u8, o: *mut u8) {
        #[cfg(target_arch = "x86_64")]
        if size_of::<W>() == 4 && simd::simd_level() >= simd::SimdLevel::Avx2 {
            // SAFETY: the level check: the CPU has AVX; the rest is the caller's contract.
            return unsafe { self.band_avx(c, a, o) };
        }
        // SAFETY: the caller's contract; `band` passes whole 8 x 8 blocks inside the iteration.
        unsafe { self.band::<W>(c, a, o, |s, sr, d, dr| transpose8::<W>(s as *const W, sr, d as *mut W, dr)) }
    }

    /// [`Tiles::band`] for 4-byte elements with AVX 8 x 8 register transposes.
    ///
    /// # Safety
    /// As for [`Tiles::band`]; the CPU has AVX.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn band_avx(&self, c: usize, a: *const u8, o: *mut u8) {
        // SAFETY: forwarded from the caller; `band` hands `transpose8_avx` whole 8 x 8 blocks.
        unsafe { self.band::<u32>(c, a, o, |s, sr, d, dr| transpose8_avx(s, sr, d, dr)) }
    }
}

/// Transposes one 8 x 8 block of 4-byte elements (as [`transpose8`]) in eight 256-bit
/// registers: each register is loaded from two half-rows four rows apart, so that the lane
/// crossing is done by the loads, and two rounds of in-lane shuffles finish the transpose.
///
/// # Safety
/// As for [`transpose8`]; the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx")]
unsafe fn transpose8_avx(src: *const u8, src_row: isize, dst: *mut u8, dst_row: isize) {
    use std::arch::x86_64::*;
    let row = |r: usize, c: usize| src.wrapping_offset(r as isize * src_row).wrapping_add(c * 4) as *const f32;
    // SAFETY: the caller's contract: rows 0..8 of the source block hold 8 elements each.
    let r: [__m256; 8] = std::array::from_fn(|k| unsafe {
        let (rr, cc) = (k % 4, (k / 4) * 4);
        _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(row(rr, cc))), _mm_loadu_ps(row(rr + 4, cc)), 1)
    });
    // r[k] = [row k % 4, cols c..c + 4 | row k % 4 + 4, cols c..c + 4] with c = 0 for k < 4, else 4.
    let t: [__m256; 8] = [
        _mm256_unpacklo_ps(r[0], r[1]),
        _mm256_unpackhi_ps(r[0], r[1]),
        _mm256_unpacklo_ps(r[2], r[3]),
        _mm256_unpackhi_ps(r[2], r[3]),
        _mm256_unpacklo_ps(r[4], r[5]),
        _mm256_unpackhi_ps(r[4], r[5]),
        _mm256_unpacklo_ps(r[6], r[7]),
        _mm256_unpackhi_ps(r[6], r[7]),
    ];
    let out: [__m256; 8] = [
        _mm256_shuffle_ps::<0x44>(t[0], t[2]),
        _mm256_shuffle_ps::<0xEE>(t[0], t[2]),
        _mm256_shuffle_ps::<0x44>(t[1], t[3]),
        _mm256_shuffle_ps::<0xEE>(t[1], t[3]),
        _mm256_shuffle_ps::<0x44>(t[4], t[6]),
        _mm256_shuffle_ps::<0xEE>(t[4], t[6]),
        _mm256_shuffle_ps::<0x44>(t[5], t[7]),
        _mm256_shuffle_ps::<0xEE>(t[5], t[7]),
    ];
    for (k, v) in out.iter().enumerate() {
        // SAFETY: the caller's contract: destination rows 0..8 hold 8 elements each.
        unsafe { _mm256_storeu_ps(dst.offset(k as isize * dst_row) as *mut f32, *v) };
    }
}

/// Transposes one 8 x 8 block: row `r` of the source (8 contiguous elements, rows
/// `src_row` bytes apart) becomes column `r` of the destination (rows `dst_row` bytes apart).
/// 4-byte elements go through SSE2 (part of x86-64) as four 4 x 4 register transposes, so the
/// strided side is read and written as whole vectors; other sizes element by element.
///
/// # Safety
/// Both blocks must be valid (8 rows of 8 elements at those strides) and not overlap.
#[inline(always)]
unsafe fn transpose8<W: Copy>(src: *const W, src_row: isize, dst: *mut W, dst_row: isize) {
    #[cfg(target_arch = "x86_64")]
    if size_of::<W>() == 4 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's contract; SSE2 is always present on x86-64; unaligned loads
        // and stores of 4 elements within the block's rows.
        unsafe {
            let at = |p: *const W, row: isize, r: usize, c: usize| {
                (p as *const u8).offset(r as isize * row).add(c * 4) as *const f32
            };
            for (r0, c0) in [(0, 0), (0, 4), (4, 0), (4, 4)] {
                let mut x0 = _mm_loadu_ps(at(src, src_row, r0, c0));
                let mut x1 = _mm_loadu_ps(at(src, src_row, r0 + 1, c0));
                let mut x2 = _mm_loadu_ps(at(src, src_row, r0 + 2, c0));
                let mut x3 = _mm_loadu_ps(at(src, src_row, r0 + 3, c0));
                let (t0, t1) = (_mm_unpacklo_ps(x0, x1), _mm_unpacklo_ps(x2, x3));
                let (t2, t3) = (_mm_unpackhi_ps(x0, x1), _mm_unpackhi_ps(x2, x3));
                (x0, x1) = (_mm_movelh_ps(t0, t1), _mm_movehl_ps(t1, t0));
                (x2, x3) = (_mm_movelh_ps(t2, t3), _mm_movehl_ps(t3, t2));
                // Source block (r0, c0) lands at destination block (c0, r0).
                let out = |k: usize| at(dst, dst_row, c0 + k, r0) as *mut f32;
                _mm_storeu_ps(out(0), x0);
                _mm_storeu_ps(out(1), x1);
                _mm_storeu_ps(out(2), x2);
                _mm_storeu_ps(out(3), x3);
            }
        }
        return;
    }
    // SAFETY: the caller's contract.
    unsafe {
        for r in 0..8 {
            for c in 0..8 {
                let s = (src as *const u8).offset(r as isize * src_row).add(c * size_of::<W>()) as *const W;
                let d = (dst as *mut u8).offset(c as isize * dst_row).add(r * size_of::<W>()) as *mut W;
                *d = *s;
            }
        }
    }
}

/// Converts input 0 into output 0 of a built iterator, for any pair of dtypes.
pub(crate) fn cast_kernel(iter: &TensorIterator) {
    let (dst, src) = (iter.dtype(0), iter.dtype(1));
    if dst == src {
        return match dst.size() {
            1 => same_dtype_loop::<u8>(iter),
            2 => same_dtype_loop::<u16>(iter),
            4 => same_dtype_loop::<u32>(iter),
            _ => same_dtype_loop::<u64>(iter),
        };
    }
    match_dtype!(src, S => match_dtype!(dst, D => cast_loop::<S, D>(iter)))
}
