//! The bf16 convolution forward on the native bf16 product kernel (`linalg::bf16_gemm`, AVX-512
//! BF16), used where the CPU has it: receptive-field blocks and packed weights stay bf16 (half
//! the bytes of the widened path's f32 blocks), the product accumulates in f32, and the bias is
//! added to the f32 sums before the one rounding to bf16, as oneDNN's bf16 convolution does.
//! Same blocking and parallel split as [`super::compute::forward`].

use super::elem::{Bf16Block, SharedPtr};
use super::im2col::{im2col_nchw, im2col_nhwc, Geom, Layout};
use crate::linalg::bf16_gemm;
use crate::linalg::engine::{Dims, Mat};
use gemm::Parallelism;
use oxten_runtime::dtype::bf16;
use oxten_runtime::{Error, Result};

/// `y = conv(x, w) + bias` in bf16 on dense images of `layout` (see `compute::forward`); `wp` is
/// the weight packed for `layout` in bf16 (`compute::pack_weight::<Bf16Block>`).
///
/// # Safety
/// `x` and `y` must address dense tensors of `g`'s input and output sizes in `layout`, not
/// overlapping; [`bf16_gemm::native`] must hold.
pub(crate) unsafe fn forward(
    g: &Geom,
    layout: Layout,
    x: *const bf16,
    wp: &[bf16],
    bias: Option<&[bf16]>,
    y: *mut bf16,
) -> Result<()> {
    let mb = g.block(std::mem::size_of::<bf16>());
    let nb = g.m().div_ceil(mb.max(1));
    let (x, y) = (SharedPtr::from_const(x), SharedPtr::new(y));
    let tasks = g.n * nb;
    let chunks = (4 * oxten_runtime::parallel::threads_now()).min(tasks).max(1);
    let failed = std::sync::Mutex::new(None);
    oxten_runtime::parallel::for_each(chunks, |ci| {
        let mut col = Vec::new();
        for t in ci * tasks / chunks..(ci + 1) * tasks / chunks {
            let (n, b) = (t / nb, t % nb);
            let (p0, p1) = (b * mb, ((b + 1) * mb).min(g.m()));
            // SAFETY: tasks write disjoint pixel blocks of y (all groups of pixels p0..p1 of
            // image n); x is only read; `native` held (caller).
            if let Err(e) = unsafe { block(g, layout, x.get(), wp, bias, y.get(), n, p0, p1, &mut col) } {
                failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                return;
            }
        }
    });
    failed.into_inner().unwrap_or_else(|e| e.into_inner()).map_or(Ok(()), Err)
}

/// `v`'s first `n` elements, grown if needed (contents unspecified: im2col overwrites them).
fn sized(v: &mut Vec<bf16>, n: usize) -> Result<&mut [bf16]> {
    if v.len() < n {
        v.try_reserve_exact(n - v.len())
            .map_err(|_| Error::out_of_memory(n as u128 * 2, "host memory (bf16 convolution blocks)"))?;
        v.resize(n, bf16::ZERO);
    }
    Ok(&mut v[..n])
}

/// One task: output pixels `p0..p1` of image `n`, all groups.
#[allow(clippy::too_many_arguments)]
unsafe fn block(
    g: &Geom,
    layout: Layout,
    x: *const bf16,
    wp: &[bf16],
    bias: Option<&[bf16]>,
    y: *mut bf16,
    n: usize,
    p0: usize,
    p1: usize,
    col: &mut Vec<bf16>,
) -> Result<()> {
    let (cg, og, k, m, rows) = (g.cg(), g.og(), g.k(), g.m(), p1 - p0);
    let direct = g.is_pointwise();
    let mat = |ptr: *const bf16, rs: usize| Mat { ptr: ptr.cast_mut(), rs: rs as isize, cs: 1 };
    // SAFETY (whole function): offsets stay inside image n of x and y (caller's contract); the
    // column buffer holds the block it was sized for.
    let img = x.add(n * g.c * g.hw());
    let out = y.add(n * g.o * m);
    let beta = bias.map(|_| 1.0);
    for grp in 0..g.groups {
        let w_g = wp.as_ptr().add(grp * k * og);
        let bias_g = bias.map(|b| &b[grp * og..(grp + 1) * og]);
        match layout {
            Layout::Nhwc => {
                let a = if direct {
                    mat(img.add(p0 * g.c + grp * cg), g.c)
                } else {
                    let col = sized(col, rows * k)?;
                    im2col_nhwc::<Bf16Block>(g, img.cast(), grp * cg, p0, p1, col);
                    mat(col.as_ptr(), k)
                };
                let d = out.add(p0 * g.o + grp * og);
                if let Some(bias) = bias_g {
                    for r in 0..rows {
                        std::slice::from_raw_parts_mut(d.add(r * g.o), og).copy_from_slice(bias);
                    }
                }
                let dims = Dims { m: rows, n: og, k };
                bf16_gemm::product(dims, mat(d, g.o), a, mat(w_g, og), 1.0, beta, Parallelism::None)?;
            }
            Layout::Nchw => {
                let b = if direct {
                    mat(img.add(grp * cg * g.hw() + p0), g.hw())
                } else {
                    let col = sized(col, k * rows)?;
                    im2col_nchw::<Bf16Block>(g, img.cast(), grp * cg, p0, p1, col);
                    mat(col.as_ptr(), rows)
                };
                let d = out.add(grp * og * m + p0);
                if let Some(bias) = bias_g {
                    for (o, bo) in bias.iter().enumerate() {
                        std::slice::from_raw_parts_mut(d.add(o * m), rows).fill(*bo);
                    }
                }
                let dims = Dims { m: og, n: rows, k };
                bf16_gemm::product(dims, mat(d, m), mat(w_g, k), b, 1.0, beta, Parallelism::None)?;
            }
        }
    }
    Ok(())
}
