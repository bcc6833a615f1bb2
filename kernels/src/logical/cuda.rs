//! `where` on CUDA: the CPU's iterator setup (promotion, broadcasting, a 0-dim CPU condition
//! moved to the device), then a generated-style pointwise kernel.

use super::{where_iter, where_output};
use crate::cuda::pointwise::{launch_pointwise_in, PointwiseKernel};
use crate::generated::decls::{WhereSelfCuda, WhereSelfOutCuda};
use crate::Cuda;
use oxten_runtime::{Result, Tensor};

static WHERE: PointwiseKernel = PointwiseKernel {
    op: "where.self_out",
    expr: "((a1 != T(0)) ? a2 : a3)",
    arity: 3,
    float_only: false,
    bool_ok: true,
};

fn where_into(condition: &Tensor, self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<()> {
    // The iterator's common dtype is the condition's (its first input): compute in the result
    // type instead.
    let (iter, rt) = where_iter(condition, self_, other, out)?;
    launch_pointwise_in(&iter, &WHERE, &[], rt)
}

impl WhereSelfCuda for Cuda {
    fn where_self(condition: &Tensor, self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        let out = where_output(condition, self_, other)?;
        where_into(condition, self_, other, &out)?;
        Ok(out)
    }
}

impl WhereSelfOutCuda for Cuda {
    fn where_self_out(condition: &Tensor, self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
        where_into(condition, self_, other, out)?;
        Ok(out.clone())
    }
}
