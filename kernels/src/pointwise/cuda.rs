//! Pointwise operators with hand-picked CUDA expressions: `clamp` (NaN-propagating
//! `min(max(x, lo), hi)` with either bound optional, one kernel per combination of bounds) and
//! `gelu` (one kernel per approximation, the string argument choosing).

use crate::cuda::pointwise::{launch_pointwise, PointwiseKernel};
use crate::generated::decls::{ClampOutCuda, GeluOutCuda};
use crate::iter::TensorIterator;
use crate::Cuda;
use oxten_runtime::{DType, Result, Scalar, Tensor};

static CLAMP: PointwiseKernel = PointwiseKernel {
    op: "clamp.out",
    expr: "ox_min(ox_max(a1, c0), c1)",
    arity: 1,
    float_only: false,
    int_only: false,
    bool_ok: false,
};
static CLAMP_MIN: PointwiseKernel = PointwiseKernel {
    op: "clamp.out",
    expr: "ox_max(a1, c0)",
    arity: 1,
    float_only: false,
    int_only: false,
    bool_ok: false,
};
static CLAMP_MAX: PointwiseKernel = PointwiseKernel {
    op: "clamp.out",
    expr: "ox_min(a1, c0)",
    arity: 1,
    float_only: false,
    int_only: false,
    bool_ok: false,
};

impl ClampOutCuda for Cuda {
    fn clamp_out(iter: &TensorIterator, _self: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<()> {
        if iter.common_dtype() == DType::Bool {
            return Err(crate::cuda::launch::not_implemented("clamp", DType::Bool));
        }
        match (min, max) {
            (Some(lo), Some(hi)) => launch_pointwise(iter, &CLAMP, &[lo, hi]),
            (Some(lo), None) => launch_pointwise(iter, &CLAMP_MIN, &[lo]),
            (None, Some(hi)) => launch_pointwise(iter, &CLAMP_MAX, &[hi]),
            (None, None) => {
                Err(oxten_runtime::Error::value("torch.clamp: At least one of 'min' or 'max' must not be None"))
            }
        }
    }
}

static GELU: PointwiseKernel = PointwiseKernel {
    op: "gelu.out",
    expr: "ox_gelu(a1)",
    arity: 1,
    float_only: true,
    int_only: false,
    bool_ok: false,
};
static GELU_TANH: PointwiseKernel = PointwiseKernel {
    op: "gelu.out",
    expr: "ox_gelu_tanh(a1)",
    arity: 1,
    float_only: true,
    int_only: false,
    bool_ok: false,
};

impl GeluOutCuda for Cuda {
    fn gelu_out(iter: &TensorIterator, _self: &Tensor, approximate: &str) -> Result<()> {
        let k = if super::gelu_uses_tanh(approximate)? { &GELU_TANH } else { &GELU };
        launch_pointwise(iter, k, &[])
    }
}
