//! Code emission for pointwise expressions.
//!
//! Emission is split into a target-independent tree walk ([`emit()`]) and a
//! small [`Target`] trait that knows how to spell each construct in one
//! language. [`RustTarget`] produces calls into `oxten_kernels::math`; a
//! CUDA C target can implement the same trait.

use super::ast::{BinaryOp, Conversion, Expr, Func, UnaryOp};
use super::ArgKind;

/// How one code-generation target spells the constructs of the expression
/// language.
///
/// [`emit()`] walks the tree bottom-up and hands each method the already
/// emitted text of the operands. Implicit bool/number conversions arrive as
/// explicit [`Target::convert`] calls, so a target never needs type
/// inference.
pub trait Target {
    /// A numeric literal of the compute type. `is_float` tells whether it was
    /// written in floating-point syntax; `value` may be negative.
    fn number(&self, value: f64, is_float: bool) -> String;
    /// A boolean literal.
    fn boolean(&self, value: bool) -> String;
    /// A reference to an operator argument (a local variable in the kernel).
    fn arg(&self, name: &str, kind: ArgKind) -> String;
    /// A unary operation.
    fn unary(&self, op: UnaryOp, operand: String) -> String;
    /// A binary operation.
    fn binary(&self, op: BinaryOp, lhs: String, rhs: String) -> String;
    /// A call of a built-in function; `args.len() == func.arity()`.
    fn call(&self, func: Func, args: Vec<String>) -> String;
    /// An implicit conversion between bool and the compute type.
    fn convert(&self, conv: Conversion, operand: String) -> String;
}

/// Emits `expr` for `target`.
pub fn emit(expr: &Expr, target: &dyn Target) -> String {
    match expr {
        Expr::Number { value, is_float } => target.number(*value, *is_float),
        Expr::Bool(b) => target.boolean(*b),
        Expr::Arg { name, kind } => target.arg(name, *kind),
        Expr::Unary { op, operand } => target.unary(*op, emit(operand, target)),
        Expr::Binary { op, lhs, rhs } => target.binary(*op, emit(lhs, target), emit(rhs, target)),
        Expr::Call { func, args } => target.call(*func, args.iter().map(|a| emit(a, target)).collect()),
        Expr::Convert { conv, operand } => target.convert(*conv, emit(operand, target)),
    }
}

/// The Rust local variable that holds argument `name` in emitted code:
/// the name itself, or `name_` when it is a Rust keyword (`self` → `self_`).
pub fn rust_local(name: &str) -> String {
    crate::emit::names::arg_ident(name)
}

/// The [`Target`] for Rust CPU kernels: every operation becomes a call into
/// `oxten_kernels::math`.
///
/// The emitted text refers to
/// * `{math_path}::…` functions (e.g. `crate::math::add`, or `m::add` after
///   `use ::oxten_kernels::math as m;`),
/// * the compute type by the name `compute_type` (default `T`), used in
///   `{math_path}::lit::<T>(2.0)` and `{math_path}::from_bool::<T>(c)`,
/// * one local per used argument, named by [`rust_local`], of type `T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustTarget {
    /// Path of the math module, without a trailing `::`.
    pub math_path: String,
    /// Name of the compute type in scope at the emission site.
    pub compute_type: String,
}

impl RustTarget {
    /// A target using `math_path` and the compute type name `T`.
    pub fn new(math_path: &str) -> Self {
        RustTarget { math_path: math_path.trim_end_matches("::").to_string(), compute_type: "T".to_string() }
    }

    /// The same target with a different compute type name (e.g. `f32`).
    pub fn with_compute_type(mut self, compute_type: &str) -> Self {
        self.compute_type = compute_type.to_string();
        self
    }

    fn apply(&self, func: &str, args: &[String]) -> String {
        format!("{}::{}({})", self.math_path, func, args.join(", "))
    }
}

/// The name of the `oxten_kernels::math` function implementing `func`.
pub fn rust_math_fn(func: Func) -> &'static str {
    match func {
        Func::Where => "where_",
        other => other.name(),
    }
}

impl Target for RustTarget {
    fn number(&self, value: f64, _is_float: bool) -> String {
        // `{:?}` of an f64 always contains `.` or `e`, so it is a valid f64
        // literal; `lit` converts it to the compute type. π is spelled by name.
        if value == std::f64::consts::PI {
            return format!("{}::lit::<{}>(std::f64::consts::PI)", self.math_path, self.compute_type);
        }
        format!("{}::lit::<{}>({:?})", self.math_path, self.compute_type, value)
    }

    fn boolean(&self, value: bool) -> String {
        value.to_string()
    }

    fn arg(&self, name: &str, _kind: ArgKind) -> String {
        rust_local(name)
    }

    fn unary(&self, op: UnaryOp, operand: String) -> String {
        let f = match op {
            UnaryOp::Neg => "neg",
            UnaryOp::Not => "not",
        };
        self.apply(f, &[operand])
    }

    fn binary(&self, op: BinaryOp, lhs: String, rhs: String) -> String {
        let f = match op {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        };
        self.apply(f, &[lhs, rhs])
    }

    fn call(&self, func: Func, args: Vec<String>) -> String {
        if func == Func::Nextafter {
            // The one function of the element type rather than the compute type (f16 and bf16
            // compute in f32): the generated loops name the element type `S`.
            return format!("{}::nextafter::<S>({})", self.math_path, args.join(", "));
        }
        self.apply(rust_math_fn(func), &args)
    }

    fn convert(&self, conv: Conversion, operand: String) -> String {
        match conv {
            Conversion::ToBool => self.apply("truthy", &[operand]),
            Conversion::ToNumber => format!("{}::from_bool::<{}>({})", self.math_path, self.compute_type, operand),
        }
    }
}
