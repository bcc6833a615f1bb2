//! Dropout: `native_dropout` (the kernel with a mask output, whose backward is
//! `native_dropout_backward`), and the composites `dropout`, `feature_dropout`, `alpha_dropout`,
//! `feature_alpha_dropout` and their in-place forms, whose gradients come from the `mul` (and
//! `add`) they end with (as in PyTorch on CPU).

use super::CHUNK;
use crate::generated::decls::{
    AlphaDropoutCompositeImplicit, AlphaDropoutInplaceCompositeImplicit, DropoutCompositeImplicit,
    DropoutInplaceCompositeImplicit, FeatureAlphaDropoutCompositeImplicit, FeatureAlphaDropoutInplaceCompositeImplicit,
    FeatureDropoutCompositeImplicit, FeatureDropoutInplaceCompositeImplicit, NativeDropoutBackwardCompositeExplicit,
    NativeDropoutCpu, NativeDropoutMeta,
};
use crate::iter::GRAIN_SIZE;
#[cfg(target_arch = "x86_64")]
use crate::iter::{simd_level, SimdLevel};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{ops, DType, Device, Element, Error, Result, Scalar, Tensor};

/// `1 / (1 - p)`, or 0 when `p` is 1 (PyTorch's guard against dividing by zero).
fn keep_scale(p: f64) -> f64 {
    let p1m = 1.0 - p;
    if p1m == 0.0 {
        0.0
    } else {
        1.0 / p1m
    }
}

/// PyTorch's `native_dropout_cpu`. Training (`train` not `Some(false)`): the mask keeps each
/// element with probability `1 - p` (it is `bernoulli_(1 - p)` of a bool tensor like `input`),
/// and the output is `input * mask * (1 / (1 - p))`. Otherwise a copy of the input and an
/// all-true mask.
pub(super) fn native_dropout_impl(input: &Tensor, p: f64, train: Option<bool>) -> Result<(Tensor, Tensor)> {
    if input.numel() == 0 {
        // PyTorch returns the input itself and a mask of the input's dtype; oxten returns a
        // (free) copy rather than an alias, so that the output's history is its own.
        let mask = ops::empty_like::call(input, None, None, None, None, None)?;
        return Ok((ops::deep_clone::call(input, None)?, mask));
    }
    if train == Some(false) {
        let mask = ops::ones_like::call(input, Some(DType::Bool), None, None, None, None)?;
        return Ok((ops::deep_clone::call(input, None)?, mask));
    }
    let p1m = 1.0 - p;
    let scale = keep_scale(p);
    // The mask has the input's layout (and `bernoulli_` checks `p`).
    let mask = ops::empty_like::call(input, Some(DType::Bool), None, None, None, None)?;
    ops::bernoulli_float_::call(&mask, p1m, None)?;
    if input.device() == Device::Cpu && input.dtype().is_floating_point() && input.is_non_overlapping_and_dense() {
        // The output in one pass instead of `mul` and `mul_`.
        let out = ops::empty_like::call(input, None, None, None, None, None)?;
        fused_output(input, &mask, &out, scale)?;
        return Ok((out, mask));
    }
    let out = ops::mul::call(input, &mask)?;
    ops::mul_scalar_::call(&out, Scalar::Float(scale))?;
    Ok((out, mask))
}

/// `o[i] = f(x[i], m[i])`.
#[inline(always)]
fn apply<T: Copy>(x: &[T], m: &[bool], o: &mut [T], f: &impl Fn(T, bool) -> T) {
    for ((o, &x), &m) in o.iter_mut().zip(x).zip(m) {
        *o = f(x, m);
    }
}

/// [`apply`] compiled for the CPU's best instruction set (the same bits at every level).
fn apply_simd<T: Copy>(x: &[T], m: &[bool], o: &mut [T], f: &impl Fn(T, bool) -> T) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma,f16c")]
        unsafe fn avx2<T: Copy>(x: &[T], m: &[bool], o: &mut [T], f: &impl Fn(T, bool) -> T) {
            apply(x, m, o, f)
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
        unsafe fn avx512<T: Copy>(x: &[T], m: &[bool], o: &mut [T], f: &impl Fn(T, bool) -> T) {
            apply(x, m, o, f)
        }
        match simd_level() {
            // SAFETY: `simd_level` is at most what the CPU supports.
            SimdLevel::Avx512 => return unsafe { avx512(x, m, o, f) },
            // SAFETY: as above.
            SimdLevel::Avx2 => return unsafe { avx2(x, m, o, f) },
            SimdLevel::Default => {}
        }
    }
    apply(x, m, o, f)
}

/// `out = (input * mask) * scale` over three tensors with the same dense strides, with
/// PyTorch's rounding: the mask as 0/1 in the compute type (so a dropped NaN or infinity gives
/// NaN), the scale rounded to the compute type, `f16`/`bf16` computed in `f32` and rounded once.
fn fused_output(input: &Tensor, mask: &Tensor, out: &Tensor, scale: f64) -> Result<()> {
    fn typed<T: Element>(input: &Tensor, mask: &Tensor, out: &Tensor, f: impl Fn(T, bool) -> T + Sync) {
        let n = input.numel() as usize;
        // SAFETY: the three tensors are CPU tensors with identical non-overlapping dense
        // strides (mask and out come from `empty_like(input)`), so each one's `n` elements
        // are the `n` slots from its `data_ptr`; `out` and `mask` are fresh tensors distinct
        // from `input`, the mask was fully written by `bernoulli_` and is only read here, and
        // every element of `out` is written before `assume_init`.
        unsafe {
            let x = std::slice::from_raw_parts(input.data_ptr().cast::<T>().cast_const(), n);
            let m = std::slice::from_raw_parts(mask.data_ptr().cast::<bool>().cast_const(), n);
            let (op, deferred) = out.data_ptr_for_overwrite();
            let o = std::slice::from_raw_parts_mut(op.cast::<T>(), n);
            let chunk = |c: usize, oc: &mut [T]| {
                let at = c * CHUNK;
                apply_simd(&x[at..at + oc.len()], &m[at..at + oc.len()], oc, &f);
            };
            if n >= GRAIN_SIZE && oxten_runtime::parallel::threads_now() > 1 {
                oxten_runtime::parallel::chunks_mut(o, CHUNK, |c, oc| chunk(c, oc));
            } else {
                o.chunks_mut(CHUNK).enumerate().for_each(|(c, oc)| chunk(c, oc));
            }
            if deferred {
                out.storage().assume_init();
            }
        }
    }
    let s32 = scale as f32;
    let m32 = |m: bool| f32::from(u8::from(m));
    match input.dtype() {
        DType::F32 => typed::<f32>(input, mask, out, |x, m| x * m32(m) * s32),
        DType::F64 => typed::<f64>(input, mask, out, |x, m| x * f64::from(u8::from(m)) * scale),
        DType::F16 => typed::<f16>(input, mask, out, |x, m| f16::from_f32(x.to_f32() * m32(m) * s32)),
        DType::BF16 => typed::<bf16>(input, mask, out, |x, m| bf16::from_f32(x.to_f32() * m32(m) * s32)),
        other => return Err(Error::runtime(format!("native_dropout: no fused kernel for {other:?}"))),
    }
    Ok(())
}

impl NativeDropoutCpu for crate::Cpu {
    fn native_dropout(input: &Tensor, p: f64, train: Option<bool>) -> Result<(Tensor, Tensor)> {
        native_dropout_impl(input, p, train)
    }
}

impl NativeDropoutMeta for crate::Meta {
    /// The same composition on meta tensors: shapes, dtypes and the `p` check.
    fn native_dropout(input: &Tensor, p: f64, train: Option<bool>) -> Result<(Tensor, Tensor)> {
        native_dropout_impl(input, p, train)
    }
}

impl NativeDropoutBackwardCompositeExplicit for crate::Composite {
    /// `grad_output * mask * scale`.
    fn native_dropout_backward(grad_output: &Tensor, mask: &Tensor, scale: f64) -> Result<Tensor> {
        ops::mul_scalar::call(&ops::mul::call(grad_output, mask)?, Scalar::Float(scale))
    }
}

/// Which of PyTorch's four dropout composites `dropout_impl` computes.
#[derive(Clone, Copy)]
struct Variant {
    /// One draw per (sample, channel) instead of per element.
    feature: bool,
    /// SELU's alpha dropout: dropped elements go to `-alpha'` and an affine map restores the
    /// mean and variance.
    alpha: bool,
}

/// SELU's `-lambda * alpha` negated: the value alpha dropout moves dropped elements towards.
const SELU_ALPHA_PRIME: f64 = 1.7580993408473766;

/// PyTorch's `_dropout_impl` (CPU path) for the dropout composites and their in-place forms:
/// zero each element (or each feature map) with probability `p` and scale the rest by
/// `1 / (1 - p)`, as `input * noise` so that autograd sees a `mul`. Alpha dropout computes
/// `input * (a * keep) + b` with `a = 1 / sqrt((alpha'^2 p + 1)(1 - p))` and
/// `b = a * alpha' * (p - (1 - keep))`.
fn dropout_impl(input: &Tensor, p: f64, train: bool, v: Variant, inplace: bool) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::value(format!(
            "dropout probability has to be between 0 and 1, but got {}",
            super::cpp_double(p)
        )));
    }
    if p == 0.0 || !train || input.numel() == 0 {
        return Ok(input.clone());
    }
    let multiply = |noise: &Tensor| if inplace { ops::mul_::call(input, noise) } else { ops::mul::call(input, noise) };
    if p == 1.0 {
        let zero = ops::zeros::call(&[], Some(input.dtype()), None, Some(input.device()), None)?;
        return multiply(&zero);
    }
    let noise = if v.feature {
        if input.dim() < 2 {
            return Err(Error::value("Feature dropout requires at least 2 dimensions in the input"));
        }
        // One draw per (sample, channel): [N, C, 1, 1, ...].
        let mut sizes = vec![1i64; input.dim()];
        sizes[0] = input.size(0)?;
        sizes[1] = input.size(1)?;
        ops::empty::call(&sizes, Some(input.dtype()), None, Some(input.device()), None, None)?
    } else {
        ops::empty_like::call(input, None, None, None, None, None)?
    };
    ops::bernoulli_float_::call(&noise, 1.0 - p, None)?;
    if !v.alpha {
        ops::div_scalar_::call(&noise, Scalar::Float(1.0 - p))?;
        return multiply(&noise);
    }
    let alpha = SELU_ALPHA_PRIME;
    let a = 1.0 / ((alpha * alpha * p + 1.0) * (1.0 - p)).sqrt();
    let b = ops::add_scalar::call(&noise, Scalar::Int(-1), Scalar::Int(1))?;
    ops::mul_scalar_::call(&b, Scalar::Float(alpha * a))?;
    ops::add_scalar_::call(&b, Scalar::Float(alpha * a * p), Scalar::Int(1))?;
    ops::mul_scalar_::call(&noise, Scalar::Float(a))?;
    let scaled = multiply(&noise)?;
    if inplace {
        ops::add_::call(&scaled, &b, Scalar::Int(1))
    } else {
        ops::add::call(&scaled, &b, Scalar::Int(1))
    }
}

const PLAIN: Variant = Variant { feature: false, alpha: false };
const FEATURE: Variant = Variant { feature: true, alpha: false };
const ALPHA: Variant = Variant { feature: false, alpha: true };
const FEATURE_ALPHA: Variant = Variant { feature: true, alpha: true };

impl DropoutCompositeImplicit for crate::Composite {
    fn dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(input, p, train, PLAIN, false)
    }
}

impl DropoutInplaceCompositeImplicit for crate::Composite {
    fn dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(self_, p, train, PLAIN, true)
    }
}

impl FeatureDropoutCompositeImplicit for crate::Composite {
    fn feature_dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(input, p, train, FEATURE, false)
    }
}

impl FeatureDropoutInplaceCompositeImplicit for crate::Composite {
    fn feature_dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(self_, p, train, FEATURE, true)
    }
}

impl AlphaDropoutCompositeImplicit for crate::Composite {
    fn alpha_dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(input, p, train, ALPHA, false)
    }
}

impl AlphaDropoutInplaceCompositeImplicit for crate::Composite {
    fn alpha_dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(self_, p, train, ALPHA, true)
    }
}

impl FeatureAlphaDropoutCompositeImplicit for crate::Composite {
    fn feature_alpha_dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(input, p, train, FEATURE_ALPHA, false)
    }
}

impl FeatureAlphaDropoutInplaceCompositeImplicit for crate::Composite {
    fn feature_alpha_dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
        dropout_impl(self_, p, train, FEATURE_ALPHA, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_guards_p_one() {
        assert_eq!(keep_scale(1.0), 0.0);
        assert_eq!(keep_scale(0.0), 1.0);
        assert_eq!(keep_scale(0.5), 2.0);
    }
}
