//! The target-neutral, type-checked syntax tree of a pointwise expression.

use super::ArgKind;
use std::fmt;

/// The value type of a (sub)expression.
///
/// Every numeric value has the kernel's compute type `T`; comparisons and
/// logical operators produce booleans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// A value of the compute type `T`.
    Number,
    /// A boolean.
    Bool,
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// Arithmetic negation `-x` (number → number).
    Neg,
    /// Logical negation `!c` (bool → bool).
    Not,
}

impl UnaryOp {
    /// The operator as written in the expression language.
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "!",
        }
    }
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (true division; forces a floating-point compute type).
    Div,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a && b` (both operands are always evaluated).
    And,
    /// `a || b` (both operands are always evaluated).
    Or,
}

impl BinaryOp {
    /// The operator as written in the expression language.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    /// `true` for `+ - * /`.
    pub fn is_arithmetic(self) -> bool {
        matches!(self, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div)
    }

    /// `true` for `< <= > >= == !=`.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne)
    }

    /// `true` for `&&` and `||`.
    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }
}

/// An implicit conversion inserted by the type checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Conversion {
    /// Number → bool: `x != 0` (NaN is `true`).
    ToBool,
    /// Bool → number: `true` → `1`, `false` → `0`.
    ToNumber,
}

macro_rules! funcs {
    ($( $variant:ident => $name:literal, $arity:literal, $float:literal, $doc:literal; )*) => {
        /// A built-in function of the expression language.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Func {
            $( #[doc = $doc] $variant, )*
        }

        impl Func {
            /// Every function, in the order of the documentation table.
            pub const ALL: &'static [Func] = &[$(Func::$variant),*];

            /// The name used in expressions.
            pub fn name(self) -> &'static str {
                match self { $(Func::$variant => $name,)* }
            }

            /// The number of arguments.
            pub fn arity(self) -> usize {
                match self { $(Func::$variant => $arity,)* }
            }

            /// Whether the function only exists for floating-point compute
            /// types (transcendental and rounding functions).
            pub fn requires_float(self) -> bool {
                match self { $(Func::$variant => $float,)* }
            }

            /// Whether the function only exists for integer (and bool) compute types: the bit
            /// operations. A floating-point compute type is then an error, as in PyTorch.
            pub fn requires_integer(self) -> bool {
                matches!(self, Func::Bitand | Func::Bitor | Func::Bitxor | Func::Bitnot | Func::Shl | Func::Shr | Func::Gcd | Func::Lcm)
            }

            /// Whether the function returns a boolean (the predicates `isnan`, `isinf`,
            /// `isfinite`, `signbit`); every other function but `where` returns a number.
            pub fn returns_bool(self) -> bool {
                matches!(self, Func::Isnan | Func::Isinf | Func::Isfinite | Func::Signbit)
            }

            /// Looks a function up by its expression-language name.
            pub fn from_name(name: &str) -> Option<Func> {
                match name { $($name => Some(Func::$variant),)* _ => None }
            }
        }
    };
}

funcs! {
    Exp => "exp", 1, true, "`exp(x)`: e to the power x.";
    Log => "log", 1, true, "`log(x)`: natural logarithm.";
    Log1p => "log1p", 1, true, "`log1p(x)`: `log(1 + x)`, accurate near 0.";
    Expm1 => "expm1", 1, true, "`expm1(x)`: `exp(x) - 1`, accurate near 0.";
    Sqrt => "sqrt", 1, true, "`sqrt(x)`: square root.";
    Rsqrt => "rsqrt", 1, true, "`rsqrt(x)`: `1 / sqrt(x)`.";
    Abs => "abs", 1, false, "`abs(x)`: absolute value (wrapping for integers).";
    Tanh => "tanh", 1, true, "`tanh(x)`: hyperbolic tangent.";
    Sigmoid => "sigmoid", 1, true, "`sigmoid(x)`: `1 / (1 + exp(-x))`, never NaN for non-NaN input.";
    Sin => "sin", 1, true, "`sin(x)`: sine.";
    Cos => "cos", 1, true, "`cos(x)`: cosine.";
    Tan => "tan", 1, true, "`tan(x)`: tangent.";
    Asin => "asin", 1, true, "`asin(x)`: arcsine (NaN outside [-1, 1]).";
    Acos => "acos", 1, true, "`acos(x)`: arccosine (NaN outside [-1, 1]).";
    Atan => "atan", 1, true, "`atan(x)`: arctangent.";
    Sinh => "sinh", 1, true, "`sinh(x)`: hyperbolic sine.";
    Cosh => "cosh", 1, true, "`cosh(x)`: hyperbolic cosine.";
    Asinh => "asinh", 1, true, "`asinh(x)`: inverse hyperbolic sine.";
    Acosh => "acosh", 1, true, "`acosh(x)`: inverse hyperbolic cosine (NaN below 1).";
    Atanh => "atanh", 1, true, "`atanh(x)`: inverse hyperbolic tangent (NaN outside [-1, 1]).";
    Log2 => "log2", 1, true, "`log2(x)`: base-2 logarithm.";
    Log10 => "log10", 1, true, "`log10(x)`: base-10 logarithm.";
    Exp2 => "exp2", 1, true, "`exp2(x)`: 2 to the power x.";
    Deg2rad => "deg2rad", 1, true, "`deg2rad(x)`: degrees to radians, `x * pi / 180`.";
    Rad2deg => "rad2deg", 1, true, "`rad2deg(x)`: radians to degrees, `x * 180 / pi`.";
    Erf => "erf", 1, true, "`erf(x)`: the error function.";
    Erfinv => "erfinv", 1, true, "`erfinv(x)`: the inverse error function (NaN outside [-1, 1]).";
    Erfc => "erfc", 1, true, "`erfc(x)`: the complementary error function `1 - erf(x)`, accurate where it is tiny.";
    Lgamma => "lgamma", 1, true, "`lgamma(x)`: `ln |Γ(x)|` (+inf at 0 and the negative integers).";
    Digamma => "digamma", 1, true, "`digamma(x)`: `Γ'(x) / Γ(x)` (∓inf at ±0, NaN at the negative integers).";
    Polygamma => "polygamma", 2, true, "`polygamma(n, x)`: the `n`-th derivative of `digamma` (NaN for a negative `n`).";
    Zeta => "zeta", 2, true, "`zeta(x, q)`: the Hurwitz zeta function `Σ_k (k + q)^-x`.";
    I0 => "i0", 1, true, "`i0(x)`: the modified Bessel function of the first kind of order 0.";
    I0e => "i0e", 1, true, "`i0e(x)`: `exp(-|x|) * i0(x)`, finite where `i0` overflows.";
    I1 => "i1", 1, true, "`i1(x)`: the modified Bessel function of the first kind of order 1.";
    I1e => "i1e", 1, true, "`i1e(x)`: `exp(-|x|) * i1(x)`.";
    Igamma => "igamma", 2, true, "`igamma(a, x)`: the regularized lower incomplete gamma function `P(a, x)`.";
    Igammac => "igammac", 2, true, "`igammac(a, x)`: the regularized upper incomplete gamma function `Q(a, x) = 1 - P(a, x)`.";
    BesselJ0 => "bessel_j0", 1, true, "`bessel_j0(x)`: the Bessel function of the first kind of order 0 (NaN at ±inf).";
    BesselJ1 => "bessel_j1", 1, true, "`bessel_j1(x)`: the Bessel function of the first kind of order 1 (NaN at ±inf).";
    BesselY0 => "bessel_y0", 1, true, "`bessel_y0(x)`: the Bessel function of the second kind of order 0 (-inf at 0, NaN below).";
    BesselY1 => "bessel_y1", 1, true, "`bessel_y1(x)`: the Bessel function of the second kind of order 1 (-inf at 0, NaN below).";
    ModifiedBesselK0 => "modified_bessel_k0", 1, true, "`modified_bessel_k0(x)`: the modified Bessel function of the second kind of order 0 (inf at 0, NaN below).";
    ModifiedBesselK1 => "modified_bessel_k1", 1, true, "`modified_bessel_k1(x)`: the modified Bessel function of the second kind of order 1 (inf at 0, NaN below).";
    ScaledModifiedBesselK0 => "scaled_modified_bessel_k0", 1, true, "`scaled_modified_bessel_k0(x)`: `exp(x) * modified_bessel_k0(x)`, finite where `K₀` underflows.";
    ScaledModifiedBesselK1 => "scaled_modified_bessel_k1", 1, true, "`scaled_modified_bessel_k1(x)`: `exp(x) * modified_bessel_k1(x)`.";
    AiryAi => "airy_ai", 1, true, "`airy_ai(x)`: the Airy function `Ai(x)` (NaN at ±inf, as PyTorch).";
    SphericalBesselJ0 => "spherical_bessel_j0", 1, true, "`spherical_bessel_j0(x)`: `sin(x) / x` (1 at 0, 0 at ±inf).";
    Erfcx => "erfcx", 1, true, "`erfcx(x)`: `exp(x^2) * erfc(x)`, finite where `erfc` underflows.";
    LogNdtr => "log_ndtr", 1, true, "`log_ndtr(x)`: the log of the standard normal CDF, accurate in both tails.";
    Ndtri => "ndtri", 1, true, "`ndtri(p)`: the standard normal quantile (∓inf at 0 and 1, NaN outside [0, 1]).";
    ChebyshevT => "chebyshev_t", 2, true, "`chebyshev_t(x, n)`: the Chebyshev polynomial of the first kind, degree `trunc(n)` (0 for a negative degree).";
    ChebyshevU => "chebyshev_u", 2, true, "`chebyshev_u(x, n)`: the Chebyshev polynomial of the second kind.";
    ChebyshevV => "chebyshev_v", 2, true, "`chebyshev_v(x, n)`: the Chebyshev polynomial of the third kind.";
    ChebyshevW => "chebyshev_w", 2, true, "`chebyshev_w(x, n)`: the Chebyshev polynomial of the fourth kind.";
    ShiftedChebyshevT => "shifted_chebyshev_t", 2, true, "`shifted_chebyshev_t(x, n)`: `chebyshev_t(2x - 1, n)`.";
    ShiftedChebyshevU => "shifted_chebyshev_u", 2, true, "`shifted_chebyshev_u(x, n)`: `chebyshev_u(2x - 1, n)`.";
    ShiftedChebyshevV => "shifted_chebyshev_v", 2, true, "`shifted_chebyshev_v(x, n)`: `chebyshev_v(2x - 1, n)`.";
    ShiftedChebyshevW => "shifted_chebyshev_w", 2, true, "`shifted_chebyshev_w(x, n)`: `chebyshev_w(2x - 1, n)`.";
    HermiteH => "hermite_h", 2, true, "`hermite_h(x, n)`: the physicists' Hermite polynomial (NaN above degree 128 in f32, 512 in f64).";
    HermiteHe => "hermite_he", 2, true, "`hermite_he(x, n)`: the probabilists' Hermite polynomial (NaN above degree 128 in f32, 512 in f64).";
    LaguerreL => "laguerre_l", 2, true, "`laguerre_l(x, n)`: the Laguerre polynomial of degree `trunc(n)`.";
    LegendreP => "legendre_p", 2, true, "`legendre_p(x, n)`: the Legendre polynomial of degree `trunc(n)`.";
    Floor => "floor", 1, false, "`floor(x)`: round toward negative infinity (integers unchanged).";
    Ceil => "ceil", 1, false, "`ceil(x)`: round toward positive infinity (integers unchanged).";
    Round => "round", 1, false, "`round(x)`: round half to even, `torch.round` (integers unchanged).";
    Trunc => "trunc", 1, false, "`trunc(x)`: round toward zero (integers unchanged).";
    Reciprocal => "reciprocal", 1, true, "`reciprocal(x)`: `1 / x`.";
    Sign => "sign", 1, false, "`sign(x)`: `(0 < x) - (x < 0)` (0 for NaN).";
    Relu => "relu", 1, false, "`relu(x)`: `max(x, 0)` (NaN stays NaN).";
    Gelu => "gelu", 1, true, "`gelu(x)`: exact GELU `x / 2 * (1 + erf(x / sqrt(2)))`.";
    GeluTanh => "gelu_tanh", 1, true, "`gelu_tanh(x)`: tanh-approximated GELU.";
    Silu => "silu", 1, true, "`silu(x)`: `x * sigmoid(x)`.";
    Softplus => "softplus", 1, true, "`softplus(x)`: `log1p(exp(x))`, or `x` when `x > 20`.";
    Pow => "pow", 2, false, "`pow(a, b)`: a to the power b (integers: repeated squaring; a negative power gives 1, ±1 or 0).";
    Min => "min", 2, false, "`min(a, b)`: `torch.minimum` (NaN propagates).";
    Max => "max", 2, false, "`max(a, b)`: `torch.maximum` (NaN propagates).";
    Clamp => "clamp", 3, false, "`clamp(x, lo, hi)`: `min(max(x, lo), hi)` (NaN propagates).";
    Atan2 => "atan2", 2, true, "`atan2(a, b)`: four-quadrant arctangent of `a / b`.";
    Hypot => "hypot", 2, true, "`hypot(a, b)`: `sqrt(a^2 + b^2)` without needless overflow.";
    Where => "where", 3, false, "`where(c, a, b)`: `a` if `c` is true, else `b`.";
    Isnan => "isnan", 1, false, "`isnan(x)`: whether `x` is NaN (a boolean; never for integers).";
    Isinf => "isinf", 1, false, "`isinf(x)`: whether `x` is ±infinity (a boolean).";
    Isfinite => "isfinite", 1, false, "`isfinite(x)`: whether `x` is neither infinite nor NaN (a boolean).";
    Signbit => "signbit", 1, false, "`signbit(x)`: whether the sign bit is set (a boolean; true for -0.0).";
    DivTrunc => "div_trunc", 2, false, "`div_trunc(a, b)`: `a / b` rounded toward zero (integer division for integers).";
    DivFloor => "div_floor", 2, false, "`div_floor(a, b)`: `a / b` rounded toward negative infinity (Python's `//`).";
    Remainder => "remainder", 2, false, "`remainder(a, b)`: `a - b * div_floor(a, b)`, the sign of `b` (Python's `%`).";
    Fmod => "fmod", 2, false, "`fmod(a, b)`: `a - b * div_trunc(a, b)`, the sign of `a` (C's `fmod`/`%`).";
    Fmax => "fmax", 2, false, "`fmax(a, b)`: the larger value, ignoring a NaN operand (NaN only if both are).";
    Fmin => "fmin", 2, false, "`fmin(a, b)`: the smaller value, ignoring a NaN operand (NaN only if both are).";
    Copysign => "copysign", 2, true, "`copysign(a, b)`: `|a|` with the sign of `b`.";
    Nextafter => "nextafter", 2, true, "`nextafter(a, b)`: the value next to `a` toward `b` in the element type's own precision (C's `nextafter`).";
    Bitand => "bitand", 2, false, "`bitand(a, b)`: bitwise and (integers and booleans only).";
    Bitor => "bitor", 2, false, "`bitor(a, b)`: bitwise or (integers and booleans only).";
    Bitxor => "bitxor", 2, false, "`bitxor(a, b)`: bitwise exclusive or (integers and booleans only).";
    Bitnot => "bitnot", 1, false, "`bitnot(x)`: bitwise not; logical not for booleans (integers and booleans only).";
    Shl => "shl", 2, false, "`shl(a, b)`: `a` shifted left by `b` bits, 0 when `b` is negative or not below the bit width (integers only).";
    Gcd => "gcd", 2, false, "`gcd(a, b)`: the greatest common divisor of `|a|` and `|b|`, 0 for `gcd(0, 0)` (integers only).";
    Lcm => "lcm", 2, false, "`lcm(a, b)`: `|a / gcd(a, b) * b|`, 0 when `gcd` is 0 (integers only, wrapping).";
    Shr => "shr", 2, false, "`shr(a, b)`: `a` shifted right by `b` bits (sign-filling), as far as the bit width when `b` is negative or not below it (integers only).";
}

/// A node of a type-checked pointwise expression.
///
/// The tree is independent of any code-generation target: implicit
/// conversions between booleans and numbers are explicit
/// [`Expr::Convert`] nodes, so an emitter never needs to reason about types.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A numeric literal (negated literals are folded: `-2` is one node).
    Number {
        /// The value.
        value: f64,
        /// Whether it was written in floating-point syntax (`2.0`, `1e-3`).
        is_float: bool,
    },
    /// `true` or `false`.
    Bool(bool),
    /// A reference to an operator argument.
    Arg {
        /// The argument's schema name (e.g. `self`).
        name: String,
        /// Whether it is a per-element tensor value or a per-call scalar.
        kind: ArgKind,
    },
    /// A unary operation.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// A binary operation.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left operand.
        lhs: Box<Expr>,
        /// The right operand.
        rhs: Box<Expr>,
    },
    /// A call of a built-in function (including `where`).
    Call {
        /// The function.
        func: Func,
        /// The arguments (exactly `func.arity()` of them).
        args: Vec<Expr>,
    },
    /// An implicit conversion between bool and number.
    Convert {
        /// The conversion.
        conv: Conversion,
        /// The converted value.
        operand: Box<Expr>,
    },
}

impl Expr {
    /// The type of the value this node produces.
    pub fn ty(&self) -> ValueType {
        match self {
            Expr::Number { .. } | Expr::Arg { .. } => ValueType::Number,
            Expr::Bool(_) => ValueType::Bool,
            Expr::Unary { op, .. } => match op {
                UnaryOp::Neg => ValueType::Number,
                UnaryOp::Not => ValueType::Bool,
            },
            Expr::Binary { op, .. } => {
                if op.is_arithmetic() {
                    ValueType::Number
                } else {
                    ValueType::Bool
                }
            }
            Expr::Call { func, args } => match func {
                Func::Where => args[1].ty(),
                f if f.returns_bool() => ValueType::Bool,
                _ => ValueType::Number,
            },
            Expr::Convert { conv, .. } => match conv {
                Conversion::ToBool => ValueType::Bool,
                Conversion::ToNumber => ValueType::Number,
            },
        }
    }

    /// Calls `f` on this node and then on every descendant (pre-order).
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Number { .. } | Expr::Bool(_) | Expr::Arg { .. } => {}
            Expr::Unary { operand, .. } | Expr::Convert { operand, .. } => operand.visit(f),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.visit(f);
                rhs.visit(f);
            }
            Expr::Call { args, .. } => {
                for a in args {
                    a.visit(f);
                }
            }
        }
    }

    /// Wraps the node in a conversion to bool unless it already is one.
    pub(crate) fn into_bool(self) -> Expr {
        match self.ty() {
            ValueType::Bool => self,
            ValueType::Number => Expr::Convert { conv: Conversion::ToBool, operand: Box::new(self) },
        }
    }

    /// Wraps the node in a conversion to number unless it already is one.
    pub(crate) fn into_number(self) -> Expr {
        match self.ty() {
            ValueType::Number => self,
            ValueType::Bool => Expr::Convert { conv: Conversion::ToNumber, operand: Box::new(self) },
        }
    }
}

/// Formats a number the way the expression language writes it.
pub(crate) fn format_number(value: f64, is_float: bool) -> String {
    if is_float {
        // `{:?}` always keeps a `.` or an exponent and round-trips exactly.
        format!("{value:?}")
    } else {
        format!("{value}")
    }
}

/// Canonical, fully parenthesized source form; parsing it again yields the
/// same tree (conversions are implicit in the source, so they are omitted).
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Number { value, is_float } => f.write_str(&format_number(*value, *is_float)),
            Expr::Bool(b) => write!(f, "{b}"),
            Expr::Arg { name, .. } => f.write_str(name),
            Expr::Unary { op, operand } => write!(f, "({}{})", op.symbol(), operand),
            Expr::Binary { op, lhs, rhs } => write!(f, "({} {} {})", lhs, op.symbol(), rhs),
            Expr::Call { func, args } => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
            Expr::Convert { operand, .. } => write!(f, "{operand}"),
        }
    }
}
