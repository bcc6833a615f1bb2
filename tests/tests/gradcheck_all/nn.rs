//! Cases for the nn entries: activations, the softmax family, logsumexp and the losses.
//!
//! Inputs of piecewise functions stay away from their kinks (0 for `elu` / `leaky_relu`, ±0.5
//! for the shrinks, the bounds of `hardtanh`, the threshold of `softplus`), where finite
//! differences straddle two branches. Class targets are fixed i64 tensors (not differentiable).

use super::{case, fresh, leaf, Case, Rng};
use oxten::options::*;
use oxten::{Result, Scalar, Tensor};

/// Reduction codes of the loss schemas.
const NONE: i64 = 0;
const MEAN: i64 = 1;
const SUM: i64 = 2;

fn long(v: &[i64], shape: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

fn constant(v: &[f64], shape: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

fn nll(x: &Tensor, t: &Tensor, w: Option<&Tensor>, reduction: i64, ignore: i64) -> Result<Tensor> {
    Ok(oxten::try_nll_loss_forward(x, t, w, reduction, ignore)?.0)
}

fn ce(x: &Tensor, t: &Tensor, w: Option<&Tensor>, reduction: i64, ignore: i64, ls: f64) -> Result<Tensor> {
    oxten::try_cross_entropy_loss_with(
        x,
        t,
        CrossEntropyLossOpts { weight: w, reduction, ignore_index: ignore, label_smoothing: ls },
    )
}

fn bce(x: &[Tensor], w: Option<&Tensor>, pw: Option<&Tensor>, reduction: i64) -> Result<Tensor> {
    oxten::try_binary_cross_entropy_with_logits_with(
        &x[0],
        &x[1],
        BinaryCrossEntropyWithLogitsOpts { weight: w, pos_weight: pw, reduction },
    )
}

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    let elu_opts = || EluOpts { alpha: Scalar::Float(1.3), scale: Scalar::Float(0.7), input_scale: Scalar::Float(1.6) };
    // Values away from hardtanh's bounds (-0.8, 0.9) and from softplus's threshold.
    let spread = || leaf(vec![-1.5, -0.5, 0.3, 0.7, 1.4, -0.2, 1.1, -1.1], &[2, 4]);
    // Both sides of the shrink kinks at ±0.5, none near them.
    let shrink = || leaf(vec![-1.2, -0.3, 0.1, 0.8, 1.7, -0.9], &[2, 3]);
    let ht = || HardtanhOpts { min_val: Scalar::Float(-0.8), max_val: Scalar::Float(0.9) };
    vec![
        // ---- activations ----
        case("elu", "defaults", vec![r.away_from_zero(&[2, 3])], |x| oxten::try_elu(&x[0])),
        case("elu", "alpha, scale, input_scale", vec![r.away_from_zero(&[6])], move |x| {
            oxten::try_elu_with(&x[0], elu_opts())
        }),
        case("elu", "in-place", vec![r.away_from_zero(&[5])], move |x| {
            oxten::try_elu_with_(
                &fresh(&x[0])?,
                EluInplaceOpts {
                    alpha: Scalar::Float(1.3),
                    scale: Scalar::Float(0.7),
                    input_scale: Scalar::Float(1.6),
                },
            )
        }),
        case("elu_backward", "from the input", vec![r.any(&[2, 3]), r.away_from_zero(&[2, 3])], |x| {
            oxten::try_elu_backward(&x[0], 1.3, 0.7, 1.6, false, &x[1])
        }),
        case("elu_backward", "from the result", vec![r.any(&[4]), r.away_from_zero(&[4])], |x| {
            oxten::try_elu_backward(&x[0], 1.3, 0.7, 1.6, true, &x[1])
        }),
        case("hardtanh", "bounds", vec![spread()], move |x| oxten::try_hardtanh_with(&x[0], ht())),
        case("hardtanh", "transposed, defaults", vec![r.transposed(&[3, 2])], |x| {
            // [-2, 2) values: keep them off ±1 by scaling.
            oxten::try_hardtanh(&x[0].try_mul_scalar(0.93)?)
        }),
        case("hardtanh", "in-place", vec![spread()], |x| {
            oxten::try_hardtanh_with_(
                &fresh(&x[0])?,
                HardtanhInplaceOpts { min_val: Scalar::Float(-0.8), max_val: Scalar::Float(0.9) },
            )
        }),
        case("hardtanh_backward", "", vec![r.any(&[2, 4]), spread()], |x| {
            oxten::try_hardtanh_backward(&x[0], &x[1], -0.8, 0.9)
        }),
        case("hardshrink", "default lambda", vec![shrink()], |x| oxten::try_hardshrink(&x[0], 0.5)),
        case("hardshrink_backward", "", vec![r.any(&[2, 3]), shrink()], |x| {
            oxten::try_hardshrink_backward(&x[0], &x[1], 0.5)
        }),
        case("threshold", "", vec![shrink()], |x| oxten::try_threshold(&x[0], 0.5, -2)),
        case("threshold", "in-place", vec![shrink()], |x| oxten::try_threshold_(&fresh(&x[0])?, 0.5, -2)),
        case("softshrink", "default lambda", vec![shrink()], |x| oxten::try_softshrink(&x[0], 0.5)),
        case("softshrink", "lambda 0", vec![r.away_from_zero(&[6])], |x| oxten::try_softshrink(&x[0], 0)),
        case("softshrink_backward", "", vec![r.any(&[2, 3]), shrink()], |x| {
            oxten::try_softshrink_backward(&x[0], &x[1], 0.5)
        }),
        case("leaky_relu", "default slope", vec![r.away_from_zero(&[6])], |x| oxten::try_leaky_relu(&x[0], 0.01)),
        case("leaky_relu", "slope 0.2, transposed", vec![r.transposed(&[2, 3])], |x| {
            oxten::try_leaky_relu(&x[0].try_add_scalar(0.05)?, Scalar::Float(0.2))
        }),
        case("leaky_relu", "in-place, negative slope", vec![r.away_from_zero(&[6])], |x| {
            oxten::try_leaky_relu_(&fresh(&x[0])?, Scalar::Float(-0.3))
        }),
        case("leaky_relu_backward", "", vec![r.any(&[2, 3]), r.away_from_zero(&[2, 3])], |x| {
            oxten::try_leaky_relu_backward(&x[0], &x[1], 0.2, false)
        }),
        case("softplus", "defaults", vec![r.any(&[2, 3])], |x| oxten::try_softplus(&x[0])),
        case("softplus", "beta 2, threshold 2 (both branches)", vec![spread()], |x| {
            oxten::try_softplus_with(&x[0], SoftplusOpts { beta: Scalar::Int(2), threshold: Scalar::Int(2) })
        }),
        case("softplus_backward", "", vec![r.any(&[2, 4]), spread()], |x| {
            oxten::try_softplus_backward(&x[0], &x[1], 2, 2)
        }),
        case("softplus_backward", "broadcast gradient", vec![r.any(&[4]), r.any(&[3, 4])], |x| {
            oxten::try_softplus_backward(&x[0], &x[1], 0.5, 20)
        }),
        case("threshold_backward", "", vec![r.any(&[2, 3]), r.away_from_zero(&[2, 3])], |x| {
            oxten::try_threshold_backward(&x[0], &x[1], 0)
        }),
        case("threshold_backward", "broadcast gradient, threshold 0.5", vec![r.any(&[3]), r.any(&[2, 3])], |x| {
            oxten::try_threshold_backward(&x[0], &x[1], 0.5)
        }),
        // ---- softmax family ----
        case("_safe_softmax", "", vec![r.any(&[3, 5])], |x| oxten::ops::_safe_softmax::call(&x[0], 1, None)),
        // A row masked throughout gives zeros, and no gradient.
        case("_safe_softmax", "an all -inf row", vec![r.any(&[2, 3])], |x| {
            let inf = f64::NEG_INFINITY;
            let mask = Tensor::from_vec(vec![inf, inf, inf, 0.0, inf, 0.0], &[2, 3])?;
            oxten::ops::_safe_softmax::call(&x[0].try_add(&mask)?, -1, None)
        }),
        case("_softmax", "last dim", vec![r.any(&[3, 5])], |x| oxten::try__softmax(&x[0], -1, false)),
        case("_softmax", "dim 0, transposed", vec![r.transposed(&[3, 4])], |x| oxten::try__softmax(&x[0], 0, false)),
        case("_softmax", "middle dim of 3-d", vec![r.any(&[2, 3, 4])], |x| oxten::try__softmax(&x[0], 1, false)),
        case("_softmax", "through softmax.int", vec![r.any(&[2, 4])], |x| x[0].try_softmax(1)),
        case("_softmax_backward_data", "last dim", vec![r.any(&[2, 4]), r.pos(&[2, 4])], |x| {
            oxten::try__softmax_backward_data(&x[0], &x[1], 1, oxten::DType::F64)
        }),
        case("_softmax_backward_data", "dim 0", vec![r.any(&[3, 2]), r.pos(&[3, 2])], |x| {
            oxten::try__softmax_backward_data(&x[0], &x[1], 0, oxten::DType::F64)
        }),
        case("_log_softmax", "last dim", vec![r.any(&[3, 5])], |x| oxten::try__log_softmax(&x[0], 1, false)),
        case("_log_softmax", "dim 1 of 3-d, transposed", vec![r.any(&[2, 3, 4])], |x| {
            oxten::try__log_softmax(&x[0].try_transpose(1, 2)?, 1, false)
        }),
        case("_log_softmax", "through log_softmax.int", vec![r.any(&[4])], |x| x[0].try_log_softmax(0)),
        case("_log_softmax_backward_data", "last dim", vec![r.any(&[2, 4]), r.any(&[2, 4])], |x| {
            oxten::try__log_softmax_backward_data(&x[0], &x[1], -1, oxten::DType::F64)
        }),
        case("_log_softmax_backward_data", "dim 0", vec![r.any(&[3, 2]), r.any(&[3, 2])], |x| {
            oxten::try__log_softmax_backward_data(&x[0], &x[1], 0, oxten::DType::F64)
        }),
        case("logsumexp", "dim 1", vec![r.any(&[3, 4])], |x| x[0].try_logsumexp(&[1], false)),
        case("logsumexp", "dims (0, 2), keepdim", vec![r.any(&[2, 3, 2])], |x| x[0].try_logsumexp(&[0, 2], true)),
        case("logsumexp", "transposed", vec![r.transposed(&[3, 2])], |x| x[0].try_logsumexp(&[0], false)),
        // ---- losses ----
        case("mse_loss", "mean", vec![r.any(&[3, 4]), r.any(&[3, 4])], |x| oxten::try_mse_loss(&x[0], &x[1])),
        case("mse_loss", "sum, broadcast target", vec![r.any(&[3, 4]), r.any(&[4])], |x| {
            oxten::try_mse_loss_with(&x[0], &x[1], MseLossOpts { reduction: SUM })
        }),
        case("mse_loss", "none, transposed", vec![r.transposed(&[2, 3]), r.any(&[2, 3])], |x| {
            oxten::try_mse_loss_with(&x[0], &x[1], MseLossOpts { reduction: NONE })
        }),
        case("mse_loss_backward", "mean", vec![r.any(&[]), r.any(&[2, 3]), r.any(&[2, 3])], |x| {
            oxten::try_mse_loss_backward(&x[0], &x[1], &x[2], MEAN)
        }),
        case("mse_loss_backward", "none", vec![r.any(&[2, 3]), r.any(&[2, 3]), r.any(&[2, 3])], |x| {
            oxten::try_mse_loss_backward(&x[0], &x[1], &x[2], NONE)
        }),
        // CTC through `log_softmax`, as it is used: PyTorch's gradient (which oxten's matches)
        // is the one of the logits' log-softmax, whose backward cancels its `exp(lp)` term.
        // A repeated label and an empty target; no double backward (PyTorch has none).
        Case {
            gradgrad: false,
            ..case("_ctc_loss", "two sequences, log-softmax inputs", vec![r.any(&[5, 2, 4])], |x| {
                let lp = x[0].try_log_softmax(2)?;
                let targets = long(&[1, 1, 3, 0, 0, 0], &[2, 3]);
                Ok(oxten::try__ctc_loss(&lp, &targets, &[5, 4], &[3, 0])?.0)
            })
        },
        case("nll_loss_forward", "mean", vec![r.any(&[3, 4])], |x| {
            nll(&x[0], &long(&[0, 3, 1], &[3]), None, MEAN, -100)
        }),
        case("nll_loss_forward", "weights, ignore_index, mean", vec![r.any(&[4, 3])], |x| {
            let w = constant(&[0.5, 2.0, 1.5], &[3]);
            nll(&x[0], &long(&[2, 1, 0, 1], &[4]), Some(&w), MEAN, 1)
        }),
        case("nll_loss_forward", "weights, sum", vec![r.any(&[3, 4])], |x| {
            let w = constant(&[0.5, 2.0, 1.5, 0.25], &[4]);
            nll(&x[0], &long(&[0, 3, 1], &[3]), Some(&w), SUM, -100)
        }),
        case("nll_loss_forward", "none, transposed", vec![r.transposed(&[3, 4])], |x| {
            nll(&x[0], &long(&[3, 0, 2], &[3]), None, NONE, -100)
        }),
        case("nll_loss_forward", "1-d input", vec![r.any(&[5])], |x| {
            nll(&x[0], &Tensor::scalar(3i64), None, MEAN, -100)
        }),
        case("nll_loss_forward", "through nll_loss_nd, 4-d", vec![r.any(&[2, 3, 2, 2])], |x| {
            oxten::try_nll_loss_nd(&x[0], &long(&[0, 1, 2, 1, 2, 2, 0, 1], &[2, 2, 2]))
        }),
        case("nll_loss_forward", "through cross_entropy_loss", vec![r.any(&[3, 4])], |x| {
            ce(&x[0], &long(&[1, 0, 3], &[3]), None, MEAN, -100, 0.0)
        }),
        case("nll_loss_forward", "through cross_entropy_loss, label smoothing, weights", vec![r.any(&[3, 4])], |x| {
            let w = constant(&[0.5, 2.0, 1.5, 0.25], &[4]);
            ce(&x[0], &long(&[1, -100, 3], &[3]), Some(&w), MEAN, -100, 0.2)
        }),
        case("nll_loss_forward", "through cross_entropy_loss, 3-d, none", vec![r.any(&[2, 3, 2])], |x| {
            ce(&x[0], &long(&[0, 2, 1, 1], &[2, 2]), None, NONE, -100, 0.1)
        }),
        case(
            "_log_softmax",
            "through cross_entropy_loss, class probabilities",
            vec![r.any(&[3, 4]), r.pos(&[3, 4])],
            |x| ce(&x[0], &x[1], None, MEAN, -100, 0.1),
        ),
        case("nll_loss_backward", "mean", vec![r.any(&[]), r.any(&[3, 4])], |x| {
            let t = long(&[0, 3, 1], &[3]);
            oxten::try_nll_loss_backward(&x[0], &x[1], &t, None, MEAN, -100, &constant(&[3.0], &[]))
        }),
        case("nll_loss_backward", "none, weights", vec![r.any(&[3]), r.any(&[3, 4])], |x| {
            let t = long(&[0, 3, 1], &[3]);
            let w = constant(&[0.5, 2.0, 1.5, 0.25], &[4]);
            oxten::try_nll_loss_backward(&x[0], &x[1], &t, Some(&w), NONE, -100, &constant(&[0.0], &[]))
        }),
        case("binary_cross_entropy_with_logits", "mean", vec![r.any(&[3, 4]), r.pos(&[3, 4])], |x| {
            bce(x, None, None, MEAN)
        }),
        case(
            "binary_cross_entropy_with_logits",
            "weight and pos_weight, sum",
            vec![r.any(&[3, 4]), r.pos(&[3, 4])],
            |x| {
                let w = constant(&[0.5, 2.0, 1.5, 0.25], &[4]);
                let pw = constant(&[1.5, 0.5, 3.0, 1.0], &[4]);
                bce(x, Some(&w), Some(&pw), SUM)
            },
        ),
        case("binary_cross_entropy_with_logits", "none, broadcast input", vec![r.any(&[4]), r.pos(&[2, 4])], |x| {
            bce(x, Some(&constant(&[2.0], &[1])), None, NONE)
        }),
        // ---- attention (the fused kernel; second derivatives through the math decomposition) ----
        case(
            "_scaled_dot_product_flash_attention_for_cpu",
            "plain",
            vec![r.any(&[1, 2, 3, 4]), r.any(&[1, 2, 5, 4]), r.any(&[1, 2, 5, 3])],
            |x| Ok(oxten::try__scaled_dot_product_flash_attention_for_cpu(&x[0], &x[1], &x[2])?.0),
        ),
        case(
            "_scaled_dot_product_flash_attention_for_cpu",
            "causal, scale",
            vec![r.any(&[2, 1, 4, 3]), r.any(&[2, 1, 4, 3]), r.any(&[2, 1, 4, 2])],
            |x| {
                let o = ScaledDotProductFlashAttentionForCpuOpts {
                    is_causal: true,
                    scale: Some(0.7),
                    ..Default::default()
                };
                Ok(oxten::try__scaled_dot_product_flash_attention_for_cpu_with(&x[0], &x[1], &x[2], o)?.0)
            },
        ),
        case(
            "_scaled_dot_product_flash_attention_for_cpu",
            "float mask",
            vec![r.any(&[1, 2, 3, 2]), r.any(&[1, 2, 4, 2]), r.any(&[1, 2, 4, 2])],
            |x| {
                let mask = constant(&[0.5, -1.0, 0.0, 2.0, -0.5, 1.0, 0.25, -2.0, 1.5, 0.0, -0.75, 0.3], &[3, 4]);
                let o = ScaledDotProductFlashAttentionForCpuOpts { attn_mask: Some(&mask), ..Default::default() };
                Ok(oxten::try__scaled_dot_product_flash_attention_for_cpu_with(&x[0], &x[1], &x[2], o)?.0)
            },
        ),
        // ---- _thnn_fused_lstm_cell (the LSTM's gates): h' and c' ----
        Case {
            op: "_thnn_fused_lstm_cell",
            what: "batched, no bias",
            inputs: vec![r.any(&[2, 12]), r.any(&[2, 12]), r.any(&[2, 3])],
            f: Box::new(|x| {
                let (h, c, _) = oxten::try__thnn_fused_lstm_cell(&x[0], &x[1], &x[2])?;
                Ok(vec![h, c])
            }),
            gradgrad: true,
            eps: 1e-6,
        },
        Case {
            op: "_thnn_fused_lstm_cell",
            what: "unbatched, biases",
            inputs: vec![r.any(&[8]), r.any(&[8]), r.any(&[2]), r.any(&[8]), r.any(&[8])],
            f: Box::new(|x| {
                let o = ThnnFusedLstmCellOpts { input_bias: Some(&x[3]), hidden_bias: Some(&x[4]) };
                let (h, c, _) = oxten::try__thnn_fused_lstm_cell_with(&x[0], &x[1], &x[2], o)?;
                Ok(vec![h, c])
            }),
            gradgrad: true,
            eps: 1e-6,
        },
        Case {
            op: "_thnn_fused_lstm_cell",
            what: "batched, biases, transposed gates, h' only",
            inputs: vec![r.transposed(&[3, 8]), r.any(&[3, 8]), r.any(&[3, 2]), r.any(&[8]), r.any(&[8])],
            f: Box::new(|x| {
                let o = ThnnFusedLstmCellOpts { input_bias: Some(&x[3]), hidden_bias: Some(&x[4]) };
                Ok(vec![oxten::try__thnn_fused_lstm_cell_with(&x[0], &x[1], &x[2], o)?.0])
            }),
            gradgrad: true,
            eps: 1e-6,
        },
    ]
}
