//! IR nodes for lazy backends (torchgen's `gen_lazy_tensor.py`): the operators of a backend
//! YAML's `full_codegen:` list get a node struct each (tensor operands as the backend's graph
//! values, every other argument by value), one `Node` enum over them with the operations a
//! graph needs (name, operands, attributes for printing, whether it is pointwise, lowering to
//! oxten's operators), and a kernel that records the node instead of computing: it runs the
//! operator's meta function on meta copies of the arguments for the output's sizes, strides and
//! dtype (and the argument checks), then hands node and meta output to the backend.
//!
//! An in-place operator in the list (`add_.Tensor`) records its functional sibling's node and
//! copies the result into `self` through the backend's `copy_`, after the in-place meta function
//! has checked that the result can be written there.

use crate::emit::names;
use crate::emit::sig::OpSig;
use crate::model::{BaseTy, SchemaKind, Type};
use crate::yaml::NativeFunction;
use std::fmt::Write;

/// How one argument travels in an IR node.
enum Field {
    /// `Tensor`: a graph value.
    Operand,
    /// `Tensor?`: a graph value or none.
    OptionalOperand,
    /// `Tensor[]`: graph values.
    OperandList,
    /// Anything else, stored by value: the field type, the expression turning the kernel's
    /// parameter `{}` into it, and the expression passing field `{}` back to the operator.
    Attribute { ty: String, store: &'static str, pass: &'static str },
}

fn field(ty: &Type) -> Result<Field, String> {
    let attr = |ty: String, store, pass| Ok(Field::Attribute { ty, store, pass });
    let generator = Type::Base(BaseTy::Generator);
    if *ty == generator || *ty == Type::Optional(Box::new(generator)) {
        return Err(
            "draws random numbers, which a graph cannot replay with the generator's state at capture time".into()
        );
    }
    match ty {
        Type::Base(BaseTy::Tensor) => Ok(Field::Operand),
        Type::Optional(t) if **t == Type::Base(BaseTy::Tensor) => Ok(Field::OptionalOperand),
        Type::List { elem, .. } if **elem == Type::Base(BaseTy::Tensor) => Ok(Field::OperandList),
        Type::Base(BaseTy::Str) => attr("String".into(), "{}.to_string()", "&{}"),
        Type::Optional(t) if **t == Type::Base(BaseTy::Str) => {
            attr("Option<String>".into(), "{}.map(str::to_string)", "{}.as_deref()")
        }
        Type::List { elem, .. } if !matches!(**elem, Type::Optional(_)) => {
            let rust = names::arg_type(ty)?; // `&[i64]`
            attr(format!("Vec<{}>", rust.trim_start_matches("&[").trim_end_matches(']')), "{}.to_vec()", "&{}")
        }
        Type::Optional(t) if matches!(**t, Type::List { .. }) => {
            let rust = names::arg_type(t)?;
            attr(
                format!("Option<Vec<{}>>", rust.trim_start_matches("&[").trim_end_matches(']')),
                "{}.map(<[_]>::to_vec)",
                "{}.as_deref()",
            )
        }
        Type::Base(_) | Type::Optional(_) => attr(names::arg_type(ty)?, "{}", "{}"),
        Type::List { .. } => Err(format!("has an argument of type `{ty}`, which an IR node cannot hold yet")),
    }
}

/// The node of one `full_codegen:` operator: the functional operator it records.
struct IrOp<'a> {
    /// The listed operator.
    listed: OpSig<'a>,
    /// The functional operator whose node it records (itself, or an in-place op's sibling).
    node: OpSig<'a>,
    fields: Vec<Field>,
}

impl IrOp<'_> {
    /// `AddTensor` for `add.Tensor`.
    fn struct_name(&self) -> String {
        let n = &self.node.f.func.name;
        let mut s = names::camel(&n.name.base);
        s.push_str(&names::camel(&n.overload));
        s
    }
}

/// Checks one `full_codegen:` entry: a functional or in-place operator that a backend can see
/// (not a decomposition) and whose arguments an IR node can hold. The error says what is wrong.
pub(crate) fn check_entry(f: &NativeFunction, fns: &[NativeFunction]) -> Result<(), String> {
    resolve(f, fns).map(|_| ())
}

fn resolve<'a>(f: &'a NativeFunction, fns: &'a [NativeFunction]) -> Result<IrOp<'a>, String> {
    let name = &f.func.name;
    if f.dispatch.contains_key(&super::DispatchKey::CompositeImplicitAutograd) {
        return Err(format!(
            "`{name}` is a composite that decomposes before any backend sees it; list the operators it calls"
        ));
    }
    let functional = match f.func.kind() {
        SchemaKind::Functional => f,
        SchemaKind::Inplace => fns
            .iter()
            .find(|g| {
                g.func.kind() == SchemaKind::Functional
                    && g.func.name.name.base == name.name.base
                    && g.func.name.overload == name.overload
            })
            .ok_or_else(|| format!("`{name}` is in-place and has no functional sibling whose node it could record"))?,
        SchemaKind::Out | SchemaKind::Mutable => {
            return Err(format!(
                "`{name}` writes into its arguments; list its functional or in-place form (out= variants run through the fallback)"
            ))
        }
    };
    if functional.func.returns.len() != 1 || functional.func.returns[0].ty != Type::Base(BaseTy::Tensor) {
        return Err(format!(
            "`{}` does not return one tensor, which is what an IR node produces",
            functional.func.name
        ));
    }
    let node = OpSig::new(functional)?;
    let mut fields = Vec::new();
    for a in &node.args {
        fields.push(field(&a.schema_ty).map_err(|e| format!("`{}`: argument `{}` {e}", functional.func.name, a.name))?);
    }
    if !fields.iter().any(|f| matches!(f, Field::Operand | Field::OptionalOperand | Field::OperandList)) {
        return Err(format!("`{name}` has no tensor operand (factories are the backend's `supported:` kernels)"));
    }
    Ok(IrOp { listed: OpSig::new(f)?, node, fields })
}

/// Fills the `{}` of a template with `x`.
fn fill(template: &str, x: &str) -> String {
    template.replace("{}", x)
}

/// The `ir` module (node structs and the `Node` enum) for the listed operators, and the kernels
/// that record them, registered by `regs` lines at `key`. `backend` names the kernels trait.
pub(crate) fn emit_lazy(
    listed: &[String],
    fns: &[NativeFunction],
    backend: &str,
    key: &str,
    regs: &mut String,
) -> Result<String, String> {
    let mut ops = Vec::new();
    for name in listed {
        let f = fns
            .iter()
            .find(|f| f.func.name.to_string() == *name)
            .ok_or_else(|| format!("unknown operator `{name}`"))?;
        ops.push(resolve(f, fns)?);
    }
    // One node per functional operator, in list order.
    let mut nodes: Vec<&IrOp> = Vec::new();
    for op in &ops {
        if !nodes.iter().any(|n| n.node.schema_name == op.node.schema_name) {
            nodes.push(op);
        }
    }
    let mut s = String::new();
    s.push_str(
        "/// The IR of the backend's graph: one node struct per operator of the YAML's `full_codegen:` list (for an in-place operator, its functional sibling's), generic over the backend's graph value `V`.\n#[allow(clippy::clone_on_copy, clippy::too_many_arguments)]\npub mod ir {\n#[allow(unused_imports)] use ::oxten::{DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor};\n",
    );
    for n in &nodes {
        let _ = writeln!(
            s,
            "/// The node of `{}`.\n#[derive(Clone, Debug)]\npub struct {}<V> {{",
            n.node.f.func,
            n.struct_name()
        );
        for (a, f) in n.node.args.iter().zip(&n.fields) {
            let ty = match f {
                Field::Operand => "V".to_string(),
                Field::OptionalOperand => "Option<V>".to_string(),
                Field::OperandList => "Vec<V>".to_string(),
                Field::Attribute { ty, .. } => ty.clone(),
            };
            let _ = writeln!(s, "/// `{}`\npub {}: {ty},", a.text, a.ident);
        }
        s.push_str("}\n");
    }
    s.push_str("/// A node of the graph: one of the `full_codegen:` operators with its operands and attributes.\n#[derive(Clone, Debug)]\npub enum Node<V> {\n");
    for n in &nodes {
        let _ = writeln!(s, "/// `{}`\n{0}({0}<V>),", n.struct_name()).map(|_| ());
    }
    s.push_str("}\n");
    // The `Node` methods, one match each; `bind` is `n` when the body reads the node.
    let arms = |bind: &str, body: &dyn Fn(&IrOp) -> String| -> String {
        nodes.iter().map(|n| format!("Node::{}({bind}) => {{ {} }}\n", n.struct_name(), body(n))).collect()
    };
    let name_arms = arms("_", &|n| format!("{:?}", n.node.schema_name));
    let pointwise_arms = arms("_", &|n| n.node.f.tags.iter().any(|t| t == "pointwise").to_string());
    let operand_arms = arms("n", &|n| {
        let plain = n.fields.iter().all(|f| matches!(f, Field::Operand | Field::Attribute { .. }));
        let operands = n.node.args.iter().zip(&n.fields);
        if plain {
            let refs: Vec<String> =
                operands.filter(|(_, f)| matches!(f, Field::Operand)).map(|(a, _)| format!("&n.{}", a.ident)).collect();
            return format!("vec![{}]", refs.join(", "));
        }
        let mut b = String::from("let mut v = Vec::new();");
        for (a, f) in operands {
            match f {
                Field::Operand => b.push_str(&format!("v.push(&n.{});", a.ident)),
                Field::OptionalOperand => b.push_str(&format!("v.extend(n.{}.as_ref());", a.ident)),
                Field::OperandList => b.push_str(&format!("v.extend(n.{}.iter());", a.ident)),
                Field::Attribute { .. } => {}
            }
        }
        b.push_str(" v");
        b
    });
    let attr_arms: String = nodes
        .iter()
        .map(|n| {
            let parts: Vec<String> = n
                .node
                .args
                .iter()
                .zip(&n.fields)
                .filter(|(_, f)| matches!(f, Field::Attribute { .. }))
                .map(|(a, _)| format!("format!(\"{}={{:?}}\", n.{})", a.name, a.ident))
                .collect();
            if parts.is_empty() {
                format!("Node::{}(_) => String::new(),\n", n.struct_name())
            } else {
                format!("Node::{}(n) => [{}].join(\", \"),\n", n.struct_name(), parts.join(", "))
            }
        })
        .collect();
    let lower_arms = arms("n", &|n| {
        let mut b = String::new();
        let mut call = Vec::new();
        for (a, f) in n.node.args.iter().zip(&n.fields) {
            let x = &a.ident;
            match f {
                Field::Operand => {
                    let _ = write!(b, "let {x} = input(&n.{x})?;");
                    call.push(format!("&{x}"));
                }
                Field::OptionalOperand => {
                    let _ = write!(b, "let {x} = n.{x}.as_ref().map(&mut *input).transpose()?;");
                    call.push(format!("{x}.as_ref()"));
                }
                Field::OperandList => {
                    let _ = write!(b, "let {x} = n.{x}.iter().map(&mut *input).collect::<Result<Vec<_>>>()?;");
                    call.push(format!("&{x}"));
                }
                Field::Attribute { pass, .. } => call.push(fill(pass, &format!("n.{x}"))),
            }
        }
        let _ = write!(b, "::oxten::ops::{}::call({})", n.node.name, call.join(", "));
        b
    });
    let _ = write!(
        s,
        "impl<V> Node<V> {{
/// The operator's name with its overload (`add.Tensor`).
pub fn name(&self) -> &'static str {{ match self {{ {name_arms} }} }}
/// Whether the operator is elementwise (tagged `pointwise` in oxten's `native_functions.yaml`): such nodes can run fused, block by block.
pub fn is_pointwise(&self) -> bool {{ match self {{ {pointwise_arms} }} }}
/// The tensor operands, in schema order (absent optional ones left out, lists flattened).
pub fn operands(&self) -> Vec<&V> {{ match self {{ {operand_arms} }} }}
/// The other arguments as `name=value`, for printing the graph.
pub fn attributes(&self) -> String {{ match self {{ {attr_arms} }} }}
/// Runs the operator through oxten's dispatcher, with `input` giving each operand's tensor (CPU tensors, to lower the graph to the CPU's kernels).
pub fn lower(&self, input: &mut dyn FnMut(&V) -> Result<Tensor>) -> Result<Tensor> {{ match self {{ {lower_arms} }} }}
}}
}}
"
    );
    // The recording kernels.
    for op in &ops {
        let sig = &op.listed;
        // Arguments sharing a storage get meta copies sharing one: overlap checks work.
        let mut b = String::from("let metas = ::oxten::backend::MetaArgs::default();");
        let mut meta_args = Vec::new();
        for (a, f) in sig.args.iter().zip(&op.fields) {
            let x = &a.ident;
            match f {
                Field::Operand => {
                    let _ = write!(b, "let meta_{x} = metas.like({x})?;");
                    meta_args.push(format!("&meta_{x}"));
                }
                Field::OptionalOperand => {
                    let _ = write!(b, "let meta_{x} = {x}.map(|t| metas.like(t)).transpose()?;");
                    meta_args.push(format!("meta_{x}.as_ref()"));
                }
                Field::OperandList => {
                    let _ = write!(b, "let meta_{x} = {x}.iter().map(|t| metas.like(t)).collect::<Result<Vec<_>>>()?;");
                    meta_args.push(format!("&meta_{x}"));
                }
                // Kernel parameters other than tensors are `Copy` (numbers, references, options).
                Field::Attribute { .. } => meta_args.push(x.clone()),
            }
        }
        let meta_args = meta_args.join(", ");
        let inplace = sig.kind() == SchemaKind::Inplace;
        if inplace {
            // The in-place meta function checks that the result fits `self` (dtype and shape).
            let _ = write!(b, "::oxten::ops::{}::call({meta_args})?;", sig.name);
        }
        let _ = write!(b, "let meta = ::oxten::ops::{}::call({meta_args})?;", op.node.name);
        let mut fields = Vec::new();
        for (a, f) in sig.args.iter().zip(&op.fields) {
            let x = &a.ident;
            let v = match f {
                Field::Operand => format!("B::lazy_value(OP, {x})?"),
                Field::OptionalOperand => format!("{x}.map(|t| B::lazy_value(OP, t)).transpose()?"),
                Field::OperandList => {
                    format!("{x}.iter().map(|t| B::lazy_value(OP, t)).collect::<Result<Vec<_>>>()?")
                }
                Field::Attribute { store, .. } => fill(store, x),
            };
            // `alpha: alpha` reads as `alpha`.
            fields.push(if v == *x { v } else { format!("{x}: {v}") });
        }
        let node = format!("ir::Node::{0}(ir::{0} {{ {1} }})", op.struct_name(), fields.join(", "));
        let finish = if inplace {
            format!(
                "let value = B::lazy_tensor({node}, &meta)?;\n::oxten::ops::copy_::call(self_, &value, false)?;\nOk(self_.clone())"
            )
        } else {
            format!("B::lazy_tensor({node}, &meta)")
        };
        let kernel = format!("{}_lazy", sig.name);
        let _ = write!(
            s,
            "/// Records `{}` as an IR node{}.\n#[allow(non_snake_case, clippy::clone_on_copy, clippy::too_many_arguments)]\nfn {kernel}<B: {backend}Kernels>({}) -> Result<{}> {{\nconst OP: &str = {:?};\n{b}\n{finish}\n}}\n",
            sig.f.func,
            if inplace { " of its functional form and copies the result into `self`" } else { "" },
            sig.params(),
            sig.ret,
            sig.schema_name,
        );
        let _ = writeln!(
            regs,
            "::oxten::ops::{}::OP.register(::oxten::dispatch::DispatchKey::{key}, {kernel}::<B>);",
            sig.name
        );
    }
    Ok(s)
}

/// The trait items a lazy backend implements next to its kernels.
pub(crate) const TRAIT_ITEMS: &str = "/// A value of the backend's graph: what a tensor argument of a `full_codegen:` operator becomes in its IR node.\ntype Value: Clone + std::fmt::Debug;\n/// The graph value of `t`, a tensor argument of the operator `op` (a tensor of this device, or a CPU tensor the graph captures); an error names `op` when `t` cannot take part.\nfn lazy_value(op: &str, t: &Tensor) -> Result<Self::Value>;\n/// A tensor of this device whose value is `node`'s result; `meta` is the output of the operator's meta function (sizes, strides, dtype).\nfn lazy_tensor(node: ir::Node<Self::Value>, meta: &Tensor) -> Result<Tensor>;\n";
