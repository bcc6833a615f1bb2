//! Pooling: `max_pool2d_with_indices` (+ backward, and the composite `max_pool2d`),
//! `avg_pool2d` (+ backward) and `_adaptive_avg_pool2d` (+ backward, and the composite
//! `adaptive_avg_pool2d`), on 3-d (unbatched) and 4-d inputs, contiguous or channels-last; the
//! 1-d pools on a height of 1 ([`one_d`]); and the 3-d, adaptive and fractional max pools composed
//! of other operators ([`three_d`], [`fractional`]).
//!
//! The meta functions check the arguments with PyTorch's messages and in PyTorch's order and set
//! outputs in the input's suggested memory format. The CPU kernels run on dense buffers in that
//! format: channels-first loops over planes (one parallel task per group of planes), channels-last
//! loops over output pixels with the channels innermost (vectorized along C, compiled per
//! instruction-set level like the runtime's inner loops). f16/bf16 are computed in f32; integer
//! average pooling sums in i64 and divides with truncation, as PyTorch does.

mod adaptive;
mod avg;
mod fractional;
mod max;
mod one_d;
mod three_d;
mod unpool;

pub use unpool::unpool_output_size;

use crate::conv::elem::SharedPtr;
use crate::iter::{copy_, simd_level, SimdLevel, StructuredOutputs};
use crate::support::type_meta_name;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::tensor::strides_for_format;
use oxten_runtime::{ops, DType, Device, Element, Error, MemoryFormat, Result, Tensor};

// ---------------------------------------------------------------------------------------------
// arguments and checks
// ---------------------------------------------------------------------------------------------

/// The window of a 2-d pooling: kernel, stride, padding and dilation per dimension.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    pub kh: i64,
    pub kw: i64,
    pub sh: i64,
    pub sw: i64,
    pub ph: i64,
    pub pw: i64,
    pub dh: i64,
    pub dw: i64,
}

impl Window {
    /// Parses the list arguments of `op` (`max_pool2d` or `avg_pool2d`): a kernel of one or two
    /// values, a stride omitted (= kernel) or of one or two, a padding of one or two, and for max
    /// pooling a dilation of one or two.
    pub(crate) fn parse(
        op: &str,
        kernel: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: Option<&[i64]>,
    ) -> Result<Window> {
        if kernel.len() != 1 && kernel.len() != 2 {
            return Err(Error::value(format!("{op}: kernel_size must either be a single int, or a tuple of two ints")));
        }
        let (kh, kw) = (kernel[0], kernel[kernel.len() - 1]);
        if stride.len() > 2 {
            return Err(Error::value(format!(
                "{op}: stride must either be omitted, a single int, or a tuple of two ints"
            )));
        }
        let (sh, sw) = match stride {
            [] => (kh, kw),
            [s] => (*s, *s),
            [a, b, ..] => (*a, *b),
        };
        if padding.len() != 1 && padding.len() != 2 {
            return Err(Error::value(format!("{op}: padding must either be a single int, or a tuple of two ints")));
        }
        let (ph, pw) = (padding[0], padding[padding.len() - 1]);
        let (dh, dw) = match dilation {
            None => (1, 1),
            Some(d) if d.len() == 1 || d.len() == 2 => (d[0], d[d.len() - 1]),
            Some(_) => {
                return Err(Error::value(format!("{op}: dilation must be either a single int, or a tuple of two ints")))
            }
        };
        Ok(Window { kh, kw, sh, sw, ph, pw, dh, dw })
    }
}

/// `div_rtn`: division rounding toward negative infinity.
fn div_rtn(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// `pooling_output_shape`: the output size along one dimension, with its checks.
pub(crate) fn pooling_output_shape(
    input: i64,
    k: i64,
    pad: i64,
    stride: i64,
    dilation: i64,
    ceil: bool,
) -> Result<i64> {
    if stride == 0 {
        return Err(Error::value("stride should not be zero"));
    }
    if pad < 0 {
        return Err(Error::value(format!("pad must be non-negative, but got pad: {pad}")));
    }
    // In i128: a huge kernel, dilation or stride must give an error, not a wrapped size.
    let (input, k, pad, stride, dilation) = (input as i128, k as i128, pad as i128, stride as i128, dilation as i128);
    if pad > ((k - 1) * dilation + 1) / 2 {
        return Err(Error::value(format!(
            "pad should be at most half of effective kernel size, but got pad={pad}, kernel_size={k} and dilation={dilation}"
        )));
    }
    let num = input + 2 * pad - dilation * (k - 1) - 1 + if ceil { stride - 1 } else { 0 };
    let mut out = div_rtn(num, stride) + 1;
    if ceil && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    i64::try_from(out).map_err(|_| Error::value(format!("the pooling output size {out} does not fit in int64")))
}

/// Formats sizes as PyTorch prints them: `[2, 3]`.
pub(crate) fn sizes_str(s: &[i64]) -> String {
    crate::conv::list(s)
}

/// The geometry of a pooling problem: batch, planes, input and output sizes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub oh: usize,
    pub ow: usize,
}

/// `nbatch, nInputPlane, inputHeight, inputWidth` of a 3-d or 4-d input (`size(-3)` fails on
/// fewer dimensions with the usual index error, as in PyTorch).
pub(crate) fn input_dims(input: &Tensor) -> Result<(i64, i64, i64, i64)> {
    let nbatch = if input.dim() == 4 { input.size(-4)? } else { 1 };
    Ok((nbatch, input.size(-3)?, input.size(-2)?, input.size(-1)?))
}

/// The memory-format checks of the max pooling meta functions.
pub(crate) fn check_format_dims(input: &Tensor) -> Result<MemoryFormat> {
    let format = input.suggest_memory_format();
    match format {
        MemoryFormat::ChannelsLast if input.dim() != 4 => {
            Err(Error::shape("non-empty 4D (batch mode) tensor expected for input with channels_last layout"))
        }
        MemoryFormat::Contiguous if input.dim() != 3 && input.dim() != 4 => {
            Err(Error::shape("non-empty 3D or 4D (batch mode) tensor expected for input"))
        }
        MemoryFormat::ChannelsLast | MemoryFormat::Contiguous => Ok(format),
        _ => Err(Error::value("Unsupport memory format. Supports only ChannelsLast, Contiguous")),
    }
}

/// `pool2d_shape_check`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pool2d_shape_check(
    input: &Tensor,
    w: &Window,
    planes: i64,
    ih: i64,
    iw: i64,
    oh: i64,
    ow: i64,
    format: MemoryFormat,
) -> Result<()> {
    let ndim = input.dim();
    if w.kw <= 0 || w.kh <= 0 {
        return Err(Error::value(format!(
            "kernel size should be greater than zero, but got kH: {} kW: {}",
            w.kh, w.kw
        )));
    }
    if w.sw <= 0 || w.sh <= 0 {
        return Err(Error::value(format!("stride should be greater than zero, but got dH: {} dW: {}", w.sh, w.sw)));
    }
    if w.dh <= 0 || w.dw <= 0 {
        return Err(Error::value(format!(
            "dilation should be greater than zero, but got dilationH: {} dilationW: {}",
            w.dh, w.dw
        )));
    }
    let s = input.sizes();
    let valid_dims = s[1] != 0 && s[2] != 0;
    if format == MemoryFormat::ChannelsLast {
        if !(ndim == 4 && valid_dims && s[3] != 0) {
            return Err(Error::shape(format!(
                "Expected 4D (batch mode) tensor expected for input with channels_last layout with optional 0 dim batch \
                 size for input, but got: {}",
                sizes_str(&s)
            )));
        }
    } else if !((ndim == 3 && s[0] != 0 && valid_dims) || (ndim == 4 && valid_dims && s[3] != 0)) {
        return Err(Error::shape(format!(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:{}",
            sizes_str(&s)
        )));
    }
    if w.kw / 2 < w.pw || w.kh / 2 < w.ph {
        return Err(Error::value(format!(
            "pad should be smaller than or equal to half of kernel size, but got padW = {}, padH = {}, kW = {}, kH = {}",
            w.pw, w.ph, w.kw, w.kh
        )));
    }
    if ow < 1 || oh < 1 {
        return Err(Error::shape(format!(
            "Given input size: ({planes}x{ih}x{iw}). Calculated output size: ({planes}x{oh}x{ow}). Output size is too small"
        )));
    }
    Ok(())
}

/// `check_dim_size`: `t` has `dim` dimensions and size `size` at `d`.
pub(crate) fn check_dim_size(t: &Tensor, dim: usize, d: usize, size: i64) -> Result<()> {
    let got = if d < t.dim() { t.sizes()[d] } else { -1 };
    if t.dim() != dim || got != size {
        return Err(Error::shape(format!(
            "Expected a tensor of dimension {dim} and tensor.size[{d}] == {size} but got: dimension {} and \
             tensor.size[{d}] = {got}",
            t.dim()
        )));
    }
    Ok(())
}

/// The dtype check of the backward meta functions.
pub(crate) fn check_same_dtype(input: &Tensor, other: &Tensor, what: &str) -> Result<()> {
    if input.dtype() != other.dtype() {
        return Err(Error::dtype(format!(
            "expected dtype {} for `{what}` but got dtype {}",
            type_meta_name(input.dtype()),
            type_meta_name(other.dtype())
        )));
    }
    Ok(())
}

/// Sets output `idx` to `sizes` laid out in `format`.
pub(crate) fn set_output_in(
    outs: &mut StructuredOutputs,
    idx: usize,
    sizes: &[i64],
    format: MemoryFormat,
    dtype: DType,
    device: Device,
) -> Result<()> {
    let strides = strides_for_format(sizes, format);
    outs.set_output(idx, sizes, Some(&strides), dtype, device)
}

pub(crate) use crate::support::not_implemented;

// ---------------------------------------------------------------------------------------------
// element types
// ---------------------------------------------------------------------------------------------

/// An element type of the pooling kernels and the type `Acc` it is compared and summed in: f32
/// for f16/bf16, i64 for integers (sums wrap; averages divide with truncation), itself otherwise.
pub(crate) trait PoolElem: Element + Copy + Send + Sync + 'static {
    type Acc: Copy + PartialOrd + Send + Sync + 'static;
    /// The identity of max: -inf, or the smallest integer.
    const LOWEST: Self::Acc;
    const ZERO: Self::Acc;
    fn acc(self) -> Self::Acc;
    fn from_acc(a: Self::Acc) -> Self;
    fn is_nan(a: Self::Acc) -> bool;
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a / d` (floating division, or integer division truncating toward zero).
    fn div(a: Self::Acc, d: i64) -> Self::Acc;
}

macro_rules! float_pool_elem {
    ($t:ty, $acc:ty, $to:expr, $from:expr) => {
        impl PoolElem for $t {
            type Acc = $acc;
            const LOWEST: $acc = <$acc>::NEG_INFINITY;
            const ZERO: $acc = 0.0;
            #[inline(always)]
            fn acc(self) -> $acc {
                $to(self)
            }
            #[inline(always)]
            fn from_acc(a: $acc) -> $t {
                $from(a)
            }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn is_nan(a: $acc) -> bool {
                a != a
            }
            #[inline(always)]
            fn add(a: $acc, b: $acc) -> $acc {
                a + b
            }
            #[inline(always)]
            fn div(a: $acc, d: i64) -> $acc {
                a / d as $acc
            }
        }
    };
}
float_pool_elem!(f32, f32, |x| x, |a| a);
float_pool_elem!(f64, f64, |x| x, |a| a);
float_pool_elem!(f16, f32, f16::to_f32, f16::from_f32);
float_pool_elem!(bf16, f32, bf16::to_f32, bf16::from_f32);

macro_rules! int_pool_elem {
    ($($t:ty),*) => {$(
        impl PoolElem for $t {
            type Acc = i64;
            const LOWEST: i64 = <$t>::MIN as i64;
            const ZERO: i64 = 0;
            #[inline(always)]
            fn acc(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn from_acc(a: i64) -> $t {
                a as $t
            }
            #[inline(always)]
            fn is_nan(_: i64) -> bool {
                false
            }
            #[inline(always)]
            fn add(a: i64, b: i64) -> i64 {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn div(a: i64, d: i64) -> i64 {
                a.wrapping_div(d)
            }
        }
    )*};
}
int_pool_elem!(u8, i8, i16, i32, i64);

/// Runs `$f::<T>($args)` for the dtype `$d` (every dtype but bool, which is rejected with
/// `$kernel`'s name).
macro_rules! pool_dispatch {
    ($d:expr, $kernel:expr, $f:ident($($arg:expr),*)) => {
        match $d {
            DType::F32 => $f::<f32>($($arg),*),
            DType::F64 => $f::<f64>($($arg),*),
            DType::F16 => $f::<f16>($($arg),*),
            DType::BF16 => $f::<bf16>($($arg),*),
            DType::U8 => $f::<u8>($($arg),*),
            DType::I8 => $f::<i8>($($arg),*),
            DType::I16 => $f::<i16>($($arg),*),
            DType::I32 => $f::<i32>($($arg),*),
            DType::I64 => $f::<i64>($($arg),*),
            DType::Bool => Err(not_implemented($kernel, DType::Bool)),
        }
    };
}
pub(crate) use pool_dispatch;

// ---------------------------------------------------------------------------------------------
// dense buffers, tasks and instruction-set dispatch
// ---------------------------------------------------------------------------------------------

/// `t` dense in `format` (a copy when it is not).
pub(crate) fn dense_in(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    ops::contiguous::call(t, format)
}

/// Runs `f` on a tensor dense in `format` that ends up in `out`: `out` itself when it already is
/// (the usual case: structured outputs are allocated that way), else a temporary copied back.
pub(crate) fn with_dense_output(
    out: &Tensor,
    format: MemoryFormat,
    f: impl FnOnce(&Tensor) -> Result<()>,
) -> Result<()> {
    if out.is_contiguous_as(format) {
        return f(out);
    }
    let tmp = Tensor::empty(&out.sizes(), out.dtype(), Device::Cpu, format)?;
    f(&tmp)?;
    copy_(out, &tmp)
}

/// A loop compiled once per instruction-set level (see [`run`]); `run` is `#[inline(always)]`
/// in implementations so that it is compiled inside the `#[target_feature]` wrappers.
pub(crate) trait Kernel {
    /// # Safety
    /// Whatever the implementing type requires of the pointers it holds.
    unsafe fn run(self);
}

/// Runs `k` compiled for the runtime's current SIMD level.
///
/// # Safety
/// As for `k.run()`.
#[inline(always)]
pub(crate) unsafe fn run<K: Kernel>(k: K) {
    #[cfg(target_arch = "x86_64")]
    {
        match simd_level() {
            // SAFETY: the runtime's level never exceeds what the CPU supports; the kernel's own
            // contract is forwarded.
            SimdLevel::Avx512 => return unsafe { run_avx512(k) },
            // SAFETY: as above.
            SimdLevel::Avx2 => return unsafe { run_avx2(k) },
            SimdLevel::Default => {}
        }
    }
    // SAFETY: forwarded to the caller.
    unsafe { k.run() }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn run_avx2<K: Kernel>(k: K) {
    // SAFETY: forwarded from `run`.
    unsafe { k.run() }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn run_avx512<K: Kernel>(k: K) {
    // SAFETY: forwarded from `run`.
    unsafe { k.run() }
}

/// Splits `0..n` into about `4 x threads` chunks of at least `min` items and runs `f(range)`
/// on each, in parallel when there is more than one.
pub(crate) fn parallel_ranges(n: usize, min: usize, f: impl Fn(std::ops::Range<usize>) + Sync + Send) {
    if n == 0 {
        return;
    }
    let threads = oxten_runtime::parallel::threads_now();
    let chunk = n.div_ceil(threads * 4).max(min).max(1);
    let chunks = n.div_ceil(chunk);
    if chunks <= 1 || threads == 1 {
        f(0..n);
        return;
    }
    oxten_runtime::parallel::for_each(chunks, |i| f(i * chunk..((i + 1) * chunk).min(n)));
}

/// Typed pointers into a dense tensor, shareable between workers that touch disjoint parts.
pub(crate) fn ptr<T>(t: &Tensor) -> SharedPtr<T> {
    SharedPtr::new(t.data_ptr().cast::<T>())
}
