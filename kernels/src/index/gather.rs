//! Element-wise gathers and scatters along one dim: `gather`, `scatter.src`, `scatter.value`,
//! `scatter.reduce`, `scatter.value_reduce`, `scatter_add` and `scatter_reduce.two` (structured, with in-place and `out=` variants).
//!
//! Every kernel walks the index's shape with the indexed dim innermost (PyTorch's
//! `cpu_scatter_gather_base_kernel`): positions along the other dims are shared by `self`, the
//! index, `src` and the output, and the index picks the position along `dim`. Rows (fixed
//! positions along the other dims) touch disjoint parts of the output, so they are split over
//! the thread pool; within a row a scatter's writes stay in order.

use super::common::{
    assert_no_internal_overlap, assert_no_overlap, assert_no_partial_overlap, check_out_dtype, for_each_row,
    match_size, nonempty_dim, nonempty_geometry, nonempty_size, read_index, Accumulate, FirstError, Ptr,
};
use super::select::require_index_dtype;
use crate::generated::decls::{
    GatherOutCpu, GatherOutMetaFn, ScatterAddCpu, ScatterAddOutMetaFn, ScatterReduceOutCpu, ScatterReduceOutMetaFn,
    ScatterReduceTwoCpu, ScatterReduceTwoOutMetaFn, ScatterSrcOutCpu, ScatterSrcOutMetaFn, ScatterValueOutCpu,
    ScatterValueOutMetaFn, ScatterValueReduceOutCpu, ScatterValueReduceOutMetaFn,
};
use crate::iter::{copy_, StructuredOutputs};
use crate::logical::promote::FromScalar;
use crate::{Cpu, Meta};
use oxten_runtime::{match_dtype, ops, wrap_dim, Error, Result, Scalar, Tensor};

/// `gather_shape_check`.
fn gather_shape_check(self_: &Tensor, dim: usize, index: &Tensor) -> Result<()> {
    let n = nonempty_dim(self_);
    if n != nonempty_dim(index) {
        return Err(Error::shape("Index tensor must have the same number of dimensions as input tensor"));
    }
    for i in 0..n {
        if i != dim && nonempty_size(index, i)? > nonempty_size(self_, i)? {
            return Err(Error::shape(format!(
                "Size does not match at dimension {i} expected index {:?} to be no larger than self {:?} apart from \
                 dimension {dim}",
                &index.sizes()[..],
                &self_.sizes()[..]
            )));
        }
    }
    Ok(())
}

/// `scatter_shape_check` (with `src` for the tensor overloads).
fn scatter_shape_check(self_: &Tensor, dim: usize, index: &Tensor, src: Option<&Tensor>) -> Result<()> {
    if index.numel() == 0 {
        return Ok(());
    }
    let n = nonempty_dim(self_);
    if n != nonempty_dim(index) {
        return Err(Error::shape("Index tensor must have the same number of dimensions as self tensor"));
    }
    if src.is_some_and(|s| nonempty_dim(s) != n) {
        return Err(Error::shape("Index tensor must have the same number of dimensions as src tensor"));
    }
    let mut wrong = false;
    for d in 0..n {
        let isz = nonempty_size(index, d)?;
        if d != dim && isz > nonempty_size(self_, d)? {
            wrong = true;
            break;
        }
    }
    if let (false, Some(src)) = (wrong, src) {
        for d in 0..n {
            if nonempty_size(index, d)? > nonempty_size(src, d)? {
                wrong = true;
                break;
            }
        }
    }
    if wrong {
        let base = format!(
            "Expected index {:?} to be no larger than self {:?} apart from dimension {dim}",
            &index.sizes()[..],
            &self_.sizes()[..]
        );
        return Err(Error::shape(match src {
            Some(s) => format!("{base} and to be no larger size than src {:?}", &s.sizes()[..]),
            None => base,
        }));
    }
    Ok(())
}

/// The walk shared by the kernels: the index's shape with `dim` moved last, and the strides of
/// each operand in that order (the indexed operand gets stride 0 at `dim`; its stride along
/// `dim` is returned separately).
struct Walk {
    shape: Vec<i64>,
    /// Strides (in elements) of: the tensor indexed along `dim`, the index, the other operand.
    strides: [Vec<i64>; 3],
    /// Stride of the indexed tensor along `dim`.
    dim_stride: isize,
    /// Size of the indexed tensor along `dim` (the bound of the indices).
    dim_size: i64,
}

fn walk(indexed: &Tensor, dim: usize, index: &Tensor, other: Option<&Tensor>) -> Walk {
    let (shape, istr) = nonempty_geometry(index);
    let (isz, xstr) = nonempty_geometry(indexed);
    let ostr = other.map(|o| nonempty_geometry(o).1).unwrap_or_else(|| vec![0; shape.len()]);
    let order: Vec<usize> = (0..shape.len()).filter(|&d| d != dim).chain([dim]).collect();
    let pick = |v: &[i64], zero_dim: bool| -> Vec<i64> {
        order.iter().map(|&d| if zero_dim && d == dim { 0 } else { v[d] }).collect()
    };
    Walk {
        shape: pick(&shape, false),
        strides: [pick(&xstr, true), pick(&istr, false), pick(&ostr, false)],
        dim_stride: xstr[dim] as isize,
        dim_size: isz[dim],
    }
}

/// The error of an index outside `0..size`.
fn out_of_bounds(idx: i64, dim: usize, size: i64) -> Error {
    Error::index(format!("index {idx} is out of bounds for dimension {dim} with size {size}"))
}

// ---------------------------------------------------------------------------------------------
// gather
// ---------------------------------------------------------------------------------------------

impl GatherOutMetaFn for Meta {
    fn gather_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        _sparse_grad: bool,
    ) -> Result<()> {
        let d = wrap_dim(dim, self_.dim())?;
        check_out_dtype(outs, self_.dtype())?;
        outs.set_output(0, &index.sizes(), None, self_.dtype(), self_.device())?;
        if let Some(out) = outs.maybe_get_output(0) {
            assert_no_internal_overlap(out)?;
            assert_no_overlap(out, self_)?;
            assert_no_partial_overlap(out, index)?;
        }
        if index.numel() == 0 {
            return Ok(());
        }
        require_index_dtype("gather", index)?;
        gather_shape_check(self_, d, index)
    }
}

impl GatherOutCpu for Cpu {
    fn gather_out(self_: &Tensor, dim: i64, index: &Tensor, _sparse_grad: bool, out: &Tensor) -> Result<()> {
        if index.numel() == 0 {
            return Ok(());
        }
        let d = wrap_dim(dim, self_.dim())?;
        let w = walk(self_, d, index, Some(out));
        let n = *w.shape.last().unwrap_or(&1) as isize;
        let [xs, is, os] = [&w.strides[0], &w.strides[1], &w.strides[2]];
        let (xi, ii, oi) = (xs[xs.len() - 1] as isize, is[is.len() - 1] as isize, os[os.len() - 1] as isize);
        let (src, idx, dst) = (Ptr(self_.data_ptr()), Ptr(index.data_ptr()), Ptr(out.data_ptr()));
        let idt = index.dtype();
        let err = FirstError::new();
        match_size!(self_.dtype().size(), T => for_each_row(&w.shape, [xs, is, os], true, |[x, i, o], _| {
            if err.failed() {
                return;
            }
            for k in 0..n {
                // SAFETY: offsets come from the tensors' own strides over the index's shape,
                // which the meta function checked fits `self` (apart from `dim`) and is the
                // output's shape; the index is bounds-checked before `self` is read.
                unsafe {
                    let v = read_index(idx.get(), i + k * ii, idt);
                    if v < 0 || v >= w.dim_size {
                        err.set(out_of_bounds(v, d, w.dim_size));
                        return;
                    }
                    let s = (src.get() as *const T).offset(x + k * xi + v as isize * w.dim_stride);
                    *(dst.get() as *mut T).offset(o + k * oi) = *s;
                }
            }
        }));
        err.into_result()
    }
}

// ---------------------------------------------------------------------------------------------
// scatter
// ---------------------------------------------------------------------------------------------

/// `scatter_meta_impl`: dtype and shape checks, overlap checks of a given output, and an output
/// shaped like `self`.
fn scatter_meta(
    outs: &mut StructuredOutputs,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Option<&Tensor>,
) -> Result<()> {
    let d = wrap_dim(dim, self_.dim())?;
    require_index_dtype("scatter", index)?;
    if let Some(s) = src {
        if s.dtype() != self_.dtype() {
            return Err(Error::dtype("scatter(): Expected self.dtype to be equal to src.dtype"));
        }
    }
    scatter_shape_check(self_, d, index, src)?;
    if let Some(out) = outs.maybe_get_output(0) {
        assert_no_internal_overlap(out)?;
        assert_no_overlap(out, index)?;
        if let Some(s) = src {
            assert_no_overlap(out, s)?;
        }
    }
    check_out_dtype(outs, self_.dtype())?;
    outs.set_output(0, &self_.sizes(), None, self_.dtype(), self_.device())
}

/// How a scatter combines a value with the output element.
#[derive(Clone, Copy)]
enum Mode<'a> {
    /// `out[..] = src[..]`
    Src(&'a Tensor),
    /// `out[..] = value`
    Value(Scalar),
    /// `out[..] = reduce(out[..], value)` (`scatter.value_reduce`: add or multiply).
    ValueReduce(Scalar, Reduction),
    /// `out[..] += src[..]`
    Add(&'a Tensor),
    /// `out[..] = reduce(out[..], src[..])`
    Reduce(&'a Tensor, Reduction),
    /// `out[..] =` the reduction's identity (`scatter_reduce` without `include_self`).
    Identity(Reduction),
}

/// `scatter_reduce`'s `reduce` argument.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reduction {
    Sum,
    Prod,
    Mean,
    Amax,
    Amin,
}

impl Reduction {
    /// Parses `reduce` as `scatter_reduce` takes it.
    pub(crate) fn parse(reduce: &str) -> Result<Reduction> {
        Ok(match reduce {
            "sum" => Reduction::Sum,
            "prod" => Reduction::Prod,
            "mean" => Reduction::Mean,
            "amax" => Reduction::Amax,
            "amin" => Reduction::Amin,
            other => {
                return Err(Error::value(format!(
                    "reduce argument must be either sum, prod, mean, amax or amin, got {other}"
                )))
            }
        })
    }

    /// Parses the `reduce` argument of `scatter`'s older overloads (`add` or `multiply`).
    fn parse_scatter(reduce: &str) -> Result<Reduction> {
        match reduce {
            "add" => Ok(Reduction::Sum),
            "multiply" => Ok(Reduction::Prod),
            other => {
                // `x.scatter_reduce(dim, index, src, "sum")` in Rust is this overload
                // (`scatter.reduce`); PyTorch's `scatter_reduce` is `scatter_reduce_two`.
                let hint = if Reduction::parse(other).is_ok() {
                    " (the reductions sum, prod, mean, amax and amin are scatter_reduce.two's: `scatter_reduce_two`)"
                } else {
                    ""
                };
                Err(Error::value(format!("reduce argument must be either add or multiply, got {other}{hint}")))
            }
        }
    }
}

/// `out` starts as a copy of `self`; then every index element writes its value at its
/// position along `dim`.
fn scatter_into(self_: &Tensor, dim: i64, index: &Tensor, mode: Mode<'_>, out: &Tensor) -> Result<()> {
    let d = wrap_dim(dim, self_.dim())?;
    if !self_.is_same(out) {
        copy_(out, self_)?;
    }
    if index.numel() == 0 {
        return Ok(());
    }
    let src = match mode {
        Mode::Src(s) | Mode::Add(s) | Mode::Reduce(s, _) => Some(s),
        Mode::Value(_) | Mode::ValueReduce(..) | Mode::Identity(_) => None,
    };
    let w = walk(out, d, index, src);
    let n = *w.shape.last().unwrap_or(&1) as isize;
    let [xs, is, ss] = [&w.strides[0], &w.strides[1], &w.strides[2]];
    let (xi, ii, si) = (xs[xs.len() - 1] as isize, is[is.len() - 1] as isize, ss[ss.len() - 1] as isize);
    let dst = Ptr(out.data_ptr());
    let idx = Ptr(index.data_ptr());
    let srcp = Ptr(src.map_or(std::ptr::null_mut(), |s| s.data_ptr()));
    let idt = index.dtype();
    let err = FirstError::new();
    match_dtype!(out.dtype(), T => {
        let value: Option<T> = match mode {
            Mode::Value(v) | Mode::ValueReduce(v, _) => Some(<T as FromScalar>::from_scalar(v)?),
            Mode::Identity(Reduction::Sum | Reduction::Mean) => Some(T::ZERO),
            Mode::Identity(Reduction::Prod) => Some(T::ONE),
            Mode::Identity(Reduction::Amax) => Some(T::LOWEST),
            Mode::Identity(Reduction::Amin) => Some(T::HIGHEST),
            _ => None,
        };
        let add = matches!(
            mode,
            Mode::Add(_) | Mode::Reduce(_, Reduction::Sum | Reduction::Mean) | Mode::ValueReduce(_, Reduction::Sum)
        );
        let combine: Option<fn(T, T) -> T> = match mode {
            Mode::Reduce(_, Reduction::Prod) | Mode::ValueReduce(_, Reduction::Prod) => Some(T::mul),
            Mode::Reduce(_, Reduction::Amax) => Some(T::max_nan),
            Mode::Reduce(_, Reduction::Amin) => Some(T::min_nan),
            _ => None,
        };
        for_each_row(&w.shape, [xs, is, ss], true, |[x, i, s], _| {
            if err.failed() {
                return;
            }
            for k in 0..n {
                // SAFETY: offsets come from the tensors' strides over the index's shape, which
                // the meta function checked fits `self`/`out` (apart from `dim`) and `src`; the
                // index is bounds-checked before `out` is written. Rows write disjoint lines of
                // `out` (they differ outside `dim`).
                unsafe {
                    let v = read_index(idx.get(), i + k * ii, idt);
                    if v < 0 || v >= w.dim_size {
                        err.set(out_of_bounds(v, d, w.dim_size));
                        return;
                    }
                    let o = (dst.get() as *mut T).offset(x + k * xi + v as isize * w.dim_stride);
                    let val = match value {
                        Some(c) => c,
                        None => *(srcp.get() as *const T).offset(s + k * si),
                    };
                    *o = if add {
                        (*o).acc(val)
                    } else if let Some(f) = combine {
                        f(*o, val)
                    } else {
                        val
                    };
                }
            }
        });
    });
    err.into_result()
}

impl ScatterSrcOutMetaFn for Meta {
    fn scatter_src_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
    ) -> Result<()> {
        scatter_meta(outs, self_, dim, index, Some(src))
    }
}

impl ScatterSrcOutCpu for Cpu {
    fn scatter_src_out(self_: &Tensor, dim: i64, index: &Tensor, src: &Tensor, out: &Tensor) -> Result<()> {
        scatter_into(self_, dim, index, Mode::Src(src), out)
    }
}

impl ScatterValueOutMetaFn for Meta {
    fn scatter_value_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        _value: Scalar,
    ) -> Result<()> {
        scatter_meta(outs, self_, dim, index, None)
    }
}

impl ScatterValueOutCpu for Cpu {
    fn scatter_value_out(self_: &Tensor, dim: i64, index: &Tensor, value: Scalar, out: &Tensor) -> Result<()> {
        scatter_into(self_, dim, index, Mode::Value(value), out)
    }
}

impl ScatterReduceOutMetaFn for Meta {
    fn scatter_reduce_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
        reduce: &str,
    ) -> Result<()> {
        Reduction::parse_scatter(reduce)?;
        scatter_meta(outs, self_, dim, index, Some(src))
    }
}

impl ScatterReduceOutCpu for Cpu {
    /// `scatter(..., reduce=)`: `add` accumulates like `scatter_add`, `multiply` multiplies
    /// into the output, repeated indices in order.
    fn scatter_reduce_out(
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
        reduce: &str,
        out: &Tensor,
    ) -> Result<()> {
        let op = Reduction::parse_scatter(reduce)?;
        scatter_into(self_, dim, index, Mode::Reduce(src, op), out)
    }
}

impl ScatterValueReduceOutMetaFn for Meta {
    fn scatter_value_reduce_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        _value: Scalar,
        reduce: &str,
    ) -> Result<()> {
        Reduction::parse_scatter(reduce)?;
        scatter_meta(outs, self_, dim, index, None)
    }
}

impl ScatterValueReduceOutCpu for Cpu {
    fn scatter_value_reduce_out(
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        value: Scalar,
        reduce: &str,
        out: &Tensor,
    ) -> Result<()> {
        let op = Reduction::parse_scatter(reduce)?;
        scatter_into(self_, dim, index, Mode::ValueReduce(value, op), out)
    }
}

impl ScatterAddOutMetaFn for Meta {
    fn scatter_add_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
    ) -> Result<()> {
        scatter_meta(outs, self_, dim, index, Some(src))
    }
}

impl ScatterAddCpu for Cpu {
    fn scatter_add(self_: &Tensor, dim: i64, index: &Tensor, src: &Tensor, out: &Tensor) -> Result<()> {
        scatter_into(self_, dim, index, Mode::Add(src), out)
    }
}

impl ScatterReduceTwoOutMetaFn for Meta {
    fn scatter_reduce_two_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
        reduce: &str,
        _include_self: bool,
    ) -> Result<()> {
        Reduction::parse(reduce)?;
        if src.dtype() != self_.dtype() {
            return Err(Error::dtype("scatter_reduce(): Expected self.dtype to be equal to src.dtype"));
        }
        scatter_meta(outs, self_, dim, index, Some(src))
    }
}

impl ScatterReduceTwoCpu for Cpu {
    /// PyTorch's `scatter_reduce.two`: without `include_self` the scattered-to positions start
    /// from the reduction's identity; `mean` divides the sums by the number of values each
    /// position received (plus one for `self`), rounding down for integers.
    fn scatter_reduce_two(
        self_: &Tensor,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
        reduce: &str,
        include_self: bool,
        out: &Tensor,
    ) -> Result<()> {
        let op = Reduction::parse(reduce)?;
        if !self_.is_same(out) {
            copy_(out, self_)?;
        }
        if !include_self {
            scatter_into(out, dim, index, Mode::Identity(op), out)?;
        }
        scatter_into(out, dim, index, Mode::Reduce(src, op), out)?;
        if op == Reduction::Mean {
            let start = if include_self { Scalar::Int(1) } else { Scalar::Int(0) };
            let count = ops::full_like::call(out, start, None, None, None, None, None)?;
            let count =
                ops::scatter_add::call(&count, dim, index, &ops::ones_like::call(src, None, None, None, None, None)?)?;
            let count =
                ops::masked_fill_scalar::call(&count, &ops::eq_scalar::call(&count, Scalar::Int(0))?, Scalar::Int(1))?;
            let mean = if out.dtype().is_floating_point() {
                ops::div::call(out, &count)?
            } else {
                ops::div_tensor_mode::call(out, &count, Some("floor"))?
            };
            copy_(out, &mean)?;
        }
        Ok(())
    }
}
