//! Cases for the shape entries with their own formulas: `unfold` (overlapping and strided
//! windows, a non-contiguous input).

use super::{case, Case, Rng};
use oxten::ops;

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    vec![
        case("unfold", "overlapping windows", vec![r.any(&[5, 2])], |x| ops::unfold::call(&x[0], 0, 3, 1)),
        case("unfold", "step larger than the window", vec![r.any(&[2, 7])], |x| ops::unfold::call(&x[0], 1, 2, 3)),
        case("unfold", "transposed input", vec![r.transposed(&[4, 3])], |x| ops::unfold::call(&x[0], -1, 2, 1)),
    ]
}
