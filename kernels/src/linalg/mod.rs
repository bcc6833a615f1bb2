//! Matrix products: `mm`.
//!
//! `mm` is a structured (non-TensorIterator) operator like PyTorch's: the meta function checks
//! that both operands are matrices with matching inner sizes and the same dtype and sets a
//! contiguous `[m, n]` output; the CPU impl multiplies into whatever output `set_output`
//! produced.
//!
//! The CPU impl hands f32, f64 and f16 to the `gemm` crate (run-time SIMD dispatch, cache
//! blocking, packing; f16 is packed to f32 blocks and accumulated in f32), passing every operand
//! as a pointer with its (row stride, column stride), so transposed and sliced inputs are read
//! in place with no copy. bf16 operands are converted to f32 matrices (slice conversions, one
//! pass over each operand), multiplied by the f32 kernel, and the product is rounded to bf16
//! once. Integer dtypes use a plain loop with wrapping arithmetic, as C++ integer arithmetic
//! wraps. Above [`PARALLEL_WORK`] multiply-adds `gemm` may split the work over rayon's pool.
//!
//! A row-major output whose product `gemm` would compute slowly in that layout (see
//! [`stage_column_major`]: `x.mm(w.t())`, a linear layer) is computed into a column-major
//! matrix and copied; so is an `out=` tensor that aliases an input.

use crate::activation::type_meta_name;
use crate::generated::decls::{MmOutCpuCpu, MmOutMetaFn};
use crate::math::Element as MathElement;
use crate::{Cpu, Meta};
use gemm::Parallelism;
use half::slice::HalfFloatSliceExt;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::iter::{
    copy_, get_overlap_status, has_internal_overlap, scalar_type_name, MemOverlap, MemOverlapStatus, StructuredOutputs,
};
use oxten_runtime::{DType, Device, Error, Result, Tensor};

/// Products with at least this many multiply-adds (`m * n * k`) let `gemm` use rayon's pool
/// (`gemm` itself stays on one thread below its own, larger threshold).
const PARALLEL_WORK: usize = 64 * 64 * 64;

// ---------------------------------------------------------------------------------------------
// meta
// ---------------------------------------------------------------------------------------------

/// `TORCH_CHECK(t.dim() == 2, "<name> must be a matrix, got <n>-D tensor")`.
fn check_matrix(name: &str, t: &Tensor) -> Result<()> {
    if t.dim() != 2 {
        return Err(Error::runtime(format!("{name} must be a matrix, got {}-D tensor", t.dim())));
    }
    Ok(())
}

/// `mm`'s meta function, with PyTorch's checks in PyTorch's order: both operands 2-D, inner
/// sizes equal, dtypes equal; the output is a contiguous `[m, n]` matrix of that dtype.
impl MmOutMetaFn for Meta {
    fn mm_out(outs: &mut StructuredOutputs, self_: &Tensor, mat2: &Tensor) -> Result<()> {
        check_matrix("self", self_)?;
        check_matrix("mat2", mat2)?;
        let (a, b) = (self_.sizes(), mat2.sizes());
        if a[1] != b[0] {
            return Err(Error::runtime(format!(
                "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                a[0], a[1], b[0], b[1]
            )));
        }
        if self_.dtype() != mat2.dtype() {
            return Err(Error::runtime(format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                type_meta_name(self_.dtype()),
                type_meta_name(mat2.dtype())
            )));
        }
        outs.set_output(0, &[a[0], b[1]], None, self_.dtype(), self_.device())
    }
}

// ---------------------------------------------------------------------------------------------
// CPU
// ---------------------------------------------------------------------------------------------

/// A matrix operand: the address of element (0, 0) and its strides in elements.
#[derive(Clone, Copy)]
struct Mat<T> {
    ptr: *mut T,
    rs: isize,
    cs: isize,
}

impl<T> Mat<T> {
    fn of(t: &Tensor) -> Self {
        let st = t.strides();
        Mat { ptr: t.data_ptr().cast::<T>(), rs: st[0] as isize, cs: st[1] as isize }
    }
    /// Address of element (i, j).
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> *mut T {
        self.ptr.wrapping_offset(i as isize * self.rs + j as isize * self.cs)
    }
}

/// The sizes of a product: `[m, k] x [k, n]`.
#[derive(Clone, Copy)]
struct Dims {
    m: usize,
    k: usize,
    n: usize,
}

impl Dims {
    fn parallelism(&self) -> Parallelism {
        let work = self.m.saturating_mul(self.n).saturating_mul(self.k);
        if work >= PARALLEL_WORK && rayon::current_num_threads() > 1 {
            Parallelism::Rayon(0)
        } else {
            Parallelism::None
        }
    }
}

/// `dst = lhs x rhs` with `gemm` (`T` is f32, f64 or f16).
///
/// # Safety
/// The three operands must address `m x k`, `k x n` and `m x n` valid elements of `T` with
/// their strides, and `dst` must not overlap itself or the inputs.
unsafe fn gemm_into<T: 'static + Copy>(d: Dims, dst: Mat<T>, lhs: Mat<T>, rhs: Mat<T>, zero: T, one: T) {
    // gemm computes dst = alpha * dst + beta * lhs * rhs and takes (column, row) stride pairs;
    // with read_dst = false, alpha is ignored and dst is only written.
    gemm::gemm(
        d.m,
        d.n,
        d.k,
        dst.ptr,
        dst.cs,
        dst.rs,
        false,
        lhs.ptr,
        lhs.cs,
        lhs.rs,
        rhs.ptr,
        rhs.cs,
        rhs.rs,
        zero,
        one,
        false,
        false,
        false,
        d.parallelism(),
    );
}

/// A row-major f32 copy of a bf16 matrix: rows with unit column stride are converted as slices
/// (vectorized by `half`), other layouts gathered first.
fn bf16_to_f32(src: Mat<bf16>, rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * cols];
    let mut row = vec![bf16::ZERO; cols];
    for (i, dst) in out.chunks_exact_mut(cols.max(1)).enumerate().take(rows) {
        // SAFETY: the caller's matrix has `rows x cols` valid elements at these offsets.
        let src_row: &[bf16] = if src.cs == 1 {
            unsafe { std::slice::from_raw_parts(src.at(i, 0), cols) }
        } else {
            for (j, r) in row.iter_mut().enumerate() {
                *r = unsafe { *src.at(i, j) };
            }
            &row
        };
        src_row.convert_to_f32_slice(dst);
    }
    out
}

/// bf16 product: both operands converted to f32 once, multiplied in f32 (accumulating in f32,
/// as PyTorch's CPU kernels do), the product rounded to bf16 once.
///
/// # Safety
/// As for [`gemm_into`].
unsafe fn bf16_into(d: Dims, dst: Mat<bf16>, lhs: Mat<bf16>, rhs: Mat<bf16>) {
    let a = bf16_to_f32(lhs, d.m, d.k);
    let b = bf16_to_f32(rhs, d.k, d.n);
    let mut c = vec![0f32; d.m * d.n];
    let row_major = |ptr: *mut f32, cols: usize| Mat { ptr, rs: cols as isize, cs: 1 };
    gemm_into(
        d,
        row_major(c.as_mut_ptr(), d.n),
        row_major(a.as_ptr().cast_mut(), d.k),
        row_major(b.as_ptr().cast_mut(), d.n),
        0.0,
        1.0,
    );
    let mut rounded = vec![bf16::ZERO; d.n];
    for (i, c_row) in c.chunks_exact(d.n).enumerate() {
        if dst.cs == 1 {
            std::slice::from_raw_parts_mut(dst.at(i, 0), d.n).convert_from_f32_slice(c_row);
        } else {
            rounded.convert_from_f32_slice(c_row);
            for (j, v) in rounded.iter().enumerate() {
                *dst.at(i, j) = *v;
            }
        }
    }
}

/// Integer product: row `i` of `dst` accumulates `lhs[i, p] * rhs[p, :]` over `p` (walking
/// `rhs` by rows), with wrapping arithmetic.
///
/// # Safety
/// As for [`gemm_into`].
unsafe fn int_into<T: MathElement>(d: Dims, dst: Mat<T>, lhs: Mat<T>, rhs: Mat<T>) {
    let mut acc = vec![T::zero(); d.n];
    for i in 0..d.m {
        acc.fill(T::zero());
        for p in 0..d.k {
            let a = *lhs.at(i, p);
            for (j, c) in acc.iter_mut().enumerate() {
                *c = c.add_wrapping(a.mul_wrapping(*rhs.at(p, j)));
            }
        }
        for (j, c) in acc.iter().enumerate() {
            *dst.at(i, j) = *c;
        }
    }
}

/// Multiplies `a` (`[m, k]`) by `b` (`[k, n]`) into `out` (`[m, n]`), which must not overlap
/// itself or the inputs. All three share one dtype (the meta function checked).
fn mm_into(a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    let (sa, sb) = (a.sizes(), b.sizes());
    let d = Dims { m: sa[0] as usize, k: sa[1] as usize, n: sb[1] as usize };
    if d.m == 0 || d.n == 0 {
        return Ok(());
    }
    // SAFETY: the meta function checked the shapes and dtype, `out` was shaped `[m, n]` by
    // `set_output`, every tensor's strides address elements inside its storage, and the caller
    // ensured `out` overlaps neither itself nor an input.
    unsafe {
        match out.dtype() {
            DType::F32 => gemm_into::<f32>(d, Mat::of(out), Mat::of(a), Mat::of(b), 0.0, 1.0),
            DType::F64 => gemm_into::<f64>(d, Mat::of(out), Mat::of(a), Mat::of(b), 0.0, 1.0),
            DType::F16 => gemm_into::<f16>(d, Mat::of(out), Mat::of(a), Mat::of(b), f16::ZERO, f16::ONE),
            DType::BF16 => bf16_into(d, Mat::of(out), Mat::of(a), Mat::of(b)),
            DType::U8 => int_into::<u8>(d, Mat::of(out), Mat::of(a), Mat::of(b)),
            DType::I8 => int_into::<i8>(d, Mat::of(out), Mat::of(a), Mat::of(b)),
            DType::I16 => int_into::<i16>(d, Mat::of(out), Mat::of(a), Mat::of(b)),
            DType::I32 => int_into::<i32>(d, Mat::of(out), Mat::of(a), Mat::of(b)),
            DType::I64 => int_into::<i64>(d, Mat::of(out), Mat::of(a), Mat::of(b)),
            DType::Bool => {
                return Err(Error::dtype(format!(
                    "\"addmm_impl_cpu_\" not implemented for '{}'",
                    scalar_type_name(DType::Bool)
                )))
            }
        }
    }
    Ok(())
}

/// Whether the product can be written straight into `out`: no element of `out` is addressed
/// twice and no input shares memory with it.
fn writable_in_place(out: &Tensor, inputs: [&Tensor; 2]) -> bool {
    has_internal_overlap(out) == MemOverlap::No
        && inputs.iter().all(|t| get_overlap_status(out, t) == MemOverlapStatus::No)
}

/// Whether a row-major `out` is better filled through a column-major staging matrix.
///
/// `gemm`'s kernels stream a column-major left operand; any other left operand is packed
/// (copied into panels) first. For a column-major destination `gemm` multiplies `a @ b` as
/// given, for a row-major one it multiplies the transposed problem `b.t() @ a.t()`, whose left
/// operand is `b.t()`. So when `b` is not row-major (as in `x.mm(w.t())`, a linear layer), a
/// row-major `out` means packing all of `b`; a column-major one means packing `a` instead, which
/// is cheaper when `a` is column-major or has fewer rows than `b` has columns. The staging
/// matrix costs one `m x n` copy, small against the `m x n x k` product above
/// [`STAGING_WORK`].
fn stage_column_major(a: &Tensor, b: &Tensor, out: &Tensor) -> bool {
    let (sa, sb, so) = (a.strides(), b.strides(), out.strides());
    let (m, k, n) = (a.sizes()[0], a.sizes()[1], b.sizes()[1]);
    let row_major_out = so[1] == 1 && m > 1 && n > 1;
    let b_row_major = sb[1] == 1 || n == 1;
    let a_column_major = sa[0] == 1 || m == 1;
    row_major_out
        && !b_row_major
        && (a_column_major || m < n)
        && (m * n).saturating_mul(k) >= STAGING_WORK as i64
        && matches!(out.dtype(), DType::F32 | DType::F64 | DType::F16)
}

/// Products below this many multiply-adds are written straight into a row-major `out`.
const STAGING_WORK: usize = 32 * 32 * 32;

impl MmOutCpuCpu for Cpu {
    fn mm_out_cpu(self_: &Tensor, mat2: &Tensor, out: &Tensor) -> Result<()> {
        let direct = writable_in_place(out, [self_, mat2]);
        if direct && !stage_column_major(self_, mat2, out) {
            return mm_into(self_, mat2, out);
        }
        // Compute aside (column-major, the layout gemm writes fastest), then copy into `out`:
        // for speed (see `stage_column_major`), or because `out` aliases an input
        // (mm(a, b, out=a)) or itself.
        let sizes = out.sizes();
        let tmp = Tensor::empty_strided(&sizes, &[1, sizes[0].max(1)], out.dtype(), Device::Cpu)?;
        mm_into(self_, mat2, &tmp)?;
        copy_(out, &tmp)
    }
}
