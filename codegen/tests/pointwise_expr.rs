//! Tests for the `pointwise:` expression language.

use expect_test::{expect, Expect};
use oxten_codegen::pointwise::{ArgKind, Expr, Func, PointwiseExpr, ValueType};

const T: ArgKind = ArgKind::Tensor;
const S: ArgKind = ArgKind::Scalar;

/// Arguments used by most tests: three tensors, two scalars and `self`.
const ARGS: &[(&str, ArgKind)] =
    &[("self", T), ("other", T), ("x", T), ("y", T), ("a", T), ("b", T), ("c", T), ("alpha", S), ("lo", S), ("hi", S)];

fn parse(src: &str) -> PointwiseExpr {
    PointwiseExpr::parse(src, ARGS).unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

fn check_parse(src: &str, expect: Expect) {
    expect.assert_eq(&parse(src).to_string());
}

fn check_error(src: &str, args: &[(&str, ArgKind)], expect: Expect) {
    let err = PointwiseExpr::parse(src, args).expect_err(src);
    expect.assert_eq(&err.to_string());
}

fn check_emit(src: &str, expect: Expect) {
    let e = parse(src);
    let text = e.emit_rust("m");
    syn::parse_str::<syn::Expr>(&text).unwrap_or_else(|err| panic!("{text}: {err}"));
    expect.assert_eq(&text);
}

fn eval(src: &str, env: &[(&str, f64)]) -> f64 {
    let env = env.to_vec();
    parse(src).eval_f64(&move |name: &str| {
        env.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no value for {name}")).1
    })
}

fn eval1(src: &str, x: f64) -> f64 {
    eval(src, &[("x", x)])
}

#[test]
fn precedence() {
    check_parse("a + b * c", expect![["(a + (b * c))"]]);
    check_parse("a * b + c", expect![["((a * b) + c)"]]);
    check_parse("a - b - c", expect![["((a - b) - c)"]]);
    check_parse("a / b * c", expect![["((a / b) * c)"]]);
    check_parse("-x * y", expect![["((-x) * y)"]]);
    check_parse("-(x * y)", expect![["(-(x * y))"]]);
    check_parse("- -x", expect![["(-(-x))"]]);
    check_parse("a + -2 * b", expect![["(a + (-2 * b))"]]);
    check_parse("(a + b) * c", expect![["((a + b) * c)"]]);
    check_parse("where(x > 0, x, 0.1 * x)", expect![["where((x > 0), x, (0.1 * x))"]]);
    check_parse("x > 0 && y < 1 || !(a == b)", expect![["(((x > 0) && (y < 1)) || (!(a == b)))"]]);
    check_parse("a + b < c * 2", expect![["((a + b) < (c * 2))"]]);
    check_parse("self + alpha * other", expect![["(self + (alpha * other))"]]);
    check_parse("clamp(x, lo, hi) + 1e-3", expect![["(clamp(x, lo, hi) + 0.001)"]]);
    check_parse("true && false", expect![["(true && false)"]]);
    check_parse("  x\n  *\tsigmoid( x )  ", expect![["(x * sigmoid(x))"]]);
}

#[test]
fn display_round_trips() {
    for src in [
        "a + b * c",
        "-x * y",
        "where(x > 0, x, 0.1 * x)",
        "(x > 0) * x + !(y != 0)",
        "where(x, a > b, c < 0)",
        "pow(a, -2.5) - 3 / clamp(x, -1, 1)",
        "x >= 1e-10 && (a <= b) == (c > 0)",
        "gelu(x) + gelu_tanh(y) - softplus(-a)",
    ] {
        let e = parse(src);
        let again = parse(&e.to_string());
        assert_eq!(e, again, "{src}");
    }
}

#[test]
fn implicit_conversions() {
    let e = parse("(x > 0) * x");
    match e.root() {
        Expr::Binary { lhs, .. } => assert!(matches!(**lhs, Expr::Convert { .. })),
        other => panic!("{other:?}"),
    }
    assert!(!e.returns_bool());
    // A number used as a condition means `!= 0`.
    assert_eq!(eval("where(x, a, b)", &[("x", 2.0), ("a", 1.0), ("b", 5.0)]), 1.0);
    assert_eq!(eval("where(x, a, b)", &[("x", 0.0), ("a", 1.0), ("b", 5.0)]), 5.0);
    assert_eq!(eval("!x", &[("x", 3.0)]), 0.0);
    assert_eq!(eval("(x > 0) + (y > 0)", &[("x", 1.0), ("y", 1.0)]), 2.0);
    assert_eq!(parse("where(x > 0, true, y < 0)").root().ty(), ValueType::Bool);
    assert_eq!(parse("where(x > 0, true, y)").root().ty(), ValueType::Number);
}

#[test]
fn errors() {
    check_error(
        "self + foo",
        &[("self", T), ("other", T), ("alpha", S)],
        expect![["column 8: unknown name `foo`; valid names are: self, other, alpha"]],
    );
    check_error(
        "exp + 1",
        &[("self", T)],
        expect![["column 1: unknown name `exp`; valid names are: self (`exp` is a function; call it like `exp(...)`)"]],
    );
    check_error("x", &[], expect![["column 1: unknown name `x`; this operator has no arguments"]]);
    check_error(
        "frob(self)",
        &[("self", T)],
        expect!["column 1: unknown function `frob`; available functions: exp, log, log1p, expm1, sqrt, rsqrt, abs, tanh, sigmoid, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log2, log10, exp2, deg2rad, rad2deg, erf, erfinv, erfc, lgamma, digamma, polygamma, zeta, i0, i0e, i1, i1e, igamma, igammac, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1, airy_ai, spherical_bessel_j0, erfcx, log_ndtr, ndtri, chebyshev_t, chebyshev_u, chebyshev_v, chebyshev_w, shifted_chebyshev_t, shifted_chebyshev_u, shifted_chebyshev_v, shifted_chebyshev_w, hermite_h, hermite_he, laguerre_l, legendre_p, floor, ceil, round, trunc, reciprocal, sign, relu, gelu, gelu_tanh, silu, softplus, pow, min, max, clamp, atan2, hypot, where, isnan, isinf, isfinite, signbit, div_trunc, div_floor, remainder, fmod, fmax, fmin, copysign, nextafter, bitand, bitor, bitxor, bitnot, shl, gcd, lcm, shr"],
    );
    check_error("pow(self)", &[("self", T)], expect![["column 1: function `pow` takes 2 arguments, but 1 was given"]]);
    check_error(
        "1 + exp(self, self)",
        &[("self", T)],
        expect![["column 5: function `exp` takes 1 argument, but 2 were given"]],
    );
    check_error("where()", &[("self", T)], expect![["column 1: function `where` takes 3 arguments, but 0 were given"]]);
    check_error("self + 1)", &[("self", T)], expect![["column 9: expected an operator or end of input, found `)`"]]);
    check_error(
        "self self",
        &[("self", T)],
        expect![["column 6: expected an operator or end of input, found name `self`"]],
    );
    check_error("", &[("self", T)], expect![["column 1: empty expression"]]);
    check_error("   ", &[("self", T)], expect![["column 1: empty expression"]]);
    check_error("self +", &[("self", T)], expect![["column 7: expected an expression, found end of input"]]);
    check_error("(self", &[("self", T)], expect![["column 6: expected `)`, found end of input"]]);
    check_error(
        "max(self, 1",
        &[("self", T)],
        expect![["column 12: expected `,` or `)` in the arguments of `max`, found end of input"]],
    );
    check_error("self * * 2", &[("self", T)], expect![["column 8: expected an expression, found `*`"]]);
    check_error(
        "0 < self < 1",
        &[("self", T)],
        expect![["column 10: comparison operators cannot be chained; use parentheses or `&&`"]],
    );
    check_error("self = 1", &[("self", T)], expect![["column 6: unexpected `=`; did you mean `==`?"]]);
    check_error("self & self", &[("self", T)], expect![["column 6: unexpected `&`; did you mean `&&`?"]]);
    check_error("self $ 2", &[("self", T)], expect![["column 6: unexpected character `$`"]]);
    check_error("2. * self", &[("self", T)], expect![["column 3: expected digits after `.` in a number"]]);
    check_error("1e+ * self", &[("self", T)], expect![["column 4: expected digits in the exponent of a number"]]);
    check_error("2x", &[("x", T)], expect![["column 2: unexpected character `x` in a number"]]);
    check_error("1e999", &[], expect![["column 1: number `1e999` is out of range"]]);
    let deep = format!("{}x{}", "(".repeat(1000), ")".repeat(1000));
    check_error(&deep, &[("x", T)], expect![["column 201: expression is nested too deeply"]]);
}

#[test]
fn error_fields() {
    let err = PointwiseExpr::parse("self + nope", &[("self", T)]).unwrap_err();
    assert_eq!(err.column, 8);
    assert!(err.message.starts_with("unknown name `nope`"));
}

#[test]
fn requires_float() {
    let cases = [
        ("self + alpha * other", false),
        ("clamp(x, lo, hi)", false),
        ("where(x > 0, x, 0 - x)", false),
        ("abs(x) + relu(y) - sign(a) * min(a, b) + max(a, b)", false),
        ("x * 2.0", false),
        ("x / 2", true),
        ("where(x > 0, x, 0.1 * x)", true),
        ("x * 1e-3", true),
        ("exp(x)", true),
        ("sqrt(x)", true),
        ("sigmoid(x)", true),
        ("tanh(x)", true),
        ("sin(x)", true),
        ("pow(x, 2)", false),
        ("pow(x, 0.5)", true),
        ("lgamma(x)", true),
        ("gelu(x)", true),
        ("round(x)", false),
        ("floor(x)", false),
        ("div_floor(x, y) + remainder(x, y)", false),
        ("copysign(x, y)", true),
        ("reciprocal(x)", true),
        ("x > 0 && exp(y) > 1", true),
    ];
    for (src, want) in cases {
        assert_eq!(parse(src).requires_float(), want, "{src}");
    }
    for func in Func::ALL {
        let float_only = !matches!(
            func,
            Func::Abs
                | Func::Sign
                | Func::Relu
                | Func::Min
                | Func::Max
                | Func::Clamp
                | Func::Where
                | Func::Pow
                | Func::Floor
                | Func::Ceil
                | Func::Round
                | Func::Trunc
                | Func::Isnan
                | Func::Isinf
                | Func::Isfinite
                | Func::Signbit
                | Func::DivTrunc
                | Func::DivFloor
                | Func::Remainder
                | Func::Fmod
                | Func::Fmax
                | Func::Fmin
                | Func::Bitand
                | Func::Bitor
                | Func::Bitxor
                | Func::Bitnot
                | Func::Shl
                | Func::Gcd
                | Func::Lcm
                | Func::Shr
        );
        assert_eq!(func.requires_float(), float_only, "{}", func.name());
    }
}

#[test]
fn returns_bool() {
    let cases = [
        ("x > 0", true),
        ("x == y", true),
        ("isnan(x)", true),
        ("isinf(x) && signbit(x)", true),
        ("where(isfinite(x), x, 0)", false),
        ("!(x < y)", true),
        ("x > 0 && y > 0", true),
        ("x > 0 || y > 0", true),
        ("true", true),
        ("where(x > 0, y > 0, false)", true),
        ("x", false),
        ("(x > 0) * x", false),
        ("where(x > 0, x, y)", false),
        ("-(x > 0)", false),
    ];
    for (src, want) in cases {
        assert_eq!(parse(src).returns_bool(), want, "{src}");
    }
}

#[test]
fn used_args() {
    let e = parse("alpha * other + self * other");
    assert_eq!(e.used_args(), ["self", "other", "alpha"]);
    assert_eq!(e.used_args_of(ArgKind::Tensor), ["self", "other"]);
    assert_eq!(e.used_args_of(ArgKind::Scalar), ["alpha"]);
    assert!(parse("1 + 2").used_args().is_empty());
}

#[test]
fn emit_rust() {
    check_emit("self + alpha * other", expect![["m::add(self_, m::mul(alpha, other))"]]);
    check_emit(
        "where(x > 0, x, 0.1 * x)",
        expect![["m::where_(m::gt(x, m::lit::<T>(0.0)), x, m::mul(m::lit::<T>(0.1), x))"]],
    );
    check_emit("-x * sigmoid(x) / 2", expect![["m::div(m::mul(m::neg(x), m::sigmoid(x)), m::lit::<T>(2.0))"]]);
    check_emit(
        "(x > 0) * x + !(y != 0) && where(a, lo <= hi, true)",
        expect![[
            "m::and(m::truthy(m::add(m::mul(m::from_bool::<T>(m::gt(x, m::lit::<T>(0.0))), x), m::from_bool::<T>(m::not(m::ne(y, m::lit::<T>(0.0)))))), m::where_(m::truthy(a), m::le(lo, hi), true))"
        ]],
    );
    check_emit("clamp(x, -1, 1e20)", expect![["m::clamp(x, m::lit::<T>(-1.0), m::lit::<T>(1e20))"]]);
    assert_eq!(parse("gelu_tanh(self)").emit_rust("::oxten_kernels::math"), "::oxten_kernels::math::gelu_tanh(self_)");
}

#[test]
fn emit_renames_keyword_arguments() {
    let e = PointwiseExpr::parse("self + type * where(true, in, 0)", &[("self", T), ("type", S), ("in", T)]).unwrap();
    let text = e.emit_rust("m");
    assert_eq!(text, "m::add(self_, m::mul(type_, m::where_(true, in_, m::lit::<T>(0.0))))");
    syn::parse_str::<syn::Expr>(&text).unwrap();
}

fn assert_close(got: f64, want: f64) {
    let tol = 1e-15 * want.abs().max(1e-300);
    assert!((got - want).abs() <= tol, "got {got:e}, want {want:e}");
}

#[test]
fn eval_values() {
    assert_eq!(eval("self + alpha * other", &[("self", 1.0), ("other", 2.0), ("alpha", 3.0)]), 7.0);
    assert_eq!(eval("a + b * c", &[("a", 1.0), ("b", 2.0), ("c", 3.0)]), 7.0);
    assert_eq!(eval("-x * y", &[("x", 2.0), ("y", 3.0)]), -6.0);
    assert_eq!(eval1("where(x > 0, x, 0.1 * x)", -2.0), -0.2);
    assert_eq!(eval1("where(x > 0, x, 0.1 * x)", 2.0), 2.0);
    assert_close(eval1("gelu(x)", 1.0), 0.841_344_746_068_542_9);
    assert_close(eval1("gelu(x)", -1.0), -0.158_655_253_931_457_05);
    assert_close(eval1("gelu_tanh(x)", 1.0), 0.841_191_990_608_276_7);
    assert_close(eval1("silu(x)", 1.0), 0.731_058_578_630_004_9);
    assert_close(eval1("x * sigmoid(x)", 1.0), 0.731_058_578_630_004_9);
    assert_eq!(eval1("sigmoid(x)", -800.0), 0.0);
    assert_eq!(eval1("sigmoid(x)", 800.0), 1.0);
    assert_eq!(eval1("silu(x)", -800.0), 0.0);
    assert_close(eval1("softplus(x)", 1.0), 1.313_261_687_518_222_8);
    assert_eq!(eval1("softplus(x)", 100.0), 100.0);
    assert_close(eval1("erf(x)", 0.5), 0.520_499_877_813_046_5);
    assert_close(eval1("erf(x)", -2.0), -0.995_322_265_018_952_7);
    assert_close(eval1("erf(x)", 1e-10), 1.128_379_167_095_512_6e-10);
    assert_eq!(eval1("round(x)", 2.5), 2.0);
    assert_eq!(eval1("round(x)", -0.5), 0.0);
    assert_eq!(eval1("round(x)", 3.5), 4.0);
    assert_eq!(eval1("sign(x)", -3.0), -1.0);
    assert_eq!(eval1("sign(x)", 0.0), 0.0);
    assert_eq!(eval1("relu(x)", -3.0), 0.0);
    assert_eq!(eval1("rsqrt(x)", 4.0), 0.5);
    assert_eq!(eval1("reciprocal(x)", 4.0), 0.25);
    assert_eq!(eval1("abs(x)", -4.0), 4.0);
    assert_eq!(eval("pow(a, b)", &[("a", 2.0), ("b", 10.0)]), 1024.0);
    assert_eq!(eval("atan2(a, b)", &[("a", 1.0), ("b", 1.0)]), std::f64::consts::FRAC_PI_4);
    assert_close(eval("hypot(a, b)", &[("a", 3e200), ("b", 4e200)]), 5e200);
    assert!((eval1("erfinv(x)", 0.5) - 0.476_936_276_204_469_9).abs() < 1e-15);
    assert_eq!(eval1("erfinv(x)", -1.0), f64::NEG_INFINITY);
    assert!(eval1("erfinv(x)", 1.5).is_nan());
    assert_eq!(eval1("clamp(x, -1, 1)", 5.0), 1.0);
    assert_eq!(eval1("clamp(x, -1, 1)", -5.0), -1.0);
    assert_eq!(eval1("clamp(x, 2, 1)", 0.0), 1.0);
    assert_eq!(eval1("x > 0 && x < 1", 0.5), 1.0);
    assert_eq!(eval1("x > 0 && x < 1", 1.5), 0.0);
    assert_eq!(eval1("x < 0 || x > 1", 1.5), 1.0);
    assert_eq!(eval1("exp(log(x)) + log1p(0) + expm1(0)", 1.0), 1.0);
    assert_eq!(eval1("floor(x) + ceil(x) + trunc(x)", -1.5), -4.0);
    assert_eq!(eval1("sqrt(x) + tanh(0) + sin(0) + cos(0) + tan(0)", 9.0), 4.0);
}

#[test]
fn eval_nan_propagation() {
    let nan = f64::NAN;
    assert!(eval("max(a, b)", &[("a", nan), ("b", 1.0)]).is_nan());
    assert!(eval("max(a, b)", &[("a", 1.0), ("b", nan)]).is_nan());
    assert!(eval("min(a, b)", &[("a", nan), ("b", 1.0)]).is_nan());
    assert!(eval("min(a, b)", &[("a", 1.0), ("b", nan)]).is_nan());
    assert!(eval1("clamp(x, 0, 1)", nan).is_nan());
    assert!(eval("clamp(x, lo, hi)", &[("x", 0.5), ("lo", nan), ("hi", 1.0)]).is_nan());
    assert!(eval("clamp(x, lo, hi)", &[("x", 0.5), ("lo", 0.0), ("hi", nan)]).is_nan());
    assert!(eval1("relu(x)", nan).is_nan());
    assert_eq!(eval1("sign(x)", nan), 0.0);
    assert_eq!(eval1("x == x", nan), 0.0);
    assert_eq!(eval1("where(x, 1, 2)", nan), 1.0);
}

/// Every function the Rust target can emit must exist in
/// `oxten_kernels::math` (checked on the source, as codegen does not depend
/// on the kernels crate), and every function must be in the documentation.
#[test]
fn emitted_functions_exist_in_kernels_math() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let math = std::fs::read_to_string(dir.join("../kernels/src/math/functions.rs")).unwrap();
    let docs = std::fs::read_to_string(dir.join("src/pointwise/mod.rs")).unwrap();
    let mut srcs: Vec<String> = Func::ALL
        .iter()
        .map(|f| {
            let args = vec!["x"; f.arity()].join(", ");
            assert!(docs.contains(&format!("`{}(", f.name())), "{} undocumented", f.name());
            format!("{}({args})", f.name())
        })
        .collect();
    srcs.push("-x + x - x * x / x".into());
    srcs.push("x < 1 && x <= 1 || x > 1 && !(x >= 1) || x == 1 || x != 1".into());
    srcs.push("(x > 0) * where(x, true, false)".into());
    let mut names = std::collections::BTreeSet::new();
    for src in &srcs {
        let text = parse(src).emit_rust("m");
        syn::parse_str::<syn::Expr>(&text).unwrap();
        for part in text.split("m::").skip(1) {
            let name: String = part.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            names.insert(name);
        }
    }
    for name in &names {
        assert!(
            math.contains(&format!("pub fn {name}<")) || math.contains(&format!("pub fn {name}(")),
            "oxten_kernels::math::{name} is missing"
        );
    }
    assert!(names.len() >= 45, "{names:?}");
}

/// Integer-division functions, predicates and `pi`: Python's `//` and `%` round toward negative
/// infinity, C's `fmod` toward zero; the predicates give booleans; `pi` is π.
#[test]
fn division_predicates_and_pi() {
    let ab = |src: &str, a: f64, b: f64| eval(src, &[("x", a), ("y", b)]);
    for (a, b, floor, rem, trunc, fmod) in [
        (-7.0, 2.0, -4.0, 1.0, -3.0, -1.0),
        (7.0, -2.0, -4.0, -1.0, -3.0, 1.0),
        (7.5, -2.0, -4.0, -0.5, -3.0, 1.5),
        (-7.5, -2.0, 3.0, -1.5, 3.0, -1.5),
        (6.0, 3.0, 2.0, 0.0, 2.0, 0.0),
    ] {
        assert_eq!(ab("div_floor(x, y)", a, b), floor, "{a} // {b}");
        assert_eq!(ab("remainder(x, y)", a, b), rem, "{a} % {b}");
        assert_eq!(ab("div_trunc(x, y)", a, b), trunc, "trunc({a} / {b})");
        assert_eq!(ab("fmod(x, y)", a, b), fmod, "fmod({a}, {b})");
    }
    // A zero quotient keeps the sign of the true quotient; a zero divisor gives x / 0.
    assert_eq!(ab("div_floor(x, y)", 0.5, -2.0), -1.0);
    assert!(ab("div_floor(x, y)", 0.5, 2.0) == 0.0 && ab("div_floor(x, y)", -0.0, 2.0).is_sign_negative());
    assert_eq!(ab("div_floor(x, y)", 1.0, 0.0), f64::INFINITY);
    let nan = f64::NAN;
    assert_eq!(ab("fmax(x, y)", nan, 1.0), 1.0);
    assert_eq!(ab("fmin(x, y)", 2.0, nan), 2.0);
    assert!(ab("fmax(x, y)", nan, nan).is_nan());
    assert_eq!(ab("copysign(x, y)", 3.0, -0.0), -3.0);
    assert_eq!(eval1("isnan(x) + isinf(x) * 2 + isfinite(x) * 4", nan), 1.0);
    assert_eq!(eval1("isnan(x) + isinf(x) * 2 + isfinite(x) * 4", f64::NEG_INFINITY), 2.0);
    assert_eq!(eval1("signbit(x)", -0.0), 1.0);
    assert_eq!(eval1("floor(x) + ceil(x) + trunc(x) + round(x)", -2.5), -3.0 - 2.0 - 2.0 - 2.0);
    assert_eq!(eval1("pi * x", 2.0), 2.0 * std::f64::consts::PI);
    check_emit("sin(pi * x)", expect![["m::sin(m::mul(m::lit::<T>(std::f64::consts::PI), x))"]]);
    assert_eq!(PointwiseExpr::parse("pi", &[("pi", T)]).unwrap().to_string(), "pi");
}

/// `nextafter` steps in the element type: the Rust kernels name the generated loop's element
/// type `S`, and the f64 reference takes one step of the f64 bit pattern.
#[test]
fn nextafter_steps_in_the_element_type() {
    check_emit("nextafter(x, y)", expect![["m::nextafter::<S>(x, y)"]]);
    let ab = |a: f64, b: f64| eval("nextafter(x, y)", &[("x", a), ("y", b)]);
    assert_eq!(ab(1.0, 2.0), 1.0 + f64::EPSILON);
    assert_eq!(ab(1.0, 0.0), 1.0 - f64::EPSILON / 2.0);
    assert_eq!(ab(-1.0, -2.0), -1.0 - f64::EPSILON);
    assert_eq!(ab(0.0, -1.0).to_bits(), (-f64::from_bits(1)).to_bits());
    assert_eq!(ab(f64::MAX, f64::INFINITY), f64::INFINITY);
    assert_eq!(ab(2.0, 2.0), 2.0);
    assert!(ab(f64::NAN, 1.0).is_nan() && ab(1.0, f64::NAN).is_nan());
}
