//! The in-place distributions: `uniform_`, `normal_`, `random_.from` / `random_.to`,
//! `bernoulli_.float` and `bernoulli_.Tensor`, on CPU and meta.
//!
//! Elements per Philox block (4 words): one word per element for `f32`/`f16`/`bf16` uniforms
//! and normals, Bernoulli draws and integer ranges up to 2^32; two words per element for `f64`
//! and for wider integer ranges.

use super::sample::{self, unit_bits, unit_f32, unit_f64, IndexedWords32, NormalF32, NormalF64, Words32, Words64};
use super::{check_no_internal_overlap, cpp_double, cpp_type_name, fill_random, generator_or_default, not_implemented};
use crate::factory::ScalarElem;
use crate::generated::decls::{
    BernoulliFloatInplaceCpu, BernoulliFloatInplaceMeta, BernoulliTensorInplaceCpu, BernoulliTensorInplaceMeta,
    NormalInplaceCpu, NormalInplaceMeta, RandomFromInplaceCpu, RandomFromInplaceMeta, RandomToInplaceCompositeExplicit,
    UniformInplaceCpu, UniformInplaceMeta,
};
use crate::iter::copy_;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{match_dtype, ops, DType, Device, Error, Generator, MemoryFormat, Result, Tensor};

// ---------------------------------------------------------------------------------------------
// uniform_
// ---------------------------------------------------------------------------------------------

/// The lowest and largest finite values of a floating dtype, as doubles.
fn float_limits(dtype: DType) -> (f64, f64) {
    let max = match dtype {
        DType::F16 => f16::MAX.to_f64(),
        DType::BF16 => bf16::MAX.to_f64(),
        DType::F32 => f64::from(f32::MAX),
        _ => f64::MAX,
    };
    (-max, max)
}

/// PyTorch's `uniform_kernel` checks (`check_uniform_bounds`).
pub(super) fn check_uniform(dtype: DType, from: f64, to: f64) -> Result<()> {
    if !dtype.is_floating_point() {
        return Err(not_implemented("check_uniform_bounds", dtype));
    }
    let (min, max) = float_limits(dtype);
    let name = cpp_type_name(dtype);
    if !(from >= min && from <= max) {
        return Err(Error::value(format!("from is out of bounds for {name}")));
    }
    if !(to >= min && to <= max) {
        return Err(Error::value(format!("to is out of bounds for {name}")));
    }
    if from > to {
        return Err(Error::value(format!(
            "uniform_ expects to return a [from, to) range, but found from={} > to={}",
            cpp_double(from),
            cpp_double(to)
        )));
    }
    if to - from > max {
        return Err(Error::value(format!(
            "uniform_ expects to-from <= std::numeric_limits<{}>::max(), but found to={} and from={} which result \
             in to-from to exceed the limit",
            crate::iter::scalar_type_name(dtype),
            cpp_double(to),
            cpp_double(from)
        )));
    }
    Ok(())
}

/// `x * (to - from) + from` for a `[0, 1)` uniform `x` in the precision PyTorch uses (`from` and
/// `to` rounded to the element type first).
pub(super) fn uniform_cpu(t: &Tensor, from: f64, to: f64, g: &Generator) -> Result<()> {
    // PyTorch returns before any check for an empty tensor.
    if t.numel() == 0 {
        return Ok(());
    }
    check_no_internal_overlap(t)?;
    check_uniform(t.dtype(), from, to)?;
    match t.dtype() {
        DType::F32 => {
            let (lo, hi) = (from as f32, to as f32);
            let range = hi - lo;
            fill_random(t, g, Words32(move |w| unit_f32(w) * range + lo))
        }
        DType::F64 => {
            let range = to - from;
            fill_random(t, g, Words64(move |u: u64| unit_f64(u) * range + from))
        }
        DType::F16 => {
            let (lo, hi) = (f16::from_f64(from).to_f32(), f16::from_f64(to).to_f32());
            let range = f16::from_f32(hi - lo).to_f32();
            fill_random(t, g, Words32(move |w| f16::from_f32(unit_bits(w, 11) * range + lo)))
        }
        DType::BF16 => {
            let (lo, hi) = (bf16::from_f64(from).to_f32(), bf16::from_f64(to).to_f32());
            let range = bf16::from_f32(hi - lo).to_f32();
            fill_random(t, g, Words32(move |w| bf16::from_f32(unit_bits(w, 8) * range + lo)))
        }
        other => Err(not_implemented("check_uniform_bounds", other)),
    }
}

impl UniformInplaceCpu for crate::Cpu {
    /// Uniform values in `[from, to)`.
    fn uniform_(self_: &Tensor, from: f64, to: f64, generator: Option<&Generator>) -> Result<Tensor> {
        uniform_cpu(self_, from, to, &generator_or_default(generator))?;
        Ok(self_.clone())
    }
}

impl UniformInplaceMeta for crate::Meta {
    /// Nothing to write; PyTorch's meta kernel checks nothing either.
    fn uniform_(self_: &Tensor, _from: f64, _to: f64, _generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

// ---------------------------------------------------------------------------------------------
// normal_
// ---------------------------------------------------------------------------------------------

pub(super) fn check_std(std: f64) -> Result<()> {
    if std.is_nan() || std < 0.0 {
        return Err(Error::value(format!("normal expects std >= 0.0, but found std {}", cpp_double(std))));
    }
    Ok(())
}

/// `z * std + mean` for standard normals `z` (Box-Muller; `f32` work for `f32`, `f16`, `bf16`).
pub(super) fn normal_cpu(t: &Tensor, mean: f64, std: f64, g: &Generator) -> Result<()> {
    check_std(std)?;
    if !t.dtype().is_floating_point() {
        return Err(not_implemented("normal_kernel_cpu", t.dtype()));
    }
    check_no_internal_overlap(t)?;
    let (mean32, std32) = (mean as f32, std as f32);
    match t.dtype() {
        DType::F32 => fill_random(t, g, NormalF32 { mean: mean32, std: std32, round: |z: f32| z }),
        DType::F64 => fill_random(t, g, NormalF64 { mean, std }),
        DType::F16 => fill_random(t, g, NormalF32 { mean: mean32, std: std32, round: f16::from_f32 }),
        DType::BF16 => fill_random(t, g, NormalF32 { mean: mean32, std: std32, round: bf16::from_f32 }),
        other => Err(not_implemented("normal_kernel_cpu", other)),
    }
}

impl NormalInplaceCpu for crate::Cpu {
    /// Normal values with the given mean and standard deviation.
    fn normal_(self_: &Tensor, mean: f64, std: f64, generator: Option<&Generator>) -> Result<Tensor> {
        normal_cpu(self_, mean, std, &generator_or_default(generator))?;
        Ok(self_.clone())
    }
}

impl NormalInplaceMeta for crate::Meta {
    /// Checks `std` (as PyTorch's meta kernel does); nothing to write.
    fn normal_(self_: &Tensor, _mean: f64, std: f64, _generator: Option<&Generator>) -> Result<Tensor> {
        check_std(std)?;
        Ok(self_.clone())
    }
}

// ---------------------------------------------------------------------------------------------
// random_
// ---------------------------------------------------------------------------------------------

/// `std::numeric_limits<T>::digits` of a floating dtype.
fn float_digits(dtype: DType) -> u32 {
    match dtype {
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::F32 => 24,
        _ => 53,
    }
}

/// `static_cast<int64_t>(static_cast<T>(v))` for a floating dtype.
fn round_trip(v: i64, dtype: DType) -> i64 {
    match dtype {
        DType::F16 => f16::from_f32(v as f32).to_f32() as i64,
        DType::BF16 => bf16::from_f32(v as f32).to_f32() as i64,
        DType::F32 => v as f32 as i64,
        _ => v as f64 as i64,
    }
}

/// Bit length of `v` minus one (`while (v >>= 1) ++n`).
fn floor_log2(v: i64) -> u32 {
    63u32.saturating_sub(v.unsigned_abs().leading_zeros())
}

/// PyTorch's `update_from<T>`: moves `from` up to a value the float type represents.
fn update_from(from: i64, dtype: DType) -> i64 {
    let plus1 = round_trip(from.wrapping_add(1), dtype);
    if plus1 < from {
        let n = floor_log2(from.wrapping_add(1));
        let shift = (n + 1).saturating_sub(float_digits(dtype)).min(62);
        return plus1.wrapping_add(1i64 << shift);
    }
    from
}

/// PyTorch's `update_to<T>`: moves `to` down to a value the float type represents.
fn update_to(to: i64, dtype: DType) -> i64 {
    let minus1 = round_trip(to.wrapping_sub(1), dtype);
    if minus1 >= to {
        let n = floor_log2(to.wrapping_sub(1));
        let shift = (n + 1).saturating_sub(float_digits(dtype)).min(62);
        return minus1.wrapping_sub(1i64 << shift);
    }
    to
}

/// PyTorch's `check_from_to_in_range` (without its precision warnings).
fn check_from_to_in_range(from: i64, to_inc: i64, dtype: DType) -> Result<()> {
    let name = cpp_type_name(dtype);
    let out = |what: &str| Error::value(format!("{what} is out of bounds for {name}"));
    if dtype.is_floating_point() {
        let (min, max) = float_limits(dtype);
        for (v, what) in [(from, "from"), (to_inc, "to - 1")] {
            if !((v as f64) >= min && (v as f64) <= max) {
                return Err(out(what));
            }
        }
    } else {
        let (min, max) = int_limits(dtype);
        for (v, what) in [(from, "from"), (to_inc, "to - 1")] {
            if v < min || v > max {
                return Err(out(what));
            }
        }
    }
    Ok(())
}

/// The range of an integral (or bool) dtype.
fn int_limits(dtype: DType) -> (i64, i64) {
    match dtype {
        DType::Bool => (0, 1),
        DType::U8 => (0, u8::MAX as i64),
        DType::I8 => (i8::MIN as i64, i8::MAX as i64),
        DType::I16 => (i16::MIN as i64, i16::MAX as i64),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

/// What `random_` draws: `base + (u % range)`, or every `i64` when `range` is `None` (2^64).
#[derive(Clone, Copy, Debug)]
pub(super) struct IntRange {
    base: i64,
    range: Option<u64>,
}

/// The checks of PyTorch's `random_from_to_impl`, and the range they leave.
pub(super) fn random_range(dtype: DType, from: i64, to: Option<i64>) -> Result<IntRange> {
    let float = dtype.is_floating_point();
    match to {
        Some(to) => {
            if from >= to {
                return Err(Error::value(format!(
                    "random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"
                )));
            }
            let (mut from, mut to) = (from, to);
            if float {
                from = update_from(from, dtype);
                to = update_to(to, dtype);
                if from >= to {
                    return Err(Error::value(format!(
                        "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got \
                         from={from} >= to={to}"
                    )));
                }
            }
            check_from_to_in_range(from, to.wrapping_sub(1), dtype)?;
            Ok(IntRange { base: from, range: Some((to as u64).wrapping_sub(from as u64)) })
        }
        None if from != i64::MIN => {
            let mut from = from;
            let to_inc = if float {
                let to_inc = 1i64 << float_digits(dtype);
                from = update_from(from, dtype);
                if from >= to_inc {
                    return Err(Error::value(format!(
                        "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to \
                         dtype, but got from={from} > to_inc={to_inc}"
                    )));
                }
                to_inc
            } else {
                int_limits(dtype).1
            };
            check_from_to_in_range(from, to_inc, dtype)?;
            let range = (to_inc as u64).wrapping_sub(from as u64).wrapping_add(1);
            Ok(IntRange { base: from, range: if range == 0 { None } else { Some(range) } })
        }
        None => {
            if !matches!(dtype, DType::I64 | DType::F64 | DType::F32 | DType::BF16) {
                return Err(Error::dtype(
                    "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16",
                ));
            }
            Ok(IntRange { base: 0, range: None })
        }
    }
}

/// `w` mapped onto `0 .. range` (`range <= 2^32`) by multiplying and keeping the high half
/// (Lemire's method: no division, and as uniform as PyTorch's `w % range`: each value is hit
/// `floor` or `ceil` of `2^32 / range` times).
#[inline(always)]
pub(super) fn scale_u32(w: u32, range: u64) -> u64 {
    (u64::from(w) * range) >> 32
}

/// [`scale_u32`] for 64-bit draws and ranges.
#[inline(always)]
fn scale_u64(u: u64, range: u64) -> u64 {
    ((u128::from(u) * u128::from(range)) >> 64) as u64
}

/// Fills `t` with integers of `r`, converted to its dtype like a C++ `static_cast` of an
/// `int64_t`. Ranges up to 2^32 take one word per element, wider ones two.
pub(super) fn random_cpu(t: &Tensor, r: IntRange, g: &Generator) -> Result<()> {
    check_no_internal_overlap(t)?;
    fn typed<T: ScalarElem>(t: &Tensor, r: IntRange, g: &Generator) -> Result<()> {
        let base = r.base;
        match r.range {
            Some(range) if range <= 1 << 32 => {
                fill_random(t, g, Words32(move |w| T::cast_i64(base.wrapping_add(scale_u32(w, range) as i64))))
            }
            Some(range) => {
                fill_random(t, g, Words64(move |u| T::cast_i64(base.wrapping_add(scale_u64(u, range) as i64))))
            }
            None => fill_random(t, g, Words64(|u| T::cast_i64(u as i64))),
        }
    }
    match_dtype!(t.dtype(), T => typed::<T>(t, r, g))
}

impl RandomFromInplaceCpu for crate::Cpu {
    /// Integers uniform in `[from, to)` (`to = None`: up to the dtype's largest integer).
    fn random_from_(self_: &Tensor, from: i64, to: Option<i64>, generator: Option<&Generator>) -> Result<Tensor> {
        let r = random_range(self_.dtype(), from, to)?;
        random_cpu(self_, r, &generator_or_default(generator))?;
        Ok(self_.clone())
    }
}

impl RandomFromInplaceMeta for crate::Meta {
    /// The range checks only.
    fn random_from_(self_: &Tensor, from: i64, to: Option<i64>, _generator: Option<&Generator>) -> Result<Tensor> {
        random_range(self_.dtype(), from, to)?;
        Ok(self_.clone())
    }
}

impl RandomToInplaceCompositeExplicit for crate::Composite {
    /// `random_(0, to)`.
    fn random_to_(self_: &Tensor, to: i64, generator: Option<&Generator>) -> Result<Tensor> {
        ops::random_from_::call(self_, 0, Some(to), generator)
    }
}

// ---------------------------------------------------------------------------------------------
// bernoulli_
// ---------------------------------------------------------------------------------------------

pub(super) fn check_p(p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::value(format!("bernoulli_ expects p to be in [0, 1], but got p={}", cpp_double(p))));
    }
    Ok(())
}

/// Ones with probability `p` (a word below the threshold), zeros otherwise; any dtype.
pub(super) fn bernoulli_scalar_cpu(t: &Tensor, p: f64, g: &Generator) -> Result<()> {
    check_p(p)?;
    check_no_internal_overlap(t)?;
    let thr = sample::bernoulli_threshold(p);
    fn typed<T: ScalarElem>(t: &Tensor, thr: u64, g: &Generator) -> Result<()> {
        let (one, zero) = (T::cast_i64(1), T::cast_i64(0));
        fill_random(t, g, Words32(move |w| if u64::from(w) < thr { one } else { zero }))
    }
    match_dtype!(t.dtype(), T => typed::<T>(t, thr, g))
}

impl BernoulliFloatInplaceCpu for crate::Cpu {
    /// Ones with probability `p`.
    fn bernoulli_float_(self_: &Tensor, p: f64, generator: Option<&Generator>) -> Result<Tensor> {
        bernoulli_scalar_cpu(self_, p, &generator_or_default(generator))?;
        Ok(self_.clone())
    }
}

impl BernoulliFloatInplaceMeta for crate::Meta {
    /// Checks `p`; nothing to write.
    fn bernoulli_float_(self_: &Tensor, p: f64, _generator: Option<&Generator>) -> Result<Tensor> {
        check_p(p)?;
        Ok(self_.clone())
    }
}

/// PyTorch's message for a probability tensor with a value outside `[0, 1]`.
const P_TENSOR_MSG: &str = "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be \
                            improved?  If so, please report an enhancement request to PyTorch.)";

/// `p` broadcast to `self`'s shape (PyTorch's `expand_inplace`), checked to be floating.
fn expand_p(self_: &Tensor, p: &Tensor) -> Result<Tensor> {
    if !p.dtype().is_floating_point() {
        return Err(not_implemented("bernoulli_tensor_cpu_p_", p.dtype()));
    }
    ops::expand::call(p, &self_.sizes(), false)
}

impl BernoulliTensorInplaceCpu for crate::Cpu {
    /// Element `i` is one with probability `p[i]` (`p` broadcast to `self`'s shape).
    fn bernoulli_tensor_(self_: &Tensor, p: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
        check_no_internal_overlap(self_)?;
        let p = expand_p(self_, p)?;
        let g = generator_or_default(generator);
        // Sample into a dense tensor (self, or a contiguous temporary) whose memory order the
        // probabilities are laid out in.
        let dense = if self_.is_non_overlapping_and_dense() {
            self_.clone()
        } else {
            Tensor::empty(&self_.sizes(), self_.dtype(), Device::Cpu, MemoryFormat::Contiguous)?
        };
        let l = dense.layout();
        let pd = Tensor::empty_strided(&l.sizes, &l.strides, DType::F64, Device::Cpu)?;
        copy_(&pd, &p)?;
        // `pd` has `dense`'s strides, so its storage lists the probabilities in memory order.
        let probs = memory_order_f64(&pd)?;
        if probs.iter().any(|&q| !(0.0..=1.0).contains(&q)) {
            return Err(Error::value(P_TENSOR_MSG));
        }
        fn typed<T: ScalarElem>(t: &Tensor, probs: &[f64], g: &Generator) -> Result<()> {
            let (one, zero) = (T::cast_i64(1), T::cast_i64(0));
            fill_random(
                t,
                g,
                IndexedWords32(|i: usize, w: u32| if f64::from(w) < probs[i] * 4_294_967_296.0 { one } else { zero }),
            )
        }
        match_dtype!(dense.dtype(), T => typed::<T>(&dense, &probs, &g))?;
        if !dense.is_same(self_) {
            copy_(self_, &dense)?;
        }
        Ok(self_.clone())
    }
}

impl BernoulliTensorInplaceMeta for crate::Meta {
    /// The broadcast and dtype checks; nothing to write.
    fn bernoulli_tensor_(self_: &Tensor, p: &Tensor, _generator: Option<&Generator>) -> Result<Tensor> {
        check_no_internal_overlap(self_)?;
        expand_p(self_, p)?;
        Ok(self_.clone())
    }
}

/// The elements of a non-overlapping and dense `f64` tensor in memory order: those of the 1-D
/// view over its memory.
fn memory_order_f64(t: &Tensor) -> Result<Vec<f64>> {
    t.alias_with_layout(&[t.numel()], &[1], t.storage_offset())?.to_vec::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_bounds_follow_pytorch() {
        // `update_from` / `update_to` only move values the type cannot represent.
        assert_eq!(update_from(5, DType::F32), 5);
        // `to - 1` = 2^30 - 1 rounds up to 2^30 in f32: `to` drops to the float below 2^30.
        assert_eq!(update_to(1 << 30, DType::F32), (1 << 30) - 64);
        assert_eq!(update_to((1 << 24) + 3, DType::F32), (1 << 24) + 3);
        // `to - 1` = 2^24 + 3 rounds up to `to` = 2^24 + 4 in f32: `to` moves down one step.
        assert_eq!(update_to((1 << 24) + 4, DType::F32), (1 << 24) + 2);
        assert_eq!(random_range(DType::F16, 0, Some(10)).unwrap().range, Some(10));
        assert_eq!(
            random_range(DType::F16, 0, Some(70000)).unwrap_err().message,
            "to - 1 is out of bounds for c10::Half"
        );
        assert_eq!(
            random_range(DType::U8, -5, Some(5)).unwrap_err().message,
            "from is out of bounds for unsigned char"
        );
        assert_eq!(random_range(DType::Bool, 0, None).unwrap().range, Some(2));
        assert_eq!(random_range(DType::I64, i64::MIN, None).unwrap().range, None);
        assert_eq!(random_range(DType::I64, 0, None).unwrap().range, Some(1 << 63));
        assert!(random_range(DType::I32, i64::MIN, None).is_err());
        assert_eq!(random_range(DType::F32, 0, None).unwrap().range, Some((1 << 24) + 1));
    }
}
