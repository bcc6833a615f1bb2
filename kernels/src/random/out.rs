//! The `out=` overloads of the random factories (`rand`, `randn`, `randint`, `randperm`,
//! `normal.float_float`) and PyTorch's `normal(mean, std)` overloads with tensor arguments, as in
//! PyTorch's `TensorFactories.cpp` and `DistributionTemplates.h`:
//!
//! - the factories `resize_` their `out` (one of the right size keeps its strides and is filled
//!   in memory order; one of another size becomes contiguous), then fill it in place, so a
//!   contiguous `out` gets the functional form's values for the same generator state;
//! - `normal(Tensor…)` `resize_output`s `out` to the broadcast shape and computes
//!   `normal_(0, std) + mean` (`Tensor_float`) or `normal_(0, 1) * std + mean` (the others);
//!   their functional forms allocate a contiguous result (of `mean`'s dtype, or `std`'s for
//!   `float_Tensor`).

use super::factories::{check_randperm_dtype, permutation_tensor};
use super::generator_or_default;
use crate::generated::decls::{
    NormalFloatFloatCompositeExplicit, NormalFloatFloatOutCompositeExplicit, NormalFloatTensorCompositeExplicit,
    NormalFloatTensorOutCompositeExplicit, NormalTensorFloatCompositeExplicit, NormalTensorFloatOutCompositeExplicit,
    NormalTensorTensorCompositeExplicit, NormalTensorTensorOutCompositeExplicit, RandGeneratorOutCompositeExplicit,
    RandOutCompositeExplicit, RandintGeneratorOutCompositeExplicit, RandintLowGeneratorOutCompositeExplicit,
    RandintLowOutCompositeExplicit, RandintOutCompositeExplicit, RandnGeneratorOutCompositeExplicit,
    RandnOutCompositeExplicit, RandpermGeneratorOutCpu, RandpermGeneratorOutMeta, RandpermOutCompositeExplicit,
};
use crate::iter::{copy_, infer_size};
use crate::support::resize_output;
use oxten_runtime::autograd::is_grad_enabled;
use oxten_runtime::{ops, DType, Device, Error, Generator, Layout, MemoryFormat, Result, Scalar, Tensor};

/// The factories have no derivative formula, so nothing else refuses an `out` that requires
/// grad: PyTorch's error for an out= operator without one (`aten::rand(): …`).
fn check_no_grad(op: &str, out: &Tensor) -> Result<()> {
    if is_grad_enabled() && out.requires_grad() {
        return Err(Error::runtime(format!(
            "aten::{op}(): functions with out=... arguments don't support automatic differentiation, but one of the \
             arguments requires grad."
        )));
    }
    Ok(())
}

/// PyTorch's `result.resize_(size)` for factory `op`: unchanged when the size is (strides
/// kept), else contiguous. A negative size fails as PyTorch's does (its element count
/// overflows).
fn resize_to(op: &str, out: &Tensor, size: &[i64]) -> Result<()> {
    check_no_grad(op, out)?;
    if size.iter().any(|&s| s < 0) {
        return Err(Error::value("numel: integer multiplication overflow"));
    }
    out.resize_(size, MemoryFormat::Preserve)
}

// ---------------------------------------------------------------------------------------------
// rand / randn / randint
// ---------------------------------------------------------------------------------------------

fn rand_out_impl(size: &[i64], generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
    resize_to("rand", out, size)?;
    ops::uniform_::call(out, 0.0, 1.0, generator)
}

fn randn_out_impl(size: &[i64], generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
    resize_to("randn", out, size)?;
    ops::normal_::call(out, 0.0, 1.0, generator)
}

fn randint_out_impl(low: i64, high: i64, size: &[i64], generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
    resize_to("randint", out, size)?;
    ops::random_from_::call(out, low, Some(high), generator)
}

impl RandOutCompositeExplicit for crate::Composite {
    /// Uniform values in `[0, 1)` into `out`.
    fn rand_out(size: &[i64], out: &Tensor) -> Result<Tensor> {
        rand_out_impl(size, None, out)
    }
}

impl RandGeneratorOutCompositeExplicit for crate::Composite {
    /// Uniform values in `[0, 1)` from `generator` into `out`.
    fn rand_generator_out(size: &[i64], generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
        rand_out_impl(size, generator, out)
    }
}

impl RandnOutCompositeExplicit for crate::Composite {
    /// Standard normal values into `out`.
    fn randn_out(size: &[i64], out: &Tensor) -> Result<Tensor> {
        randn_out_impl(size, None, out)
    }
}

impl RandnGeneratorOutCompositeExplicit for crate::Composite {
    /// Standard normal values from `generator` into `out`.
    fn randn_generator_out(size: &[i64], generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
        randn_out_impl(size, generator, out)
    }
}

impl RandintOutCompositeExplicit for crate::Composite {
    /// Integers uniform in `[0, high)` into `out` (of `out`'s dtype).
    fn randint_out(high: i64, size: &[i64], out: &Tensor) -> Result<Tensor> {
        randint_out_impl(0, high, size, None, out)
    }
}

impl RandintGeneratorOutCompositeExplicit for crate::Composite {
    /// Integers uniform in `[0, high)` from `generator` into `out`.
    fn randint_generator_out(high: i64, size: &[i64], generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
        randint_out_impl(0, high, size, generator, out)
    }
}

impl RandintLowOutCompositeExplicit for crate::Composite {
    /// Integers uniform in `[low, high)` into `out`.
    fn randint_low_out(low: i64, high: i64, size: &[i64], out: &Tensor) -> Result<Tensor> {
        randint_out_impl(low, high, size, None, out)
    }
}

impl RandintLowGeneratorOutCompositeExplicit for crate::Composite {
    /// Integers uniform in `[low, high)` from `generator` into `out`.
    fn randint_low_generator_out(
        low: i64,
        high: i64,
        size: &[i64],
        generator: Option<&Generator>,
        out: &Tensor,
    ) -> Result<Tensor> {
        randint_out_impl(low, high, size, generator, out)
    }
}

// ---------------------------------------------------------------------------------------------
// randperm
// ---------------------------------------------------------------------------------------------

/// `randperm(out=)`'s checks: `n` and that `out`'s dtype counts that far; then `out` resized to
/// `[n]` (all the Meta kernel does).
fn randperm_out_meta(n: i64, out: &Tensor) -> Result<()> {
    check_no_grad("randperm", out)?;
    if n < 0 {
        return Err(Error::value(format!("n must be non-negative, got{n}")));
    }
    check_randperm_dtype(n, out.dtype())?;
    resize_to("randperm", out, &[n])
}

impl RandpermGeneratorOutCpu for crate::Cpu {
    /// `randperm_out_cpu`: a random permutation of `0..n` from `generator` written into `out`
    /// through its strides.
    fn randperm_generator_out(n: i64, generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
        randperm_out_meta(n, out)?;
        let p = permutation_tensor(n, &generator_or_default(generator), out.dtype())?;
        copy_(out, &p)?;
        Ok(out.clone())
    }
}

impl RandpermGeneratorOutMeta for crate::Meta {
    /// The checks and the resize; no number is drawn.
    fn randperm_generator_out(n: i64, _generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
        randperm_out_meta(n, out)?;
        Ok(out.clone())
    }
}

impl RandpermOutCompositeExplicit for crate::Composite {
    /// A random permutation of `0..n` into `out`, from the default generator.
    fn randperm_out(n: i64, out: &Tensor) -> Result<Tensor> {
        ops::randperm_generator_out::call(n, None, out)
    }
}

// ---------------------------------------------------------------------------------------------
// normal
// ---------------------------------------------------------------------------------------------

/// `CHECK_NORMAL_STD`.
fn check_std(std: f64) -> Result<()> {
    if std >= 0.0 {
        return Ok(());
    }
    Err(Error::value(format!("normal expects std >= 0.0, but found std {}", super::cpp_double(std))))
}

/// `CHECK_NORMAL_TENSOR_STD`: every element of `std` is `>= 0` (so none is NaN), as PyTorch
/// checks it: `std.min() >= 0` computed by `std`'s backend through the dispatcher, and only the
/// one resulting flag brought to the host. Not checked on meta tensors, which have no values.
fn check_std_tensor(std: &Tensor) -> Result<()> {
    if std.numel() == 0 || std.is_meta() {
        return Ok(());
    }
    let ok = ops::ge_scalar::call(&ops::min::call(std)?, Scalar::from(0.0))?;
    if ok.try_to_device(Device::Cpu)?.to_vec::<bool>()?[0] {
        return Ok(());
    }
    Err(Error::value("normal expects all elements of std >= 0.0"))
}

/// `normal_out_impl(output, Tensor mean, double std)`. The shape broadcasts `mean` with `out`'s
/// own shape, as PyTorch's does (so an `out` that does not broadcast with `mean` is an error).
fn normal_tensor_float_into(mean: &Tensor, std: f64, generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
    check_std(std)?;
    let shape = infer_size(&mean.sizes(), &out.sizes())?;
    resize_output(out, &shape)?;
    ops::normal_::call(out, 0.0, std, generator)?;
    ops::add_::call(out, mean, Scalar::Int(1))
}

/// `normal_out_impl(output, double mean, Tensor std)`: `normal_(0, 1) * std + mean`, the mean
/// as a 0-dim tensor of `out`'s dtype.
fn normal_float_tensor_into(mean: f64, std: &Tensor, generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
    check_std_tensor(std)?;
    let mean = ops::full::call(&[], Scalar::Float(mean), Some(out.dtype()), None, Some(out.device()), None)?;
    let shape = infer_size(&mean.sizes(), &std.sizes())?;
    resize_output(out, &shape)?;
    ops::normal_::call(out, 0.0, 1.0, generator)?;
    ops::mul_::call(out, std)?;
    ops::add_::call(out, &mean, Scalar::Int(1))
}

/// `normal_out_impl(output, Tensor mean, Tensor std)`: `normal_(0, 1) * std + mean`.
fn normal_tensor_tensor_into(
    mean: &Tensor,
    std: &Tensor,
    generator: Option<&Generator>,
    out: &Tensor,
) -> Result<Tensor> {
    check_std_tensor(std)?;
    let shape = infer_size(&mean.sizes(), &std.sizes())?;
    resize_output(out, &shape)?;
    ops::normal_::call(out, 0.0, 1.0, generator)?;
    ops::mul_::call(out, std)?;
    ops::add_::call(out, mean, Scalar::Int(1))
}

impl NormalTensorFloatOutCompositeExplicit for crate::Composite {
    /// `mean + std · N(0, 1)` into `out`.
    fn normal_tensor_float_out(mean: &Tensor, std: f64, generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
        normal_tensor_float_into(mean, std, generator, out)
    }
}

impl NormalTensorFloatCompositeExplicit for crate::Composite {
    /// `mean + std · N(0, 1)`, contiguous, of `mean`'s dtype.
    fn normal_tensor_float(mean: &Tensor, std: f64, generator: Option<&Generator>) -> Result<Tensor> {
        check_std(std)?;
        let out = ops::empty_like::call(mean, None, None, None, None, Some(MemoryFormat::Contiguous))?;
        normal_tensor_float_into(mean, std, generator, &out)
    }
}

impl NormalFloatTensorOutCompositeExplicit for crate::Composite {
    /// `mean + std · N(0, 1)` into `out`.
    fn normal_float_tensor_out(mean: f64, std: &Tensor, generator: Option<&Generator>, out: &Tensor) -> Result<Tensor> {
        normal_float_tensor_into(mean, std, generator, out)
    }
}

impl NormalFloatTensorCompositeExplicit for crate::Composite {
    /// `mean + std · N(0, 1)`, contiguous, of `std`'s dtype.
    fn normal_float_tensor(mean: f64, std: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
        check_std_tensor(std)?;
        let out = ops::empty_like::call(std, None, None, None, None, Some(MemoryFormat::Contiguous))?;
        normal_float_tensor_into(mean, std, generator, &out)
    }
}

impl NormalTensorTensorOutCompositeExplicit for crate::Composite {
    /// `mean + std · N(0, 1)` (broadcast) into `out`.
    fn normal_tensor_tensor_out(
        mean: &Tensor,
        std: &Tensor,
        generator: Option<&Generator>,
        out: &Tensor,
    ) -> Result<Tensor> {
        normal_tensor_tensor_into(mean, std, generator, out)
    }
}

impl NormalTensorTensorCompositeExplicit for crate::Composite {
    /// `mean + std · N(0, 1)` (broadcast), contiguous, of `mean`'s dtype.
    fn normal_tensor_tensor(mean: &Tensor, std: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
        check_std_tensor(std)?;
        let shape = infer_size(&mean.sizes(), &std.sizes())?;
        let out = Tensor::empty(&shape, mean.dtype(), mean.device(), MemoryFormat::Contiguous)?;
        normal_tensor_tensor_into(mean, std, generator, &out)
    }
}

impl NormalFloatFloatCompositeExplicit for crate::Composite {
    /// `size` values from `N(mean, std²)`.
    #[allow(clippy::too_many_arguments)]
    fn normal_float_float(
        mean: f64,
        std: f64,
        size: &[i64],
        generator: Option<&Generator>,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let out = ops::empty::call(size, dtype, layout, device, pin_memory, None)?;
        ops::normal_::call(&out, mean, std, generator)
    }
}

impl NormalFloatFloatOutCompositeExplicit for crate::Composite {
    /// `size` values from `N(mean, std²)` into `out`.
    fn normal_float_float_out(
        mean: f64,
        std: f64,
        size: &[i64],
        generator: Option<&Generator>,
        out: &Tensor,
    ) -> Result<Tensor> {
        resize_to("normal", out, size)?;
        ops::normal_::call(out, mean, std, generator)
    }
}
