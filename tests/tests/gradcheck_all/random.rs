//! Cases for the random family. Every evaluation of a case must draw the same values, so each
//! closure seeds its own generator (or, for `native_dropout`, which has no generator argument,
//! reseeds the default generator under a lock held until the draw is done, since the three
//! gradcheck tests run in parallel).

use super::{case, fresh, Case, Rng};
use oxten::options::*;
use oxten::{Generator, Tensor};
use std::sync::Mutex;

/// Serializes "seed the default generator, then draw" across the parallel tests.
static DEFAULT_GENERATOR: Mutex<()> = Mutex::new(());

/// `native_dropout(x, p, train).0` with the default generator reseeded: the same mask every call.
fn dropout_out(x: &Tensor, p: f64, train: Option<bool>) -> oxten::Result<Tensor> {
    let _lock = DEFAULT_GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
    oxten::manual_seed(1234);
    Ok(oxten::try_native_dropout(x, p, train)?.0)
}

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    vec![
        // ---- in-place distributions: zero gradient ----
        case("uniform_", "", vec![r.any(&[2, 3])], |x| {
            let g = Generator::with_seed(1);
            fresh(&x[0])?
                .try_uniform_with_(UniformInplaceOpts { from: -1.0, to: 2.0, generator: Some(&g) })?
                .try_mul(&x[0])
        }),
        case("normal_", "", vec![r.any(&[5])], |x| {
            let g = Generator::with_seed(2);
            fresh(&x[0])?.try_normal_with_(NormalInplaceOpts { mean: 1.0, std: 0.5, generator: Some(&g) })
        }),
        case("random_.from", "", vec![r.any(&[4])], |x| {
            let g = Generator::with_seed(3);
            fresh(&x[0])?.try_random_from_with_(-3, Some(7), RandomFromInplaceOpts { generator: Some(&g) })
        }),
        case("random_.to", "", vec![r.any(&[4])], |x| {
            let g = Generator::with_seed(4);
            fresh(&x[0])?.try_random_to_with_(9, RandomToInplaceOpts { generator: Some(&g) })
        }),
        case("bernoulli_.float", "", vec![r.any(&[6])], |x| {
            let g = Generator::with_seed(5);
            fresh(&x[0])?.try_bernoulli_float_with_(BernoulliFloatInplaceOpts { p: 0.3, generator: Some(&g) })
        }),
        case("bernoulli_.Tensor", "", vec![r.any(&[2, 3]), r.pos(&[3])], |x| {
            let g = Generator::with_seed(6);
            let p = x[1].try_div_scalar(2.0)?;
            fresh(&x[0])?.try_bernoulli_with_(&p, BernoulliInplaceOpts { generator: Some(&g) })
        }),
        case("bernoulli", "", vec![r.pos(&[5])], |x| {
            let g = Generator::with_seed(7);
            x[0].try_div_scalar(2.0)?.try_bernoulli_with(BernoulliOpts { generator: Some(&g) })
        }),
        case("bernoulli.p", "", vec![r.any(&[5])], |x| {
            let g = Generator::with_seed(8);
            x[0].try_bernoulli_p_with(0.6, BernoulliPOpts { generator: Some(&g) })
        }),
        // ---- dropout: the mask is the same in every evaluation ----
        case("native_dropout", "train", vec![r.any(&[4, 5])], |x| dropout_out(&x[0], 0.4, Some(true))),
        case("native_dropout", "train = None trains", vec![r.any(&[6])], |x| dropout_out(&x[0], 0.25, None)),
        case("native_dropout", "eval", vec![r.any(&[6])], |x| dropout_out(&x[0], 0.25, Some(false))),
        case("native_dropout", "p = 1", vec![r.any(&[6])], |x| dropout_out(&x[0], 1.0, Some(true))),
        case("native_dropout", "transposed (dense) input", vec![r.transposed(&[3, 4])], |x| {
            dropout_out(&x[0], 0.5, Some(true))
        }),
        case("native_dropout", "strided slice (not dense)", vec![r.any(&[4, 6])], |x| {
            let s = x[0].try_slice(1, Some(0), Some(6), 2)?;
            dropout_out(&s, 0.5, Some(true))
        }),
        case("native_dropout_backward", "", vec![r.any(&[2, 3])], |x| {
            let mask = Tensor::from_vec(vec![true, false, true, true, false, true], &[2, 3])?;
            oxten::try_native_dropout_backward(&x[0], &mask, 2.5)
        }),
        case("native_dropout_backward", "float mask", vec![r.any(&[4])], |x| {
            let mask = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], &[4])?;
            oxten::try_native_dropout_backward(&x[0], &mask, 0.5)
        }),
    ]
}
