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

/// NCHW im2col: `col[(c, i, j), p - p0]` (rows `p1 - p0` long) for output pixels `p0..p1` and
/// the group's channels `c0..c0 + C/groups` of the image at `img` (`[C, H, W]`).
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
pub(crate) fn col2im_nchw<T: Real>(g: &Geom, col: &[T], c0: usize, p0: usize, p1: usize, acc: &mut [T]) {
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
