//! The portable bf16 product: both operands are widened to f32 whole, one vectorized pass each
//! (a bf16 is the top half of an f32, so widening is a shift), in whichever of row- or
//! column-major order reads the source contiguously; the f32 `gemm` kernel multiplies them, and
//! one more pass applies `beta * dst` and rounds to nearest-even. No conversion happens inside
//! the product loops.

use super::super::engine::{gemm_call, Dims, Mat};
use super::{narrow, narrow_slice, widen, widen_slice, zeroed};
use gemm::Parallelism;
use oxten_runtime::dtype::bf16;
use oxten_runtime::Result;

/// How to walk a matrix as lines of contiguous elements where it has them: rows when the column
/// stride is 1 (or neither stride is), columns when only the row stride is 1.
#[derive(Clone, Copy)]
struct Lines {
    len: usize,
    /// Stride between lines and between elements of a line, in elements.
    line_stride: isize,
    elem_stride: isize,
    /// Whether the lines are columns.
    columns: bool,
}

impl Lines {
    fn of<T>(mat: &Mat<T>, rows: usize, cols: usize) -> Lines {
        let columns = mat.cs != 1 && mat.rs == 1;
        if columns {
            Lines { len: rows, line_stride: mat.cs, elem_stride: 1, columns }
        } else {
            Lines { len: cols, line_stride: mat.rs, elem_stride: mat.cs, columns }
        }
    }

    /// A dense f32 matrix with the same line order, over `buf`.
    fn dense(&self, buf: &mut [f32]) -> Mat<f32> {
        let ptr = buf.as_mut_ptr();
        if self.columns {
            Mat { ptr, rs: 1, cs: self.len as isize }
        } else {
            Mat { ptr, rs: self.len as isize, cs: 1 }
        }
    }
}

/// A `Send`/`Sync` wrapper for the bf16 matrices the conversion passes read and write from
/// parallel tasks (each task handles its own lines).
#[derive(Clone, Copy)]
struct Shared(Mat<bf16>);

// SAFETY: tasks of one pass read, or write disjoint lines of, the matrix (see `for_lines`).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// The matrix (a method, so that closures capture the whole `Shared`, not its pointer).
    fn get(&self) -> Mat<bf16> {
        self.0
    }
}

/// Matrices with at least this many elements are converted on the thread pool when the product
/// itself may use it.
const PARALLEL_ELEMS: usize = 1 << 16;

/// Runs `f(l, line)` for every line `l` of `buf` (`len` elements each), on the thread pool when
/// `par` allows it and the buffer is large.
fn for_lines(buf: &mut [f32], len: usize, par: Parallelism, f: impl Fn(usize, &mut [f32]) + Sync) {
    if len == 0 {
        return;
    }
    if !matches!(par, Parallelism::None) && buf.len() >= PARALLEL_ELEMS {
        oxten_runtime::parallel::chunks_mut(buf, len, |l, line| f(l, line));
    } else {
        buf.chunks_exact_mut(len).enumerate().for_each(|(l, line)| f(l, line));
    }
}

/// An f32 copy of a `rows x cols` bf16 matrix (the buffer and the matrix over it), laid out in
/// the source's contiguous order.
///
/// # Safety
/// `src` addresses `rows x cols` valid elements.
unsafe fn widen_matrix(src: Mat<bf16>, rows: usize, cols: usize, par: Parallelism) -> Result<(Vec<f32>, Mat<f32>)> {
    let lines = Lines::of(&src, rows, cols);
    let mut buf = zeroed(rows * cols)?;
    let src = Shared(src);
    for_lines(&mut buf, lines.len, par, |l, out| {
        let start = src.get().ptr.wrapping_offset(l as isize * lines.line_stride);
        // SAFETY: line `l` of the caller's matrix has `len` valid elements at these offsets.
        unsafe {
            if lines.elem_stride == 1 {
                widen_slice(std::slice::from_raw_parts(start, lines.len), out);
            } else {
                for (e, o) in out.iter_mut().enumerate() {
                    *o = widen(*start.wrapping_offset(e as isize * lines.elem_stride));
                }
            }
        }
    });
    let mat = lines.dense(&mut buf);
    Ok((buf, mat))
}

/// `dst = alpha * lhs @ rhs + beta * dst` (`dst` not read when `beta` is `None`) for bf16
/// operands, with `alpha` and `beta` already converted as PyTorch converts them.
///
/// # Safety
/// As for [`super::product`].
pub(super) unsafe fn product(
    d: Dims,
    dst: Mat<bf16>,
    lhs: Mat<bf16>,
    rhs: Mat<bf16>,
    alpha: f32,
    beta: Option<f32>,
    par: Parallelism,
) -> Result<()> {
    let (_a_buf, a) = widen_matrix(lhs, d.m, d.k, par)?;
    let (_b_buf, b) = widen_matrix(rhs, d.k, d.n, par)?;
    // The f32 product in `dst`'s line order, so that the rounding pass is contiguous.
    let lines = Lines::of(&dst, d.m, d.n);
    let mut c_buf = zeroed(d.m * d.n)?;
    let c = lines.dense(&mut c_buf);
    gemm_call::<f32>(d, c, a, b, alpha, None, 0.0, par);
    let dst = Shared(dst);
    for_lines(&mut c_buf, lines.len, par, |l, c_line| {
        let start = dst.get().ptr.wrapping_offset(l as isize * lines.line_stride);
        let contiguous = lines.elem_stride == 1;
        let at = |e: usize| start.wrapping_offset(e as isize * lines.elem_stride);
        // SAFETY: line `l` of `dst` has `len` valid elements at these offsets, written by this
        // task only (`dst` does not overlap itself).
        unsafe {
            if let Some(beta) = beta {
                if contiguous {
                    for (c, r) in c_line.iter_mut().zip(std::slice::from_raw_parts(start, lines.len)) {
                        *c += beta * widen(*r);
                    }
                } else {
                    for (e, c) in c_line.iter_mut().enumerate() {
                        *c += beta * widen(*at(e));
                    }
                }
            }
            if contiguous {
                narrow_slice(c_line, std::slice::from_raw_parts_mut(start, lines.len));
            } else {
                for (e, c) in c_line.iter().enumerate() {
                    *at(e) = narrow(*c);
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable path (the one CPUs without AVX-512 BF16 run) against an f64 reference,
    /// with row- and column-major operands, `alpha` and `beta`.
    #[test]
    fn matches_a_wide_reference() {
        let (m, k, n) = (7usize, 37usize, 5usize);
        let val = |i: usize, s: usize| bf16::from_f32((((i * 7919 + s * 104729) % 2001) as f32) / 1000.0 - 1.0);
        let mut a: Vec<bf16> = (0..m * k).map(|i| val(i, 1)).collect();
        // `b` stored column-major, `dst` row-major.
        let mut b: Vec<bf16> = (0..k * n).map(|i| val(i, 2)).collect();
        let mut c: Vec<bf16> = (0..m * n).map(|i| val(i, 3)).collect();
        let old = c.clone();
        let (alpha, beta) = (0.5f32, 2.0f32);
        let d = Dims { m, k, n };
        let mat = |v: &mut Vec<bf16>, rs: isize, cs: isize| Mat { ptr: v.as_mut_ptr(), rs, cs };
        let (ma, mb, mc) = (mat(&mut a, k as isize, 1), mat(&mut b, 1, k as isize), mat(&mut c, n as isize, 1));
        // SAFETY: the buffers hold the matrices with these strides.
        unsafe { product(d, mc, ma, mb, alpha, Some(beta), Parallelism::None).unwrap() };
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k).map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64()).sum();
                let want = alpha as f64 * dot + beta as f64 * old[i * n + j].to_f64();
                let got = c[i * n + j].to_f64();
                assert!((got - want).abs() <= want.abs() / 128.0 + 1e-3, "({i}, {j}): {got} vs {want}");
            }
        }
    }
}
