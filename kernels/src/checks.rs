//! Argument checks that generated pointwise meta functions run first (`pointwise_check:`).

use crate::generated::decls::{
    AddcdivCheck, AddcmulCheck, CeilCheck, DivTruncCheck, DivTruncScalarCheck, FloorCheck, FloorDivideCheck,
    FloorDivideScalarCheck, FracCheck, GcdCheck, HeavisideCheck, HypotCheck, IncompleteGammaCheck,
    IntegerDivisionCheck, IntegerDivisionScalarCheck, LcmCheck, LerpScalarCheck, LerpTensorCheck, Logaddexp2Check,
    LogaddexpCheck, LshiftCheck, LshiftScalarCheck, NegCheck, NextafterCheck, PolygammaCheck, PowCheck, ReluCheck,
    RoundCheck, RoundDecimalsCheck, RshiftCheck, RshiftScalarCheck, ScalarIntegerDivisionCheck, ScalarLshiftCheck,
    ScalarPowCheck, ScalarRshiftCheck, SiluCheck, SubCheck, SubScalarCheck, TruncCheck,
};
use crate::logical::promote::{result_type, Arg};
use crate::nn::{floating_only, not_implemented};
use crate::support::type_meta_name;
use crate::Meta;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// PyTorch's `sub_check`: subtraction is not defined on booleans.
fn sub_bool_check(self_is_bool: bool, other_is_bool: bool) -> Result<()> {
    if self_is_bool && other_is_bool {
        return Err(Error::dtype(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
        ));
    }
    if self_is_bool || other_is_bool {
        return Err(Error::dtype(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        ));
    }
    Ok(())
}

impl SubCheck for Meta {
    fn sub_check(self_: &Tensor, other: &Tensor, _alpha: Scalar) -> Result<()> {
        sub_bool_check(self_.dtype() == DType::Bool, other.dtype() == DType::Bool)
    }
}

impl SubScalarCheck for Meta {
    fn sub_scalar_check(self_: &Tensor, other: Scalar, _alpha: Scalar) -> Result<()> {
        sub_bool_check(self_.dtype() == DType::Bool, other.is_bool())
    }
}

impl NegCheck for Meta {
    fn neg_check(self_: &Tensor) -> Result<()> {
        if self_.dtype() == DType::Bool {
            return Err(Error::dtype(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ));
        }
        Ok(())
    }
}

impl SiluCheck for Meta {
    fn silu_check(self_: &Tensor) -> Result<()> {
        floating_only("silu_cpu", self_.dtype())
    }
}

impl ReluCheck for Meta {
    fn relu_check(self_: &Tensor) -> Result<()> {
        if self_.dtype() == DType::Bool {
            return Err(Error::dtype("Boolean inputs not supported for relu"));
        }
        Ok(())
    }
}

/// The common dtype of two tensor operands, as their TensorIterator will compute it.
fn common2(a: &Tensor, b: &Tensor) -> DType {
    result_type(&[Arg::Tensor(a), Arg::Tensor(b)])
}

/// PyTorch's `lerp` checks: `end` (and a tensor `weight`) must have `self`'s dtype, which must be
/// floating.
fn lerp_dtypes(kernel: &str, self_: &Tensor, end: &Tensor, weight: Option<&Tensor>) -> Result<()> {
    let same = |name: &str, t: &Tensor| {
        if t.dtype() == self_.dtype() {
            Ok(())
        } else {
            Err(Error::dtype(format!(
                "expected dtype {} for `{name}` but got dtype {}",
                type_meta_name(self_.dtype()),
                type_meta_name(t.dtype())
            )))
        }
    };
    same("end", end)?;
    if let Some(w) = weight {
        same("weight", w)?;
    }
    floating_only(kernel, self_.dtype())
}

impl LerpScalarCheck for Meta {
    fn lerp_scalar_check(self_: &Tensor, end: &Tensor, _weight: Scalar) -> Result<()> {
        lerp_dtypes("lerp_kernel_scalar", self_, end, None)
    }
}

impl LerpTensorCheck for Meta {
    fn lerp_tensor_check(self_: &Tensor, end: &Tensor, weight: &Tensor) -> Result<()> {
        lerp_dtypes("lerp_kernel_tensor", self_, end, Some(weight))
    }
}

impl AddcmulCheck for Meta {
    fn addcmul_check(self_: &Tensor, tensor1: &Tensor, tensor2: &Tensor, _value: Scalar) -> Result<()> {
        let common = result_type(&[Arg::Tensor(self_), Arg::Tensor(tensor1), Arg::Tensor(tensor2)]);
        if common == DType::Bool {
            return Err(not_implemented("addcmul_cpu_out", common));
        }
        Ok(())
    }
}

impl AddcdivCheck for Meta {
    fn addcdiv_check(_self: &Tensor, tensor1: &Tensor, tensor2: &Tensor, _value: Scalar) -> Result<()> {
        if tensor1.dtype().is_integral(true) && tensor2.dtype().is_integral(true) {
            return Err(Error::runtime(
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a \
                 true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + \
                 value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * \
                 tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: \
                 (input + value * tensor1 / tensor2), for all dtypes.",
            ));
        }
        Ok(())
    }
}

impl HypotCheck for Meta {
    fn hypot_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        floating_only("hypot_cpu", common2(self_, other))
    }
}

impl LogaddexpCheck for Meta {
    fn logaddexp_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        floating_only("logaddexp_cpu", common2(self_, other))
    }
}

impl Logaddexp2Check for Meta {
    fn logaddexp2_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        floating_only("logaddexp2_cpu", common2(self_, other))
    }
}

/// PyTorch's integer division raises `ZeroDivisionError` on a zero divisor (its CPU loop checks
/// each element); oxten's generated loops cannot fail, so the divisor is scanned here first,
/// when the division will be done in an integer dtype on the CPU. Floats divide by zero to
/// ±inf or NaN.
fn no_integer_zero_divisor(common: DType, divisor: &Tensor) -> Result<()> {
    if common.is_floating_point() || common == DType::Bool || divisor.device() != oxten_runtime::Device::Cpu {
        return Ok(());
    }
    let zeros = ops::eq_scalar::call(divisor, Scalar::Int(0))?;
    if ops::any::call(&zeros)?.item::<bool>()? {
        return Err(Error::runtime("ZeroDivisionError"));
    }
    Ok(())
}

impl IntegerDivisionCheck for Meta {
    fn integer_division_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        no_integer_zero_divisor(common2(self_, other), other)
    }
}

/// `pow` has no bool kernel: a bool common dtype is PyTorch's "not implemented" error (a bool
/// exponent with an integer base is fine: the common dtype is then the integer one).
fn no_bool_pow(common: DType) -> Result<()> {
    if common == DType::Bool {
        return Err(not_implemented("pow", common));
    }
    Ok(())
}

impl PolygammaCheck for Meta {
    fn polygamma_check(n: i64, _self: &Tensor) -> Result<()> {
        if n < 0 {
            return Err(Error::value("polygamma(n, x) does not support negative n."));
        }
        Ok(())
    }
}

impl PowCheck for Meta {
    fn pow_check(self_: &Tensor, exponent: &Tensor) -> Result<()> {
        no_bool_pow(common2(self_, exponent))
    }
}

impl ScalarPowCheck for Meta {
    fn scalar_pow_check(self_: Scalar, exponent: &Tensor) -> Result<()> {
        no_bool_pow(result_type(&[Arg::Scalar(self_), Arg::Tensor(exponent)]))
    }
}

impl IntegerDivisionScalarCheck for Meta {
    fn integer_division_scalar_check(self_: &Tensor, other: Scalar) -> Result<()> {
        let common = result_type(&[Arg::Tensor(self_), Arg::Scalar(other)]);
        if !common.is_floating_point() && common != DType::Bool && other.to_f64() == 0.0 {
            return Err(Error::runtime("ZeroDivisionError"));
        }
        Ok(())
    }
}

impl ScalarIntegerDivisionCheck for Meta {
    fn scalar_integer_division_check(self_: Scalar, other: &Tensor) -> Result<()> {
        no_integer_zero_divisor(result_type(&[Arg::Scalar(self_), Arg::Tensor(other)]), other)
    }
}

impl FracCheck for Meta {
    fn frac_check(self_: &Tensor) -> Result<()> {
        floating_only("frac_cpu", self_.dtype())
    }
}

impl RoundDecimalsCheck for Meta {
    fn round_decimals_check(self_: &Tensor, _decimals: i64) -> Result<()> {
        floating_only("round_cpu", self_.dtype())
    }
}

impl HeavisideCheck for Meta {
    fn heaviside_check(self_: &Tensor, values: &Tensor) -> Result<()> {
        if self_.dtype() != values.dtype() {
            return Err(Error::runtime("heaviside is not yet implemented for tensors with different dtypes."));
        }
        Ok(())
    }
}

/// The rounding kernels have no bool instantiation (PyTorch names its vectorized kernels).
fn no_bool(kernel: &str, dtype: DType) -> Result<()> {
    if dtype == DType::Bool {
        return Err(not_implemented(kernel, dtype));
    }
    Ok(())
}

impl FloorCheck for Meta {
    fn floor_check(self_: &Tensor) -> Result<()> {
        no_bool("floor_vml_cpu", self_.dtype())
    }
}

impl CeilCheck for Meta {
    fn ceil_check(self_: &Tensor) -> Result<()> {
        no_bool("ceil_vml_cpu", self_.dtype())
    }
}

impl RoundCheck for Meta {
    fn round_check(self_: &Tensor) -> Result<()> {
        no_bool("round_vml_cpu", self_.dtype())
    }
}

impl TruncCheck for Meta {
    fn trunc_check(self_: &Tensor) -> Result<()> {
        no_bool("trunc_vml_cpu", self_.dtype())
    }
}

impl FloorDivideCheck for Meta {
    fn floor_divide_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        let common = common2(self_, other);
        no_bool("div_floor_cpu", common)?;
        no_integer_zero_divisor(common, other)
    }
}

impl FloorDivideScalarCheck for Meta {
    fn floor_divide_scalar_check(self_: &Tensor, other: Scalar) -> Result<()> {
        no_bool("div_floor_cpu", result_type(&[Arg::Tensor(self_), Arg::Scalar(other)]))?;
        <Meta as IntegerDivisionScalarCheck>::integer_division_scalar_check(self_, other)
    }
}

impl DivTruncCheck for Meta {
    fn div_trunc_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        let common = common2(self_, other);
        no_bool("div_trunc_cpu", common)?;
        no_integer_zero_divisor(common, other)
    }
}

impl DivTruncScalarCheck for Meta {
    fn div_trunc_scalar_check(self_: &Tensor, other: Scalar) -> Result<()> {
        no_bool("div_trunc_cpu", result_type(&[Arg::Tensor(self_), Arg::Scalar(other)]))?;
        <Meta as IntegerDivisionScalarCheck>::integer_division_scalar_check(self_, other)
    }
}

/// The shifts exist for integer dtypes only (PyTorch names its kernels `lshift`/`rshift`).
fn integer_only(kernel: &str, dtype: DType) -> Result<()> {
    if dtype.is_floating_point() || dtype == DType::Bool {
        return Err(not_implemented(kernel, dtype));
    }
    Ok(())
}

impl LshiftCheck for Meta {
    fn lshift_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        integer_only("lshift_cpu", common2(self_, other))
    }
}

impl GcdCheck for Meta {
    fn gcd_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        integer_only("gcd_cpu", common2(self_, other))
    }
}

impl LcmCheck for Meta {
    fn lcm_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        integer_only("lcm_cpu", common2(self_, other))
    }
}

impl LshiftScalarCheck for Meta {
    fn lshift_scalar_check(self_: &Tensor, other: Scalar) -> Result<()> {
        integer_only("lshift_cpu", result_type(&[Arg::Tensor(self_), Arg::Scalar(other)]))
    }
}

impl ScalarLshiftCheck for Meta {
    fn scalar_lshift_check(self_: Scalar, other: &Tensor) -> Result<()> {
        integer_only("lshift_cpu", result_type(&[Arg::Scalar(self_), Arg::Tensor(other)]))
    }
}

impl RshiftCheck for Meta {
    fn rshift_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        integer_only("rshift_cpu", common2(self_, other))
    }
}

impl RshiftScalarCheck for Meta {
    fn rshift_scalar_check(self_: &Tensor, other: Scalar) -> Result<()> {
        integer_only("rshift_cpu", result_type(&[Arg::Tensor(self_), Arg::Scalar(other)]))
    }
}

impl ScalarRshiftCheck for Meta {
    fn scalar_rshift_check(self_: Scalar, other: &Tensor) -> Result<()> {
        integer_only("rshift_cpu", result_type(&[Arg::Scalar(self_), Arg::Tensor(other)]))
    }
}

/// Refuses a binary op whose operands promote to an integer or bool dtype: `kernel` has floating
/// kernels only (PyTorch's "not implemented for 'Long'"), rather than promoting them.
fn floating_kernels_only(kernel: &str, self_: &Tensor, other: &Tensor) -> Result<()> {
    let common = result_type(&[Arg::Tensor(self_), Arg::Tensor(other)]);
    if !common.is_floating_point() {
        return Err(not_implemented(kernel, common));
    }
    Ok(())
}

impl IncompleteGammaCheck for Meta {
    /// `igamma`/`igammac` have floating kernels only: integer and bool operands are refused,
    /// as PyTorch's "not implemented for 'Long'", rather than promoted.
    fn incomplete_gamma_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        floating_kernels_only("igamma_cpu", self_, other)
    }
}

impl NextafterCheck for Meta {
    /// `nextafter` steps within a floating dtype: integer and bool operands are refused, as
    /// PyTorch's "not implemented for 'Long'", rather than promoted.
    fn nextafter_check(self_: &Tensor, other: &Tensor) -> Result<()> {
        floating_kernels_only("nextafter_cpu", self_, other)
    }
}
