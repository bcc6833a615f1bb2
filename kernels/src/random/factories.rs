//! Random factories, composites of `empty` / `empty_like` and an in-place distribution as in
//! PyTorch: `rand`, `randn`, `rand_like`, `randn_like`, `randint`, `bernoulli`, `bernoulli.p`;
//! and `randperm` (a Fisher-Yates shuffle).

use crate::factory::{scalar_to, ScalarElem};
use crate::generated::decls::{
    BernoulliCompositeExplicit, BernoulliPCompositeExplicit, RandCompositeExplicit, RandGeneratorCompositeExplicit,
    RandLikeCompositeExplicit, RandLikeGeneratorCompositeExplicit, RandintCompositeExplicit,
    RandintGeneratorCompositeExplicit, RandintLikeCompositeExplicit, RandintLikeGeneratorCompositeExplicit,
    RandintLikeLowDtypeCompositeExplicit, RandintLikeLowGeneratorDtypeCompositeExplicit,
    RandintLikeTensorCompositeExplicit, RandintLikeTensorGeneratorCompositeExplicit, RandintLowCompositeExplicit,
    RandintLowGeneratorCompositeExplicit, RandnCompositeExplicit, RandnGeneratorCompositeExplicit,
    RandnLikeCompositeExplicit, RandnLikeGeneratorCompositeExplicit, RandpermCompositeExplicit,
    RandpermGeneratorCompositeExplicit,
};
use oxten_runtime::generator::PhiloxStream;
use oxten_runtime::{match_dtype, ops, DType, Device, Error, Generator, Layout, MemoryFormat, Result, Scalar, Tensor};

/// `empty(size, options).uniform_(0, 1, generator)`.
fn rand_impl(
    size: &[i64],
    generator: Option<&Generator>,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = ops::empty::call(size, dtype, layout, device, pin_memory, None)?;
    ops::uniform_::call(&t, 0.0, 1.0, generator)
}

/// `empty(size, options).normal_(0, 1, generator)`.
fn randn_impl(
    size: &[i64],
    generator: Option<&Generator>,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = ops::empty::call(size, dtype, layout, device, pin_memory, None)?;
    ops::normal_::call(&t, 0.0, 1.0, generator)
}

impl RandCompositeExplicit for crate::Composite {
    /// Uniform values in `[0, 1)` from the default generator.
    fn rand(
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        rand_impl(size, None, dtype, layout, device, pin_memory)
    }
}

impl RandGeneratorCompositeExplicit for crate::Composite {
    /// Uniform values in `[0, 1)` from `generator`.
    fn rand_generator(
        size: &[i64],
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        rand_impl(size, generator, dtype, layout, device, pin_memory)
    }
}

impl RandnCompositeExplicit for crate::Composite {
    /// Standard normal values from the default generator.
    fn randn(
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randn_impl(size, None, dtype, layout, device, pin_memory)
    }
}

impl RandnGeneratorCompositeExplicit for crate::Composite {
    /// Standard normal values from `generator`.
    fn randn_generator(
        size: &[i64],
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randn_impl(size, generator, dtype, layout, device, pin_memory)
    }
}

/// `empty_like(self, options)`, then `fill` it.
#[allow(clippy::too_many_arguments)]
fn like_impl(
    self_: &Tensor,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
    fill: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let t = ops::empty_like::call(self_, dtype, layout, device, pin_memory, memory_format)?;
    fill(&t)
}

/// `randint_like`'s options: dtype, layout, device, pin_memory and memory_format.
type LikeOptions = (Option<DType>, Option<Layout>, Option<Device>, Option<bool>, Option<MemoryFormat>);

/// `empty_like(self, options).random_(low, high, generator)`, as PyTorch's `randint_like`.
fn randint_like_impl(
    self_: &Tensor,
    low: i64,
    high: i64,
    generator: Option<&Generator>,
    (dtype, layout, device, pin_memory, memory_format): LikeOptions,
) -> Result<Tensor> {
    like_impl(self_, dtype, layout, device, pin_memory, memory_format, |t| {
        ops::random_from_::call(t, low, Some(high), generator)
    })
}

/// The bound of the `.Tensor` overloads: PyTorch takes `high.item()` of a 0-d CPU tensor.
fn scalar_high(high: &Tensor) -> Result<i64> {
    if high.numel() != 1 || high.dim() != 0 || high.device() != Device::Cpu {
        return Err(Error::runtime("randint_like: high must be a scalar tensor and on CPU"));
    }
    high.try_to_dtype(DType::I64)?.item::<i64>()
}

impl RandintLikeCompositeExplicit for crate::Composite {
    /// Integers uniform in `[0, high)` with `self`'s shape and options.
    fn randint_like(
        self_: &Tensor,
        high: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        randint_like_impl(self_, 0, high, None, (dtype, layout, device, pin_memory, memory_format))
    }
}

impl RandintLikeTensorCompositeExplicit for crate::Composite {
    /// `randint_like` with the bound in a 0-d tensor.
    fn randint_like_tensor(
        self_: &Tensor,
        high: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        randint_like_impl(self_, 0, scalar_high(high)?, None, (dtype, layout, device, pin_memory, memory_format))
    }
}

impl RandintLikeLowDtypeCompositeExplicit for crate::Composite {
    /// Integers uniform in `[low, high)` with `self`'s shape and options.
    fn randint_like_low_dtype(
        self_: &Tensor,
        low: i64,
        high: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        randint_like_impl(self_, low, high, None, (dtype, layout, device, pin_memory, memory_format))
    }
}

impl RandintLikeGeneratorCompositeExplicit for crate::Composite {
    /// `randint_like` drawing from `generator`.
    fn randint_like_generator(
        self_: &Tensor,
        high: i64,
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        randint_like_impl(self_, 0, high, generator, (dtype, layout, device, pin_memory, memory_format))
    }
}

impl RandintLikeTensorGeneratorCompositeExplicit for crate::Composite {
    /// `randint_like.Tensor` drawing from `generator`.
    fn randint_like_tensor_generator(
        self_: &Tensor,
        high: &Tensor,
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        randint_like_impl(self_, 0, scalar_high(high)?, generator, (dtype, layout, device, pin_memory, memory_format))
    }
}

impl RandintLikeLowGeneratorDtypeCompositeExplicit for crate::Composite {
    /// `randint_like.low_dtype` drawing from `generator`.
    fn randint_like_low_generator_dtype(
        self_: &Tensor,
        low: i64,
        high: i64,
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        randint_like_impl(self_, low, high, generator, (dtype, layout, device, pin_memory, memory_format))
    }
}

impl RandLikeCompositeExplicit for crate::Composite {
    /// `rand` with `self`'s shape and options (and layout, by default).
    fn rand_like(
        self_: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        like_impl(self_, dtype, layout, device, pin_memory, memory_format, |t| ops::uniform_::call(t, 0.0, 1.0, None))
    }
}

impl RandLikeGeneratorCompositeExplicit for crate::Composite {
    /// `rand_like` drawing from `generator`.
    fn rand_like_generator(
        self_: &Tensor,
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        like_impl(self_, dtype, layout, device, pin_memory, memory_format, |t| {
            ops::uniform_::call(t, 0.0, 1.0, generator)
        })
    }
}

impl RandnLikeCompositeExplicit for crate::Composite {
    /// `randn` with `self`'s shape and options (and layout, by default).
    fn randn_like(
        self_: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        like_impl(self_, dtype, layout, device, pin_memory, memory_format, |t| ops::normal_::call(t, 0.0, 1.0, None))
    }
}

impl RandnLikeGeneratorCompositeExplicit for crate::Composite {
    /// `randn_like` drawing from `generator`.
    fn randn_like_generator(
        self_: &Tensor,
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        like_impl(self_, dtype, layout, device, pin_memory, memory_format, |t| {
            ops::normal_::call(t, 0.0, 1.0, generator)
        })
    }
}

/// `empty(size, options).random_(low, high, generator)`; no dtype means int64, as in Python.
#[allow(clippy::too_many_arguments)]
fn randint_impl(
    low: i64,
    high: i64,
    size: &[i64],
    generator: Option<&Generator>,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = ops::empty::call(size, Some(dtype.unwrap_or(DType::I64)), layout, device, pin_memory, None)?;
    ops::random_from_::call(&t, low, Some(high), generator)
}

impl RandintCompositeExplicit for crate::Composite {
    /// Integers uniform in `[0, high)`.
    fn randint(
        high: i64,
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randint_impl(0, high, size, None, dtype, layout, device, pin_memory)
    }
}

impl RandintGeneratorCompositeExplicit for crate::Composite {
    /// Integers uniform in `[0, high)` from `generator`.
    fn randint_generator(
        high: i64,
        size: &[i64],
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randint_impl(0, high, size, generator, dtype, layout, device, pin_memory)
    }
}

impl RandintLowCompositeExplicit for crate::Composite {
    /// Integers uniform in `[low, high)`.
    fn randint_low(
        low: i64,
        high: i64,
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randint_impl(low, high, size, None, dtype, layout, device, pin_memory)
    }
}

impl RandintLowGeneratorCompositeExplicit for crate::Composite {
    /// Integers uniform in `[low, high)` from `generator`.
    fn randint_low_generator(
        low: i64,
        high: i64,
        size: &[i64],
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randint_impl(low, high, size, generator, dtype, layout, device, pin_memory)
    }
}

impl BernoulliCompositeExplicit for crate::Composite {
    /// A contiguous tensor of zeros and ones, one with probability `self[i]`.
    fn bernoulli(self_: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
        let t = ops::empty_like::call(self_, None, None, None, None, Some(MemoryFormat::Contiguous))?;
        ops::bernoulli_::call(&t, self_, generator)
    }
}

impl BernoulliPCompositeExplicit for crate::Composite {
    /// A contiguous tensor like `self` of zeros and ones, one with probability `p`.
    fn bernoulli_p(self_: &Tensor, p: f64, generator: Option<&Generator>) -> Result<Tensor> {
        let t = ops::empty_like::call(self_, None, None, None, None, Some(MemoryFormat::Contiguous))?;
        ops::bernoulli_float_::call(&t, p, generator)
    }
}

// ---------------------------------------------------------------------------------------------
// randperm
// ---------------------------------------------------------------------------------------------

/// PyTorch's `check_supported_max_int_with_precision`: `n - 1` must fit the dtype, and floats
/// must count that far exactly.
pub(super) fn check_randperm_dtype(n: i64, dtype: DType) -> Result<()> {
    let last = Scalar::Int(if n > 0 { n - 1 } else { n });
    match_dtype!(dtype, T => { scalar_to::<T>(last)?; });
    let limit = |bits: u32, what: &str| -> Result<()> {
        if n > (1i64 << bits) + 1 {
            return Err(Error::value(format!("n cannot be greater than {what} for {} type.", dtype_title(dtype))));
        }
        Ok(())
    };
    match dtype {
        DType::F16 => limit(11, "2049"),
        DType::F32 => limit(24, "2^24+1"),
        DType::F64 => limit(53, "2^53+1"),
        DType::Bool => Err(Error::dtype("\"randperm\" not implemented for 'Bool'")),
        _ => Ok(()),
    }
}

fn dtype_title(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "Half",
        DType::F32 => "Float",
        _ => "Double",
    }
}

/// Sequential words of a stream, block after block.
struct Words {
    stream: PhiloxStream,
    block: u64,
    buf: [u32; 4],
    used: usize,
}

impl Words {
    fn new(stream: PhiloxStream) -> Words {
        Words { stream, block: 0, buf: [0; 4], used: 4 }
    }
    fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.buf = self.stream.block(self.block);
            self.block += 1;
            self.used = 0;
        }
        self.used += 1;
        self.buf[self.used - 1]
    }
    fn next_u64(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }
}

/// A uniformly random permutation of `0..n`, shuffled like PyTorch's CPU `randperm`: a
/// Fisher-Yates shuffle with one word per swap (mapped onto `0 .. n - i` by multiplication
/// rather than PyTorch's `%`), or for very large `n` the "inside-out" variant with 64-bit draws.
fn permutation(n: i64, g: &Generator) -> Vec<i64> {
    if n < i64::from(u32::MAX / 20) {
        let draws = (n - 1).max(0) as u64;
        let mut w = Words::new(g.reserve(draws.div_ceil(4)));
        let mut p: Vec<i64> = (0..n).collect();
        for i in 0..(n - 1).max(0) {
            let z = super::dist::scale_u32(w.next_u32(), (n - i) as u64) as i64;
            p.swap(i as usize, (i + z) as usize);
        }
        p
    } else {
        let mut w = Words::new(g.reserve((n as u64).div_ceil(2)));
        let mut p = vec![0i64; n as usize];
        for i in 0..n as usize {
            let z = ((u128::from(w.next_u64()) * (i as u128 + 1)) >> 64) as usize;
            p[i] = p[z];
            p[z] = i as i64;
        }
        p
    }
}

/// `randperm`: an `[n]` tensor of `dtype` (int64 by default) filled by the `out=` kernel of its
/// device (`randperm.generator_out`).
fn randperm_impl(
    n: i64,
    generator: Option<&Generator>,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let dtype = dtype.unwrap_or(DType::I64);
    let t = ops::empty::call(&[n], Some(dtype), layout, device, pin_memory, None)?;
    ops::randperm_generator_out::call(n, generator, &t)
}

/// [`permutation`] as a contiguous `[n]` tensor of `dtype`.
pub(super) fn permutation_tensor(n: i64, g: &Generator, dtype: DType) -> Result<Tensor> {
    fn typed<T: ScalarElem>(p: Vec<i64>) -> Result<Tensor> {
        let n = p.len() as i64;
        Tensor::from_vec(p.into_iter().map(T::cast_i64).collect::<Vec<T>>(), &[n])
    }
    let p = permutation(n, g);
    Ok(match_dtype!(dtype, T => typed::<T>(p)?))
}

impl RandpermCompositeExplicit for crate::Composite {
    /// A random permutation of `0..n`.
    fn randperm(
        n: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randperm_impl(n, None, dtype, layout, device, pin_memory)
    }
}

impl RandpermGeneratorCompositeExplicit for crate::Composite {
    /// A random permutation of `0..n` from `generator`.
    fn randperm_generator(
        n: i64,
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        randperm_impl(n, generator, dtype, layout, device, pin_memory)
    }
}
