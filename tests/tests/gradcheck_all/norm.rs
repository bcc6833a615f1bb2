//! Cases for the normalization entries (`native_batch_norm`, `native_layer_norm`,
//! `native_group_norm` and their backward operators). First derivatives go through the fused
//! backward kernels; second derivatives (gradgradcheck runs backward with create_graph) through
//! the backward operators' closed-form double backward (batch and layer norm) or group norm's
//! differentiable formulas (gen/src/autograd/helpers/norm.rs). The backward operators' own cases
//! check that double backward (gradcheck) and the third derivatives (gradgradcheck).

use super::{case, Case, Rng};
use oxten::options::ContiguousOpts;
use oxten::{MemoryFormat, Tensor};

fn channels_last(r: &Rng, shape: &[i64]) -> Tensor {
    let t = r.any(shape).detach();
    let t = t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast });
    assert!(!t.is_contiguous());
    t.requires_grad_(true)
}

/// A non-contiguous 3-d leaf: the transpose of dims 1 and 2 of a contiguous tensor.
fn permuted(r: &Rng, shape: &[i64]) -> Tensor {
    let t = r.any(&[shape[0], shape[2], shape[1]]).detach().transpose(1, 2);
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

/// A case whose function returns several outputs.
fn multi(
    op: &'static str,
    what: &'static str,
    inputs: Vec<Tensor>,
    f: impl Fn(&[Tensor]) -> oxten::Result<Vec<Tensor>> + 'static,
) -> Case {
    Case { op, what, inputs, f: Box::new(f), gradgrad: true, eps: 1e-6 }
}

/// `native_batch_norm_backward(x[0], x[1], x[2]?)` with the statistics of a forward pass on
/// `x[1]` (as autograd calls it).
fn bn_backward(x: &[Tensor], training: bool, mask: [bool; 3]) -> oxten::Result<Vec<Tensor>> {
    let (rm, rv) = stats(x[1].sizes()[1] as usize);
    let w = x.get(2);
    let (_, sm, si) = oxten::try_native_batch_norm(&x[1], w, None, Some(&rm), Some(&rv), training, 0.1, 1e-5)?;
    let (sm, si) = if training { (Some(&sm), Some(&si)) } else { (None, None) };
    let (a, b, c) =
        oxten::try_native_batch_norm_backward(&x[0], &x[1], w, Some(&rm), Some(&rv), sm, si, training, 1e-5, &mask)?;
    Ok([a, b, c].into_iter().zip(mask).filter(|(_, m)| *m).map(|(t, _)| t).collect())
}

/// `native_layer_norm_backward(x[0], x[1], …, x[2]?)` with the statistics of `x[1]`.
fn ln_backward(x: &[Tensor], ns: &[i64]) -> oxten::Result<Vec<Tensor>> {
    let w = x.get(2);
    let (_, mean, rstd) = oxten::try_native_layer_norm(&x[1], ns, w, None, 1e-5)?;
    let mask = [true, w.is_some(), true];
    let (a, b, c) = oxten::try_native_layer_norm_backward(&x[0], &x[1], ns, &mean, &rstd, w, None, &mask)?;
    Ok([a, b, c].into_iter().zip(mask).filter(|(_, m)| *m).map(|(t, _)| t).collect())
}

/// `native_group_norm_backward(x[0], x[1], …, x[2]?)` with the statistics of `x[1]`, detached
/// (the formula accounts for their dependence on the input; gradients for them alone are not
/// implemented).
fn gn_backward(x: &[Tensor], group: i64) -> oxten::Result<Vec<Tensor>> {
    let s = x[1].sizes();
    let (n, c, hxw) = (s[0], s[1], s[2..].iter().product::<i64>());
    let w = x.get(2);
    let (_, mean, rstd) = oxten::try_native_group_norm(&x[1], w, None, n, c, hxw, group, 1e-5)?;
    let mask = [true, w.is_some(), true];
    let (a, b, c) = oxten::try_native_group_norm_backward(
        &x[0],
        &x[1],
        &mean.detach(),
        &rstd.detach(),
        w,
        n,
        c,
        hxw,
        group,
        &mask,
    )?;
    Ok([a, b, c].into_iter().zip(mask).filter(|(_, m)| *m).map(|(t, _)| t).collect())
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
        case("native_batch_norm", "training, no affine, transposed input", vec![r.transposed(&[5, 3])], |x| {
            bn(x, false, true, true)
        }),
        case(
            "native_batch_norm",
            "eval, weight only, transposed input",
            vec![r.transposed(&[4, 3]), r.pos(&[3])],
            |x| {
                let (rm, rv) = stats(3);
                Ok(oxten::try_native_batch_norm(&x[0], Some(&x[1]), None, Some(&rm), Some(&rv), false, 0.1, 1e-5)?.0)
            },
        ),
        case(
            "native_batch_norm",
            "training, permuted 3-d input",
            vec![permuted(r, &[3, 2, 4]), r.pos(&[2]), r.any(&[2])],
            |x| bn(x, true, false, true),
        ),
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
        case("native_layer_norm", "weight only, permuted input", vec![permuted(r, &[2, 3, 4]), r.pos(&[3, 4])], |x| {
            Ok(oxten::try_native_layer_norm(&x[0], &[3, 4], Some(&x[1]), None, 1e-5)?.0)
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
        case(
            "native_group_norm",
            "2 groups, permuted input",
            vec![permuted(r, &[2, 4, 3]), r.pos(&[4]), r.any(&[4])],
            |x| Ok(oxten::try_native_group_norm(&x[0], Some(&x[1]), Some(&x[2]), 2, 4, 3, 2, 1e-5)?.0),
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
        // ---- backward operators (their formulas are the double backward of the forward ones;
        // gradgradcheck checks third derivatives) ----
        multi(
            "native_batch_norm_backward",
            "training, affine",
            vec![r.any(&[4, 3, 2]), r.any(&[4, 3, 2]), r.pos(&[3])],
            |x| bn_backward(x, true, [true; 3]),
        ),
        multi("native_batch_norm_backward", "training, no weight", vec![r.any(&[5, 2]), r.any(&[5, 2])], |x| {
            bn_backward(x, true, [true, false, true])
        }),
        multi(
            "native_batch_norm_backward",
            "training, channels_last",
            vec![channels_last(r, &[2, 3, 2, 2]), channels_last(r, &[2, 3, 2, 2]), r.pos(&[3])],
            |x| bn_backward(x, true, [true, true, false]),
        ),
        multi(
            "native_batch_norm_backward",
            "eval, affine",
            vec![r.any(&[4, 3, 2]), r.any(&[4, 3, 2]), r.pos(&[3])],
            |x| bn_backward(x, false, [true; 3]),
        ),
        multi(
            "native_batch_norm_backward",
            "eval, no weight, transposed",
            vec![r.transposed(&[5, 3]), r.transposed(&[5, 3])],
            |x| bn_backward(x, false, [true, false, true]),
        ),
        multi(
            "native_batch_norm_backward",
            "training, permuted, grad_input only",
            vec![permuted(r, &[3, 2, 4]), permuted(r, &[3, 2, 4]), r.pos(&[2])],
            |x| bn_backward(x, true, [true, false, false]),
        ),
        multi(
            "native_batch_norm_backward",
            "training, weight and bias gradients only",
            vec![r.any(&[4, 2, 3]), r.any(&[4, 2, 3]), r.pos(&[2])],
            |x| bn_backward(x, true, [false, true, true]),
        ),
        multi(
            "native_layer_norm_backward",
            "permuted, weight",
            vec![permuted(r, &[2, 3, 4]), permuted(r, &[2, 3, 4]), r.pos(&[4])],
            |x| ln_backward(x, &[4]),
        ),
        multi(
            "native_layer_norm_backward",
            "1 trailing dim, weight",
            vec![r.any(&[3, 4]), r.any(&[3, 4]), r.pos(&[4])],
            |x| ln_backward(x, &[4]),
        ),
        multi(
            "native_layer_norm_backward",
            "2 trailing dims, no weight",
            vec![r.any(&[2, 2, 3]), r.any(&[2, 2, 3])],
            |x| ln_backward(x, &[2, 3]),
        ),
        multi(
            "native_group_norm_backward",
            "2 groups, weight",
            vec![r.any(&[2, 4, 3]), r.any(&[2, 4, 3]), r.pos(&[4])],
            |x| gn_backward(x, 2),
        ),
        multi(
            "native_group_norm_backward",
            "permuted, weight",
            vec![permuted(r, &[2, 4, 3]), permuted(r, &[2, 4, 3]), r.pos(&[4])],
            |x| gn_backward(x, 2),
        ),
        multi(
            "native_group_norm_backward",
            "channels_last, no weight",
            vec![channels_last(r, &[2, 4, 2, 2]), channels_last(r, &[2, 4, 2, 2])],
            |x| gn_backward(x, 4),
        ),
    ]
}
