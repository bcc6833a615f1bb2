//! 1-D pooling (`max_pool1d`, `avg_pool1d`, `adaptive_avg_pool1d`): the 2-D operators on a
//! height of 1, as PyTorch's own composites. Gradients come from the 2-D operators.

use crate::generated::decls::{
    AdaptiveAvgPool1dCompositeImplicit, AvgPool1dCompositeImplicit, MaxPool1dCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

fn check_1d(op: &str, self_: &Tensor) -> Result<()> {
    if !matches!(self_.dim(), 2 | 3) {
        return Err(Error::runtime(format!("{op}() Expected 2D or 3D input tensor, but got {}D", self_.dim())));
    }
    Ok(())
}

/// One value per 1-D parameter, with PyTorch's message naming it.
fn one(op: &str, name: &str, v: &[i64]) -> Result<i64> {
    match v {
        [x] => Ok(*x),
        _ => Err(Error::runtime(format!("{op}() argument '{name}' should contain one int (got {})", v.len()))),
    }
}

/// The window and its stride (the window when `stride` is empty, as PyTorch's default).
fn window(op: &str, kernel_size: &[i64], stride: &[i64]) -> Result<(i64, i64)> {
    let k = one(op, "kernel_size", kernel_size)?;
    let s = if stride.is_empty() { k } else { one(op, "stride", stride)? };
    Ok((k, s))
}

impl MaxPool1dCompositeImplicit for Composite {
    fn max_pool1d(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        const OP: &str = "max_pool1d";
        check_1d(OP, self_)?;
        let (k, s) = window(OP, kernel_size, stride)?;
        let (p, d) = (one(OP, "padding", padding)?, one(OP, "dilation", dilation)?);
        let x = self_.try_unsqueeze(-2)?;
        ops::max_pool2d::call(&x, &[1, k], &[1, s], &[0, p], &[1, d], ceil_mode)?.try_squeeze_dim(-2)
    }
}

impl AvgPool1dCompositeImplicit for Composite {
    fn avg_pool1d(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
    ) -> Result<Tensor> {
        const OP: &str = "avg_pool1d";
        check_1d(OP, self_)?;
        let (k, s) = window(OP, kernel_size, stride)?;
        let p = one(OP, "padding", padding)?;
        let x = self_.try_unsqueeze(-2)?;
        ops::avg_pool2d::call(&x, &[1, k], &[1, s], &[0, p], ceil_mode, count_include_pad, None)?.try_squeeze_dim(-2)
    }
}

impl AdaptiveAvgPool1dCompositeImplicit for Composite {
    fn adaptive_avg_pool1d(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
        const OP: &str = "adaptive_avg_pool1d";
        check_1d(OP, self_)?;
        let o = one(OP, "output_size", output_size)?;
        ops::adaptive_avg_pool2d::call(&self_.try_unsqueeze(-2)?, &[1, o])?.try_squeeze_dim(-2)
    }
}
