//! The three convolution kernels on dense buffers: forward (`y = x * w + b`), the input gradient
//! (`gx = gy *ᵀ w`, which is also the transposed convolution's forward) and the weight gradient
//! (`gw = Σ x ⋆ gy`), each for NCHW and NHWC activations, as im2col (skipped for 1x1 kernels) +
//! one `gemm` per block of output pixels and group.
//!
//! Weights are packed once per call into the layout the products read, in the arithmetic type:
//! NHWC `[groups][K = (i, j, c)][O/groups]` (output channels contiguous, like the output rows);
//! NCHW `[groups][O/groups][K = (c, i, j)]`, which is the contiguous weight itself.
//!
//! Parallelism: the forward splits the work into (image, pixel block) tasks over the thread pool,
//! each running single-threaded products; the weight gradient does the same into one
//! accumulator per worker chunk (summed in a fixed order, so results do not depend on
//! scheduling); the input gradient, which scatters overlapping receptive fields back into its
//! image, runs one task per image, or multi-threaded products when there are fewer images than
//! threads.

use super::elem::{FloatElem, Real, SharedPtr};
use super::gemm::{gemm, Mat};
use super::im2col::{col2im_nchw, col2im_nhwc, im2col_nchw, im2col_nhwc, Geom, Layout};

/// Scratch buffers of one worker.
struct Scratch<T> {
    col: Vec<T>,
    tmp: Vec<T>,
    img: Vec<T>,
}

impl<T> Default for Scratch<T> {
    fn default() -> Self {
        Scratch { col: Vec::new(), tmp: Vec::new(), img: Vec::new() }
    }
}

/// `v` resized to `n` elements (contents unspecified: every user overwrites them).
fn sized<T: Real>(v: &mut Vec<T>, n: usize) -> &mut [T] {
    if v.len() < n {
        v.resize(n, T::ZERO);
    }
    &mut v[..n]
}

/// Number of blocks of `b` pixels in `m`.
fn blocks(m: usize, b: usize) -> usize {
    m.div_ceil(b.max(1))
}

// ---------------------------------------------------------------------------------------------
// weights
// ---------------------------------------------------------------------------------------------

/// Packs a dense contiguous weight `[O, C/groups, kh, kw]` (`w`, in storage type `S`) for
/// `layout` (see the module docs).
pub(crate) fn pack_weight<S: FloatElem>(g: &Geom, layout: Layout, w: &[S]) -> Vec<S::T> {
    let (cg, og, k, taps) = (g.cg(), g.og(), g.k(), g.kh * g.kw);
    let mut out = vec![S::T::ZERO; g.o * k];
    match layout {
        Layout::Nchw => S::load(w, &mut out),
        Layout::Nhwc => {
            for grp in 0..g.groups {
                let dst = &mut out[grp * k * og..(grp + 1) * k * og];
                for o in 0..og {
                    let src = &w[(grp * og + o) * k..(grp * og + o + 1) * k];
                    for c in 0..cg {
                        for t in 0..taps {
                            dst[(t * cg + c) * og + o] = src[c * taps + t].to_t();
                        }
                    }
                }
            }
        }
    }
    out
}

/// Unpacks a weight gradient packed for `layout` into `dst`, laid out as the weight of that
/// layout: contiguous `[O, C/groups, kh, kw]` (NCHW) or channels-last `[O, kh, kw, C/groups]`
/// in memory (NHWC).
pub(crate) fn unpack_weight<S: FloatElem>(g: &Geom, layout: Layout, packed: &[S::T], dst: &mut [S]) {
    let (cg, og, k, taps) = (g.cg(), g.og(), g.k(), g.kh * g.kw);
    match layout {
        Layout::Nchw => S::store(packed, dst),
        Layout::Nhwc => {
            for grp in 0..g.groups {
                let src = &packed[grp * k * og..(grp + 1) * k * og];
                for o in 0..og {
                    let row = &mut dst[(grp * og + o) * k..(grp * og + o + 1) * k];
                    for (q, d) in row.iter_mut().enumerate() {
                        // Channels-last weight: q = t * cg + c, the packed row order.
                        *d = S::from_t(src[q * og + o]);
                    }
                }
            }
        }
    }
    let _ = (cg, taps);
}

// ---------------------------------------------------------------------------------------------
// forward
// ---------------------------------------------------------------------------------------------

/// `y = conv(x, w) + bias` on dense images of `layout`: `x` `[N, C, H, W]`, `y` `[N, O, OH, OW]`
/// (every element written), `wp` the packed weight, `bias` `[O]`.
///
/// # Safety
/// `x` and `y` must address dense tensors of `g`'s input and output sizes in `layout`, not
/// overlapping.
pub(crate) unsafe fn forward<S: FloatElem>(
    g: &Geom,
    layout: Layout,
    x: *const S,
    wp: &[S::T],
    bias: Option<&[S::T]>,
    y: *mut S,
) {
    let mb = g.block(std::mem::size_of::<S::T>());
    let nb = blocks(g.m(), mb);
    let (x, y) = (SharedPtr::from_const(x), SharedPtr::new(y));
    // Consecutive tasks per chunk, one scratch per chunk.
    let tasks = g.n * nb;
    let chunks = (4 * oxten_runtime::parallel::threads_now()).min(tasks).max(1);
    oxten_runtime::parallel::for_each(chunks, |ci| {
        let mut scr = Scratch::default();
        for t in ci * tasks / chunks..(ci + 1) * tasks / chunks {
            let (n, b) = (t / nb, t % nb);
            let (p0, p1) = (b * mb, ((b + 1) * mb).min(g.m()));
            // SAFETY: tasks write disjoint pixel blocks of y (all groups of pixels p0..p1 of
            // image n); x is only read.
            unsafe { forward_block(g, layout, x.get(), wp, bias, y.get(), n, p0, p1, &mut scr) }
        }
    });
}

/// One forward task: output pixels `p0..p1` of image `n`, all groups.
#[allow(clippy::too_many_arguments)]
unsafe fn forward_block<S: FloatElem>(
    g: &Geom,
    layout: Layout,
    x: *const S,
    wp: &[S::T],
    bias: Option<&[S::T]>,
    y: *mut S,
    n: usize,
    p0: usize,
    p1: usize,
    scr: &mut Scratch<S::T>,
) {
    let (cg, og, k, m, rows) = (g.cg(), g.og(), g.k(), g.m(), p1 - p0);
    let direct = S::SAME && g.is_pointwise();
    // SAFETY (whole function): offsets stay inside image n of x and y (caller's contract).
    let img = x.add(n * g.c * g.hw());
    let out = y.add(n * g.o * m);
    for grp in 0..g.groups {
        let w_g = wp.as_ptr().add(grp * k * og);
        let bias_g = bias.map(|b| &b[grp * og..(grp + 1) * og]);
        match layout {
            Layout::Nhwc => {
                let a = if direct {
                    Mat::rows(img.add(p0 * g.c + grp * cg).cast::<S::T>(), g.c)
                } else {
                    let col = sized(&mut scr.col, rows * k);
                    im2col_nhwc(g, img, grp * cg, p0, p1, col);
                    Mat::rows(col.as_ptr(), k)
                };
                let b = Mat::rows(w_g, og);
                if S::SAME {
                    let d = out.add(p0 * g.o + grp * og).cast::<S::T>();
                    gemm(rows, og, k, d, g.o, false, a, b, false);
                    if let Some(bias) = bias_g {
                        for r in 0..rows {
                            let row = std::slice::from_raw_parts_mut(d.add(r * g.o), og);
                            row.iter_mut().zip(bias).for_each(|(v, b)| *v += *b);
                        }
                    }
                } else {
                    let tmp = sized(&mut scr.tmp, rows * og);
                    gemm(rows, og, k, tmp.as_mut_ptr(), og, false, a, b, false);
                    for r in 0..rows {
                        let row = &mut tmp[r * og..(r + 1) * og];
                        if let Some(bias) = bias_g {
                            row.iter_mut().zip(bias).for_each(|(v, b)| *v += *b);
                        }
                        S::store(row, std::slice::from_raw_parts_mut(out.add((p0 + r) * g.o + grp * og), og));
                    }
                }
            }
            Layout::Nchw => {
                let b = if direct {
                    Mat::rows(img.add(grp * cg * g.hw() + p0).cast::<S::T>(), g.hw())
                } else {
                    let col = sized(&mut scr.col, k * rows);
                    im2col_nchw(g, img, grp * cg, p0, p1, col);
                    Mat::rows(col.as_ptr(), rows)
                };
                let a = Mat::rows(w_g, k);
                if S::SAME {
                    let d = out.add(grp * og * m + p0).cast::<S::T>();
                    gemm(og, rows, k, d, m, false, a, b, false);
                    if let Some(bias) = bias_g {
                        for (o, bo) in bias.iter().enumerate() {
                            std::slice::from_raw_parts_mut(d.add(o * m), rows).iter_mut().for_each(|v| *v += *bo);
                        }
                    }
                } else {
                    let tmp = sized(&mut scr.tmp, og * rows);
                    gemm(og, rows, k, tmp.as_mut_ptr(), rows, false, a, b, false);
                    for o in 0..og {
                        let row = &mut tmp[o * rows..(o + 1) * rows];
                        if let Some(bias) = bias_g {
                            row.iter_mut().for_each(|v| *v += bias[o]);
                        }
                        S::store(row, std::slice::from_raw_parts_mut(out.add((grp * og + o) * m + p0), rows));
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// input gradient
// ---------------------------------------------------------------------------------------------

/// `gx = conv_transpose(gy, w) + bias` on dense images of `layout`: `gy` `[N, O, OH, OW]` (the
/// output gradient), `gx` `[N, C, H, W]` (every element written); `bias` `[C]` is the transposed
/// convolution's.
///
/// # Safety
/// `gy` and `gx` must address dense tensors of `g`'s output and input sizes in `layout`, not
/// overlapping.
pub(crate) unsafe fn backward_input<S: FloatElem>(
    g: &Geom,
    layout: Layout,
    gy: *const S,
    wp: &[S::T],
    bias: Option<&[S::T]>,
    gx: *mut S,
) {
    let threads = oxten_runtime::parallel::threads_now();
    let (gy, gx) = (SharedPtr::from_const(gy), SharedPtr::new(gx));
    if g.n >= threads || g.n == 1 && threads == 1 {
        let chunks = threads.min(g.n).max(1);
        oxten_runtime::parallel::for_each(chunks, |ci| {
            let mut scr = Scratch::default();
            for n in ci * g.n / chunks..(ci + 1) * g.n / chunks {
                // SAFETY: each task writes only image n of gx.
                unsafe { backward_input_image(g, layout, gy.get(), wp, bias, gx.get(), n, &mut scr, false) }
            }
        });
    } else {
        let mut scr = Scratch::default();
        for n in 0..g.n {
            // SAFETY: as above, one image at a time.
            unsafe { backward_input_image(g, layout, gy.get(), wp, bias, gx.get(), n, &mut scr, true) }
        }
    }
}

/// The input gradient of image `n`.
#[allow(clippy::too_many_arguments)]
unsafe fn backward_input_image<S: FloatElem>(
    g: &Geom,
    layout: Layout,
    gy: *const S,
    wp: &[S::T],
    bias: Option<&[S::T]>,
    gx: *mut S,
    n: usize,
    scr: &mut Scratch<S::T>,
    parallel: bool,
) {
    let (cg, og, k, m, chw) = (g.cg(), g.og(), g.k(), g.m(), g.c * g.hw());
    // SAFETY (whole function): offsets stay inside image n of gy and gx.
    let gy_img = gy.add(n * g.o * m);
    let gx_img = gx.add(n * chw);
    // The image accumulates in T: in gx itself when S is T.
    let acc: &mut [S::T] =
        if S::SAME { std::slice::from_raw_parts_mut(gx_img.cast::<S::T>(), chw) } else { sized(&mut scr.img, chw) };
    if S::SAME && g.is_pointwise() {
        // gx = wᵀ · gy per group, written once: no col2im.
        for grp in 0..g.groups {
            let w_g = wp.as_ptr().add(grp * k * og);
            let gy_g = gy_img.cast::<S::T>();
            match layout {
                Layout::Nhwc => gemm(
                    m,
                    cg,
                    og,
                    acc.as_mut_ptr().add(grp * cg),
                    g.c,
                    false,
                    Mat::rows(gy_g.add(grp * og), g.o),
                    Mat::rows(w_g, og).t(),
                    parallel,
                ),
                Layout::Nchw => gemm(
                    cg,
                    m,
                    og,
                    acc.as_mut_ptr().add(grp * cg * m),
                    m,
                    false,
                    Mat::rows(w_g, cg).t(),
                    Mat::rows(gy_g.add(grp * og * m), m),
                    parallel,
                ),
            }
        }
    } else {
        acc.fill(S::T::ZERO);
        let mb = g.block(std::mem::size_of::<S::T>());
        for b in 0..blocks(m, mb) {
            let (p0, p1) = (b * mb, ((b + 1) * mb).min(m));
            let rows = p1 - p0;
            for grp in 0..g.groups {
                let w_g = wp.as_ptr().add(grp * k * og);
                match layout {
                    Layout::Nhwc => {
                        let a = if S::SAME {
                            Mat::rows(gy_img.add(p0 * g.o + grp * og).cast::<S::T>(), g.o)
                        } else {
                            let tmp = sized(&mut scr.tmp, rows * og);
                            for r in 0..rows {
                                let src = std::slice::from_raw_parts(gy_img.add((p0 + r) * g.o + grp * og), og);
                                S::load(src, &mut tmp[r * og..(r + 1) * og]);
                            }
                            Mat::rows(tmp.as_ptr(), og)
                        };
                        let col = sized(&mut scr.col, rows * k);
                        gemm(rows, k, og, col.as_mut_ptr(), k, false, a, Mat::rows(w_g, og).t(), parallel);
                        col2im_nhwc(g, col, grp * cg, p0, p1, acc);
                    }
                    Layout::Nchw => {
                        let b = if S::SAME {
                            Mat::rows(gy_img.add(grp * og * m + p0).cast::<S::T>(), m)
                        } else {
                            let tmp = sized(&mut scr.tmp, og * rows);
                            for o in 0..og {
                                let src = std::slice::from_raw_parts(gy_img.add((grp * og + o) * m + p0), rows);
                                S::load(src, &mut tmp[o * rows..(o + 1) * rows]);
                            }
                            Mat::rows(tmp.as_ptr(), rows)
                        };
                        let col = sized(&mut scr.col, k * rows);
                        gemm(k, rows, og, col.as_mut_ptr(), rows, false, Mat::rows(w_g, k).t(), b, parallel);
                        col2im_nchw(g, col, grp * cg, p0, p1, acc);
                    }
                }
            }
        }
    }
    if let Some(bias) = bias {
        match layout {
            Layout::Nhwc => {
                acc.chunks_exact_mut(g.c).for_each(|px| px.iter_mut().zip(bias).for_each(|(v, b)| *v += *b))
            }
            Layout::Nchw => acc
                .chunks_exact_mut(g.hw().max(1))
                .zip(bias)
                .for_each(|(plane, b)| plane.iter_mut().for_each(|v| *v += *b)),
        }
    }
    if !S::SAME {
        S::store(acc, std::slice::from_raw_parts_mut(gx_img, chw));
    }
}

// ---------------------------------------------------------------------------------------------
// weight gradient
// ---------------------------------------------------------------------------------------------

/// The weight gradient `Σₙ x ⋆ gy`, packed for `layout` (see the module docs).
///
/// # Safety
/// `x` and `gy` must address dense tensors of `g`'s input and output sizes in `layout`.
pub(crate) unsafe fn backward_weight<S: FloatElem>(g: &Geom, layout: Layout, x: *const S, gy: *const S) -> Vec<S::T> {
    let size = g.o * g.k();
    let mb = g.block(std::mem::size_of::<S::T>());
    let nb = blocks(g.m(), mb);
    let tasks = g.n * nb;
    let chunks = oxten_runtime::parallel::threads_now().min(tasks).max(1);
    let (x, gy) = (SharedPtr::from_const(x), SharedPtr::from_const(gy));
    let parts: Vec<Vec<S::T>> = oxten_runtime::parallel::map(chunks, |ci| {
        let mut gw = vec![S::T::ZERO; size];
        let mut scr = Scratch::default();
        for t in ci * tasks / chunks..(ci + 1) * tasks / chunks {
            let (n, b) = (t / nb, t % nb);
            let (p0, p1) = (b * mb, ((b + 1) * mb).min(g.m()));
            // SAFETY: x and gy are only read; gw is this chunk's own.
            unsafe { backward_weight_block(g, layout, x.get(), gy.get(), n, p0, p1, &mut gw, &mut scr) };
        }
        gw
    });
    let mut parts = parts.into_iter();
    let mut total = parts.next().unwrap_or_else(|| vec![S::T::ZERO; size]);
    for p in parts {
        total.iter_mut().zip(&p).for_each(|(a, b)| *a += *b);
    }
    if layout == Layout::Nchw {
        // The NCHW blocks accumulate each group's gradient transposed, `[K][O/groups]`.
        let (k, og) = (g.k(), g.og());
        let mut packed = vec![S::T::ZERO; size];
        for (src, dst) in total.chunks_exact(k * og).zip(packed.chunks_exact_mut(k * og)) {
            for (q, row) in src.chunks_exact(og).enumerate() {
                for (o, v) in row.iter().enumerate() {
                    dst[o * k + q] = *v;
                }
            }
        }
        return packed;
    }
    total
}

/// Adds the weight gradient of output pixels `p0..p1` of image `n` into `gw`.
#[allow(clippy::too_many_arguments)]
unsafe fn backward_weight_block<S: FloatElem>(
    g: &Geom,
    layout: Layout,
    x: *const S,
    gy: *const S,
    n: usize,
    p0: usize,
    p1: usize,
    gw: &mut [S::T],
    scr: &mut Scratch<S::T>,
) {
    let (cg, og, k, m, rows) = (g.cg(), g.og(), g.k(), g.m(), p1 - p0);
    let direct = S::SAME && g.is_pointwise();
    // SAFETY (whole function): offsets stay inside image n of x and gy.
    let img = x.add(n * g.c * g.hw());
    let gy_img = gy.add(n * g.o * m);
    for grp in 0..g.groups {
        let gw_g = gw.as_mut_ptr().add(grp * k * og);
        match layout {
            Layout::Nhwc => {
                let col = if direct {
                    Mat::rows(img.add(p0 * g.c + grp * cg).cast::<S::T>(), g.c)
                } else {
                    let col = sized(&mut scr.col, rows * k);
                    im2col_nhwc(g, img, grp * cg, p0, p1, col);
                    Mat::rows(col.as_ptr(), k)
                };
                let dy = if S::SAME {
                    Mat::rows(gy_img.add(p0 * g.o + grp * og).cast::<S::T>(), g.o)
                } else {
                    let tmp = sized(&mut scr.tmp, rows * og);
                    for r in 0..rows {
                        let src = std::slice::from_raw_parts(gy_img.add((p0 + r) * g.o + grp * og), og);
                        S::load(src, &mut tmp[r * og..(r + 1) * og]);
                    }
                    Mat::rows(tmp.as_ptr(), og)
                };
                // gw[K, og] += colᵀ[K, rows] · gy[rows, og]
                gemm(k, og, rows, gw_g, og, true, col.t(), dy, false);
            }
            Layout::Nchw => {
                let col = if direct {
                    Mat::rows(img.add(grp * cg * g.hw() + p0).cast::<S::T>(), g.hw())
                } else {
                    let col = sized(&mut scr.col, k * rows);
                    im2col_nchw(g, img, grp * cg, p0, p1, col);
                    Mat::rows(col.as_ptr(), rows)
                };
                let dy = if S::SAME {
                    Mat::rows(gy_img.add(grp * og * m + p0).cast::<S::T>(), m)
                } else {
                    let tmp = sized(&mut scr.tmp, og * rows);
                    for o in 0..og {
                        let src = std::slice::from_raw_parts(gy_img.add((grp * og + o) * m + p0), rows);
                        S::load(src, &mut tmp[o * rows..(o + 1) * rows]);
                    }
                    Mat::rows(tmp.as_ptr(), rows)
                };
                // gwᵀ[K, og] += col[K, rows] · gyᵀ[rows, og]: accumulated transposed (see
                // `backward_weight`), `gemm`'s own form of this product packs the small `gy`
                // block rather than the receptive-field matrix.
                gemm(k, og, rows, gw_g, og, true, col, dy.t(), false);
            }
        }
    }
}
