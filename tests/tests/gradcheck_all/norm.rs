//! Cases for the normalization entries (`native_batch_norm`, `native_layer_norm`,
//! `native_group_norm`). First derivatives go through the fused backward kernels, second
//! derivatives (gradgradcheck runs backward with create_graph) through the differentiable
//! formulas of gen/src/autograd/helpers/norm.rs.

use super::{case, Case, Rng};
use oxten::options::ContiguousOpts;
use oxten::{MemoryFormat, Tensor};

fn channels_last(r: &Rng, shape: &[i64]) -> Tensor {
    let t = r.any(shape).detach();
    let t = t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast });
    assert!(!t.is_contiguous());
    t.requires_grad_(true)
}

/// Fresh running statistics for each call (training updates them in place).
fn stats(c: usize) -> (Tensor, Tensor) {
    let mean: Vec<f64> = (0..c).map(|i| 0.1 * i as f64 - 0.2).collect();
    let var: Vec<f64> = (0..c).map(|i| 0.5 + 0.25 * i as f64).collect();
    (Tensor::from_vec(mean, &[c as i64]).unwrap(), Tensor::from_vec(var, &[c as i64]).unwrap())
}

/// `native_batch_norm`'s output with optional weight (`x[1]`) and bias (`x[2]`).
fn bn(x: &[Tensor], affine: bool, with_stats: bool, training: bool) -> oxten::Result<Tensor> {
    let c = x[0].sizes()[1] as usize;
    let (rm, rv) = stats(c);
    let (w, b) = if affine { (Some(&x[1]), Some(&x[2])) } else { (None, None) };
    let (rm, rv) = if with_stats { (Some(&rm), Some(&rv)) } else { (None, None) };
    Ok(oxten::try_native_batch_norm(&x[0], w, b, rm, rv, training, 0.1, 1e-5)?.0)
}

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    let gn_all = |x: &[Tensor]| -> oxten::Result<Vec<Tensor>> {
        let (y, mean, rstd) = oxten::try_native_group_norm(&x[0], Some(&x[1]), Some(&x[2]), 2, 4, 3, 2, 1e-5)?;
        Ok(vec![y, mean, rstd])
    };
    vec![
        // ---- batch norm ----
        case(
            "native_batch_norm",
            "training, affine, running stats",
            vec![r.any(&[4, 3, 2]), r.pos(&[3]), r.any(&[3])],
            |x| bn(x, true, true, true),
        ),
        case("native_batch_norm", "training, no affine, no running stats", vec![r.any(&[3, 2, 4])], |x| {
            bn(x, false, false, true)
        }),
        case("native_batch_norm", "training, 2-d input", vec![r.any(&[5, 3]), r.pos(&[3]), r.any(&[3])], |x| {
            bn(x, true, false, true)
        }),
        case("native_batch_norm", "training, weight only", vec![r.any(&[4, 2, 3]), r.pos(&[2])], |x| {
            Ok(oxten::try_native_batch_norm(&x[0], Some(&x[1]), None, None, None, true, 0.1, 1e-5)?.0)
        }),
        case(
            "native_batch_norm",
            "training, channels_last",
            vec![channels_last(r, &[2, 3, 2, 2]), r.pos(&[3]), r.any(&[3])],
            |x| bn(x, true, true, true),
        ),
        case("native_batch_norm", "eval, affine", vec![r.any(&[4, 3, 2]), r.pos(&[3]), r.any(&[3])], |x| {
            bn(x, true, true, false)
        }),
        case("native_batch_norm", "eval, no affine", vec![r.any(&[3, 4])], |x| bn(x, false, true, false)),
        case(
            "native_batch_norm",
            "eval, channels_last",
            vec![channels_last(r, &[2, 3, 2, 2]), r.pos(&[3]), r.any(&[3])],
            |x| bn(x, true, true, false),
        ),
        // ---- layer norm ----
        case("native_layer_norm", "1 trailing dim, affine", vec![r.any(&[3, 4]), r.pos(&[4]), r.any(&[4])], |x| {
            Ok(oxten::try_native_layer_norm(&x[0], &[4], Some(&x[1]), Some(&x[2]), 1e-5)?.0)
        }),
        case(
            "native_layer_norm",
            "2 trailing dims, affine",
            vec![r.any(&[2, 3, 4]), r.pos(&[3, 4]), r.any(&[3, 4])],
            |x| Ok(oxten::try_native_layer_norm(&x[0], &[3, 4], Some(&x[1]), Some(&x[2]), 1e-5)?.0),
        ),
        case("native_layer_norm", "no affine", vec![r.any(&[2, 5])], |x| {
            Ok(oxten::try_native_layer_norm(&x[0], &[5], None, None, 1e-5)?.0)
        }),
        case("native_layer_norm", "bias only, non-contiguous input", vec![r.transposed(&[3, 4]), r.any(&[4])], |x| {
            Ok(oxten::try_native_layer_norm(&x[0], &[4], None, Some(&x[1]), 1e-5)?.0)
        }),
        // ---- group norm ----
        case("native_group_norm", "3 groups, affine", vec![r.any(&[2, 6, 3]), r.pos(&[6]), r.any(&[6])], |x| {
            Ok(oxten::try_native_group_norm(&x[0], Some(&x[1]), Some(&x[2]), 2, 6, 3, 3, 1e-5)?.0)
        }),
        case(
            "native_group_norm",
            "2 groups, channels_last",
            vec![channels_last(r, &[2, 4, 2, 2]), r.pos(&[4]), r.any(&[4])],
            |x| Ok(oxten::try_native_group_norm(&x[0], Some(&x[1]), Some(&x[2]), 2, 4, 4, 2, 1e-5)?.0),
        ),
        case("native_group_norm", "1 group, no affine", vec![r.any(&[3, 4, 2])], |x| {
            Ok(oxten::try_native_group_norm(&x[0], None, None, 3, 4, 2, 1, 1e-5)?.0)
        }),
        case("native_group_norm", "one channel per group", vec![r.any(&[2, 3, 4]), r.pos(&[3])], |x| {
            Ok(oxten::try_native_group_norm(&x[0], Some(&x[1]), None, 2, 3, 4, 3, 1e-5)?.0)
        }),
        Case {
            op: "native_group_norm",
            what: "mean and rstd outputs too",
            inputs: vec![r.any(&[2, 4, 3]), r.pos(&[4]), r.any(&[4])],
            f: Box::new(gn_all),
            gradgrad: true,
            eps: 1e-6,
        },
    ]
}
