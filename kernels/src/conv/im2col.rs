//! The geometry of a 2-d convolution and the im2col / col2im transforms between an image and
//! the matrix of its receptive fields, for both memory formats.
//!
//! A convolution of an input `[N, C, H, W]` with a weight `[O, C/groups, kh, kw]` gives an
//! output `[N, O, OH, OW]`. Per image and group it is one matrix product once the receptive
//! field of every output pixel is laid out as a row (channels last) or a column (channels
//! first) of a matrix with `K = C/groups * kh * kw` entries:
//!
//! * **NHWC**: `col[p, (i, j, c)]` (`c` fastest) for output pixel `p`: each `(i, j)` is a run of
//!   `C/groups` contiguous input channels, so rows are built by copying runs.
//! * **NCHW**: `col[(c, i, j), p]`: each row is the input plane shifted by `(i, j)`, copied one
//!   output row at a time (a contiguous run when the stride is 1).
//!
//! Both are built for a block of output pixels `p0..p1` at a time, small enough to stay in
//! cache between the copy and the product. col2im is the transpose: it adds a column matrix
//! back into the image (the input gradient).

use super::elem::{FloatElem, Real};

/// Memory format of the activations a kernel reads and writes (both dense).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `[N, C, H, W]` contiguous.
    Nchw,
    /// `[N, H, W, C]` in memory (channels_last).
    Nhwc,
}

/// The sizes of one 2-d convolution `[N, C, H, W] * [O, C/groups, kh, kw] -> [N, O, OH, OW]`.
/// The output size is given (not derived), so that the same geometry describes the transposed
/// convolution, whose output is this convolution's input.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geom {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub o: usize,
    pub oh: usize,
    pub ow: usize,
    pub kh: usize,
    pub kw: usize,
    pub sh: usize,
    pub sw: usize,
    pub ph: usize,
    pub pw: usize,
    pub dh: usize,
    pub dw: usize,
    pub groups: usize,
}

impl Geom {
    /// Input channels per group.
    pub fn cg(&self) -> usize {
        self.c / self.groups
    }
    /// Output channels per group.
    pub fn og(&self) -> usize {
        self.o / self.groups
    }
    /// Length of a receptive field (the inner dimension of the products).
    pub fn k(&self) -> usize {
        self.cg() * self.kh * self.kw
    }
    /// Output pixels per image.
    pub fn m(&self) -> usize {
        self.oh * self.ow
    }
    /// Input pixels per image.
    pub fn hw(&self) -> usize {
        self.h * self.w
    }
    /// A 1x1 kernel with unit stride, no padding and an output the size of the input: the
    /// receptive-field matrix is the input itself.
    pub fn is_pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.sh == 1
            && self.sw == 1
            && self.ph == 0
            && self.pw == 0
            && self.oh == self.h
            && self.ow == self.w
    }
    /// Output pixels per block: a receptive-field block of about 256 KiB (at least 16 pixels).
    pub fn block(&self, elem_size: usize) -> usize {
        let per_pixel = (self.k() * elem_size).max(1);
        ((256 << 10) / per_pixel).clamp(16, 1024).min(self.m()).max(1)
    }

    /// The output columns `ow` of output row `oh`'s tap `j` whose input column
    /// `ow * sw + j * dw - pw` lies inside `[0, w)`, as a range.
    #[inline]
    fn valid_cols(&self, j: usize) -> (usize, usize) {
        let off = j * self.dw;
        // First ow with ow * sw + off >= pw.
        let lo = if off >= self.pw { 0 } else { (self.pw - off).div_ceil(self.sw) };
        // First ow with ow * sw + off >= w + pw.
        let hi = if off >= self.w + self.pw { 0 } else { (self.w + self.pw - off).div_ceil(self.sw) };
        (lo.min(self.ow), hi.min(self.ow).max(lo.min(self.ow)))
    }

    /// The input row of output row `oh`'s tap `i`, if inside the image.
    #[inline]
    fn input_row(&self, oh: usize, i: usize) -> Option<usize> {
        let r = oh * self.sh + i * self.dh;
        (r >= self.ph && r - self.ph < self.h).then(|| r - self.ph)
    }

    /// The input column of output column `ow`'s tap `j`, if inside the image.
    #[inline]
    fn input_col(&self, ow: usize, j: usize) -> Option<usize> {
        let c = ow * self.sw + j * self.dw;
        (c >= self.pw && c - self.pw < self.w).then(|| c - self.pw)
    }
}

/// NHWC im2col: `col[p - p0, (i, j, c)]` for output pixels `p0..p1` and the group's channels
/// `c0..c0 + C/groups` of the image at `img` (`[H, W, C]`), converted to `T`.
///
/// # Safety
/// `img` must address a dense `[H, W, C]` image of `g`.
pub(crate) unsafe fn im2col_nhwc<S: FloatElem>(
    g: &Geom,
    img: *const S,
    c0: usize,
    p0: usize,
    p1: usize,
    col: &mut [S::T],
) {
    let (cg, k) = (g.cg(), g.k());
    for (r, p) in (p0..p1).enumerate() {
        let (oh, ow) = (p / g.ow, p % g.ow);
        let row = &mut col[r * k..(r + 1) * k];
        for i in 0..g.kh {
            let seg = &mut row[i * g.kw * cg..(i + 1) * g.kw * cg];
            let Some(ih) = g.input_row(oh, i) else {
                seg.fill(S::T::ZERO);
                continue;
            };
            for j in 0..g.kw {
                let dst = &mut seg[j * cg..(j + 1) * cg];
                match g.input_col(ow, j) {
                    // SAFETY: (ih, iw) is inside the image and c0 + cg <= C.
                    Some(iw) => {
                        S::load(unsafe { std::slice::from_raw_parts(img.add((ih * g.w + iw) * g.c + c0), cg) }, dst)
                    }
                    None => dst.fill(S::T::ZERO),
                }
            }
        }
    }
}

/// NHWC col2im: adds `col[p - p0, (i, j, c)]` into the image `acc` (`[H, W, C]`, in `T`) at the
/// input pixel each entry was read from.
pub(crate) fn col2im_nhwc<T: Real>(g: &Geom, col: &[T], c0: usize, p0: usize, p1: usize, acc: &mut [T]) {
    let (cg, k) = (g.cg(), g.k());
    for (r, p) in (p0..p1).enumerate() {
        let (oh, ow) = (p / g.ow, p % g.ow);
        let row = &col[r * k..(r + 1) * k];
        for i in 0..g.kh {
            let Some(ih) = g.input_row(oh, i) else { continue };
            for j in 0..g.kw {
                let Some(iw) = g.input_col(ow, j) else { continue };
                let src = &row[(i * g.kw + j) * cg..(i * g.kw + j + 1) * cg];
                let base = (ih * g.w + iw) * g.c + c0;
                for (d, s) in acc[base..base + cg].iter_mut().zip(src) {
                    *d += *s;
                }
            }
        }
    }
}

/// Calls `f(oh, ow0, ow1, offset)` for each output row segment of the pixel block `p0..p1`
/// (`offset` is the segment's first pixel relative to `p0`).
#[inline]
fn for_row_segments(g: &Geom, p0: usize, p1: usize, mut f: impl FnMut(usize, usize, usize, usize)) {
    if p0 >= p1 {
        return;
    }
    // One division for the block, not two per segment: on small images (8 x 8) a segment is a
    // few pixels and the divisions cost more than the copy.
    let (mut oh, mut ow0) = (p0 / g.ow, p0 % g.ow);
    let mut p = p0;
    while p < p1 {
        let ow1 = g.ow.min(ow0 + (p1 - p));
        f(oh, ow0, ow1, p - p0);
        p += ow1 - ow0;
        oh += 1;
        ow0 = 0;
    }
}

/// Copies `n` elements from `src` to `dst` in fixed-size pieces. Row segments of small images
/// are a few elements long, where a `memcpy` call (what a plain copy loop compiles to) costs
/// more than the copy.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `n` elements, not overlapping.
#[inline(always)]
unsafe fn copy_piece<T: Copy>(mut dst: *mut T, mut src: *const T, mut n: usize) {
    // SAFETY (whole body): every access stays within the first `n` elements of both.
    unsafe {
        while n >= 8 {
            dst.cast::<[T; 8]>().write_unaligned(src.cast::<[T; 8]>().read_unaligned());
            (dst, src, n) = (dst.add(8), src.add(8), n - 8);
        }
        if n >= 4 {
            dst.cast::<[T; 4]>().write_unaligned(src.cast::<[T; 4]>().read_unaligned());
            (dst, src, n) = (dst.add(4), src.add(4), n - 4);
        }
        if n >= 2 {
            dst.cast::<[T; 2]>().write_unaligned(src.cast::<[T; 2]>().read_unaligned());
            (dst, src, n) = (dst.add(2), src.add(2), n - 2);
        }
        if n == 1 {
            *dst = *src;
        }
    }
}

/// `dst[r * len..][..len] = src[r * stride..][..len]` for `r < rows`.
#[inline(always)]
fn gather_runs<T: Copy>(dst: &mut [T], src: &[T], len: usize, rows: usize, stride: usize) {
    if rows == 0 || len == 0 {
        return;
    }
    assert!(dst.len() >= rows * len && src.len() >= (rows - 1) * stride + len, "run out of bounds");
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    if len == 8 {
        for r in 0..rows {
            // SAFETY: run `r` (8 elements) is inside both slices (asserted above); they do not
            // overlap (one is borrowed mutably).
            unsafe {
                d.add(r * 8).cast::<[T; 8]>().write_unaligned(s.add(r * stride).cast::<[T; 8]>().read_unaligned())
            }
        }
        return;
    }
    for r in 0..rows {
        // SAFETY: run `r` is inside both slices (asserted above); they do not overlap (one is
        // borrowed mutably).
        unsafe { copy_piece(d.add(r * len), s.add(r * stride), len) }
    }
}

/// `dst[r * stride..][..len] += src[r * len..][..len]` for `r < rows`.
#[inline(always)]
fn scatter_add_runs<T: Real>(dst: &mut [T], src: &[T], len: usize, rows: usize, stride: usize) {
    if rows == 0 || len == 0 {
        return;
    }
    assert!(src.len() >= rows * len && dst.len() >= (rows - 1) * stride + len, "run out of bounds");
    for r in 0..rows {
        // SAFETY: run `r` is inside both slices (asserted above), which do not overlap.
        unsafe {
            let (mut d, mut s, mut n) = (dst.as_mut_ptr().add(r * stride), src.as_ptr().add(r * len), len);
            while n >= 8 {
                let (x, y) = (d.cast::<[T; 8]>().read_unaligned(), s.cast::<[T; 8]>().read_unaligned());
                d.cast::<[T; 8]>().write_unaligned(std::array::from_fn(|q| x[q] + y[q]));
                (d, s, n) = (d.add(8), s.add(8), n - 8);
            }
            for q in 0..n {
                *d.add(q) = *d.add(q) + *s.add(q);
            }
        }
    }
}

/// A run of output pixels of a block: `rows` rows of `len` pixels from `(oh, ow0)`, starting
/// `off` pixels after the block's first.
#[derive(Clone, Copy, Default)]
struct Run {
    oh: usize,
    ow0: usize,
    len: usize,
    rows: usize,
    off: usize,
}

/// The runs of the pixel block `p0..p1` (non-empty): the segment of a partial first row, all
/// whole rows at once, the segment of a partial last row. Computed once per block: the
/// divisions cost more than a tap's copy on small images.
fn runs(g: &Geom, p0: usize, p1: usize) -> ([Run; 3], usize) {
    let mut out = [Run::default(); 3];
    let mut count = 0;
    let (mut oh, ow0) = (p0 / g.ow, p0 % g.ow);
    let mut p = p0;
    if ow0 > 0 {
        let len = (g.ow - ow0).min(p1 - p);
        out[count] = Run { oh, ow0, len, rows: 1, off: 0 };
        count += 1;
        p += len;
        oh += 1;
    }
    let full = (p1 - p) / g.ow;
    if full > 0 {
        out[count] = Run { oh, ow0: 0, len: g.ow, rows: full, off: p - p0 };
        count += 1;
        p += full * g.ow;
        oh += full;
    }
    if p < p1 {
        out[count] = Run { oh, ow0: 0, len: p1 - p, rows: 1, off: p - p0 };
        count += 1;
    }
    (out, count)
}

/// A channel plane zero-padded so that every tap of every output pixel reads inside it: `rows`
/// x `cols` with the image at `(ph, pw)`. Only for unit horizontal stride, where a tap of an
/// output row segment is then one contiguous run of the padded row.
struct Padded {
    rows: usize,
    cols: usize,
}

impl Padded {
    fn of(g: &Geom) -> Padded {
        let rows = (g.h + 2 * g.ph).max((g.oh.max(1) - 1) * g.sh + (g.kh - 1) * g.dh + 1);
        let cols = (g.w + 2 * g.pw).max((g.ow.max(1) - 1) + (g.kw - 1) * g.dw + 1);
        Padded { rows, cols }
    }

    fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// The padded rows that the taps of output pixels `p0..p1` (non-empty) read.
    fn padded_rows(&self, g: &Geom, p0: usize, p1: usize) -> std::ops::Range<usize> {
        let (first, last) = (p0 / g.ow.max(1), (p1 - 1) / g.ow.max(1));
        first * g.sh..(last * g.sh + (g.kh - 1) * g.dh + 1).min(self.rows)
    }

    /// The image rows among [`Self::padded_rows`].
    fn image_rows(&self, g: &Geom, p0: usize, p1: usize) -> std::ops::Range<usize> {
        let r = self.padded_rows(g, p0, p1);
        r.start.saturating_sub(g.ph).min(g.h)..r.end.saturating_sub(g.ph).min(g.h)
    }

    /// Offset in the padded plane of output pixel `(oh, ow)`'s tap `(i, j)`.
    #[inline(always)]
    fn tap(&self, g: &Geom, oh: usize, ow: usize, i: usize, j: usize) -> usize {
        (oh * g.sh + i * g.dh) * self.cols + ow + j * g.dw
    }
}

/// NCHW im2col: `col[(c, i, j), p - p0]` (rows `p1 - p0` long) for output pixels `p0..p1` and
/// the group's channels `c0..c0 + C/groups` of the image at `img` (`[C, H, W]`).
///
/// With unit horizontal stride each channel is first copied into a zero-padded plane, so that
/// every row segment is one branch-free run (the fast path for small images, where segments are
/// a few elements); otherwise segments are clipped against the image edges.
///
/// # Safety
/// `img` must address a dense `[C, H, W]` image of `g`.
pub(crate) unsafe fn im2col_nchw<S: FloatElem>(
    g: &Geom,
    img: *const S,
    c0: usize,
    p0: usize,
    p1: usize,
    col: &mut [S::T],
) {
    if g.sw != 1 || p0 >= p1 {
        return im2col_nchw_clipped(g, img, c0, p0, p1, col);
    }
    let mb = p1 - p0;
    let pad = Padded::of(g);
    let (runs, count) = runs(g, p0, p1);
    let runs = &runs[..count];
    // Zeroed once: each channel overwrites only the interior.
    let mut plane = vec![S::T::ZERO; pad.len()];
    for c in 0..g.cg() {
        // SAFETY: channel c0 + c < C of the image, `h * w` elements.
        let src = unsafe { std::slice::from_raw_parts(img.add((c0 + c) * g.hw()), g.hw()) };
        for r in pad.image_rows(g, p0, p1) {
            let dst = &mut plane[(r + g.ph) * pad.cols + g.pw..][..g.w];
            let src = &src[r * g.w..(r + 1) * g.w];
            if S::SAME {
                // SAFETY: `S` is `S::T` (`SAME`), so the slice is reinterpreted as itself.
                gather_runs(
                    dst,
                    unsafe { std::slice::from_raw_parts(src.as_ptr().cast::<S::T>(), src.len()) },
                    g.w,
                    1,
                    0,
                );
            } else {
                S::load(src, dst);
            }
        }
        for i in 0..g.kh {
            for j in 0..g.kw {
                let row = &mut col[((c * g.kh + i) * g.kw + j) * mb..][..mb];
                for r in runs {
                    let src = &plane[pad.tap(g, r.oh, r.ow0, i, j)..];
                    gather_runs(&mut row[r.off..], src, r.len, r.rows, g.sh * pad.cols);
                }
            }
        }
    }
}

/// [`im2col_nchw`] for any stride: segments clipped against the image edges.
///
/// # Safety
/// As for [`im2col_nchw`].
unsafe fn im2col_nchw_clipped<S: FloatElem>(
    g: &Geom,
    img: *const S,
    c0: usize,
    p0: usize,
    p1: usize,
    col: &mut [S::T],
) {
    let mb = p1 - p0;
    for c in 0..g.cg() {
        // SAFETY: channel c0 + c < C of the image.
        let plane = unsafe { img.add((c0 + c) * g.hw()) };
        for i in 0..g.kh {
            for j in 0..g.kw {
                let row = &mut col[((c * g.kh + i) * g.kw + j) * mb..][..mb];
                let (lo, hi) = g.valid_cols(j);
                for_row_segments(g, p0, p1, |oh, ow0, ow1, off| {
                    let dst = &mut row[off..off + (ow1 - ow0)];
                    let Some(ih) = g.input_row(oh, i) else {
                        dst.fill(S::T::ZERO);
                        return;
                    };
                    let (a, b) = (lo.clamp(ow0, ow1), hi.clamp(ow0, ow1));
                    dst[..a - ow0].fill(S::T::ZERO);
                    dst[b - ow0..].fill(S::T::ZERO);
                    if a < b {
                        let iw0 = a * g.sw + j * g.dw - g.pw;
                        // SAFETY: input row ih, columns iw0 .. iw0 + (b - a - 1) * sw, all inside the
                        // plane (by `valid_cols`).
                        unsafe {
                            let src = plane.add(ih * g.w + iw0);
                            let dst = &mut dst[a - ow0..b - ow0];
                            if g.sw == 1 {
                                S::load(std::slice::from_raw_parts(src, b - a), dst);
                            } else {
                                for (q, d) in dst.iter_mut().enumerate() {
                                    *d = (*src.add(q * g.sw)).to_t();
                                }
                            }
                        }
                    }
                });
            }
        }
    }
}

/// NCHW col2im: adds `col[(c, i, j), p - p0]` into the image `acc` (`[C, H, W]`, in `T`).
///
/// With unit horizontal stride the taps of a channel are summed in a zero-padded plane (one
/// branch-free run per row segment) whose interior is then added to the image, as
/// [`im2col_nchw`] reads it; otherwise segments are clipped against the image edges.
pub(crate) fn col2im_nchw<T: Real>(g: &Geom, col: &[T], c0: usize, p0: usize, p1: usize, acc: &mut [T]) {
    if g.sw != 1 || p0 >= p1 {
        return col2im_nchw_clipped(g, col, c0, p0, p1, acc);
    }
    let (mb, hw) = (p1 - p0, g.hw());
    let pad = Padded::of(g);
    let (touched, rows) = (pad.padded_rows(g, p0, p1), pad.image_rows(g, p0, p1));
    let (runs, count) = runs(g, p0, p1);
    let runs = &runs[..count];
    let mut plane = vec![T::ZERO; pad.len()];
    for c in 0..g.cg() {
        if c > 0 {
            plane[touched.start * pad.cols..touched.end * pad.cols].fill(T::ZERO);
        }
        for i in 0..g.kh {
            for j in 0..g.kw {
                let row = &col[((c * g.kh + i) * g.kw + j) * mb..][..mb];
                for r in runs {
                    let dst = &mut plane[pad.tap(g, r.oh, r.ow0, i, j)..];
                    scatter_add_runs(dst, &row[r.off..], r.len, r.rows, g.sh * pad.cols);
                }
            }
        }
        let img = &mut acc[(c0 + c) * hw..(c0 + c + 1) * hw];
        for r in rows.clone() {
            scatter_add_runs(&mut img[r * g.w..], &plane[(r + g.ph) * pad.cols + g.pw..], g.w, 1, 0);
        }
    }
}

/// [`col2im_nchw`] for any stride: segments clipped against the image edges.
fn col2im_nchw_clipped<T: Real>(g: &Geom, col: &[T], c0: usize, p0: usize, p1: usize, acc: &mut [T]) {
    let mb = p1 - p0;
    let hw = g.hw();
    for c in 0..g.cg() {
        let plane = &mut acc[(c0 + c) * hw..(c0 + c + 1) * hw];
        for i in 0..g.kh {
            for j in 0..g.kw {
                let row = &col[((c * g.kh + i) * g.kw + j) * mb..][..mb];
                let (lo, hi) = g.valid_cols(j);
                for_row_segments(g, p0, p1, |oh, ow0, ow1, off| {
                    let Some(ih) = g.input_row(oh, i) else { return };
                    let (a, b) = (lo.clamp(ow0, ow1), hi.clamp(ow0, ow1));
                    if a >= b {
                        return;
                    }
                    let iw0 = a * g.sw + j * g.dw - g.pw;
                    let src = &row[off + (a - ow0)..off + (b - ow0)];
                    let dst = &mut plane[ih * g.w + iw0..];
                    if g.sw == 1 {
                        for (d, s) in dst[..b - a].iter_mut().zip(src) {
                            *d += *s;
                        }
                    } else {
                        for (q, s) in src.iter().enumerate() {
                            dst[q * g.sw] += *s;
                        }
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every geometry with unit horizontal stride in a small range (output sizes as a
    /// convolution's, and one larger, as a transposed convolution may give), every pixel block
    /// split: the padded fast paths give exactly what the clipped paths give.
    #[test]
    fn padded_paths_match_clipped_paths() {
        let mut checked = 0;
        for (h, w) in [(1, 1), (3, 5), (6, 4), (8, 8)] {
            for (kh, kw) in [(1, 1), (2, 3), (3, 3)] {
                for (sh, ph, pw, dh, dw) in
                    [(1, 0, 0, 1, 1), (1, 1, 1, 1, 1), (2, 2, 0, 1, 2), (1, 1, 3, 2, 1), (3, 0, 1, 1, 1)]
                {
                    let (eh, ew) = (h + 2 * ph, w + 2 * pw);
                    let (fh, fw) = (dh * (kh - 1) + 1, dw * (kw - 1) + 1);
                    if eh < fh || ew < fw {
                        continue;
                    }
                    let (oh, ow) = ((eh - fh) / sh + 1, ew - fw + 1);
                    let c = 3;
                    let g = Geom { n: 1, c, h, w, o: 2, oh, ow, kh, kw, sh, sw: 1, ph, pw, dh, dw, groups: 1 };
                    let img: Vec<f64> = (0..c * h * w).map(|v| (v * 37 % 101) as f64 - 50.0).collect();
                    let m = g.m();
                    for mb in [1, 3, m.div_ceil(2), m] {
                        for p0 in (0..m).step_by(mb) {
                            let p1 = (p0 + mb).min(m);
                            let k = g.k();
                            let (mut fast, mut clipped) =
                                (vec![f64::NAN; k * (p1 - p0)], vec![f64::NAN; k * (p1 - p0)]);
                            // SAFETY: `img` is a dense [C, H, W] image of `g`.
                            unsafe {
                                im2col_nchw(&g, img.as_ptr(), 0, p0, p1, &mut fast);
                                im2col_nchw_clipped(&g, img.as_ptr(), 0, p0, p1, &mut clipped);
                            }
                            assert_eq!(fast, clipped, "im2col {g:?} block {p0}..{p1}");
                            let col: Vec<f64> = (0..fast.len()).map(|v| (v * 13 % 29) as f64).collect();
                            let (mut fast, mut clipped) = (img.clone(), img.clone());
                            col2im_nchw(&g, &col, 0, p0, p1, &mut fast);
                            col2im_nchw_clipped(&g, &col, 0, p0, p1, &mut clipped);
                            assert_eq!(fast, clipped, "col2im {g:?} block {p0}..{p1}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 500, "{checked} blocks checked");
    }
}
