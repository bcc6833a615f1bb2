//! Emits the kernels of operators declared with `pointwise: <expr>`: a meta function that
//! configures a TensorIterator and a CPU impl that runs the expression in a typed loop, for every
//! floating dtype (f16/bf16 computed in f32) and, when the expression allows, every integer dtype
//! and bool — or, for an expression with bit operations, the integer dtypes and bool only.
//!
//! Scalar arguments take part in type promotion as wrapped numbers (`int_tensor + 2.5` is float)
//! and become loop operands, except `alpha`, which is a per-call constant checked against the
//! result dtype as in PyTorch, and the entry's `pointwise_constants:` (cast to the compute dtype
//! unchecked, like `addcmul`'s `value`). `int`, `float` and `bool` arguments the expression reads
//! (`round`'s `decimals`) are per-call constants too.

use super::structured::StructuredOp;
use crate::pointwise::{ArgKind, PointwiseExpr};
use std::fmt::Write;

const FLOATS: [&str; 4] = ["F16", "BF16", "F32", "F64"];
const INTS: [&str; 5] = ["U8", "I8", "I16", "I32", "I64"];

/// Parses the expression of a pointwise op against its arguments.
pub fn parse_expr(st: &StructuredOp) -> Result<PointwiseExpr, String> {
    let src = st.pointwise.as_deref().ok_or("not a pointwise op")?;
    let args: Vec<(&str, ArgKind)> = st
        .inputs()
        .iter()
        .map(|a| (a.name.as_str(), if a.tensor_kind_is_one() { ArgKind::Tensor } else { ArgKind::Scalar }))
        .collect();
    PointwiseExpr::parse(src, &args).map_err(|e| format!("pointwise expression `{src}`: {e}"))
}

/// The loop operands of a pointwise op (tensor inputs and promoting scalars, in schema order or
/// the entry's `pointwise_operands:` order, validated by the YAML reader) and its per-call
/// constants (`alpha`, the entry's `pointwise_constants:` and the `int`/`float`/`bool`
/// arguments the expression reads).
fn operands_and_constants<'s>(
    st: &'s StructuredOp,
    expr: &PointwiseExpr,
) -> (Vec<&'s super::sig::RustArg>, Vec<&'s super::sig::RustArg>) {
    let is_constant = |a: &super::sig::RustArg| a.name == "alpha" || st.pointwise_constants.contains(&a.name);
    let inputs = st.inputs();
    let mut loop_args: Vec<&super::sig::RustArg> =
        inputs.iter().copied().filter(|a| a.tensor_kind_is_one() || (a.is_scalar() && !is_constant(a))).collect();
    if let Some(order) = &st.pointwise_operands {
        loop_args.sort_by_key(|a| order.iter().position(|n| *n == a.name).unwrap_or(usize::MAX));
    }
    // `int`, `float` and `bool` arguments that the expression reads never take part in type
    // promotion: they are always constants.
    let used = expr.used_args();
    let constants = inputs
        .into_iter()
        .filter(|a| if a.is_scalar() { is_constant(a) } else { !a.tensor_kind_is_one() && used.contains(&a.name) })
        .collect();
    (loop_args, constants)
}

/// A constant argument as a `Scalar` (an `int`, `float` or `bool` argument is converted).
fn constant_as_scalar(a: &super::sig::RustArg) -> String {
    if a.is_scalar() {
        a.ident.clone()
    } else {
        format!("Scalar::from({})", a.ident)
    }
}

/// The generated meta function and CPU impl of one pointwise op.
pub fn emit_pointwise(st: &StructuredOp) -> Result<String, String> {
    let expr = parse_expr(st)?;
    let name = &st.out.name;
    let (loop_args, constant_args) = operands_and_constants(st, &expr);
    let operands: Vec<(String, bool)> = loop_args.iter().map(|a| (a.ident.clone(), a.is_scalar())).collect();
    let constants: Vec<String> = constant_args.iter().map(|a| a.ident.clone()).collect();
    let constant_values: Vec<String> = constant_args.iter().map(|a| constant_as_scalar(a)).collect();
    if operands.is_empty() || operands.len() > 3 {
        return Err(format!("pointwise op `{}` must have one to three tensor/scalar operands", st.out.schema_name));
    }
    let used = expr.used_args();
    let mut s = String::new();
    // ---- meta ----
    let config = if expr.returns_bool() {
        "comparison_op_config(outs.maybe_get_output(0).is_some_and(|t| t.dtype() != DType::Bool))".to_string()
    } else {
        match (operands.len(), expr.requires_float()) {
            (1, false) => "unary_op_config()".into(),
            (1, true) => "unary_float_op_config()".into(),
            (2, false) => "binary_op_config()".into(),
            (2, true) => "binary_float_op_config()".into(),
            (_, f) => format!("ternary_op_config().promote_integer_inputs_to_float({f})"),
        }
    };
    let _ = writeln!(
        s,
        "/// Meta function of `{}` (generated from `pointwise: {}`).",
        st.out.f.func,
        st.pointwise.as_deref().unwrap_or("")
    );
    let _ = writeln!(
        s,
        "#[allow(unused_variables)]\npub fn {name}_meta({}) -> Result<TensorIterator> {{",
        st.meta_params()
    );
    if let (Some(tr), Some(check)) = (st.check_trait(), &st.pointwise_check) {
        let args: Vec<&str> = st.inputs().iter().map(|a| a.ident.as_str()).collect();
        let _ = writeln!(s, "<crate::Meta as crate::generated::decls::{tr}>::{check}({})?;", args.join(", "));
    }
    let _ = write!(s, "{config}");
    for (ident, is_scalar) in &operands {
        if *is_scalar {
            let _ = write!(s, ".add_input_scalar({ident})");
        } else {
            let _ = write!(s, ".add_input({ident})");
        }
    }
    s.push_str(".build_structured(outs)\n}\n");
    // ---- impl ----
    let float_only = expr.requires_float();
    let bool_out = expr.returns_bool();
    let params: Vec<String> = operands.iter().map(|(i, _)| i.clone()).collect();
    let body = expr.emit_rust("m");
    let _ = writeln!(s, "/// CPU impl of `{}` (generated).", st.out.f.func);
    let _ = writeln!(s, "#[allow(unused_variables)]\npub fn {name}_cpu({}) -> Result<()> {{", st.impl_params());
    let _ = writeln!(s, "let dtype = iter.common_dtype();");
    if constants.iter().any(|c| c == "alpha") {
        let _ = writeln!(s, "check_alpha(dtype, alpha)?;");
    }
    let int_only = expr.requires_integer();
    let dtypes: Vec<&str> = if int_only {
        INTS.to_vec()
    } else if float_only {
        FLOATS.to_vec()
    } else {
        FLOATS.iter().chain(INTS.iter()).copied().collect()
    };
    let const_args: String = constant_values.iter().map(|c| format!(", {c}")).collect();
    if bool_out {
        // An `out=` of another dtype than bool: the iterator computes in the common dtype and
        // casts to `out`, so the loop writes 1 or 0 in the common dtype (as PyTorch does).
        s.push_str("if iter.dtype(0) != DType::Bool {\nmatch dtype {\n");
        for d in &dtypes {
            let _ = writeln!(s, "DType::{d} => {name}_loop_numeric::<{}, _>(iter{const_args}),", rust_storage(d));
        }
        s.push_str("_ => {}\n}\nreturn Ok(());\n}\n");
    }
    s.push_str("match dtype {\n");
    for d in &dtypes {
        let _ = writeln!(s, "DType::{d} => {name}_loop::<{}, _>(iter{const_args}),", rust_storage(d));
    }
    let bool_ok = expr.supports_bool();
    if bool_ok {
        let _ = writeln!(s, "DType::Bool => {name}_loop_bool::<u8>(iter{const_args}),");
    }
    // Every dtype but bool is covered above (but the floats for bit operations); bool only when
    // the expression has a bool meaning.
    if !bool_ok || int_only {
        let _ = writeln!(
            s,
            "other => return Err(oxten_runtime::Error::dtype(format!(\"\\\"{}_cpu\\\" not implemented for '{{}}'\", scalar_type_name(other)))),",
            st.out.f.func.name.name.base
        );
    }
    s.push_str("}\nOk(())\n}\n");
    let bound = if float_only {
        "m::Float"
    } else if int_only {
        "m::Integer"
    } else {
        "m::Element"
    };
    let const_params: String = constants.iter().map(|c| format!(", {c}: Scalar")).collect();
    let _ = writeln!(
        s,
        "#[inline(never)]\nfn {name}_loop<S: OpMath<Math = T>, T: {bound}>(iter: &TensorIterator{const_params}) {{"
    );
    for c in &constants {
        let _ = writeln!(s, "let {c}: T = if T::IS_FLOAT {{ m::lit::<T>({c}.to_f64()) }} else {{ <T as m::Element>::from_i64({c}.to_i64()) }};");
    }
    let closure_params: Vec<String> = params
        .iter()
        .map(|p| if used.iter().any(|u| crate::pointwise::rust_local(u) == *p) { p.clone() } else { format!("_{p}") })
        .collect();
    if bool_out {
        // Comparisons: load in the storage type, compare in the math type, write bool.
        let loads: String = closure_params.iter().map(|p| format!("let {p}: T = {p}.to_math();")).collect();
        let sp: Vec<String> = closure_params.iter().map(|p| format!("{p}: S")).collect();
        let fn_name = ["cpu_kernel_unary", "cpu_kernel_binary", "cpu_kernel_ternary"][params.len() - 1];
        let tys = vec!["S"; params.len()].join(", ");
        let _ = writeln!(
            s,
            "{fn_name}::<{tys}, bool>(iter, #[inline(always)] move |{}| {{ {loads} {body} }});\n}}",
            sp.join(", ")
        );
        let math_fn = ["cpu_kernel_unary_math", "cpu_kernel_binary_math", "cpu_kernel_ternary_math"][params.len() - 1];
        let tp: Vec<String> = closure_params.iter().map(|p| format!("{p}: T")).collect();
        let _ = writeln!(
            s,
            "#[inline(never)]\nfn {name}_loop_numeric<S: OpMath<Math = T>, T: {bound}>(iter: &TensorIterator{const_params}) {{\n{math_fn}::<S>(iter, #[inline(always)] move |{}| m::from_bool::<T>({body}));\n}}",
            tp.join(", ")
        );
    } else {
        let fn_name = match params.len() {
            1 => "cpu_kernel_unary_math",
            2 => "cpu_kernel_binary_math",
            _ => "cpu_kernel_ternary_math",
        };
        let tp: Vec<String> = closure_params.iter().map(|p| format!("{p}: T")).collect();
        let _ = writeln!(s, "{fn_name}::<S>(iter, #[inline(always)] move |{}| {body});\n}}", tp.join(", "));
    }
    if bool_ok {
        // Bools compute as 0/1 in an integer type; a numeric result is stored as `!= 0`.
        let bool_bound = if int_only { "m::Integer" } else { "m::Element" };
        let _ = writeln!(
            s,
            "#[inline(never)]\nfn {name}_loop_bool<T: {bool_bound}>(iter: &TensorIterator{const_params}) {{"
        );
        for c in &constants {
            let _ = writeln!(s, "let {c}: T = <T as m::Element>::from_i64({c}.to_i64());");
        }
        let loads: String = closure_params
            .iter()
            .filter(|p| !p.starts_with('_'))
            .map(|p| format!("let {p}: T = <T as m::Element>::from_i64({p} as i64);"))
            .collect();
        let bp: Vec<String> = closure_params.iter().map(|p| format!("{p}: bool")).collect();
        let fn_name = ["cpu_kernel_unary", "cpu_kernel_binary", "cpu_kernel_ternary"][params.len() - 1];
        let tys = vec!["bool"; params.len()].join(", ");
        // Booleans spell some functions differently (`bitnot` is logical not on 0/1).
        let bool_body = expr.emit_rust("m::boolean");
        let result = if bool_out { bool_body } else { format!("({bool_body}) != <T as m::Element>::zero()") };
        let _ = writeln!(
            s,
            "{fn_name}::<{tys}, bool>(iter, #[inline(always)] move |{}| {{ {loads} {result} }});\n}}",
            bp.join(", ")
        );
    }
    Ok(s)
}

fn rust_storage(d: &str) -> &'static str {
    match d {
        "F16" => "f16",
        "BF16" => "bf16",
        "F32" => "f32",
        "F64" => "f64",
        "U8" => "u8",
        "I8" => "i8",
        "I16" => "i16",
        "I32" => "i32",
        _ => "i64",
    }
}

/// The file of generated pointwise kernels.
pub fn emit_pointwise_file(structured: &[StructuredOp]) -> Result<String, String> {
    let mut s = String::new();
    s.push_str("#[allow(unused_imports)] use oxten_runtime::{DType, Result, Scalar, Tensor};\n");
    s.push_str("#[allow(unused_imports)] use oxten_runtime::dtype::{bf16, f16};\n");
    s.push_str("#[allow(unused_imports)] use crate::iter::*;\n");
    s.push_str("#[allow(unused_imports)] use crate::math as m;\n#[allow(unused_imports)] use crate::math::Element as _;\n#[allow(unused_imports)] use crate::support::check_alpha;\n");
    for st in structured.iter().filter(|st| st.pointwise.is_some()) {
        s.push_str(&emit_pointwise(st).map_err(|e| format!("{}: {e}", st.out.schema_name))?);
    }
    Ok(s)
}

/// The CUDA impl of one pointwise op: the expression in CUDA C over the kernel's locals
/// (`a1`, `a2`, `a3` for the loop operands in iterator order, `c0` for `alpha`), handed with
/// its dtype rules to the CUDA backend's launcher, which instantiates, compiles (NVRTC, cached)
/// and launches it for the dtypes and layout of each call.
pub fn emit_pointwise_cuda(st: &StructuredOp) -> Result<String, String> {
    let expr = parse_expr(st)?;
    let (loop_args, constants) = operands_and_constants(st, &expr);
    let mut locals: Vec<(String, String)> =
        loop_args.iter().enumerate().map(|(k, a)| (a.name.clone(), format!("a{}", k + 1))).collect();
    locals.extend(constants.iter().enumerate().map(|(j, a)| (a.name.clone(), format!("c{j}"))));
    let body = expr.emit(&crate::pointwise::CudaTarget { locals });
    let name = &st.out.name;
    let consts: Vec<String> = constants.iter().map(|a| constant_as_scalar(a)).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/// CUDA impl of `{}` (generated from `pointwise: {}`).",
        st.out.f.func,
        st.pointwise.as_deref().unwrap_or("")
    );
    let _ = writeln!(s, "#[allow(unused_variables)]\npub fn {name}_cuda({}) -> Result<()> {{", st.impl_params());
    let _ = writeln!(
        s,
        "static KERNEL: PointwiseKernel = PointwiseKernel {{ op: {:?}, expr: {:?}, arity: {}, float_only: {}, int_only: {}, bool_ok: {} }};",
        st.out.schema_name,
        body,
        loop_args.len(),
        expr.requires_float(),
        expr.requires_integer(),
        expr.supports_bool()
    );
    if consts.iter().any(|c| c == "alpha") {
        let _ = writeln!(s, "crate::support::check_alpha(iter.common_dtype(), alpha)?;");
    }
    let _ = writeln!(s, "launch_pointwise(iter, &KERNEL, &[{}])\n}}", consts.join(", "));
    Ok(s)
}

/// The file of generated CUDA impls of pointwise ops (compiled with the `cuda` feature).
pub fn emit_pointwise_cuda_file(structured: &[StructuredOp]) -> Result<String, String> {
    let mut s = String::new();
    s.push_str("#[allow(unused_imports)] use oxten_runtime::{Result, Scalar, Tensor};\n");
    s.push_str("#[allow(unused_imports)] use oxten_runtime::iter::TensorIterator;\n");
    s.push_str("use crate::cuda::pointwise::{launch_pointwise, PointwiseKernel};\n");
    for st in structured.iter().filter(|st| st.pointwise.is_some()) {
        s.push_str(&emit_pointwise_cuda(st).map_err(|e| format!("{}: {e}", st.out.schema_name))?);
    }
    Ok(s)
}
