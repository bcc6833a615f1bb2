//! The hand-written kernels of the `myops` operator library (`ops_library/native_functions.yaml`):
//! what a downstream crate writes besides its YAML. The traits are generated; a missing or
//! mistyped kernel is a compile error naming it.

use crate::myops::generated::decls::{
    BiasGeluCompositeImplicit, ClampAbsOutCpu, ClampAbsOutMetaFn, RowNormsCpu, RowNormsMeta,
};
use oxten::iter::{cpu_kernel_unary_math, unary_float_op_config, StructuredOutputs, TensorIterator};
use oxten::{DType, Device, Error, MemoryFormat, Result, Scalar, Tensor};

/// Implements the kernels `dispatch:` names in the library's YAML.
pub struct MyKernels;

/// The shape of `row_norms(x, keepdim)`: `x`'s shape without (or with size 1 in) the last dim.
fn row_norms_shape(x: &Tensor, keepdim: bool) -> Result<Vec<i64>> {
    let mut shape = x.sizes().to_vec();
    match shape.last_mut() {
        None => {
            return Err(Error::shape("row_norms: expected a tensor with at least one dimension, got a 0-dim tensor"))
        }
        Some(last) if keepdim => *last = 1,
        Some(_) => {
            shape.pop();
        }
    }
    Ok(shape)
}

impl RowNormsCpu for MyKernels {
    /// The Euclidean norm of each row (the last dim), accumulated in f64.
    fn row_norms(self_: &Tensor, keepdim: bool) -> Result<Tensor> {
        let shape = row_norms_shape(self_, keepdim)?;
        let n = *self_.sizes().last().unwrap_or(&1) as usize;
        let rows: Vec<f64> = match self_.dtype() {
            DType::F32 | DType::F64 => self_.to_f64_vec()?,
            other => return Err(Error::dtype(format!("row_norms: expected a float32 or float64 tensor, got {other}"))),
        };
        let norms: Vec<f64> = if n == 0 {
            vec![0.0; shape.iter().product::<i64>() as usize]
        } else {
            rows.chunks(n).map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt()).collect()
        };
        let out = Tensor::from_vec(norms, &shape)?;
        if self_.dtype() == DType::F64 {
            Ok(out)
        } else {
            out.try_to_dtype(self_.dtype())
        }
    }
}

impl RowNormsMeta for MyKernels {
    fn row_norms(self_: &Tensor, keepdim: bool) -> Result<Tensor> {
        Tensor::empty(&row_norms_shape(self_, keepdim)?, self_.dtype(), Device::Meta, MemoryFormat::Contiguous)
    }
}

impl BiasGeluCompositeImplicit for MyKernels {
    /// `gelu(self + bias)`, over oxten's operators (so their autograd records it).
    fn bias_gelu(self_: &Tensor, bias: &Tensor) -> Result<Tensor> {
        self_.try_add(bias)?.try_gelu()
    }
}

impl ClampAbsOutMetaFn for MyKernels {
    /// `clamp_abs`'s meta function: a float result shaped like `self` (integers promote), and
    /// a bound that is not negative.
    fn clamp_abs_out(outs: &mut StructuredOutputs, self_: &Tensor, bound: Scalar) -> Result<TensorIterator> {
        if bound.to_f64() < 0.0 {
            return Err(Error::value(format!("clamp_abs: bound must be >= 0, got {}", bound.to_f64())));
        }
        unary_float_op_config().add_input(self_).build_structured(outs)
    }
}

impl ClampAbsOutCpu for MyKernels {
    /// `self` clamped to `[-bound, bound]`, through oxten's typed CPU loop.
    fn clamp_abs_out(iter: &TensorIterator, _self: &Tensor, bound: Scalar) -> Result<()> {
        let b = bound.to_f64();
        match iter.common_dtype() {
            DType::F32 => cpu_kernel_unary_math::<f32>(iter, move |x: f32| x.clamp(-b as f32, b as f32)),
            DType::F64 => cpu_kernel_unary_math::<f64>(iter, move |x: f64| x.clamp(-b, b)),
            other => return Err(Error::dtype(format!("clamp_abs: not implemented for {other}"))),
        }
        Ok(())
    }
}

/// The gradient of `row_norms`: `grad / norm * x`, with the reduced dim restored.
pub fn row_norms_backward(grad: &Tensor, x: &Tensor, norms: &Tensor, keepdim: bool) -> Result<Tensor> {
    let ratio = grad.try_div(norms)?;
    let ratio = if keepdim { ratio } else { ratio.try_unsqueeze(-1)? };
    ratio.try_mul(x)
}
