//! Dropout layers: `nn.Dropout`, the channel-wise `Dropout1d/2d/3d`, and SELU's `AlphaDropout`
//! and `FeatureAlphaDropout`. In training they call the dropout operators; in evaluation they
//! are the identity.

use super::Module;
use crate::{Error, Result, Tensor};

macro_rules! dropout_layer {
    ($(#[$doc:meta])* $name:ident, |$x:ident, $p:ident, $train:ident| $forward:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name {
            /// Probability of dropping an element (a channel, for the channel-wise layers) in
            /// training mode.
            pub p: f64,
            training: bool,
        }

        impl $name {
            /// The layer with probability `p`, in training mode.
            pub fn new(p: f64) -> Self {
                $name { p, training: true }
            }

            /// Whether the layer is in training mode (drops elements).
            pub fn training(&self) -> bool {
                self.training
            }
        }

        impl Module for $name {
            fn forward(&self, $x: &Tensor) -> Result<Tensor> {
                let ($p, $train) = (self.p, self.training);
                $forward
            }
            fn set_training(&mut self, training: bool) {
                self.training = training;
            }
        }
    };
}

/// `dropout1d`: channel dropout of `(N, C, L)` or, without the batch, `(C, L)` inputs.
fn dropout1d(x: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    match x.dim() {
        3 => crate::try_feature_dropout(x, p, train),
        2 => crate::try_feature_dropout(&x.try_unsqueeze(0)?, p, train)?.try_squeeze_dim(0),
        d => Err(Error::runtime(format!(
            "dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that dropout1d exists to provide \
             channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch \
             dimension (i.e. 2D or 3D inputs)."
        ))),
    }
}

/// `dropout3d`: a 5-D input is batched; any other gets a batch of one (PyTorch only warns
/// about inputs that are not 4-D or 5-D).
fn dropout3d(x: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    if x.dim() == 5 {
        crate::try_feature_dropout(x, p, train)
    } else {
        crate::try_feature_dropout(&x.try_unsqueeze(0)?, p, train)?.try_squeeze_dim(0)
    }
}

dropout_layer!(
    /// `nn.Dropout`: in training, zeroes each element with probability `p` and scales the rest
    /// by `1/(1 − p)`.
    Dropout,
    |x, p, train| crate::try_dropout(x, p, train)
);

dropout_layer!(
    /// `nn.Dropout1d`: zeroes whole channels of `(N, C, L)` or `(C, L)` inputs.
    Dropout1d,
    |x, p, train| dropout1d(x, p, train)
);

dropout_layer!(
    /// `nn.Dropout2d`: zeroes whole channels (dimension 1). As in PyTorch, a 3-D input is taken
    /// as `(N, C, L)`, not as an unbatched image.
    Dropout2d,
    |x, p, train| crate::try_feature_dropout(x, p, train)
);

dropout_layer!(
    /// `nn.Dropout3d`: zeroes whole channels of `(N, C, D, H, W)` or `(C, D, H, W)` inputs.
    Dropout3d,
    |x, p, train| dropout3d(x, p, train)
);

dropout_layer!(
    /// `nn.AlphaDropout`: dropout for self-normalising (SELU) networks, keeping zero mean and
    /// unit variance.
    AlphaDropout,
    |x, p, train| crate::try_alpha_dropout(x, p, train)
);

dropout_layer!(
    /// `nn.FeatureAlphaDropout`: `AlphaDropout` of whole channels.
    FeatureAlphaDropout,
    |x, p, train| crate::try_feature_alpha_dropout(x, p, train)
);
