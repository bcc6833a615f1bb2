//! Matrix products: `mm`, `addmm`, `bmm`, `dot`, `mv` and the composites `matmul` and
//! `linear`.
//!
//! `mm`, `addmm` and `bmm` are structured (non-TensorIterator) operators like PyTorch's: the
//! meta function checks shapes and dtypes with PyTorch's messages in PyTorch's order and sets a
//! contiguous output; the CPU impl multiplies into whatever output `set_output` produced, through
//! [`product_into`] and the product [`engine`] (`gemm` for f32/f64/f16, the bf16 path in
//! [`bf16_gemm`], a loop for integers). Operands are passed as pointers with their strides, so
//! transposed (`x.mm(w.t())`), sliced and expanded inputs are read in place with no copy.
//! `dot` has its own CPU kernel ([`vector`]); `mv` is CompositeExplicitAutograd over `mm`, as in
//! PyTorch (where it goes through `addmv`); `matmul` and `linear` are CompositeImplicitAutograd
//! ([`matmul`]), so autograd sees the `mm`/`bmm`/`addmm`/`mv`/`dot` calls they make.
//!
//! Files: `mm.rs` (`mm`, `addmm`), `bmm.rs`, `vector.rs` (`dot`, `mv`), `matmul.rs` (`matmul`,
//! `linear`), `engine.rs` (typed product kernels and batching), `bf16_gemm/`, `dot_rows.rs`
//! (small f32 products with a narrow side, as dot products of contiguous rows).
//!
//! Factorizations and solves: `factor/` (the CPU kernels of LU, Cholesky and triangular solves),
//! `lu_composites.rs`, `solve.rs` (solves, inverses, matrix powers), `determinant.rs`,
//! `cholesky_composites.rs`.

pub(crate) mod bf16_gemm;
mod bilinear;
mod bmm;
mod cholesky_composites;
mod contractions;
#[cfg(feature = "cuda")]
pub mod cuda;
mod decompositions;
mod determinant;
mod dot_rows;
mod einsum;
pub(crate) mod engine;
mod factor;
mod householder;
mod lstsq;
mod lu_composites;
mod matmul;
mod matrix_exp;
mod matrix_norms;
mod mm;
mod multi_dot;
mod norm_composites;
mod products;
mod rank_pinv;
mod solve;
mod structured;
mod vander;
mod vecdot;
mod vector;

use crate::iter::{copy_, get_overlap_status, has_internal_overlap, MemOverlap, MemOverlapStatus};
use engine::{Dims, Operand};
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

/// `TORCH_CHECK(t.dim() == 2, "<name> must be a matrix, got <n>-D tensor")`.
fn check_matrix(name: &str, t: &Tensor) -> Result<()> {
    if t.dim() != 2 {
        return Err(Error::runtime(format!("{name} must be a matrix, got {}-D tensor", t.dim())));
    }
    Ok(())
}

use crate::support::{not_implemented, resize_output};

/// Whether `s`, converted to `dtype` as PyTorch converts scalars, is zero.
fn scalar_is_zero(dtype: DType, s: Scalar) -> bool {
    if dtype.is_floating_point() {
        return s.to_f64() == 0.0;
    }
    let v = s.to_i64();
    match dtype {
        DType::U8 => v as u8 == 0,
        DType::I8 => v as i8 == 0,
        DType::I16 => v as i16 == 0,
        DType::I32 => v as i32 == 0,
        _ => v == 0,
    }
}

/// Products below this many multiply-adds are written straight into a row-major `out`.
const STAGING_WORK: usize = 32 * 32 * 32;

/// Whether a row-major `out` is better filled through a column-major staging matrix.
///
/// `gemm`'s kernels stream a column-major left operand; any other left operand is packed
/// (copied into panels) first. For a column-major destination `gemm` multiplies `a @ b` as
/// given, for a row-major one it multiplies the transposed problem `b.t() @ a.t()`, whose left
/// operand is `b.t()`. So when `b` is not row-major (as in `x.mm(w.t())`, a linear layer), a
/// row-major `out` means packing all of `b`; a column-major one means packing `a` instead, which
/// is cheaper when `a` is column-major or has fewer rows than `b` has columns. The staging
/// matrix costs one `m x n` copy, small against the `m x n x k` product above
/// [`STAGING_WORK`]; for f32, the calling thread copies its own block of columns while the
/// pool's other threads finish theirs (see `product_into`). (bf16 and integer products pack or
/// loop anyway.)
fn stage_column_major(d: Dims, a: &Operand, b: &Operand, out: &Operand, dtype: DType) -> bool {
    let row_major_out = out.cs == 1 && d.m > 1 && d.n > 1;
    row_major_out
        && !b.row_major(d.n)
        && (a.column_major(d.m) || d.m < d.n)
        && d.work() >= STAGING_WORK
        && matches!(dtype, DType::F32 | DType::F64 | DType::F16)
}

/// Writes `alpha * (a @ b) + beta * bias` into `out`: matrices (`a` `[m, k]`, `b` `[k, n]`,
/// `out` `[m, n]`) or batches of them (`[B, m, k]`, `[B, k, n]`, `[B, m, n]`). `bias` (with
/// `beta`) must broadcast to `out`'s shape; it is not read when `beta` is zero (NaN in it does
/// not propagate, as in PyTorch). All tensors share one dtype, which is not bool (the callers
/// checked).
///
/// The product is computed in place when `out` overlaps neither itself nor an input (the bias
/// may be `out` itself, as in `addmm_`), otherwise in a staging tensor that is then copied into
/// `out`; see [`stage_column_major`] for the staging done for speed.
fn product_into(out: &Tensor, a: &Tensor, b: &Tensor, bias: Option<(&Tensor, Scalar)>, alpha: Scalar) -> Result<()> {
    let (sa, sb) = (a.sizes(), b.sizes());
    let (batch, d) = if out.dim() == 3 {
        (sa[0] as usize, Dims { m: sa[1] as usize, k: sa[2] as usize, n: sb[2] as usize })
    } else {
        (1, Dims { m: sa[0] as usize, k: sa[1] as usize, n: sb[1] as usize })
    };
    if out.numel() == 0 {
        return Ok(());
    }
    let dtype = out.dtype();
    let (a_op, b_op) = (Operand::of(a), Operand::of(b));
    let bias = bias.filter(|(_, beta)| !scalar_is_zero(dtype, *beta));
    let inputs_apart = [a, b].iter().all(|t| get_overlap_status(out, t) == MemOverlapStatus::No);
    // `addmm_`: the bias is `out` itself and already in place.
    let bias_in_out =
        bias.is_some_and(|(s, _)| get_overlap_status(out, s) == MemOverlapStatus::Full && s.sizes() == out.sizes());
    let bias_apart = bias.is_none_or(|(s, _)| bias_in_out || get_overlap_status(out, s) == MemOverlapStatus::No);
    // `out` may be written while the product runs: it overlaps nothing the product reads.
    let out_apart = has_internal_overlap(out) == MemOverlap::No && inputs_apart && bias_apart;
    let staged = stage_column_major(d, &a_op, &b_op, &Operand::at(out, std::ptr::null_mut()), dtype);
    let direct = out_apart && !staged;
    let target = if direct {
        out.clone()
    } else {
        // Column-major matrices: the layout `gemm` writes fastest.
        let sizes = out.sizes();
        let (m, n) = (d.m as i64, d.n as i64);
        let strides: Vec<i64> = if out.dim() == 3 { vec![m * n, 1, m] } else { vec![1, m] };
        Tensor::empty_strided_deferred(&sizes, &strides, dtype, out.device())?
    };
    if let Some((s, _)) = bias {
        if !(direct && bias_in_out) {
            copy_(&target, &s.try_expand(&target.sizes())?)?;
        }
    }
    // SAFETY: a tensor that is only written (no bias) may skip the zero-fill of a fresh, deferred
    // storage: the engine writes every element of its `m x n` matrices (numel > 0 here) before
    // anything reads them, and `assume_init` is called right after.
    let (ptr, fresh) =
        if bias.is_none() { unsafe { target.data_ptr_for_overwrite() } } else { (target.data_ptr(), false) };
    let product = || {
        // SAFETY: the meta function checked the shapes and dtypes, `target` was shaped by
        // `set_output` or above, every tensor's strides address elements inside its storage,
        // and `target` overlaps neither itself nor `a` or `b` (checked above, or a fresh tensor).
        unsafe {
            engine::product(dtype, batch, d, Operand::at(&target, ptr), a_op, b_op, alpha, bias.map(|(_, beta)| beta))
        }
    };
    // f32 staging into a row-major `out`: see [`product_copying_blocks`].
    let copy_during = out_apart && staged && out.dim() == 2 && dtype == DType::F32 && out.strides()[1] == 1;
    if copy_during {
        // SAFETY: `ptr` addresses the fresh column-major `m x n` staging matrix (f32), which the
        // product writes in full; `out` is 2-D, row-major and overlaps nothing the product reads.
        unsafe { product_copying_blocks(out, ptr as *const u32, d, product)? };
    } else {
        product()?;
    }
    if fresh {
        // SAFETY: the product wrote every element of `target`.
        unsafe { target.storage().assume_init() };
    }
    if !direct && !copy_during {
        copy_(out, &target)?;
    }
    Ok(())
}

/// Runs `product`, which fills the column-major `m x n` staging matrix at `staged`, and
/// transposes that matrix into the row-major `out`. Each block of columns the calling thread
/// computes is transposed as soon as it is done, while the pool's other threads finish theirs
/// (see `engine::with_columns_done`); the columns left are transposed afterwards.
///
/// # Safety
/// `staged` addresses `m x n` 4-byte elements, column-major, that `product` writes in full and
/// nothing else uses; `out` is a 2-D row-major tensor of 4-byte elements with `m x n` elements
/// that overlaps neither the staging matrix nor anything `product` reads.
unsafe fn product_copying_blocks(
    out: &Tensor,
    staged: *const u32,
    d: Dims,
    product: impl FnOnce() -> Result<()>,
) -> Result<()> {
    // SAFETY: every element of `out` is written below (the blocks copied during the product and
    // the columns left after it) before `assume_init`, and nothing reads `out` meanwhile.
    let (out_ptr, out_fresh) = unsafe { out.data_ptr_for_overwrite() };
    let out_rs = out.strides()[0] as isize;
    let copy_columns = |lo: usize, n: usize| {
        // SAFETY: columns lo..lo + n of the staging matrix (already written by the product) go to
        // the same columns of `out`; the caller's contract for the rest.
        unsafe {
            crate::iter::transpose_4byte(
                n,
                d.m,
                staged.add(lo * d.m),
                d.m as isize,
                (out_ptr as *mut u32).add(lo),
                out_rs,
            )
        }
    };
    let copied = std::cell::RefCell::new(Vec::new());
    engine::with_columns_done(
        &|lo, n| {
            copy_columns(lo, n);
            copied.borrow_mut().push((lo, n));
        },
        product,
    )?;
    let mut copied = copied.into_inner();
    copied.sort_unstable();
    let mut next = 0;
    for (lo, n) in copied.into_iter().chain([(d.n, 0)]) {
        if lo > next {
            copy_columns(next, lo - next);
        }
        next = next.max(lo + n);
    }
    if out_fresh {
        // SAFETY: every column of `out` was copied above.
        unsafe { out.storage().assume_init() };
    }
    Ok(())
}
