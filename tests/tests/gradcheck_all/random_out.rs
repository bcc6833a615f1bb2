//! Cases for `normal(mean, std)` with tensor arguments. As in PyTorch the formula is zero (the
//! samples are not reparameterized), which finite differences only confirm when the sample does
//! not move with the input: so each case feeds `mean = x · 0` (and `std = x · 0 + 1`) and
//! multiplies the sample by `x`, which checks the entry's zero gradient flowing through the
//! graph next to a non-zero one. Each evaluation seeds its own generator (the same draw).

use super::{case, Case, Rng};
use oxten::options::*;
use oxten::Generator;

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    vec![
        case("normal.Tensor_float", "", vec![r.any(&[2, 3])], |x| {
            let g = Generator::with_seed(31);
            let mean = x[0].try_mul_scalar(0.0)?;
            oxten::try_normal_tensor_float_with(&mean, NormalTensorFloatOpts { std: 0.5, generator: Some(&g) })?
                .try_mul(&x[0])
        }),
        case("normal.float_Tensor", "", vec![r.pos(&[4])], |x| {
            let g = Generator::with_seed(32);
            let std = x[0].try_mul_scalar(0.0)?.try_add_scalar(1.0)?;
            oxten::try_normal_float_tensor_with(0.5, &std, NormalFloatTensorOpts { generator: Some(&g) })?
                .try_mul(&x[0])
        }),
        case("normal.Tensor_Tensor", "broadcast", vec![r.any(&[2, 1]), r.pos(&[3])], |x| {
            let g = Generator::with_seed(33);
            let mean = x[0].try_mul_scalar(0.0)?;
            let std = x[1].try_mul_scalar(0.0)?.try_add_scalar(1.0)?;
            let y = oxten::try_normal_tensor_tensor_with(&mean, &std, NormalTensorTensorOpts { generator: Some(&g) })?;
            y.try_mul(&x[0])?.try_add(&y.try_mul(&x[1])?)
        }),
    ]
}
