//! `derivatives.yaml`: the backward formula of every differentiable operator, from which the
//! generator emits one autograd node type per entry and one Autograd-key kernel per operator
//! (see [`crate::emit::autograd`]).
//!
//! # Format
//!
//! The file sits next to `native_functions.yaml` and is a YAML list with one entry per
//! differentiable operator:
//!
//! ```yaml
//! - name: mul.Tensor(Tensor self, Tensor other) -> Tensor     # the exact schema string
//!   self: grad.try_mul(&other)?                               # one Rust expression per input
//!   other: grad.try_mul(&self)?
//! - name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
//!   self: value_selecting_reduction_backward(&grad, dim, &indices, &self.sizes(), keepdim)?
//!   output_differentiability: [True, False]
//! - name: where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
//!   condition: non_differentiable
//!   self: …
//! - name: foo(Tensor input, Tensor weight, Tensor? bias) -> Tensor
//!   input, weight, bias: foo_backward(&grad, &input, &weight, grad_input_mask)?
//! ```
//!
//! - `name` must be the operator's schema exactly as written in `native_functions.yaml`, of a
//!   functional operator (or of an in-place operator that has no functional variant, such as
//!   `copy_`). An in-place variant (`add_.Tensor`) inherits the formulas of its functional
//!   variant; out= variants are never differentiable. An operator whose only kernel is
//!   CompositeImplicitAutograd takes no entry: its gradient comes from the operators it calls.
//! - Every other key names one input (or several, comma-separated, for a *joint* formula) and
//!   gives a Rust expression: the gradient of that input, a `Tensor`, or for a joint formula a
//!   tuple with one `Option<Tensor>` per input. The expression is evaluated inside a function
//!   returning `Result`, so `?` works: use the `try_` forms of operators, and only
//!   differentiable operators, so that double backward works.
//! - `input: non_differentiable` marks an input that gets no gradient (an index, a mask). Every
//!   other `Tensor` or `Tensor?` input must have a formula.
//! - `output_differentiability: [True, False]` marks which returns carry gradients (default:
//!   every `Tensor` return). An operator none of whose outputs is differentiable needs no
//!   formulas and gets no autograd kernel.
//!
//! # Forward-mode formulas
//!
//! `result:` (or `result0:`, `result1:` … for several returns) gives the *tangent* of a
//! differentiable output, for forward-mode AD (`oxten::autograd::forward_ad`, `oxten::func`):
//!
//! ```yaml
//! - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
//!   self: grad.try_mul(&other)?
//!   other: grad.try_mul(&self)?
//!   result: self_t.try_mul(&other_p)?.try_add(&other_t.try_mul(&self_p)?)?
//! - name: exp(Tensor self) -> Tensor
//!   self: grad.try_mul(&result)?
//!   result: auto_element_wise
//! - name: view(Tensor(a) self, SymInt[] size) -> Tensor(a)
//!   self: grad.try_reshape(&self.sizes())?
//!   result: auto_linear
//! ```
//!
//! - An explicit formula is a Rust expression over `<input>_p` (the primal) and `<input>_t`
//!   (its tangent; zeros when it has none; `Option` for `Tensor?`, `Vec` for `Tensor[]`) of
//!   each differentiable input, the other arguments and non-differentiable tensors by name,
//!   and the outputs (`result`, `result0` …, return names). Quote it when it starts with `{`.
//! - `auto_element_wise`: the backward formula of the single differentiable input with the
//!   tangent in place of `grad` (right when the Jacobian is diagonal).
//! - `auto_linear`: the operator applied to the tangents (right when it is linear in them).
//! - An in-place variant applies its functional entry's formula and updates the tangent in
//!   place. An entry with a differentiable output but no forward formula makes forward-mode AD
//!   through the operator an error; the generated `NO_FORWARD_FORMULA` lists such entries.
//!
//! # Names in scope in a formula
//!
//! | name | value |
//! |---|---|
//! | `grad` | the gradient of the first differentiable output (`Tensor`) |
//! | `grads` | the gradients of every differentiable output (`Vec<Tensor>`, zero-filled where none flowed) |
//! | `grad_<return name>` | the gradient of a named differentiable return |
//! | `grad_input_mask` | `[bool; N]`: which inputs of a joint formula need a gradient |
//! | an input's schema name | tensors as `Tensor`, `Tensor?` as `Option<Tensor>`, others as their owned Rust value (`Scalar`, `i64`, `Vec<i64>`, `Option<Vec<i64>>`, `String` …) |
//! | `result` / `result0`, `result1`, … / a return's name | the outputs (`Tensor`) |
//!
//! `self` may be written as is; the generator renames it to `self_`. Names bound inside the
//! formula (`let`, closures, `match`) shadow these. Plain function names (`sum_to(…)`) resolve
//! to the hand-written helpers of `oxten::autograd::helpers` or to the operator free functions.
//!
//! # What a node saves
//!
//! The generator parses each formula with `syn` and saves exactly the names it uses: tensors as
//! `SavedVariable`s (inputs before the op runs, outputs after it), other arguments by value. A
//! tensor input used only as the receiver of a metadata method (`sizes`, `strides`, `storage_offset`,
//! `dtype`, `device`, `numel`, `dim`, `is_contiguous`) is not kept alive: the node saves the
//! method's result (`self_sizes: DimVec`) and the formula reads that instead. The in-place
//! variant of an operator whose formulas use the tensor `self` saves a clone of `self` taken
//! before it writes (PyTorch's `original_self`).
//!
//! # Errors
//!
//! Every problem is reported as `derivatives.yaml:12: in `mul.Tensor`: …`: YAML that is not a
//! list of entries, a schema that matches no operator, formulas for a non-tensor argument or an
//! unknown input, unparseable Rust, unknown names in a formula (with the names in scope), a
//! differentiable input with neither a formula nor `non_differentiable`, entries for out=,
//! in-place (with a functional variant) or CompositeImplicitAutograd-only operators, and in
//! forward formulas: a tangent of a non-differentiable input, `auto_element_wise` with several
//! differentiable inputs, a formula for a non-differentiable output.
//!
//! Differentiable operators with a kernel below autograd but no entry are not an error: their
//! autograd kernel records a `NotImplementedBackward` node, so the forward works and backward
//! fails only if it reaches that node. The generated file lists them.

mod calls;
mod formula;
mod load;
mod resolve;

pub use calls::{scan_rust, unknown_calls, Vocabulary};
pub use formula::{meta_method, print_expr, MetaMethod, Refs, METADATA_METHODS};
pub use load::{load, RawEntry, RawFormula};
pub use resolve::{
    has_backend_kernel, Binding, Derivative, DiffInput, FieldSource, Formula, ForwardFormula, ForwardKind, SavedField,
    ValueBy,
};

use crate::yaml::NativeFunction;

/// Parses and checks `derivatives.yaml` (`text`, read from `file`, used in messages) against the
/// operators of `native_functions.yaml`. Errors are sorted by line.
pub fn parse_derivatives(text: &str, file: &str, fns: &[NativeFunction]) -> Result<Vec<Derivative>, Vec<String>> {
    let located = |mut es: Vec<(usize, String, String)>| {
        es.sort_by_key(|e| e.0);
        es.into_iter().map(|(line, entry, msg)| format!("{file}:{line}: in `{entry}`: {msg}")).collect::<Vec<_>>()
    };
    let entries = load::load(text).map_err(located)?;
    resolve::resolve(&entries, fns).map_err(located)
}
