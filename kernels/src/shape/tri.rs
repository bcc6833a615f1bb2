//! `tril` and `triu` (structured, with in-place and out= variants): the lower or upper triangle
//! of the last two dims, relative to `diagonal`; the rest is zero.

use crate::generated::decls::{TrilCpuCpu, TrilOutMetaFn, TriuCpuCpu, TriuOutMetaFn};
use crate::index::common::{check_out_dtype, for_each_row, match_size, Ptr};
use crate::iter::{copy_, get_overlap_status, MemOverlapStatus, StructuredOutputs};
use oxten_runtime::{Error, MemoryFormat, Result, Tensor};

/// The shared meta function: at least 2 dims; a contiguous output of `self`'s shape and dtype.
fn tri_meta(name: &str, outs: &mut StructuredOutputs, self_: &Tensor) -> Result<()> {
    if self_.dim() < 2 {
        return Err(Error::value(format!("{name}: input tensor must have at least 2 dimensions")));
    }
    check_out_dtype(outs, self_.dtype())?;
    outs.set_output(0, &self_.sizes(), None, self_.dtype(), self_.device())
}

/// Writes `self` into `out` where `keep(j - i)` holds (row `i`, column `j` of the last two
/// dims) and zero elsewhere. `out` may be `self` (in place).
fn tri_into(self_: &Tensor, out: &Tensor, keep: impl Fn(i64) -> bool + Sync) -> Result<()> {
    if self_.numel() == 0 {
        return Ok(());
    }
    let in_place_ok = match get_overlap_status(out, self_) {
        MemOverlapStatus::No => true,
        MemOverlapStatus::Full => out.strides() == self_.strides(),
        _ => false,
    };
    if !in_place_ok {
        // `out` shares memory with `self` in another arrangement: compute aside.
        let tmp = Tensor::empty(&out.sizes(), out.dtype(), out.device(), MemoryFormat::Contiguous)?;
        tri_into(self_, &tmp, keep)?;
        return copy_(out, &tmp);
    }
    let sizes = self_.sizes();
    let nd = sizes.len();
    let (os, ss) = (out.strides(), self_.strides());
    let (n, od, sd) = (sizes[nd - 1], os[nd - 1] as isize, ss[nd - 1] as isize);
    let (dst, src) = (Ptr(out.data_ptr()), Ptr(self_.data_ptr()));
    match_size!(out.dtype().size(), T => for_each_row(&sizes, [&os, &ss], true, |[o, s], coord| {
        let i = coord[nd - 2];
        // SAFETY: `o` and `s` are row starts of `out` and `self` with `n` elements at strides
        // `od` and `sd`; rows of `out` are disjoint, and when `out` is `self` each element is
        // read before it is written.
        unsafe {
            let d = (dst.get() as *mut T).offset(o);
            let sp = (src.get() as *const T).offset(s);
            for j in 0..n {
                let v = if keep(j - i) { *sp.offset(j as isize * sd) } else { T::default() };
                *d.offset(j as isize * od) = v;
            }
        }
    }));
    Ok(())
}

impl TrilOutMetaFn for crate::Meta {
    fn tril_out(outs: &mut StructuredOutputs, self_: &Tensor, _diagonal: i64) -> Result<()> {
        tri_meta("tril", outs, self_)
    }
}

impl TriuOutMetaFn for crate::Meta {
    fn triu_out(outs: &mut StructuredOutputs, self_: &Tensor, _diagonal: i64) -> Result<()> {
        tri_meta("triu", outs, self_)
    }
}

impl TrilCpuCpu for crate::Cpu {
    fn tril_cpu(self_: &Tensor, diagonal: i64, out: &Tensor) -> Result<()> {
        tri_into(self_, out, move |d| d <= diagonal)
    }
}

impl TriuCpuCpu for crate::Cpu {
    fn triu_cpu(self_: &Tensor, diagonal: i64, out: &Tensor) -> Result<()> {
        tri_into(self_, out, move |d| d >= diagonal)
    }
}

/// The `[2, N]` indices of the pairs `(i, j)` of a `row × col` matrix with `j` in `cols(i)`
/// (a half-open range), for the rows in `rows`, row by row. The result is allocated fallibly
/// before any work, so a huge request is an out-of-memory error, not a long loop.
fn tri_indices(
    op: &str,
    row: i64,
    col: i64,
    rows: std::ops::Range<i64>,
    cols: impl Fn(i64) -> (i64, i64),
    dtype: Option<oxten_runtime::DType>,
    device: Option<oxten_runtime::Device>,
) -> Result<Tensor> {
    for (name, v) in [("row", row), ("col", col)] {
        if v < 0 {
            return Err(oxten_runtime::Error::runtime(format!("{name} must be non-negative, got{v}")).in_op(op));
        }
    }
    // Without columns no row has entries (and `rows` may be astronomically long).
    let rows = if col == 0 { 0..0 } else { rows.start.max(0)..rows.end.min(row) };
    let bound = (rows.end - rows.start).max(0) as u128 * col as u128;
    let capacity = usize::try_from(bound).ok().and_then(|b| b.checked_mul(2)).unwrap_or(usize::MAX);
    let mut out: Vec<i64> = oxten_runtime::error::try_vec_with_capacity(capacity)?;
    let mut cols_out = Vec::new();
    for i in rows {
        let (lo, hi) = cols(i);
        for j in lo.max(0)..hi.min(col) {
            out.push(i);
            cols_out.push(j);
        }
    }
    let n = out.len() as i64;
    out.extend(cols_out);
    let t = Tensor::from_vec(out, &[2, n])?.try_to_dtype(dtype.unwrap_or(oxten_runtime::DType::I64))?;
    match device {
        Some(d) => t.try_to_device(d),
        None => Ok(t),
    }
}

impl crate::generated::decls::TriuIndicesCompositeExplicit for crate::Composite {
    fn triu_indices(
        row: i64,
        col: i64,
        offset: i64,
        dtype: Option<oxten_runtime::DType>,
        _layout: Option<oxten_runtime::Layout>,
        device: Option<oxten_runtime::Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        // Row i keeps columns from i + offset; rows from col - offset on keep none.
        let rows = 0..col.saturating_sub(offset);
        tri_indices("triu_indices", row, col, rows, |i| (i.saturating_add(offset), col), dtype, device)
    }
}

impl crate::generated::decls::TrilIndicesCompositeExplicit for crate::Composite {
    fn tril_indices(
        row: i64,
        col: i64,
        offset: i64,
        dtype: Option<oxten_runtime::DType>,
        _layout: Option<oxten_runtime::Layout>,
        device: Option<oxten_runtime::Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        // Row i keeps columns up to i + offset; rows before -offset keep none.
        let rows = if col > 0 { offset.saturating_neg().max(0)..row } else { 0..0 };
        tri_indices("tril_indices", row, col, rows, |i| (0, i.saturating_add(offset).saturating_add(1)), dtype, device)
    }
}
