//! Cases for sorting and selection. Inputs have distinct values (`Rng::distinct`), so the
//! selected positions do not change under the finite-difference steps.

use super::{case, Case, Rng};
use oxten::ops;

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    vec![
        case("sort.stable", "ascending along the last dim", vec![r.distinct(&[3, 4])], |x| {
            Ok(ops::sort::call(&x[0], -1, false)?.0)
        }),
        case("sort.stable", "descending along dim 0", vec![r.distinct(&[3, 4])], |x| {
            Ok(ops::sort_stable::call(&x[0], Some(true), 0, true)?.0)
        }),
        case("topk", "largest 2 of 5", vec![r.distinct(&[3, 5])], |x| Ok(ops::topk::call(&x[0], 2, 1, true, true)?.0)),
        case("topk", "smallest, unsorted, dim 0", vec![r.distinct(&[4, 3])], |x| {
            Ok(ops::topk::call(&x[0], 3, 0, false, false)?.0)
        }),
        case("kthvalue", "keepdim", vec![r.distinct(&[3, 5])], |x| Ok(ops::kthvalue::call(&x[0], 2, 1, true)?.0)),
        case("kthvalue", "dim 0", vec![r.distinct(&[4, 3])], |x| Ok(ops::kthvalue::call(&x[0], 3, 0, false)?.0)),
        case("cummax", "dim 1", vec![r.distinct(&[3, 5])], |x| Ok(ops::cummax::call(&x[0], 1)?.0)),
        case("cummin", "dim 0", vec![r.distinct(&[4, 3])], |x| Ok(ops::cummin::call(&x[0], 0)?.0)),
        case("median.dim", "", vec![r.distinct(&[3, 5])], |x| Ok(ops::median_dim::call(&x[0], 1, false)?.0)),
        case("median", "", vec![r.distinct(&[3, 4])], |x| ops::median::call(&x[0])),
        case("mode", "distinct values: the smallest", vec![r.distinct(&[3, 4])], |x| {
            Ok(ops::mode::call(&x[0], 1, false)?.0)
        }),
    ]
}
