//! `instance_norm`: `batch_norm` over the input viewed as `[1, N·C, …]`, with the affine
//! parameters and running statistics repeated per sample, as PyTorch composes it; the running
//! statistics (when given and `use_input_stats`) are updated with the mean over the batch.

use crate::generated::decls::InstanceNormCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

impl InstanceNormCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn instance_norm(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        use_input_stats: bool,
        momentum: f64,
        eps: f64,
        cudnn_enabled: bool,
    ) -> Result<Tensor> {
        if !use_input_stats && (running_mean.is_none() || running_var.is_none()) {
            return Err(Error::runtime(
                "Expected running_mean and running_var to be defined when use_input_stats is false",
            ));
        }
        if input.dim() < 2 {
            return Err(Error::runtime(format!(
                "instance_norm: expected an input with at least 2 dimensions [N, C, ...], got {}",
                input.dim()
            )));
        }
        let sizes = input.sizes();
        let (n, c) = (sizes[0], sizes[1]);
        let mut shape = vec![1, n * c];
        shape.extend_from_slice(&sizes[2..]);
        let x = ops::reshape::call(input, &shape)?;
        let repeat = |t: Option<&Tensor>| t.map(|t| t.try_repeat(&[n])).transpose();
        let (w, b) = (repeat(weight)?, repeat(bias)?);
        let (rm, rv) = (repeat(running_mean)?, repeat(running_var)?);
        let out = ops::batch_norm::call(
            &x,
            w.as_ref(),
            b.as_ref(),
            rm.as_ref(),
            rv.as_ref(),
            use_input_stats,
            momentum,
            eps,
            cudnn_enabled,
        )?;
        // batch_norm updated the repeated copies: fold them back into the caller's buffers.
        for (dst, src) in [(running_mean, &rm), (running_var, &rv)] {
            if let (Some(dst), Some(src)) = (dst, src) {
                let _guard = oxten_runtime::autograd::NoGradGuard::new();
                dst.try_copy_(&ops::mean_dim::call(&ops::reshape::call(src, &[n, c])?, Some(&[0]), false, None)?)?;
            }
        }
        ops::reshape::call(&out, &sizes)
    }
}
