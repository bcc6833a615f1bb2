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

/// The `(row, col)` pairs of a `row × col` matrix with `col - row` in `range` (relative to
/// `offset`), row by row, as a `[2, N]` tensor.
fn tri_indices(
    op: &str,
    row: i64,
    col: i64,
    keep: impl Fn(i64, i64) -> bool,
    dtype: Option<oxten_runtime::DType>,
    device: Option<oxten_runtime::Device>,
) -> Result<Tensor> {
    for (name, v) in [("row", row), ("col", col)] {
        if v < 0 {
            return Err(oxten_runtime::Error::runtime(format!("{name} must be non-negative, got{v}")).in_op(op));
        }
    }
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..row {
        for j in 0..col {
            if keep(i, j) {
                rows.push(i);
                cols.push(j);
            }
        }
    }
    let n = rows.len() as i64;
    rows.extend(cols);
    let t = Tensor::from_vec(rows, &[2, n])?.try_to_dtype(dtype.unwrap_or(oxten_runtime::DType::I64))?;
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
        tri_indices("triu_indices", row, col, |i, j| j - i >= offset, dtype, device)
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
        tri_indices("tril_indices", row, col, |i, j| j - i <= offset, dtype, device)
    }
}
