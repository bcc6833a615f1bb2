//! `matmul` and `linear`, CompositeImplicitAutograd as in PyTorch: they only pick and reshape,
//! and call `dot`, `mv`, `mm`, `bmm` or `addmm`, so autograd (and double backward) comes from
//! those operators' formulas. The dispatch rules are PyTorch's `_matmul_impl` and `linear`:
//!
//! | `self` · `other` | call |
//! |---|---|
//! | 1-D · 1-D | `dot` |
//! | 2-D · 1-D | `mv` |
//! | 1-D · 2-D | `unsqueeze(0)`, `mm`, `squeeze(0)` |
//! | 2-D · 2-D | `mm` |
//! | ≥3-D · 1-D/2-D (or 1-D/2-D · ≥3-D), foldable | the batch folded into the rows: one `mm`/`mv` |
//! | otherwise | batch dims broadcast, `expand` + `reshape` to 3-D, `bmm`, `view` back |
//!
//! Folding (`should_fold`) happens when the larger operand's batch dims can be merged without a
//! copy, or when the smaller operand requires grad (its gradient is then one `mm`, not a batch
//! of products summed). `linear(input, weight, bias)` is `addmm(bias, input, weight.t())` for a
//! 2-D input with a bias (and for contiguous inputs with a 1-D bias, flattened to 2-D first),
//! else `matmul(input, weight.t())` plus the bias.

use super::resize_output;
use crate::generated::decls::{
    LinearCompositeImplicit, LinearOutCompositeExplicit, MatmulCompositeImplicit, MatmulOutCompositeImplicit,
    UnsafeViewCompositeExplicit,
};
use crate::iter::infer_size;
use crate::Composite;
use oxten_runtime::autograd::is_grad_enabled;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

impl UnsafeViewCompositeExplicit for Composite {
    /// `view` below autograd: the result shares `self`'s storage, but autograd records an
    /// ordinary node (`UnsafeViewBackward0`), not a view, as for PyTorch's `_unsafe_view`.
    fn _unsafe_view(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
        self_.try_view(size)
    }
}

/// `_unsafe_view(t, shape)`: how matmul reshapes the products it computed (nobody else holds
/// them, so they need not be autograd views).
fn unsafe_view(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    ops::_unsafe_view::call(t, shape)
}

/// `t.mT`: the transpose of the last two dims.
fn mt(t: &Tensor) -> Result<Tensor> {
    t.try_transpose(-2, -1)
}

/// PyTorch's `should_fold`: whether `matmul` can fold the batch of the larger operand (≥ 3-D,
/// the other 1-D or 2-D) into the rows of one `mm`/`mv`.
fn should_fold(tensor1: &Tensor, tensor2: &Tensor, has_out: bool) -> Result<bool> {
    let t1_larger = tensor1.dim() >= tensor2.dim();
    let t1 = if t1_larger { tensor1.clone() } else { mt(tensor2)? };
    let dim_t1 = t1.dim();
    let dim_t2 = if t1_larger { tensor2.dim() } else { tensor1.dim() };
    if !(dim_t1 >= 3 && dim_t2 <= 2) {
        return Ok(false);
    }
    // Folding avoids materializing a `[batch, n, k]` gradient for the smaller operand, even at
    // the price of a copy to fold.
    let t2_requires_grad = if t1_larger { tensor2.requires_grad() } else { tensor1.requires_grad() };
    if t2_requires_grad && !has_out {
        return Ok(true);
    }
    // A 2-D first operand would need the product transposed back: a copy.
    if tensor1.dim() == 2 {
        return Ok(false);
    }
    if t1.numel() == 0 {
        return Ok(true);
    }
    // The batch dims merge without a copy when each steps over the next.
    let (sizes, strides) = (t1.sizes(), t1.strides());
    Ok((0..dim_t1 - 2).all(|i| strides[i] == strides[i + 1] * sizes[i + 1]))
}

/// PyTorch's `_matmul_impl`: the product, or with `out`, the product written into it.
fn matmul_impl(tensor1: &Tensor, tensor2: &Tensor, out: Option<&Tensor>) -> Result<Tensor> {
    let (dim1, dim2) = (tensor1.dim(), tensor2.dim());
    if dim1 == 0 || dim2 == 0 {
        return Err(Error::runtime(format!(
            "both arguments to matmul need to be at least 1D, but they are {dim1}D and {dim2}D"
        )));
    }
    if let Some(out) = out {
        if is_grad_enabled() && (tensor1.requires_grad() || tensor2.requires_grad() || out.requires_grad()) {
            return Err(Error::runtime(
                "matmul(): functions with out=... arguments don't support automatic differentiation, but one of the \
                 arguments requires grad.",
            ));
        }
    }
    match (dim1, dim2, out) {
        (1, 1, None) => return tensor1.try_dot(tensor2),
        (1, 1, Some(out)) => return ops::dot_out::call(tensor1, tensor2, out),
        (2, 1, None) => return tensor1.try_mv(tensor2),
        (2, 1, Some(out)) => return ops::mv_out::call(tensor1, tensor2, out),
        (1, 2, None) => return tensor1.try_unsqueeze(0)?.try_mm(tensor2)?.try_squeeze_dim(0),
        (1, 2, Some(out)) => {
            ops::mm_out::call(&tensor1.try_unsqueeze(0)?, tensor2, out)?;
            return squeeze_out(out);
        }
        (2, 2, None) => return tensor1.try_mm(tensor2),
        (2, 2, Some(out)) => return ops::mm_out::call(tensor1, tensor2, out),
        _ => {}
    }
    if should_fold(tensor1, tensor2, out.is_some())? {
        folded(tensor1, tensor2, out)
    } else {
        batched(tensor1, tensor2, out)
    }
}

/// `out.squeeze_(0)`: `out` (of size `[1, n]`) made `[n]` in place, keeping its stride.
fn squeeze_out(out: &Tensor) -> Result<Tensor> {
    let (sizes, strides) = (out.sizes(), out.strides());
    out.set_layout_(&sizes[1..], &strides[1..], out.storage_offset())?;
    Ok(out.clone())
}

/// The folded path: `t1` (≥ 3-D) reshaped to `[rows, k]` times the 1-D or 2-D `t2`, with the
/// operands swapped and transposed when the larger one is the second.
fn folded(tensor1: &Tensor, tensor2: &Tensor, out: Option<&Tensor>) -> Result<Tensor> {
    let (dim1, dim2) = (tensor1.dim(), tensor2.dim());
    let transpose = dim2 > dim1;
    let t1 = if transpose { mt(tensor2)? } else { tensor1.clone() };
    let t2 = if !transpose {
        tensor2.clone()
    } else if dim1 == 2 {
        tensor1.try_t()?
    } else {
        tensor1.clone()
    };
    let sizes1 = t1.sizes();
    let k = sizes1[sizes1.len() - 1];
    let mut output_shape: Vec<i64> = sizes1[..sizes1.len() - 1].to_vec();
    let rows: i64 = output_shape.iter().product();
    let t2_is_matrix = t2.dim() == 2;
    if t2_is_matrix {
        output_shape.push(t2.sizes()[1]);
    }
    // Why not view(-1, k): with k = 0, -1 would be ambiguous.
    let t1_folded = t1.try_reshape(&[rows, k])?;
    match out {
        None if t2_is_matrix => {
            let output = unsafe_view(&t1_folded.try_mm(&t2)?, &output_shape)?;
            if transpose {
                mt(&output)?.try_contiguous()
            } else {
                Ok(output)
            }
        }
        None => unsafe_view(&t1_folded.try_mv(&t2)?, &output_shape),
        Some(out) => {
            resize_output(out, &output_shape)?;
            let reshaped =
                if t2_is_matrix { out.try_reshape(&[rows, t2.sizes()[1]])? } else { out.try_reshape(&[rows])? };
            if t2_is_matrix {
                ops::mm_out::call(&t1_folded, &t2, &reshaped)?;
            } else {
                ops::mv_out::call(&t1_folded, &t2, &reshaped)?;
            }
            copy_back(out, &reshaped, &output_shape)
        }
    }
}

/// Copies `reshaped` into `out` unless it is a view of it.
fn copy_back(out: &Tensor, reshaped: &Tensor, output_shape: &[i64]) -> Result<Tensor> {
    if !reshaped.storage().is_alias_of(out.storage()) {
        ops::copy_::call(out, &reshaped.try_view(output_shape)?, false)?;
    }
    Ok(out.clone())
}

/// The general path: batch dims broadcast, both operands expanded and reshaped to 3-D, `bmm`.
fn batched(tensor1: &Tensor, tensor2: &Tensor, out: Option<&Tensor>) -> Result<Tensor> {
    let (dim1, dim2) = (tensor1.dim(), tensor2.dim());
    let (s1, s2) = (tensor1.sizes(), tensor2.sizes());
    // m1 and m2 are tracked separately (they must match) for bmm's error message.
    let n = if dim1 > 1 { s1[dim1 - 2] } else { 1 };
    let m1 = s1[dim1 - 1];
    let batch1 = &s1[..dim1.saturating_sub(2)];
    let m2 = if dim2 > 1 { s2[dim2 - 2] } else { s2[0] };
    let p = if dim2 > 1 { s2[dim2 - 1] } else { 1 };
    let batch2 = &s2[..dim2.saturating_sub(2)];
    let mut output_shape = infer_size(batch1, batch2)?;
    let batch: i64 = output_shape.iter().product();
    let expand_to = |tail: [i64; 2]| -> Vec<i64> { output_shape.iter().copied().chain(tail).collect() };
    let t1 = tensor1.try_expand(&expand_to([n, m1]))?.try_reshape(&[batch, n, m1])?;
    let vector_rhs = dim2 == 1;
    let t2 = if vector_rhs { tensor2.try_unsqueeze(-1)? } else { tensor2.clone() };
    let t2 = t2.try_expand(&expand_to([m2, p]))?.try_reshape(&[batch, m2, p])?;
    if dim1 > 1 {
        output_shape.push(n);
    }
    if dim2 > 1 {
        output_shape.push(p);
    }
    match out {
        None => {
            let r = t1.try_bmm(&t2)?;
            let r = if vector_rhs { r.try_squeeze_dim(-1)? } else { r };
            unsafe_view(&r, &output_shape)
        }
        Some(out) => {
            resize_output(out, &output_shape)?;
            let reshaped = out.try_reshape(&[batch, n, p])?;
            ops::bmm_out::call(&t1, &t2, &reshaped)?;
            copy_back(out, &reshaped, &output_shape)
        }
    }
}

impl MatmulCompositeImplicit for Composite {
    fn matmul(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        matmul_impl(self_, other, None)
    }
}

impl MatmulOutCompositeImplicit for Composite {
    fn matmul_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
        matmul_impl(self_, other, Some(out))
    }
}

/// `addmm(bias, input.reshape(-1, k), weight.t())` viewed back to `input`'s leading dims.
fn flatten_nd_linear(input: &Tensor, weight: &Tensor, bias: &Tensor) -> Result<Tensor> {
    let sizes = input.sizes();
    let lead = &sizes[..sizes.len() - 1];
    // Not reshape(-1, k): -1 is ambiguous when a dim is 0.
    let rows: i64 = lead.iter().product();
    let flat = input.try_reshape(&[rows, sizes[sizes.len() - 1]])?;
    let result = ops::addmm::call(bias, &flat, &weight.try_t()?, Scalar::Int(1), Scalar::Int(1))?;
    let new_size: Vec<i64> = lead.iter().copied().chain([result.sizes()[1]]).collect();
    result.try_view(&new_size)
}

impl LinearCompositeImplicit for Composite {
    fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        let (di, dw) = (input.dim(), weight.dim());
        if di == 0 || dw == 0 {
            return Err(Error::runtime(format!(
                "both arguments to linear need to be at least 1D, but they are {di}D and {dw}D"
            )));
        }
        if let Some(b) = bias {
            if di == 2 {
                // The fused product is marginally faster.
                return ops::addmm::call(b, input, &weight.try_t()?, Scalar::Int(1), Scalar::Int(1));
            }
            if input.is_contiguous() && (di == 3 || b.dim() == 1) {
                return flatten_nd_linear(input, weight, b);
            }
        }
        let output = input.try_matmul(&weight.try_t()?)?;
        match bias {
            Some(b) => output.try_add_(b),
            None => Ok(output),
        }
    }
}

impl LinearOutCompositeExplicit for Composite {
    fn linear_out(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>, out: &Tensor) -> Result<Tensor> {
        if let Some(b) = bias {
            if input.dim() == 2 {
                return ops::addmm_out::call(b, input, &weight.try_t()?, Scalar::Int(1), Scalar::Int(1), out);
            }
        }
        let output = ops::matmul_out::call(input, &weight.try_t()?, out)?;
        match bias {
            Some(b) => output.try_add_(b),
            None => Ok(output),
        }
    }
}
