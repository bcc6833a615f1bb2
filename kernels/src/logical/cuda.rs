//! `where` and `logical_not` on CUDA: the CPU's iterator setup (for `where`: promotion,
//! broadcasting, a 0-dim CPU condition moved to the device), then a generated-style pointwise
//! kernel.

use super::{logical_not_iter, where_iter, where_output};
use crate::cuda::pointwise::{launch_pointwise_in, PointwiseKernel};
use crate::generated::decls::{LogicalNotOutCuda, WhereSelfCuda, WhereSelfOutCuda};
use crate::Cuda;
use oxten_runtime::{Result, Tensor};

static WHERE: PointwiseKernel = PointwiseKernel {
    op: "where.self_out",
    expr: "((a1 != T(0)) ? a2 : a3)",
    arity: 3,
    float_only: false,
    int_only: false,
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

/// `x == 0` in the input's dtype (NaN is non-zero), stored as the output's dtype.
static LOGICAL_NOT: PointwiseKernel = PointwiseKernel {
    op: "logical_not.out",
    expr: "T(a1 == T(0))",
    arity: 1,
    float_only: false,
    int_only: false,
    bool_ok: true,
};

impl LogicalNotOutCuda for Cuda {
    fn logical_not_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        let iter = logical_not_iter(self_, out)?;
        launch_pointwise_in(&iter, &LOGICAL_NOT, &[], self_.dtype())?;
        Ok(out.clone())
    }
}
