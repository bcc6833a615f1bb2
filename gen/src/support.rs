//! Helpers for the generated registrations.

use oxten_runtime::{Error, MemoryFormat, Result, Tensor};

/// The one output of a structured kernel.
pub(crate) fn take1(v: Vec<Tensor>) -> Tensor {
    v.into_iter().next().expect("a structured op with one return has one output")
}

/// The two outputs of a structured kernel.
pub(crate) fn take2(v: Vec<Tensor>) -> (Tensor, Tensor) {
    let mut it = v.into_iter();
    let a = it.next().expect("a structured op with two returns has two outputs");
    let b = it.next().expect("a structured op with two returns has two outputs");
    (a, b)
}

/// The kernel body of an `autogen:` out= overload (see `oxten_codegen::yaml::autogen`): writes
/// the functional operator's results into their out= tensors, as PyTorch's generated out=
/// kernels do (`resize_output`, then `copy_`), with the checks of its structured out= kernels:
/// each out= tensor (`(argument name, tensor, result)`) must be on the result's device, have the
/// result's dtype (`exact_dtype`; pointwise operators, which PyTorch runs through a
/// TensorIterator, take any dtype the result casts to without narrowing, `can_cast`), and share
/// no memory with itself, the other out= tensors or the tensor `inputs`.
pub(crate) fn write_autogen_out(
    exact_dtype: bool,
    inputs: &[Option<&Tensor>],
    outs: &[(&str, &Tensor, &Tensor)],
) -> Result<()> {
    use oxten_runtime::iter::{assert_no_internal_overlap, assert_no_overlap, scalar_type_name};
    for (i, &(name, out, result)) in outs.iter().enumerate() {
        if out.device() != result.device() {
            return Err(Error::device(format!(
                "Expected out tensor `{name}` to have device {}, but got {} instead",
                result.device(),
                out.device()
            )));
        }
        if exact_dtype && out.dtype() != result.dtype() {
            return Err(Error::dtype(format!(
                "Expected out tensor `{name}` to have dtype {}, but got {} instead",
                scalar_type_name(result.dtype()).to_lowercase(),
                scalar_type_name(out.dtype()).to_lowercase()
            )));
        }
        if !oxten_runtime::dtype::can_cast(result.dtype(), out.dtype()) {
            return Err(Error::dtype(format!(
                "result type {} can't be cast to the desired output type {} (out= argument `{name}`)",
                scalar_type_name(result.dtype()),
                scalar_type_name(out.dtype())
            )));
        }
        assert_no_internal_overlap(out)?;
        for input in inputs.iter().flatten() {
            assert_no_overlap(out, input)?;
        }
        for &(_, other, _) in &outs[..i] {
            assert_no_overlap(out, other)?;
        }
    }
    for &(_, out, result) in outs {
        if out.sizes() != result.sizes() {
            out.resize_(&result.sizes(), MemoryFormat::Contiguous)?;
        }
        oxten_runtime::ops::copy_::call(out, result, false)?;
    }
    Ok(())
}
