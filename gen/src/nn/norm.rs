//! Normalization layers: `nn.BatchNorm2d`, `nn.LayerNorm`, `nn.GroupNorm`, `nn.RMSNorm`,
//! `nn.LocalResponseNorm`, `nn.InstanceNorm1d/2d/3d`.

use super::{Module, Slot};
use crate::{ops, DType, Error, Result, Tensor};

/// Batch normalization over the channel dim of `[N, C, H, W]` input (NCHW or channels_last).
/// In training it normalizes with the batch's statistics and updates the running ones (momentum
/// 0.1, unbiased variance); in evaluation it uses the running statistics. State dict names:
/// `weight`, `bias`, `running_mean`, `running_var`, `num_batches_tracked`.
pub struct BatchNorm2d {
    /// Per-channel scale (γ).
    pub weight: Tensor,
    /// Per-channel shift (β).
    pub bias: Tensor,
    /// Running mean, used in evaluation mode.
    pub running_mean: Tensor,
    /// Running variance, used in evaluation mode.
    pub running_var: Tensor,
    /// Training batches seen (PyTorch's buffer of that name).
    pub num_batches_tracked: Tensor,
    /// Weight of the new batch in the running statistics.
    pub momentum: f64,
    /// Added to the variance before the square root.
    pub eps: f64,
    training: bool,
}

impl BatchNorm2d {
    /// PyTorch's defaults: affine, tracking running stats, `eps = 1e-5`, `momentum = 0.1`.
    pub fn new(num_features: i64) -> Self {
        BatchNorm2d {
            weight: crate::ones(&[num_features]).requires_grad_(true),
            bias: crate::zeros(&[num_features]).requires_grad_(true),
            running_mean: crate::zeros(&[num_features]),
            running_var: crate::ones(&[num_features]),
            num_batches_tracked: crate::zeros_with(
                &[],
                crate::options::ZerosOpts { dtype: Some(DType::I64), ..Default::default() },
            ),
            momentum: 0.1,
            eps: 1e-5,
            training: true,
        }
    }
}

impl Module for BatchNorm2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.dim() != 4 {
            return Err(crate::Error::value(format!("BatchNorm2d: expected 4D input (got {}D input)", x.dim())));
        }
        if self.training {
            // A buffer like the running statistics: loaded checkpoints continue the count.
            crate::autograd::no_grad(|| self.num_batches_tracked.try_add_scalar_(crate::Scalar::Int(1)))?;
        }
        crate::try_batch_norm(
            x,
            Some(&self.weight),
            Some(&self.bias),
            Some(&self.running_mean),
            Some(&self.running_var),
            self.training,
            self.momentum,
            self.eps,
            false,
        )
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
        f("bias", &self.bias, Slot::Parameter);
        f("running_mean", &self.running_mean, Slot::Buffer);
        f("running_var", &self.running_var, Slot::Buffer);
        f("num_batches_tracked", &self.num_batches_tracked, Slot::Buffer);
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
}

/// `nn.LayerNorm`: normalizes over the trailing `normalized_shape` dims, with an elementwise
/// affine `weight` (ones) and `bias` (zeros), `eps = 1e-5`.
pub struct LayerNorm {
    /// The trailing dimensions normalised over.
    pub normalized_shape: Vec<i64>,
    /// Elementwise scale (γ), of `normalized_shape`, when the layer is affine.
    pub weight: Option<Tensor>,
    /// Elementwise shift (β), of `normalized_shape`, when the layer is affine with a bias.
    pub bias: Option<Tensor>,
    /// Added to the variance before the square root.
    pub eps: f64,
}

impl LayerNorm {
    /// PyTorch's defaults (affine with a bias, `eps = 1e-5`).
    pub fn new(normalized_shape: &[i64]) -> Self {
        LayerNorm::with_options(normalized_shape, 1e-5, true, true)
    }

    /// PyTorch's `LayerNorm(normalized_shape, eps, elementwise_affine, bias)`: without
    /// `elementwise_affine` there is neither weight nor bias; `bias = false` keeps the weight only.
    pub fn with_options(normalized_shape: &[i64], eps: f64, elementwise_affine: bool, bias: bool) -> Self {
        LayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            weight: elementwise_affine.then(|| crate::ones(normalized_shape).requires_grad_(true)),
            bias: (elementwise_affine && bias).then(|| crate::zeros(normalized_shape).requires_grad_(true)),
            eps,
        }
    }
}

impl Module for LayerNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_layer_norm_with(
            x,
            &self.normalized_shape,
            self.weight.as_ref(),
            self.bias.as_ref(),
            crate::options::LayerNormOpts { eps: self.eps, cudnn_enable: false },
        )
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        if let Some(w) = &self.weight {
            f("weight", w, Slot::Parameter);
        }
        if let Some(b) = &self.bias {
            f("bias", b, Slot::Parameter);
        }
    }
}

/// `nn.RMSNorm`: `x / sqrt(mean(x²) + eps) · weight` over the trailing `normalized_shape`
/// dimensions (no centring, no bias); `eps = None` is the compute dtype's machine epsilon.
pub struct RMSNorm {
    /// The trailing dimensions normalised over.
    pub normalized_shape: Vec<i64>,
    /// Elementwise scale, of `normalized_shape`, when the layer is affine.
    pub weight: Option<Tensor>,
    /// Added to the mean square, or `None` for the machine epsilon.
    pub eps: Option<f64>,
}

impl RMSNorm {
    /// PyTorch's defaults (affine, `eps = None`).
    pub fn new(normalized_shape: &[i64]) -> Self {
        RMSNorm::with_options(normalized_shape, None, true)
    }

    /// PyTorch's `RMSNorm(normalized_shape, eps, elementwise_affine)`.
    pub fn with_options(normalized_shape: &[i64], eps: Option<f64>, elementwise_affine: bool) -> Self {
        RMSNorm {
            normalized_shape: normalized_shape.to_vec(),
            weight: elementwise_affine.then(|| crate::ones(normalized_shape).requires_grad_(true)),
            eps,
        }
    }
}

impl Module for RMSNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::ops::rms_norm::call(x, &self.normalized_shape, self.weight.as_ref(), self.eps)
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        if let Some(w) = &self.weight {
            f("weight", w, Slot::Parameter);
        }
    }
}

/// `nn.GroupNorm`: splits the channels into `num_groups` groups normalized separately, with a
/// per-channel affine `weight` (ones) and `bias` (zeros), `eps = 1e-5`.
pub struct GroupNorm {
    /// Groups the channels are split into.
    pub num_groups: i64,
    /// Per-channel scale (γ).
    pub weight: Tensor,
    /// Per-channel shift (β).
    pub bias: Tensor,
    /// Added to the variance before the square root.
    pub eps: f64,
}

impl GroupNorm {
    /// PyTorch's defaults (affine, `eps = 1e-5`).
    pub fn new(num_groups: i64, num_channels: i64) -> Self {
        GroupNorm {
            num_groups,
            weight: crate::ones(&[num_channels]).requires_grad_(true),
            bias: crate::zeros(&[num_channels]).requires_grad_(true),
            eps: 1e-5,
        }
    }
}

impl Module for GroupNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_group_norm_with(
            x,
            self.num_groups,
            Some(&self.weight),
            Some(&self.bias),
            crate::options::GroupNormOpts { eps: self.eps, cudnn_enabled: false },
        )
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
        f("bias", &self.bias, Slot::Parameter);
    }
}

/// `nn.LocalResponseNorm`: each element divided by `(k + alpha · mean of the squares over
/// `size` neighbouring channels)^beta`.
#[derive(Clone, Copy, Debug)]
pub struct LocalResponseNorm {
    /// Neighbouring channels averaged.
    pub size: i64,
    /// Scale of the mean square.
    pub alpha: f64,
    /// Exponent.
    pub beta: f64,
    /// Additive constant.
    pub k: f64,
}

impl LocalResponseNorm {
    /// PyTorch's defaults: `alpha = 1e-4`, `beta = 0.75`, `k = 1`.
    pub fn new(size: i64) -> Result<Self> {
        if size <= 0 {
            return Err(Error::value(format!("LocalResponseNorm: size must be positive, got {size}")));
        }
        Ok(LocalResponseNorm { size, alpha: 1e-4, beta: 0.75, k: 1.0 })
    }
}

impl Module for LocalResponseNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        ops::local_response_norm::call(x, self.size, self.alpha, self.beta, self.k)
    }
}

/// `nn.InstanceNormNd`: each channel of each sample normalized over its spatial positions;
/// optionally an affine per-channel `weight`/`bias` (`affine`, off by default as in PyTorch) and
/// running statistics (`track_running_stats`, off by default), used in evaluation mode.
/// [`InstanceNorm1d`], [`InstanceNorm2d`] and [`InstanceNorm3d`] are its instances.
pub struct InstanceNormNd<const N: usize> {
    /// Per-channel scale (γ), with `affine`.
    pub weight: Option<Tensor>,
    /// Per-channel shift (β), with `affine`.
    pub bias: Option<Tensor>,
    /// Running mean, variance and `num_batches_tracked`, with `track_running_stats`.
    pub running: Option<(Tensor, Tensor, Tensor)>,
    /// Added to the variance before the square root.
    pub eps: f64,
    /// Weight of the new statistics in the running ones.
    pub momentum: f64,
    training: bool,
}

/// `nn.InstanceNorm1d` over `[N, C, L]` (or `[C, L]`).
pub type InstanceNorm1d = InstanceNormNd<1>;
/// `nn.InstanceNorm2d` over `[N, C, H, W]` (or `[C, H, W]`).
pub type InstanceNorm2d = InstanceNormNd<2>;
/// `nn.InstanceNorm3d` over `[N, C, D, H, W]` (or `[C, D, H, W]`).
pub type InstanceNorm3d = InstanceNormNd<3>;

impl<const N: usize> InstanceNormNd<N> {
    /// PyTorch's defaults: no affine parameters, no running statistics, `eps = 1e-5`.
    pub fn new(num_features: i64) -> Self {
        Self::build(num_features, false, false)
    }

    /// With the affine parameters (ones, zeros) and/or running statistics (zeros, ones).
    pub fn build(num_features: i64, affine: bool, track_running_stats: bool) -> Self {
        let c = [num_features];
        InstanceNormNd {
            weight: affine.then(|| crate::ones(&c).requires_grad_(true)),
            bias: affine.then(|| crate::zeros(&c).requires_grad_(true)),
            running: track_running_stats.then(|| {
                let count = crate::options::ZerosOpts { dtype: Some(DType::I64), ..Default::default() };
                (crate::zeros(&c), crate::ones(&c), crate::zeros_with(&[], count))
            }),
            eps: 1e-5,
            momentum: 0.1,
            training: true,
        }
    }
}

impl<const N: usize> Module for InstanceNormNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.dim() != N + 1 && x.dim() != N + 2 {
            return Err(Error::value(format!(
                "InstanceNorm{N}d: expected {}D or {}D input (got {}D input)",
                N + 1,
                N + 2,
                x.dim()
            )));
        }
        // An unbatched input is a batch of one.
        let batched = x.dim() == N + 2;
        let xb = if batched { x.clone() } else { ops::unsqueeze::call(x, 0)? };
        let (rm, rv) = match &self.running {
            Some((m, v, _)) => (Some(m), Some(v)),
            None => (None, None),
        };
        let use_input_stats = self.training || self.running.is_none();
        let y = ops::instance_norm::call(
            &xb,
            self.weight.as_ref(),
            self.bias.as_ref(),
            rm,
            rv,
            use_input_stats,
            self.momentum,
            self.eps,
            false,
        )?;
        if batched {
            Ok(y)
        } else {
            ops::squeeze_dim::call(&y, 0)
        }
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        if let (Some(w), Some(b)) = (&self.weight, &self.bias) {
            f("weight", w, Slot::Parameter);
            f("bias", b, Slot::Parameter);
        }
        if let Some((m, v, n)) = &self.running {
            f("running_mean", m, Slot::Buffer);
            f("running_var", v, Slot::Buffer);
            f("num_batches_tracked", n, Slot::Buffer);
        }
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
}
