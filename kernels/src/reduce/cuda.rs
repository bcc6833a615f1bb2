//! The reductions on CUDA, over the row-reduction kernels of [`crate::cuda::reduce`]: `sum`,
//! `mean`, `prod`, `amax`, `amin`, `all`, `any`, `var`, `std`, and the arg-reductions
//! `max.dim`, `min.dim`, `argmax`, `argmin`; `linalg_vector_norm`; and `cumsum`. Shapes, dtypes and checks come from the same meta
//! functions as on the CPU.

use super::allany::Dims;
use super::prod::prod_all_output;
use super::stats::{correction_value, std_var_meta, std_var_out_meta};
use crate::cuda::launch::{blocks_for, compute_type, dtype_code, instance, launch, storage_type, InstanceKey};
use crate::cuda::reduce::{
    arg_reduce, reduce_into, reduced_mask, rows_along, rows_finish, rows_target, sum_acc, value_acc, RowOp,
};
use crate::generated::decls::{
    AllAllOutCuda, AllDimsOutCuda, AllOutCuda, AmaxOutCuda, AminOutCuda, AnyAllOutCuda, AnyDimsOutCuda, AnyOutCuda,
    ArgmaxOutCuda, ArgminOutCuda, CumsumOutCuda, LinalgVectorNormOutCuda, MaxOutCuda, MeanOutCuda, MinOutCuda,
    ProdCuda, ProdOutCuda, StdCuda, StdOutCuda, SumOutCuda, VarCuda, VarOutCuda,
};
use crate::iter::{copy_stub, to_dtype};
use crate::Cuda;
use oxten_runtime::{wrap_dim, DType, Device, Error, MemoryFormat, Result, Scalar, Tensor};
use std::ffi::c_void;
use std::fmt::Write;

static SUM: RowOp = RowOp { name: "sum", init: "ACC(0)", step: "a + x", combine: "a + b", finish: "a" };
static MEAN: RowOp = RowOp { name: "mean", init: "ACC(0)", step: "a + x", combine: "a + b", finish: "a / ACC(n)" };
static PROD: RowOp = RowOp { name: "prod", init: "ACC(1)", step: "a * x", combine: "a * b", finish: "a" };
static AMAX: RowOp =
    RowOp { name: "amax", init: "OxLimits<ACC>::lowest()", step: "ox_max(a, x)", combine: "ox_max(a, b)", finish: "a" };
static AMIN: RowOp = RowOp {
    name: "amin",
    init: "OxLimits<ACC>::highest()",
    step: "ox_min(a, x)",
    combine: "ox_min(a, b)",
    finish: "a",
};
static ALL: RowOp =
    RowOp { name: "all", init: "ACC(1)", step: "ACC(a != 0 && x != 0)", combine: "ACC(a != 0 && b != 0)", finish: "a" };
static ANY: RowOp =
    RowOp { name: "any", init: "ACC(0)", step: "ACC(a != 0 || x != 0)", combine: "ACC(a != 0 || b != 0)", finish: "a" };
static VAR: RowOp = RowOp {
    name: "var",
    init: "ACC(0)",
    step: "a + (x - m) * (x - m)",
    combine: "a + b",
    finish: "a / ACC(fmax(0.0, double(n) - c0))",
};
static STD: RowOp = RowOp {
    name: "std",
    init: "ACC(0)",
    step: "a + (x - m) * (x - m)",
    combine: "a + b",
    finish: "ox_sqrt(a / ACC(fmax(0.0, double(n) - c0)))",
};

/// `linalg_vector_norm` by `ord` (as on the CPU): the count of non-zeros, `Σ|x|`, `sqrt(Σx²)`,
/// the largest or smallest `|x|` (NaN propagates), and `(Σ|x|^p)^(1/p)` with `p` in `c0`.
static NORM_ZERO: RowOp =
    RowOp { name: "linalg_vector_norm", init: "ACC(0)", step: "a + ACC(x != ACC(0))", combine: "a + b", finish: "a" };
static NORM_ONE: RowOp =
    RowOp { name: "linalg_vector_norm", init: "ACC(0)", step: "a + ox_abs(x)", combine: "a + b", finish: "a" };
static NORM_TWO: RowOp =
    RowOp { name: "linalg_vector_norm", init: "ACC(0)", step: "a + x * x", combine: "a + b", finish: "ox_sqrt(a)" };
static NORM_INF: RowOp = RowOp {
    name: "linalg_vector_norm",
    init: "ACC(0)",
    step: "ox_max(a, ox_abs(x))",
    combine: "ox_max(a, b)",
    finish: "a",
};
static NORM_NEG_INF: RowOp = RowOp {
    name: "linalg_vector_norm",
    init: "OxLimits<ACC>::highest()",
    step: "ox_min(a, ox_abs(x))",
    combine: "ox_min(a, b)",
    finish: "a",
};
static NORM_P: RowOp = RowOp {
    name: "linalg_vector_norm",
    init: "ACC(0)",
    step: "a + ox_pow(ox_abs(x), ACC(c0))",
    combine: "a + b",
    finish: "ox_pow(a, ACC(1.0 / c0))",
};

impl LinalgVectorNormOutCuda for Cuda {
    fn linalg_vector_norm_out(
        self_: &Tensor,
        ord: Scalar,
        dim: Option<&[i64]>,
        _keepdim: bool,
        _dtype: Option<DType>,
        out: &Tensor,
    ) -> Result<()> {
        let p = ord.to_f64();
        let op = match p {
            0.0 => &NORM_ZERO,
            1.0 => &NORM_ONE,
            2.0 => &NORM_TWO,
            f64::INFINITY => &NORM_INF,
            f64::NEG_INFINITY => &NORM_NEG_INF,
            _ => &NORM_P,
        };
        // Converted to the result dtype first, as on the CPU; half types accumulate in f32.
        let input = to_dtype(self_, out.dtype())?;
        let mask = reduced_mask(input.dim(), dim)?;
        reduce_into(&input, &mask, out, op, value_acc(out.dtype()), None, p)
    }
}

impl SumOutCuda for Cuda {
    fn sum_out(self_: &Tensor, dim: Option<&[i64]>, _keepdim: bool, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        let mask = reduced_mask(self_.dim(), dim)?;
        reduce_into(self_, &mask, out, &SUM, sum_acc(out.dtype()), None, 0.0)
    }
}

impl MeanOutCuda for Cuda {
    fn mean_out(
        self_: &Tensor,
        dim: Option<&[i64]>,
        _keepdim: bool,
        _dtype: Option<DType>,
        out: &Tensor,
    ) -> Result<()> {
        let mask = reduced_mask(self_.dim(), dim)?;
        reduce_into(&to_dtype(self_, out.dtype())?, &mask, out, &MEAN, sum_acc(out.dtype()), None, 0.0)
    }
}

impl ProdOutCuda for Cuda {
    fn prod_out(self_: &Tensor, dim: i64, _keepdim: bool, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        let mask = reduced_mask(self_.dim(), Some(&[dim]))?;
        reduce_into(&to_dtype(self_, out.dtype())?, &mask, out, &PROD, sum_acc(out.dtype()), None, 0.0)
    }
}

impl ProdCuda for Cuda {
    fn prod(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
        let out = prod_all_output(self_, dtype)?;
        let mask = vec![true; self_.dim()];
        reduce_into(&to_dtype(self_, out.dtype())?, &mask, &out, &PROD, sum_acc(out.dtype()), None, 0.0)?;
        Ok(out)
    }
}

impl AmaxOutCuda for Cuda {
    fn amax_out(self_: &Tensor, dim: &[i64], _keepdim: bool, out: &Tensor) -> Result<()> {
        let mask = reduced_mask(self_.dim(), Some(dim))?;
        reduce_into(self_, &mask, out, &AMAX, value_acc(self_.dtype()), None, 0.0)
    }
}

impl AminOutCuda for Cuda {
    fn amin_out(self_: &Tensor, dim: &[i64], _keepdim: bool, out: &Tensor) -> Result<()> {
        let mask = reduced_mask(self_.dim(), Some(dim))?;
        reduce_into(self_, &mask, out, &AMIN, value_acc(self_.dtype()), None, 0.0)
    }
}

/// `all` / `any` into a bool or uint8 `out` (shaped by the meta function); an empty dim list
/// reduces nothing.
fn allany(self_: &Tensor, dims: Dims, out: &Tensor, op: &'static RowOp) -> Result<()> {
    if dims.reduces_nothing() {
        return copy_stub(out, &to_dtype(self_, DType::Bool)?);
    }
    // Converted to the result dtype first, as on the CPU: 0.5 is true.
    let input = to_dtype(self_, out.dtype())?;
    let mask = reduced_mask(input.dim(), dims.as_reduction())?;
    reduce_into(&input, &mask, out, op, DType::I32, None, 0.0)
}

impl AllAllOutCuda for Cuda {
    fn all_all_out(self_: &Tensor, out: &Tensor) -> Result<()> {
        allany(self_, Dims::All, out, &ALL)
    }
}
impl AllOutCuda for Cuda {
    fn all_out(self_: &Tensor, dim: i64, _keepdim: bool, out: &Tensor) -> Result<()> {
        allany(self_, Dims::List(&[dim]), out, &ALL)
    }
}
impl AllDimsOutCuda for Cuda {
    fn all_dims_out(self_: &Tensor, dim: Option<&[i64]>, _keepdim: bool, out: &Tensor) -> Result<()> {
        allany(self_, Dims::of(dim), out, &ALL)
    }
}
impl AnyAllOutCuda for Cuda {
    fn any_all_out(self_: &Tensor, out: &Tensor) -> Result<()> {
        allany(self_, Dims::All, out, &ANY)
    }
}
impl AnyOutCuda for Cuda {
    fn any_out(self_: &Tensor, dim: i64, _keepdim: bool, out: &Tensor) -> Result<()> {
        allany(self_, Dims::List(&[dim]), out, &ANY)
    }
}
impl AnyDimsOutCuda for Cuda {
    fn any_dims_out(self_: &Tensor, dim: Option<&[i64]>, _keepdim: bool, out: &Tensor) -> Result<()> {
        allany(self_, Dims::of(dim), out, &ANY)
    }
}

/// `var` / `std` into `out`: the mean of each row first (accumulated like `sum`), then the sum
/// of squared deviations from it, divided by `n - correction` (clamped at 0).
fn var_into(
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    out: &Tensor,
    op: &'static RowOp,
) -> Result<()> {
    let input = to_dtype(self_, out.dtype())?;
    let mask = reduced_mask(input.dim(), dim)?;
    let acc = sum_acc(out.dtype());
    let outer: i64 = input.sizes().iter().zip(&mask).filter(|(_, m)| !**m).map(|(s, _)| *s).product();
    let means = Tensor::empty(&[outer], acc, input.device(), MemoryFormat::Contiguous)?;
    reduce_into(&input, &mask, &means, &MEAN, acc, None, 0.0)?;
    reduce_into(&input, &mask, out, op, acc, Some(&means), correction_value(correction))
}

impl VarCuda for Cuda {
    fn var(self_: &Tensor, dim: Option<&[i64]>, correction: Option<Scalar>, keepdim: bool) -> Result<Tensor> {
        let out = std_var_meta(self_, dim, keepdim)?;
        var_into(self_, dim, correction, &out, &VAR)?;
        Ok(out)
    }
}
impl VarOutCuda for Cuda {
    fn var_out(
        self_: &Tensor,
        dim: Option<&[i64]>,
        correction: Option<Scalar>,
        keepdim: bool,
        out: &Tensor,
    ) -> Result<Tensor> {
        std_var_out_meta(self_, dim, keepdim, out)?;
        var_into(self_, dim, correction, out, &VAR)?;
        Ok(out.clone())
    }
}
impl StdCuda for Cuda {
    fn std(self_: &Tensor, dim: Option<&[i64]>, correction: Option<Scalar>, keepdim: bool) -> Result<Tensor> {
        let out = std_var_meta(self_, dim, keepdim)?;
        var_into(self_, dim, correction, &out, &STD)?;
        Ok(out)
    }
}
impl StdOutCuda for Cuda {
    fn std_out(
        self_: &Tensor,
        dim: Option<&[i64]>,
        correction: Option<Scalar>,
        keepdim: bool,
        out: &Tensor,
    ) -> Result<Tensor> {
        std_var_out_meta(self_, dim, keepdim, out)?;
        var_into(self_, dim, correction, out, &STD)?;
        Ok(out.clone())
    }
}

fn check_not_bool(what: &str, t: &Tensor) -> Result<()> {
    if t.dtype() == DType::Bool {
        return Err(Error::dtype(format!("{what}(): does not support bool input")));
    }
    Ok(())
}

impl MaxOutCuda for Cuda {
    fn max_out(self_: &Tensor, dim: i64, _keepdim: bool, max: &Tensor, max_values: &Tensor) -> Result<()> {
        // In the schema `max` is the values output and `max_values` the indices output.
        let d = wrap_dim(dim, self_.dim())?;
        arg_reduce(self_, (self_.dim() > 0).then_some(d), Some(max), max_values, true)
    }
}
impl MinOutCuda for Cuda {
    fn min_out(self_: &Tensor, dim: i64, _keepdim: bool, min: &Tensor, min_indices: &Tensor) -> Result<()> {
        let d = wrap_dim(dim, self_.dim())?;
        arg_reduce(self_, (self_.dim() > 0).then_some(d), Some(min), min_indices, false)
    }
}
impl ArgmaxOutCuda for Cuda {
    fn argmax_out(self_: &Tensor, dim: Option<i64>, _keepdim: bool, out: &Tensor) -> Result<()> {
        check_not_bool("argmax", self_)?;
        let d = dim.map(|d| wrap_dim(d, self_.dim())).transpose()?;
        arg_reduce(self_, d.filter(|_| self_.dim() > 0), None, out, true)
    }
}
impl ArgminOutCuda for Cuda {
    fn argmin_out(self_: &Tensor, dim: Option<i64>, _keepdim: bool, out: &Tensor) -> Result<()> {
        check_not_bool("argmin", self_)?;
        let d = dim.map(|d| wrap_dim(d, self_.dim())).transpose()?;
        arg_reduce(self_, d.filter(|_| self_.dim() > 0), None, out, false)
    }
}

static CUMSUM: u8 = 0;

impl CumsumOutCuda for Cuda {
    /// One block per row along `dim`: the row is scanned in chunks of the block size (warp
    /// shuffles, then the warps' totals), each chunk starting from the previous one's total;
    /// sums accumulate like `sum` (f32 for the half types, i64 for integers).
    fn cumsum_out(self_: &Tensor, dim: i64, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        if self_.dim() == 0 {
            return copy_stub(out, self_);
        }
        if self_.numel() == 0 {
            return Ok(());
        }
        let dtype = out.dtype();
        if dtype == DType::Bool {
            return Err(crate::cuda::launch::not_implemented("cumsum", DType::Bool));
        }
        let d = wrap_dim(dim, self_.dim())?;
        let input = to_dtype(self_, dtype)?;
        let (rows_x, perm, rows, len) = rows_along(&input, d)?;
        let (target, own) = rows_target(out, &perm, dtype)?;
        let Device::Cuda(dev) = input.device() else {
            return Err(Error::device("cumsum: a CUDA kernel was called on another device"));
        };
        let acc = sum_acc(dtype);
        let key = InstanceKey { family: &CUMSUM as *const u8 as usize, variant: dtype_code(dtype), device: dev };
        let f = instance(key, "cumsum", || {
            let mut s = String::from(crate::cuda::PRELUDE);
            let _ = writeln!(s, "typedef {} S;\ntypedef {} ACC;", storage_type(dtype), compute_type(acc));
            s.push_str(
                r#"extern "C" __global__ void ox_kernel(const char* xp, char* yp, long long rows, long long len) {
  long long r = blockIdx.x;
  if (r >= rows) return;
  const S* x = (const S*)xp + r * len;
  S* y = (S*)yp + r * len;
  __shared__ ACC warp_totals[32];
  ACC carry = ACC(0);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  for (long long base = 0; base < len; base += blockDim.x) {
    long long i = base + threadIdx.x;
    ACC v = i < len ? ox_load<ACC>(x[i]) : ACC(0);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      ACC t = __shfl_up_sync(0xffffffffu, v, o);
      if (lane >= o) v += t;
    }
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
      ACC w = lane < nwarps ? warp_totals[lane] : ACC(0);
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        ACC t = __shfl_up_sync(0xffffffffu, w, o);
        if (lane >= o) w += t;
      }
      warp_totals[lane] = w;
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];
    v += carry;
    if (i < len) y[i] = ox_store<S>(v);
    carry += warp_totals[nwarps - 1];
    __syncthreads();
  }
}
"#,
            );
            s
        })?;
        // SAFETY: the kernel writes every element of the target.
        let (py, deferred) = unsafe { target.data_ptr_for_overwrite() };
        let mut v = [rows_x.data_ptr() as u64, py as u64, rows as u64, len as u64];
        let mut args: Vec<*mut c_void> = v.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
        // SAFETY: each block reads and writes one row of `len` elements of two contiguous
        // `rows × len` tensors.
        unsafe { launch(input.device(), f, blocks_for(rows as u64, 1), 512, 0, &mut args)? };
        if deferred {
            // SAFETY: written in full by the kernel queued above.
            unsafe { target.storage().assume_init() };
        }
        rows_finish(out, &perm, &target, own)
    }
}
