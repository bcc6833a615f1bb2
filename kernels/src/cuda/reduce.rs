//! Row reductions on CUDA: the input is laid out with the reduced dims last and contiguous, so
//! every output element reduces one contiguous row. Each block reduces (a chunk of) a row with
//! 16-byte loads and a warp-shuffle block reduction; rows long enough for many blocks take a
//! second pass over the partial results. An operation is four snippets of CUDA C (start value,
//! per-element step, combination of partials, finish), so `sum`, `mean`, `prod`, `amax`, `amin`,
//! `all`, `any`, `var` and `std` share one kernel template. Arg-reductions (`max.dim`,
//! `argmax` …) carry (value, index) pairs in a kernel of their own.

use super::launch::{blocks_for, compute_type, dtype_code, instance, launch, storage_type, InstanceKey};
use oxten_runtime::{wrap_dim, DType, Device, Error, MemoryFormat, Result, Tensor};
use std::ffi::c_void;
use std::fmt::Write;

const THREADS: u32 = 512;
/// Elements a block reduces at least before a row is split over more blocks.
const PER_BLOCK: i64 = 1 << 16;

/// One reduction: CUDA C over the accumulator `a` (type `ACC`), an element `x` converted to
/// `ACC`, a partial `b`, the row length `n` (`long long`), the row's auxiliary value `m` (the
/// mean, for `var`) and a parameter `c0` (`double`: the correction of `var`).
#[derive(Debug)]
pub struct RowOp {
    /// For errors and the generated source.
    pub name: &'static str,
    /// The accumulator's start value.
    pub init: &'static str,
    /// `a` after one more element `x` (`m` is the row's auxiliary value, `c0` the constant).
    pub step: &'static str,
    /// Two partial accumulators `a` and `b` combined.
    pub combine: &'static str,
    /// The result from the final `a` (`n` is the reduced count, `c0` the constant).
    pub finish: &'static str,
}

/// Which dims a reduction over `dims` reduces (`None` or an empty list: all of them).
pub fn reduced_mask(ndim: usize, dims: Option<&[i64]>) -> Result<Vec<bool>> {
    let mut mask = vec![dims.is_none_or(|d| d.is_empty()); ndim];
    for d in dims.unwrap_or(&[]) {
        mask[wrap_dim(*d, ndim)?] = true;
    }
    Ok(mask)
}

/// `x` laid out as `[outer, inner]` rows (kept dims first, in order, then the reduced ones),
/// contiguous; returns it with the permutation, `outer` and `inner`.
pub fn as_rows(x: &Tensor, mask: &[bool]) -> Result<(Tensor, Vec<i64>, i64, i64)> {
    let nd = x.dim();
    let sizes = x.sizes();
    let perm: Vec<i64> = (0..nd).filter(|&d| !mask[d]).chain((0..nd).filter(|&d| mask[d])).map(|d| d as i64).collect();
    let inner: i64 = (0..nd).filter(|&d| mask[d]).map(|d| sizes[d]).product();
    let outer: i64 = (0..nd).filter(|&d| !mask[d]).map(|d| sizes[d]).product();
    Ok((x.try_permute(&perm)?.try_contiguous()?, perm, outer, inner))
}

/// A contiguous tensor to compute `out` into: `out` itself when contiguous.
pub fn contiguous_target(out: &Tensor) -> Result<Tensor> {
    if out.is_contiguous() {
        Ok(out.clone())
    } else {
        Tensor::empty(&out.sizes(), out.dtype(), out.device(), MemoryFormat::Contiguous)
    }
}

/// Copies a computed `target` back into `out` when they differ.
pub fn finish_target(out: &Tensor, target: &Tensor) -> Result<()> {
    if !out.is_same(target) {
        out.try_copy_(target)?;
    }
    Ok(())
}

/// Reduces `x` over the dims in `mask` into `out` (already shaped: the kept dims, with or
/// without size-1 reduced dims), accumulating in `acc`. `aux`, when given, holds one `acc`
/// value per output element (`m` in the snippets); `c0` is the op's parameter.
pub fn reduce_into(
    x: &Tensor,
    mask: &[bool],
    out: &Tensor,
    op: &'static RowOp,
    acc: DType,
    aux: Option<&Tensor>,
    c0: f64,
) -> Result<()> {
    let (rows_x, _, outer, inner) = as_rows(x, mask)?;
    if outer == 0 {
        return Ok(());
    }
    let target = contiguous_target(out)?;
    let mut splits = (inner / PER_BLOCK).clamp(1, 1024);
    while outer > 1 && inner % splits != 0 {
        splits -= 1;
    }
    if splits == 1 {
        launch_rows(&rows_x, &target, op, acc, outer, inner, inner, aux, 1, false, true, c0)?;
    } else {
        let partial = Tensor::empty(&[outer, splits], acc, x.device(), MemoryFormat::Contiguous)?;
        let chunk = (inner + splits - 1) / splits;
        launch_rows(&rows_x, &partial, op, acc, outer * splits, chunk, inner, aux, splits, false, false, c0)?;
        launch_rows(&partial, &target, op, acc, outer, splits, inner, aux, 1, true, true, c0)?;
    }
    finish_target(out, &target)
}

/// One launch: `out[r] = reduce(x[r * row_len ..][..row_len])` for `rows` rows (the last may be
/// short). `combine_only`: the elements are partials (second pass); `final_pass`: apply the
/// finish with row length `n_final`.
#[allow(clippy::too_many_arguments)]
fn launch_rows(
    x: &Tensor,
    out: &Tensor,
    op: &'static RowOp,
    acc: DType,
    rows: i64,
    row_len: i64,
    n_final: i64,
    aux: Option<&Tensor>,
    aux_div: i64,
    combine_only: bool,
    final_pass: bool,
    c0: f64,
) -> Result<()> {
    let Device::Cuda(dev) = x.device() else {
        return Err(Error::device(format!("{}: a CUDA kernel was called on {}", op.name, x.device())));
    };
    let (sin, sout) = (x.dtype(), out.dtype());
    let esize = sin.size() as i64;
    let vec = if row_len % (16 / esize) == 0 && (x.data_ptr() as usize).is_multiple_of(16) { 16 / esize } else { 1 };
    let variant = dtype_code(sin)
        | dtype_code(sout) << 4
        | dtype_code(acc) << 8
        | (vec as u64) << 12
        | (combine_only as u64) << 20
        | (final_pass as u64) << 21;
    let key = InstanceKey { family: op as *const RowOp as usize, variant, device: dev };
    let f = instance(key, op.name, || row_source(op, sin, sout, acc, vec, combine_only, final_pass))?;
    // SAFETY: the kernel writes all `rows` elements of `out`.
    let (po, deferred) = unsafe { out.data_ptr_for_overwrite() };
    let mut a = [
        x.data_ptr() as u64,
        po as u64,
        rows as u64,
        row_len as u64,
        x.numel() as u64,
        aux.map_or(0, |t| t.data_ptr() as u64),
        aux_div as u64,
        n_final as u64,
        c0.to_bits(),
    ];
    let mut args: Vec<*mut c_void> = a.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
    // SAFETY: the arguments match `row_source`'s parameters (each 8 bytes); reads stay below
    // `numel` elements of `x` (and `rows / aux_div` of `aux`), writes below `rows` of `out`.
    unsafe { launch(x.device(), f, blocks_for(rows as u64, 1), THREADS, 0, &mut args)? };
    if deferred {
        // SAFETY: every element is written by the kernel queued above.
        unsafe { out.storage().assume_init() };
    }
    Ok(())
}

fn row_source(
    op: &RowOp,
    sin: DType,
    sout: DType,
    acc: DType,
    vec: i64,
    combine_only: bool,
    final_pass: bool,
) -> String {
    let mut s = String::from(super::PRELUDE);
    let _ = writeln!(s, "// {} reduction, generated instance", op.name);
    let _ = writeln!(
        s,
        "typedef {} SI;\ntypedef {} SO;\ntypedef {} ACC;",
        storage_type(sin),
        storage_type(sout),
        compute_type(acc)
    );
    let _ = writeln!(s, "const int V = {vec};\nconst int THREADS = {THREADS};");
    let _ = writeln!(s, "__device__ __forceinline__ ACC ox_combine(ACC a, ACC b) {{ return {}; }}", op.combine);
    // A second pass reads partial results: they combine instead of stepping.
    let step = if combine_only { "ox_combine(a, x)" } else { op.step };
    let _ = writeln!(s, "__device__ __forceinline__ ACC ox_step(ACC a, ACC x, ACC m, double c0) {{ return {step}; }}");
    let finish = if final_pass { op.finish } else { "a" };
    let _ =
        writeln!(s, "__device__ __forceinline__ ACC ox_finish(ACC a, long long n, double c0) {{ return {finish}; }}");
    let _ = writeln!(s, "__device__ __forceinline__ ACC ox_init() {{ return {}; }}", op.init);
    s.push_str(
        r#"struct OxCombine { __device__ __forceinline__ ACC operator()(ACC a, ACC b) const { return ox_combine(a, b); } };
struct alignas(sizeof(SI) * V) W { SI v[V]; };
extern "C" __global__ void ox_kernel(const char* __restrict__ x, char* __restrict__ out, long long rows, long long row_len,
                                     long long total, const char* aux, long long aux_div, long long n_final, double c0) {
  long long r = blockIdx.x;
  if (r >= rows) return;
  long long begin = r * row_len;
  long long end = begin + row_len;
  if (end > total) end = total;
  ACC m = aux ? ((const ACC*)aux)[r / aux_div] : ACC(0);
  ACC a = ox_init();
  const SI* p = (const SI*)x;
  if (V > 1 && begin < end) {
    const W* w = (const W*)(p + begin);
    long long nv = (end - begin) / V;
    for (long long j = threadIdx.x; j < nv; j += THREADS) {
      W q = w[j];
#pragma unroll
      for (int u = 0; u < V; ++u) a = ox_step(a, ox_load<ACC>(q.v[u]), m, c0);
    }
    for (long long i = begin + nv * V + threadIdx.x; i < end; i += THREADS) a = ox_step(a, ox_load<ACC>(p[i]), m, c0);
  } else {
    for (long long i = begin + threadIdx.x; i < end; i += THREADS) a = ox_step(a, ox_load<ACC>(p[i]), m, c0);
  }
  a = ox_block_reduce(a, OxCombine(), ox_init());
  if (threadIdx.x == 0) ((SO*)out)[r] = ox_store<SO>(ox_finish(a, n_final, c0));
}
"#,
    );
    s
}

/// The accumulation dtype of sums and products: f32 for the half types, f64 for f64, i64 for
/// integers and bool.
pub fn sum_acc(out: DType) -> DType {
    match out {
        DType::F16 | DType::BF16 | DType::F32 => DType::F32,
        DType::F64 => DType::F64,
        _ => DType::I64,
    }
}

/// The compute dtype of `d`: f32 for the half types, itself otherwise.
pub fn value_acc(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    }
}

static ARG_REDUCE: u8 = 0;

/// `values[r], indices[r] = max/min (first index on ties; NaN wins, first NaN) of row r` over
/// `dim` of `x`; `values` may be omitted (`argmax`). Both outputs are already shaped.
pub fn arg_reduce(
    x: &Tensor,
    dim: Option<usize>,
    values: Option<&Tensor>,
    indices: &Tensor,
    is_max: bool,
) -> Result<()> {
    let (rows_x, _, outer, inner) = match dim {
        Some(d) => rows_along(x, d)?,
        None => (x.try_reshape(&[-1])?.try_contiguous()?, Vec::new(), 1, x.numel()),
    };
    if outer == 0 {
        return Ok(());
    }
    let Device::Cuda(dev) = x.device() else {
        return Err(Error::device("arg reductions: a CUDA kernel was called on another device"));
    };
    let vt = values.map(contiguous_target).transpose()?;
    let it = contiguous_target(indices)?;
    let sin = x.dtype();
    let variant = dtype_code(sin) | (is_max as u64) << 8;
    let key = InstanceKey { family: &ARG_REDUCE as *const u8 as usize, variant, device: dev };
    let f = instance(key, if is_max { "max" } else { "min" }, || arg_source(sin, is_max))?;
    // SAFETY: the kernel writes all `outer` elements of both outputs.
    let (pv, dv) = match &vt {
        Some(v) => unsafe { v.data_ptr_for_overwrite() },
        None => (std::ptr::null_mut(), false),
    };
    // SAFETY: as above.
    let (pi, di) = unsafe { it.data_ptr_for_overwrite() };
    let mut a = [rows_x.data_ptr() as u64, pv as u64, pi as u64, outer as u64, inner as u64];
    let mut args: Vec<*mut c_void> = a.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
    // SAFETY: the arguments match `arg_source`'s parameters; reads stay inside `outer * inner`
    // elements of the contiguous rows, writes below `outer` of each output.
    unsafe { launch(x.device(), f, blocks_for(outer as u64, 1), THREADS, 0, &mut args)? };
    // SAFETY: written in full by the kernel queued above.
    unsafe {
        if let Some(v) = vt.as_ref().filter(|_| dv) {
            v.storage().assume_init();
        }
        if di {
            it.storage().assume_init();
        }
    }
    if let (Some(v), Some(t)) = (values, &vt) {
        finish_target(v, t)?;
    }
    finish_target(indices, &it)
}

fn arg_source(sin: DType, is_max: bool) -> String {
    let mut s = String::from(super::PRELUDE);
    let _ = writeln!(
        s,
        "typedef {} SI;\ntypedef {} ACC;\nconst int THREADS = {THREADS};",
        storage_type(sin),
        compute_type(value_acc(sin))
    );
    let _ = writeln!(s, "#define OX_BEATS(b, a) ((b) {} (a))", if is_max { ">" } else { "<" });
    s.push_str(
        r#"struct Pair { ACC v; long long i; };
// Whether (bv, bi) should replace (av, ai): NaN beats numbers, then the better value, then the
// lower index.
__device__ __forceinline__ bool ox_better(ACC bv, long long bi, ACC av, long long ai) {
  if (bi < 0) return false;
  if (ai < 0) return true;
  bool bn = bv != bv, an = av != av;
  if (an || bn) return an && bn ? bi < ai : bn;
  return OX_BEATS(bv, av) || (bv == av && bi < ai);
}
extern "C" __global__ void ox_kernel(const char* __restrict__ x, char* values, char* indices, long long rows, long long row_len) {
  long long r = blockIdx.x;
  if (r >= rows) return;
  const SI* p = (const SI*)x + r * row_len;
  ACC bv = ACC(0);
  long long bi = -1;
  for (long long i = threadIdx.x; i < row_len; i += THREADS) {
    ACC v = ox_load<ACC>(p[i]);
    if (ox_better(v, i, bv, bi)) { bv = v; bi = i; }
  }
  __shared__ ACC sv[THREADS];
  __shared__ long long si[THREADS];
  sv[threadIdx.x] = bv;
  si[threadIdx.x] = bi;
  __syncthreads();
  for (int o = THREADS / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o && ox_better(sv[threadIdx.x + o], si[threadIdx.x + o], sv[threadIdx.x], si[threadIdx.x])) {
      sv[threadIdx.x] = sv[threadIdx.x + o];
      si[threadIdx.x] = si[threadIdx.x + o];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (values) ((SI*)values)[r] = ox_store<SI>(sv[0]);
    ((long long*)indices)[r] = si[0] < 0 ? 0 : si[0];
  }
}
"#,
    );
    s
}

/// `x` with `dim` moved last, contiguous: rows along `dim`. Returns it with the permutation
/// and the number and length of rows (a 0-dim `x` is one row of one).
pub fn rows_along(x: &Tensor, dim: usize) -> Result<(Tensor, Vec<i64>, i64, i64)> {
    if x.dim() == 0 {
        return Ok((x.try_reshape(&[1])?, vec![0], 1, 1));
    }
    let mask: Vec<bool> = (0..x.dim()).map(|d| d == dim).collect();
    as_rows(x, &mask)
}

/// A contiguous tensor laid out like [`rows_along`]'s result for writing `out`, and whether it
/// is `out`'s own memory (dim last and `out` contiguous).
pub fn rows_target(out: &Tensor, perm: &[i64], dtype: DType) -> Result<(Tensor, bool)> {
    let last = perm.iter().enumerate().all(|(i, p)| *p == i as i64);
    if last && out.is_contiguous() && out.dtype() == dtype {
        return Ok((if out.dim() == 0 { out.try_reshape(&[1])? } else { out.clone() }, true));
    }
    let sizes = out.sizes();
    let psizes: Vec<i64> = perm.iter().map(|&p| sizes[p as usize]).collect();
    Ok((
        Tensor::empty(if out.dim() == 0 { &[1] } else { &psizes }, dtype, out.device(), MemoryFormat::Contiguous)?,
        false,
    ))
}

/// Writes a [`rows_target`] back into `out` (through the inverse permutation) unless it is
/// `out` itself.
pub fn rows_finish(out: &Tensor, perm: &[i64], target: &Tensor, own: bool) -> Result<()> {
    if own {
        return Ok(());
    }
    if out.dim() == 0 {
        return out.try_copy_(&target.try_reshape(&[])?).map(drop);
    }
    out.try_permute(perm)?.try_copy_(target)?;
    Ok(())
}
