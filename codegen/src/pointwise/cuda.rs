//! The [`Target`] for CUDA C: a pointwise expression becomes one C++ expression over the
//! compute type `T`, calling the `ox_*` device functions of the CUDA backend's prelude
//! (`oxten_kernels::cuda::prelude`), which give each function the CPU kernel's semantics
//! (NaN-propagating `min`/`max`, round half to even, `sigmoid` without NaN …).

use super::ast::{BinaryOp, Conversion, Func, UnaryOp};
use super::emit::Target;
use super::ArgKind;

/// Spells expressions for the CUDA prelude. Arguments are renamed to the kernel's locals:
/// `locals` maps each argument name to its C name (`a1`, `c0` …).
#[derive(Debug, Clone)]
pub struct CudaTarget {
    /// Argument name → local name in the generated kernel.
    pub locals: Vec<(String, String)>,
}

/// The prelude function implementing `func`.
pub fn cuda_fn(func: Func) -> &'static str {
    match func {
        Func::Exp => "ox_exp",
        Func::Log => "ox_log",
        Func::Log1p => "ox_log1p",
        Func::Expm1 => "ox_expm1",
        Func::Sqrt => "ox_sqrt",
        Func::Rsqrt => "ox_rsqrt",
        Func::Abs => "ox_abs",
        Func::Tanh => "ox_tanh",
        Func::Sigmoid => "ox_sigmoid",
        Func::Sin => "ox_sin",
        Func::Cos => "ox_cos",
        Func::Tan => "ox_tan",
        Func::Asin => "ox_asin",
        Func::Acos => "ox_acos",
        Func::Atan => "ox_atan",
        Func::Sinh => "ox_sinh",
        Func::Cosh => "ox_cosh",
        Func::Asinh => "ox_asinh",
        Func::Acosh => "ox_acosh",
        Func::Atanh => "ox_atanh",
        Func::Log2 => "ox_log2",
        Func::Log10 => "ox_log10",
        Func::Exp2 => "ox_exp2",
        Func::Deg2rad => "ox_deg2rad",
        Func::Rad2deg => "ox_rad2deg",
        Func::Erf => "ox_erf",
        Func::Erfinv => "ox_erfinv",
        Func::Erfc => "ox_erfc",
        Func::Lgamma => "ox_lgamma",
        Func::Digamma => "ox_digamma",
        Func::Polygamma => "ox_polygamma",
        Func::Zeta => "ox_zeta",
        Func::I0 => "ox_i0",
        Func::I0e => "ox_i0e",
        Func::I1 => "ox_i1",
        Func::I1e => "ox_i1e",
        Func::Igamma => "ox_igamma",
        Func::Igammac => "ox_igammac",
        Func::BesselJ0 => "ox_bessel_j0",
        Func::BesselJ1 => "ox_bessel_j1",
        Func::BesselY0 => "ox_bessel_y0",
        Func::BesselY1 => "ox_bessel_y1",
        Func::ModifiedBesselK0 => "ox_modified_bessel_k0",
        Func::ModifiedBesselK1 => "ox_modified_bessel_k1",
        Func::ScaledModifiedBesselK0 => "ox_scaled_modified_bessel_k0",
        Func::ScaledModifiedBesselK1 => "ox_scaled_modified_bessel_k1",
        Func::SphericalBesselJ0 => "ox_spherical_bessel_j0",
        Func::AiryAi => "ox_airy_ai",
        Func::Erfcx => "ox_erfcx",
        Func::LogNdtr => "ox_log_ndtr",
        Func::Ndtri => "ox_ndtri",
        Func::ChebyshevT => "ox_chebyshev_t",
        Func::ChebyshevU => "ox_chebyshev_u",
        Func::ChebyshevV => "ox_chebyshev_v",
        Func::ChebyshevW => "ox_chebyshev_w",
        Func::ShiftedChebyshevT => "ox_shifted_chebyshev_t",
        Func::ShiftedChebyshevU => "ox_shifted_chebyshev_u",
        Func::ShiftedChebyshevV => "ox_shifted_chebyshev_v",
        Func::ShiftedChebyshevW => "ox_shifted_chebyshev_w",
        Func::HermiteH => "ox_hermite_h",
        Func::HermiteHe => "ox_hermite_he",
        Func::LaguerreL => "ox_laguerre_l",
        Func::LegendreP => "ox_legendre_p",
        Func::Floor => "ox_floor",
        Func::Ceil => "ox_ceil",
        Func::Round => "ox_round",
        Func::Trunc => "ox_trunc",
        Func::Reciprocal => "ox_reciprocal",
        Func::Sign => "ox_sign",
        Func::Relu => "ox_relu",
        Func::Gelu => "ox_gelu",
        Func::GeluTanh => "ox_gelu_tanh",
        Func::Silu => "ox_silu",
        Func::Softplus => "ox_softplus",
        Func::Pow => "ox_pow",
        Func::Min => "ox_min",
        Func::Max => "ox_max",
        Func::Clamp => "ox_clamp",
        Func::Atan2 => "ox_atan2",
        Func::Hypot => "ox_hypot",
        Func::Where => "ox_where",
        Func::Isnan => "ox_isnan",
        Func::Isinf => "ox_isinf",
        Func::Isfinite => "ox_isfinite",
        Func::Signbit => "ox_signbit",
        Func::DivTrunc => "ox_div_trunc",
        Func::DivFloor => "ox_div_floor",
        Func::Remainder => "ox_remainder",
        Func::Fmod => "ox_fmod",
        Func::Fmax => "ox_fmax",
        Func::Fmin => "ox_fmin",
        Func::Copysign => "ox_copysign",
        Func::Nextafter => "ox_nextafter",
        Func::Bitand => "ox_bitand",
        Func::Bitor => "ox_bitor",
        Func::Bitxor => "ox_bitxor",
        Func::Bitnot => "ox_bitnot",
        Func::Shl => "ox_shl",
        Func::Gcd => "ox_gcd",
        Func::Lcm => "ox_lcm",
        Func::Shr => "ox_shr",
    }
}

impl Target for CudaTarget {
    fn number(&self, value: f64, _is_float: bool) -> String {
        // `{:?}` keeps a `.` or an exponent, so the literal is a double converted to T once.
        if value.is_finite() {
            format!("T({value:?})")
        } else if value.is_nan() {
            "T(__int_as_float(0x7fc00000))".into()
        } else if value > 0.0 {
            "T(__int_as_float(0x7f800000))".into()
        } else {
            "T(__int_as_float(0xff800000))".into()
        }
    }

    fn boolean(&self, value: bool) -> String {
        value.to_string()
    }

    fn arg(&self, name: &str, _kind: ArgKind) -> String {
        self.locals.iter().find(|(n, _)| n == name).map(|(_, l)| l.clone()).unwrap_or_else(|| name.to_string())
    }

    fn unary(&self, op: UnaryOp, operand: String) -> String {
        match op {
            UnaryOp::Neg => format!("T(-{operand})"),
            UnaryOp::Not => format!("(!{operand})"),
        }
    }

    fn binary(&self, op: BinaryOp, lhs: String, rhs: String) -> String {
        if op.is_arithmetic() {
            // Back to T: integer arithmetic promotes to int in C, and wraps when narrowed.
            format!("T({lhs} {} {rhs})", op.symbol())
        } else {
            format!("({lhs} {} {rhs})", op.symbol())
        }
    }

    fn call(&self, func: Func, args: Vec<String>) -> String {
        format!("{}({})", cuda_fn(func), args.join(", "))
    }

    fn convert(&self, conv: Conversion, operand: String) -> String {
        match conv {
            // NaN != 0, so NaN counts as true, as on the CPU.
            Conversion::ToBool => format!("({operand} != T(0))"),
            Conversion::ToNumber => format!("T({operand} ? 1 : 0)"),
        }
    }
}
