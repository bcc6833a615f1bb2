//! The `pointwise:` expression language.
//!
//! An operator entry in `native_functions.yaml` may describe its element
//! kernel with a one-line expression instead of a hand-written kernel:
//!
//! ```yaml
//! - func: silu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
//!   structured: True
//!   structured_inherits: TensorIterator
//!   pointwise: self * sigmoid(self)
//! - func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
//!   pointwise: self + alpha * other
//! ```
//!
//! The expression is evaluated once per output element. Tensor arguments
//! stand for the current element of that tensor; scalar arguments (`Scalar`,
//! `float`, `int`, `bool`) are per-call constants. Every numeric value has
//! the kernel's *compute type* `T` (scalars are converted to `T` once, before
//! the loop); comparisons and logical operators produce booleans.
//!
//! # Syntax
//!
//! ```text
//! expr     = or
//! or       = and { "||" and }
//! and      = cmp { "&&" cmp }
//! cmp      = sum [ ("<" | "<=" | ">" | ">=" | "==" | "!=") sum ]
//! sum      = product { ("+" | "-") product }
//! product  = unary { ("*" | "/") unary }
//! unary    = ("-" | "!") unary | primary
//! primary  = number | "true" | "false" | name | call | "(" expr ")"
//! call     = name "(" [ expr { "," expr } ] ")"
//! number   = digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ]
//! name     = (letter | "_") { letter | digit | "_" }
//! ```
//!
//! Precedence, from loosest to tightest binding (as in C and Rust):
//!
//! | level | operators                       | associativity               |
//! |-------|---------------------------------|-----------------------------|
//! | 1     | `\|\|`                          | left                        |
//! | 2     | `&&`                            | left                        |
//! | 3     | `<` `<=` `>` `>=` `==` `!=`     | none (`a < b < c` is an error) |
//! | 4     | `+` `-`                         | left                        |
//! | 5     | `*` `/`                         | left                        |
//! | 6     | unary `-` `!`                   | prefix                      |
//!
//! So `a + b * c` is `a + (b * c)`, `-x * y` is `(-x) * y` and
//! `x > 0 && y > 0` is `(x > 0) && (y > 0)`. Whitespace (including newlines)
//! is ignored.
//!
//! A *name* not followed by `(` is an argument of the operator (any
//! non-`out` argument, tensor or scalar; `self` is allowed). A name followed
//! by `(` is one of the built-in functions below, so an argument may share a
//! function's name (`clamp(self, min, max)` works).
//!
//! # Functions
//!
//! | function          | meaning                                               | float only |
//! |-------------------|-------------------------------------------------------|:----------:|
//! | `exp(x)`          | e^x                                                   | yes |
//! | `log(x)`          | natural logarithm                                     | yes |
//! | `log1p(x)`        | log(1 + x)                                            | yes |
//! | `expm1(x)`        | e^x − 1                                               | yes |
//! | `sqrt(x)`         | square root                                           | yes |
//! | `rsqrt(x)`        | 1 / sqrt(x)                                           | yes |
//! | `abs(x)`          | absolute value (wraps for the most negative integer)  | no  |
//! | `tanh(x)`         | hyperbolic tangent                                    | yes |
//! | `sigmoid(x)`      | 1 / (1 + e^−x); 0 (not NaN) for very negative x       | yes |
//! | `sin(x)` `cos(x)` `tan(x)` | trigonometric functions                      | yes |
//! | `asin(x)` `acos(x)` `atan(x)` | inverse trigonometric; NaN outside the domain | yes |
//! | `sinh(x)` `cosh(x)` | hyperbolic functions                                | yes |
//! | `asinh(x)` `acosh(x)` `atanh(x)` | inverse hyperbolic; NaN outside the domain | yes |
//! | `log2(x)` `log10(x)` `exp2(x)` | base-2 and base-10 logarithms, 2^x        | yes |
//! | `deg2rad(x)` `rad2deg(x)` | x · π/180, x · 180/π                            | yes |
//! | `erf(x)`          | error function                                        | yes |
//! | `erfinv(x)`       | inverse error function; NaN outside [−1, 1]           | yes |
//! | `erfc(x)`         | 1 − erf(x), accurate where it is tiny                 | yes |
//! | `lgamma(x)` `digamma(x)` | ln \|Γ(x)\| and Γ′(x)/Γ(x) (PyTorch's values at poles) | yes |
//! | `polygamma(n, x)` | the n-th derivative of digamma                        | yes |
//! | `zeta(x, q)`      | the Hurwitz zeta function Σₖ (k + q)^−x               | yes |
//! | `i0(x)` `i1(x)`   | modified Bessel functions of the first kind, orders 0 and 1 | yes |
//! | `i0e(x)` `i1e(x)` | e^−\|x\| · i0(x), e^−\|x\| · i1(x)                    | yes |
//! | `igamma(a, x)` `igammac(a, x)` | regularized incomplete gamma functions P(a, x) and Q(a, x) | yes |
//! | `bessel_j0(x)` `bessel_j1(x)` `bessel_y0(x)` `bessel_y1(x)` | Bessel functions of the first and second kinds, orders 0 and 1 (NaN at ±inf) | yes |
//! | `modified_bessel_k0(x)` `modified_bessel_k1(x)` `scaled_modified_bessel_k0(x)` `scaled_modified_bessel_k1(x)` | modified Bessel functions of the second kind, orders 0 and 1, and e^x times them | yes |
//! | `airy_ai(x)`      | the Airy function Ai(x); NaN at ±inf                  | yes |
//! | `spherical_bessel_j0(x)` | sin(x) / x                                     | yes |
//! | `erfcx(x)` `log_ndtr(x)` `ndtri(x)` | e^x² · erfc(x), log Φ(x), Φ⁻¹(p)       | yes |
//! | `chebyshev_t(x, n)` `chebyshev_u(x, n)` `chebyshev_v(x, n)` `chebyshev_w(x, n)` | Chebyshev polynomials of the four kinds, degree trunc(n), in the element's own precision (as PyTorch) | yes |
//! | `shifted_chebyshev_t(x, n)` `shifted_chebyshev_u(x, n)` `shifted_chebyshev_v(x, n)` `shifted_chebyshev_w(x, n)` | the same at 2x − 1 | yes |
//! | `hermite_h(x, n)` `hermite_he(x, n)` `laguerre_l(x, n)` `legendre_p(x, n)` | Hermite (physicists', probabilists'), Laguerre and Legendre polynomials | yes |
//! | `floor(x)` `ceil(x)` `trunc(x)` | rounding; integers are returned unchanged | no |
//! | `round(x)`        | round half to even (`torch.round`); integers unchanged | no |
//! | `reciprocal(x)`   | 1 / x                                                 | yes |
//! | `sign(x)`         | (0 < x) − (x < 0); 0 for NaN                          | no  |
//! | `relu(x)`         | max(x, 0)                                             | no  |
//! | `gelu(x)`         | exact GELU, x/2 · (1 + erf(x/√2))                     | yes |
//! | `gelu_tanh(x)`    | x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))          | yes |
//! | `silu(x)`         | x · sigmoid(x)                                        | yes |
//! | `softplus(x)`     | log(1 + e^x), or x when x > 20 (beta 1, threshold 20) | yes |
//! | `pow(a, b)`       | a^b; integers by repeated squaring (wrapping), a negative power giving 1 for 1, ±1 for −1, else 0 | no |
//! | `atan2(a, b)`     | four-quadrant arctangent of a/b                       | yes |
//! | `hypot(a, b)`     | √(a² + b²) without needless overflow                  | yes |
//! | `min(a, b)`       | `torch.minimum`: smaller value, NaN if either is NaN  | no  |
//! | `max(a, b)`       | `torch.maximum`: larger value, NaN if either is NaN   | no  |
//! | `clamp(x, lo, hi)`| min(max(x, lo), hi), NaN-propagating                  | no  |
//! | `where(c, a, b)`  | a if c else b                                         | no  |
//! | `isnan(x)` `isinf(x)` `isfinite(x)` | predicates (booleans); integers are finite | no |
//! | `signbit(x)`      | whether the sign bit is set (boolean; true for −0.0)  | no  |
//! | `div_trunc(a, b)` | a/b rounded toward zero; integer division for integers | no |
//! | `div_floor(a, b)` | a/b rounded toward −∞ (Python's `//`)                 | no  |
//! | `remainder(a, b)` | a − b·div_floor(a, b): the sign of b (Python's `%`)   | no  |
//! | `fmod(a, b)`      | a − b·div_trunc(a, b): the sign of a (C's `fmod`)     | no  |
//! | `fmax(a, b)` `fmin(a, b)` | larger/smaller value ignoring one NaN operand | no  |
//! | `copysign(a, b)`  | \|a\| with the sign of b                              | yes |
//! | `nextafter(a, b)` | the value next to a toward b in the element type's own precision (f16, bf16, f32 or f64; C's `nextafter`) | yes |
//! | `bitand(a, b)` `bitor(a, b)` `bitxor(a, b)` | bitwise and, or, xor          | integers |
//! | `bitnot(x)`       | bitwise not (logical not for booleans)                | integers |
//! | `shl(a, b)` `shr(a, b)` | shifts, PyTorch's rules for counts outside [0, bits) | integers |
//! | `gcd(a, b)` `lcm(a, b)` | greatest common divisor, least common multiple of the absolute values | integers |
//!
//! # Types
//!
//! * Literals: integers (`0`, `2`), floats (`0.5`, `1e-3`), `pi` (π, unless
//!   an argument is called `pi`) and `true`, `false`. Numeric literals have
//!   the compute type `T`.
//! * `+ - * /` and unary `-` take and give numbers; comparisons take two
//!   numbers (or two booleans) and give a boolean; `&& || !` take and give
//!   booleans. `&&` and `||` evaluate both sides (there is nothing to
//!   short-circuit in a pure expression, and this keeps kernels branch-free).
//! * `where(c, a, b)` gives a boolean if `a` and `b` are both booleans, a
//!   number otherwise.
//! * Implicit conversions: a boolean used where a number is expected becomes
//!   `1`/`0` (`(x > 0) * x`); a number used where a boolean is expected means
//!   `x != 0` (NaN counts as true).
//!
//! # Integer and floating-point compute types
//!
//! [`PointwiseExpr::requires_float`] is true when the expression uses `/`,
//! any function marked "float only" above, or a literal with a fractional
//! part (`0.5`, `1e-3`). The caller must then compute in a floating-point
//! type, promoting integer and bool inputs to the default float dtype (`/`
//! is true division; integer division is spelled `div_trunc`/`div_floor`).
//! Otherwise the expression also works for the integer compute types, where
//! `+ - *` and negation wrap on overflow like PyTorch, the rounding functions
//! return their argument, and `div_trunc`, `div_floor`, `remainder` and
//! `fmod` divide integers (the generated kernels never divide by zero: an
//! integer zero divisor gives 0, and the op's check must reject it first, as
//! PyTorch raises `ZeroDivisionError`).
//!
//! [`PointwiseExpr::requires_integer`] is true when the expression uses a bit
//! operation (marked "integers" above): it is then computed in the integer
//! compute types and bool only, and a floating-point common dtype is PyTorch's
//! "not implemented" error. Bool inputs compute as 0/1 in an integer type, so
//! `bitnot` of a bool is spelled as logical not there.
//!
//! # Code generation
//!
//! The parsed tree ([`Expr`]) is target-neutral. [`emit()`] walks it and asks a
//! [`Target`] to spell each construct; [`RustTarget`] (used by
//! [`PointwiseExpr::emit_rust`]) turns every operation into a call into
//! `oxten_kernels::math`, for example `self + alpha * other` becomes
//! `m::add(self_, m::mul(alpha, other))`.

mod ast;
mod cuda;
mod emit;
mod eval;
mod lexer;
mod parser;

pub use ast::{BinaryOp, Conversion, Expr, Func, UnaryOp, ValueType};
pub use cuda::{cuda_fn, CudaTarget};
pub use emit::{emit, rust_local, rust_math_fn, RustTarget, Target};

use std::fmt;

/// The kind of an operator argument referenced by a pointwise expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A tensor: the expression sees its current element.
    Tensor,
    /// Any non-tensor numeric or bool argument (`Scalar`, `float`, `int`,
    /// `bool`, …): a per-call constant converted to the compute type once.
    Scalar,
}

/// A parse or type error in a pointwise expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointwiseError {
    /// What went wrong.
    pub message: String,
    /// 1-based column (in characters) of the offending token; one past the
    /// end for errors at the end of the input.
    pub column: usize,
}

impl fmt::Display for PointwiseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for PointwiseError {}

/// A parsed and type-checked `pointwise:` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct PointwiseExpr {
    root: Expr,
    args: Vec<(String, ArgKind)>,
}

impl PointwiseExpr {
    /// Parses `src`.
    ///
    /// `args`: the op's non-out arguments in schema order with their kind.
    /// Names in the expression must be among them; tensor arguments that the
    /// expression never uses are fine.
    pub fn parse(src: &str, args: &[(&str, ArgKind)]) -> Result<Self, PointwiseError> {
        let root = parser::parse(src, args)?;
        Ok(PointwiseExpr { root, args: args.iter().map(|&(n, k)| (n.to_string(), k)).collect() })
    }

    /// The type-checked syntax tree.
    pub fn root(&self) -> &Expr {
        &self.root
    }

    /// Whether the expression must be computed in a floating-point type:
    /// it uses `/`, a transcendental or rounding function (`exp`, `log`,
    /// `sqrt`, `sigmoid`, `tanh`, `sin`, `pow`, `gelu`, `round`, …) or a
    /// literal with a fractional part. Integer and bool inputs are then
    /// promoted to the default float dtype by the caller.
    pub fn requires_float(&self) -> bool {
        let mut float = false;
        self.root.visit(&mut |e| {
            float |= match e {
                Expr::Binary { op, .. } => *op == BinaryOp::Div,
                Expr::Call { func, .. } => func.requires_float(),
                Expr::Number { value, .. } => value.fract() != 0.0,
                _ => false,
            };
        });
        float
    }

    /// Whether the expression has a meaning on bool tensors, the way PyTorch defines its
    /// arithmetic there: bools compute as 0/1 and results are non-zero tests, so `+` is "or",
    /// `*` is "and", `max`/`min`, comparisons, logic and `where` work; negation, subtraction,
    /// `abs`, `relu` and every floating function do not (PyTorch rejects them on bool).
    pub fn supports_bool(&self) -> bool {
        if self.requires_float() {
            return false;
        }
        let mut ok = true;
        self.root.visit(&mut |e| {
            let allowed = match e {
                Expr::Unary { op, .. } => *op == UnaryOp::Not,
                Expr::Binary { op, .. } => !matches!(op, BinaryOp::Sub | BinaryOp::Div),
                Expr::Call { func, .. } => matches!(
                    func,
                    Func::Max
                        | Func::Min
                        | Func::Bitand
                        | Func::Bitor
                        | Func::Bitxor
                        | Func::Bitnot
                        | Func::Fmax
                        | Func::Fmin
                        | Func::Where
                        | Func::Sign
                        | Func::Isnan
                        | Func::Isinf
                        | Func::Isfinite
                        | Func::Signbit
                ),
                _ => true,
            };
            ok &= allowed;
        });
        ok
    }

    /// Whether the expression uses a bit operation (`bitand`, `shl` …), which only exists for
    /// integer and bool compute types.
    pub fn requires_integer(&self) -> bool {
        let mut int = false;
        self.root.visit(&mut |e| {
            if let Expr::Call { func, .. } = e {
                int |= func.requires_integer();
            }
        });
        int
    }

    /// Whether the result is a boolean (the top level is a comparison or a
    /// logical operation, or a `where` between booleans).
    pub fn returns_bool(&self) -> bool {
        self.root.ty() == ValueType::Bool
    }

    /// The argument names the expression uses, each once, in schema order.
    pub fn used_args(&self) -> Vec<String> {
        let mut used = std::collections::HashSet::new();
        self.root.visit(&mut |e| {
            if let Expr::Arg { name, .. } = e {
                used.insert(name.clone());
            }
        });
        let mut out: Vec<String> = Vec::new();
        for (name, _) in &self.args {
            if used.contains(name) && !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }

    /// The used arguments of one kind, in schema order (see
    /// [`PointwiseExpr::used_args`]).
    pub fn used_args_of(&self, kind: ArgKind) -> Vec<String> {
        let used = self.used_args();
        let mut out: Vec<String> = Vec::new();
        for (name, k) in &self.args {
            if *k == kind && used.contains(name) && !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }

    /// Rust expression text computing the result from local variables.
    ///
    /// Tensor argument `x` is the local `x` and scalar argument `s` the local
    /// `s` (already converted to the compute type), with keywords renamed by
    /// [`rust_local`] (`self` → `self_`). Every operation is a call into
    /// `math_path` (e.g. `"crate::math"`, `"::oxten_kernels::math"` or `"m"`
    /// after `use ::oxten_kernels::math as m;`), and literals are
    /// `{math_path}::lit::<T>(2.0)`, so a type named `T` must be in scope.
    ///
    /// The text compiles for `T: Float` (f32, f64) always and, when
    /// [`requires_float`](Self::requires_float) is false, for every
    /// `T: Element` (also i8, i16, i32, i64, u8). Its value is `T`, or
    /// `bool` when [`returns_bool`](Self::returns_bool).
    pub fn emit_rust(&self, math_path: &str) -> String {
        self.emit(&RustTarget::new(math_path))
    }

    /// Emits the expression for an arbitrary code-generation target.
    pub fn emit(&self, target: &dyn Target) -> String {
        emit::emit(&self.root, target)
    }

    /// Evaluates the expression in `f64`, looking argument values up by
    /// schema name with `env` (booleans are returned as `0.0`/`1.0`).
    ///
    /// The semantics are those of `oxten_kernels::math` for `T = f64`.
    pub fn eval_f64(&self, env: &dyn Fn(&str) -> f64) -> f64 {
        eval::eval(&self.root, env)
    }
}

/// Prints the canonical, fully parenthesized form; parsing it again with the
/// same arguments gives an equal expression.
impl fmt::Display for PointwiseExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.root)
    }
}
