//! Cases for the index family: `cat`, `stack`, gathers and scatters, `masked_fill`,
//! `embedding`, `repeat`, `roll`, `flip`, `tril`/`triu`, advanced indexing.

use super::{case, fresh, Case, Rng};
use oxten::options::*;
use oxten::Tensor;

fn long(v: &[i64], shape: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

fn mask(v: &[bool], shape: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    let i1 = long(&[2, 0, 2], &[3]);
    let g_idx = long(&[0, 3, 1, 1, 2, 0], &[3, 2]);
    let s_idx = long(&[0, 2, 1, 3, 3, 0], &[3, 2]); // distinct per row: scatter is well defined
    let dup_idx = long(&[0, 0, 1, 0, 2, 2], &[2, 3]);
    let emb_idx = long(&[0, 3, 3, 1, 4, 3], &[2, 3]);
    let m34 = mask(&[true, false, false, true, false, true, true, false, false, false, true, true], &[3, 4]);
    let m4 = mask(&[false, true, true, false], &[4]);
    vec![
        // ---- cat, stack ----
        case("cat", "dim 0, three inputs", vec![r.any(&[2, 3]), r.any(&[1, 3]), r.any(&[3, 3])], |x| {
            oxten::try_cat(&[x[0].clone(), x[1].clone(), x[2].clone()], 0)
        }),
        case("cat", "dim -1, transposed input", vec![r.transposed(&[3, 2]), r.any(&[3, 4])], |x| {
            oxten::try_cat(&[x[0].clone(), x[1].clone()], -1)
        }),
        case("cat", "legacy empty input and a constant", vec![r.any(&[2, 2]), r.any(&[0])], |x| {
            let c = Tensor::from_vec(vec![1.0f64, 2.0], &[1, 2])?;
            oxten::try_cat(&[x[1].clone(), x[0].clone(), c], 0)?.try_mul(&x[0].try_sum()?)
        }),
        case("cat", "same input twice", vec![r.any(&[2, 3])], |x| oxten::try_cat(&[x[0].clone(), x[0].clone()], 1)),
        case("stack", "dim 0", vec![r.any(&[2, 3]), r.any(&[2, 3])], |x| {
            oxten::try_stack(&[x[0].clone(), x[1].clone()], 0)
        }),
        case("stack", "new last dim, transposed", vec![r.transposed(&[2, 3]), r.any(&[2, 3]), r.any(&[2, 3])], |x| {
            oxten::try_stack(&[x[0].clone(), x[1].clone(), x[2].clone()], -1)
        }),
        // ---- index_select, gather, scatter ----
        case("index_select", "dim 1, repeated indices", vec![r.any(&[2, 4])], {
            let i = i1.clone();
            move |x| x[0].try_index_select(1, &i)
        }),
        case("index_select", "dim 0, transposed", vec![r.transposed(&[3, 2])], {
            let i = i1.clone();
            move |x| x[0].try_index_select(0, &i)
        }),
        case("index_select", "0-dim index", vec![r.any(&[3, 2])], |x| x[0].try_index_select(0, &Tensor::scalar(1i64))),
        case("gather", "dim 1", vec![r.any(&[3, 4])], {
            let i = g_idx.clone();
            move |x| x[0].try_gather(1, &i)
        }),
        case("gather", "dim 0, repeated", vec![r.transposed(&[3, 3])], {
            let i = dup_idx.clone();
            move |x| x[0].try_gather(0, &i)
        }),
        case("scatter.src", "dim 1", vec![r.any(&[3, 4]), r.any(&[3, 2])], {
            let i = s_idx.clone();
            move |x| x[0].try_scatter_src(1, &i, &x[1])
        }),
        case("scatter.src", "src larger than index (only self)", vec![r.any(&[3, 4])], {
            let i = s_idx.clone();
            move |x| {
                let src = Tensor::from_vec((0..12).map(|v| v as f64).collect::<Vec<_>>(), &[3, 4])?;
                x[0].try_scatter_src(1, &i, &src)
            }
        }),
        case("scatter.src", "in-place", vec![r.any(&[3, 4]), r.any(&[3, 2])], {
            let i = s_idx.clone();
            move |x| fresh(&x[0])?.try_scatter_src_(1, &i, &x[1])
        }),
        case("scatter.value", "", vec![r.any(&[3, 4])], {
            let i = s_idx.clone();
            move |x| x[0].try_scatter_value(1, &i, 2.5)
        }),
        case("scatter.value", "in-place", vec![r.transposed(&[3, 4])], {
            let i = s_idx.clone();
            move |x| fresh(&x[0])?.try_scatter_value_(1, &i, -1)
        }),
        case("scatter_add", "dim 0, repeated", vec![r.any(&[3, 3]), r.any(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| x[0].try_scatter_add(0, &i, &x[1])
        }),
        case("scatter_add", "in-place", vec![r.any(&[3, 3]), r.any(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| fresh(&x[0])?.try_scatter_add_(0, &i, &x[1])
        }),
        // ---- scatter_reduce: every reduction, with and without self ----
        case("scatter_reduce.two", "sum, repeated", vec![r.any(&[3, 3]), r.any(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| oxten::ops::scatter_reduce_two::call(&x[0], 0, &i, &x[1], "sum", true)
        }),
        case("scatter_reduce.two", "prod, without self", vec![r.distinct(&[3, 3]), r.distinct(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| oxten::ops::scatter_reduce_two::call(&x[0], 0, &i, &x[1], "prod", false)
        }),
        case("scatter_reduce.two", "prod with a zero in src", vec![r.distinct(&[3, 3]), r.distinct(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| {
                let zero = Tensor::from_vec(vec![1.0f64, 1.0, 0.0, 1.0, 1.0, 1.0], &[2, 3])?;
                let src = x[1].try_mul(&zero)?;
                oxten::ops::scatter_reduce_two::call(&x[0], 0, &i, &src, "prod", true)
            }
        }),
        case("scatter_reduce.two", "mean, transposed self", vec![r.transposed(&[3, 3]), r.any(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| oxten::ops::scatter_reduce_two::call(&x[0], 0, &i, &x[1], "mean", true)
        }),
        case("scatter_reduce.two", "mean, without self", vec![r.any(&[3, 3]), r.any(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| oxten::ops::scatter_reduce_two::call(&x[0], 0, &i, &x[1], "mean", false)
        }),
        // `distinct` draws both operands from one set of values; half a step apart, no element of
        // `src` ties with one of `self`.
        case("scatter_reduce.two", "amax", vec![r.distinct(&[3, 3]), r.distinct(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| oxten::ops::scatter_reduce_two::call(&x[0], 0, &i, &x[1].try_add_scalar(0.185)?, "amax", true)
        }),
        case("scatter_reduce.two", "amin, dim 1, without self", vec![r.distinct(&[3, 4]), r.distinct(&[3, 2])], {
            let i = s_idx.clone();
            move |x| oxten::ops::scatter_reduce_two::call(&x[0], 1, &i, &x[1].try_add_scalar(0.185)?, "amin", false)
        }),
        case("scatter_reduce.two", "in-place prod", vec![r.distinct(&[3, 3]), r.distinct(&[2, 3])], {
            let i = dup_idx.clone();
            move |x| oxten::ops::scatter_reduce_two_::call(&fresh(&x[0])?, 0, &i, &x[1], "prod", true)
        }),
        // ---- masked_fill ----
        case("masked_fill.Scalar", "", vec![r.any(&[3, 4])], {
            let m = m34.clone();
            move |x| x[0].try_masked_fill_scalar(&m, 0.5)
        }),
        case("masked_fill.Scalar", "mask broadcast larger than self", vec![r.any(&[4])], {
            let m = m34.clone();
            move |x| x[0].try_masked_fill_scalar(&m, 0.5)
        }),
        case("masked_fill.Scalar", "in-place, broadcast mask", vec![r.transposed(&[3, 4])], {
            let m = m4.clone();
            move |x| fresh(&x[0])?.try_masked_fill_scalar_(&m, -2.0)
        }),
        case("masked_fill.Tensor", "value gradient", vec![r.any(&[3, 4]), r.any(&[])], {
            let m = m34.clone();
            move |x| x[0].try_masked_fill(&m, &x[1])
        }),
        case("masked_fill.Tensor", "in-place, broadcast mask", vec![r.any(&[3, 4]), r.any(&[])], {
            let m = m4.clone();
            move |x| fresh(&x[0])?.try_masked_fill_(&m, &x[1])
        }),
        // ---- embedding ----
        case("embedding", "repeated indices", vec![r.any(&[5, 3])], {
            let i = emb_idx.clone();
            move |x| oxten::try_embedding(&x[0], &i)
        }),
        // With padding_idx or scale_grad_by_freq the gradient is deliberately not the derivative
        // (the padding row gets none, repeated rows are averaged), as in PyTorch; those are
        // checked against PyTorch's values in tests/tests/index_ops.rs. Here padding_idx names
        // a row that no index picks, so the gradient is the derivative.
        case("embedding", "padding_idx not picked", vec![r.any(&[5, 3])], {
            let i = emb_idx.clone();
            move |x| oxten::try_embedding_with(&x[0], &i, EmbeddingOpts { padding_idx: 2, ..Default::default() })
        }),
        case("embedding_dense_backward", "", vec![r.any(&[2, 3, 4])], {
            let i = emb_idx.clone();
            move |x| oxten::try_embedding_dense_backward(&x[0], &i, 5, -1, false)
        }),
        case("embedding_dense_backward", "padding_idx", vec![r.any(&[2, 3, 4])], {
            let i = emb_idx.clone();
            move |x| oxten::try_embedding_dense_backward(&x[0], &i, 5, 3, false)
        }),
        // ---- _embedding_bag_sum (embedding_bag's sum and mean) ----
        case("_embedding_bag_sum", "repeated rows, an empty bag", vec![r.any(&[5, 3])], {
            let (i, o) = (long(&[1, 4, 1, 0, 2], &[5]), long(&[0, 2, 2], &[3]));
            move |x| oxten::ops::_embedding_bag_sum::call(&x[0], &i, &o, None)
        }),
        case("_embedding_bag_sum", "per_sample_weights", vec![r.any(&[5, 3]), r.any(&[5])], {
            let (i, o) = (long(&[1, 4, 1, 0, 2], &[5]), long(&[0, 3], &[2]));
            move |x| oxten::ops::_embedding_bag_sum::call(&x[0], &i, &o, Some(&x[1]))
        }),
        // ---- repeat, roll, flip ----
        case("repeat", "new leading dim", vec![r.any(&[2, 3])], |x| x[0].try_repeat(&[2, 1, 3])),
        case("repeat", "transposed", vec![r.transposed(&[2, 3])], |x| x[0].try_repeat(&[2, 2])),
        case("repeat", "zero repeats", vec![r.any(&[2])], |x| {
            x[0].try_repeat(&[0, 2])?.try_sum()?.try_add(&x[0].try_mul_scalar(2.0)?)
        }),
        case("roll", "one dim", vec![r.any(&[3, 4])], |x| x[0].try_roll(&[1], &[1])),
        case("roll", "two dims", vec![r.transposed(&[3, 4])], |x| x[0].try_roll(&[2, -1], &[0, 1])),
        case("roll", "flattened", vec![r.any(&[3, 4])], |x| x[0].try_roll(&[5], &[])),
        case("flip", "", vec![r.any(&[2, 3, 4])], |x| x[0].try_flip(&[0, -1])),
        case("flip", "transposed", vec![r.transposed(&[3, 4])], |x| x[0].try_flip(&[1])),
        // ---- tril, triu ----
        case("tril", "", vec![r.any(&[3, 4])], |x| x[0].try_tril()),
        case("tril", "diagonal -1, batch", vec![r.any(&[2, 3, 3])], |x| x[0].try_tril_with(TrilOpts { diagonal: -1 })),
        case("tril", "in-place", vec![r.transposed(&[3, 4])], |x| {
            fresh(&x[0])?.try_tril_with_(TrilInplaceOpts { diagonal: 1 })
        }),
        case("triu", "", vec![r.any(&[3, 4])], |x| x[0].try_triu_with(TriuOpts { diagonal: 1 })),
        case("triu", "in-place", vec![r.any(&[4, 3])], |x| fresh(&x[0])?.try_triu_()),
        // ---- advanced indexing ----
        case("index.Tensor", "one index, repeated", vec![r.any(&[3, 4])], {
            let i = i1.clone();
            move |x| x[0].try_index(&[Some(i.clone())])
        }),
        case("index.Tensor", "non-adjacent indices", vec![r.any(&[3, 2, 4])], {
            let (a, b) = (long(&[0, 2, 2], &[3]), long(&[1, 3, 1], &[3]));
            move |x| x[0].try_index(&[Some(a.clone()), None, Some(b.clone())])
        }),
        case("index.Tensor", "broadcast indices after a slice", vec![r.transposed(&[3, 4])], {
            let (a, b) = (long(&[0, 2], &[2, 1]), long(&[1, 0, 1], &[3]));
            move |x| x[0].try_index(&[Some(a.clone()), Some(b.clone())])
        }),
        case("index.Tensor", "bool mask", vec![r.any(&[3, 4])], {
            let m = m34.clone();
            move |x| x[0].try_index(&[Some(m.clone())])
        }),
        case("index_put", "values", vec![r.any(&[3, 4]), r.any(&[2, 4])], {
            let i = long(&[2, 0], &[2]);
            move |x| x[0].try_index_put(&[Some(i.clone())], &x[1])
        }),
        case("index_put", "accumulate, repeated, broadcast value", vec![r.any(&[3, 4]), r.any(&[4])], {
            let i = long(&[1, 1, 0], &[3]);
            move |x| x[0].try_index_put_with(&[Some(i.clone())], &x[1], IndexPutOpts { accumulate: true })
        }),
        case("index_put", "bool mask, 0-dim value", vec![r.any(&[3, 4]), r.any(&[])], {
            let m = m34.clone();
            move |x| x[0].try_index_put(&[Some(m.clone())], &x[1])
        }),
        case("index_put", "in-place, non-adjacent", vec![r.any(&[3, 2, 4]), r.any(&[2, 2])], {
            let (a, b) = (long(&[0, 2], &[2]), long(&[3, 1], &[2]));
            move |x| fresh(&x[0])?.try_index_put_(&[Some(a.clone()), None, Some(b.clone())], &x[1])
        }),
        case("index_put", "in-place accumulate", vec![r.transposed(&[3, 4]), r.any(&[3, 4])], {
            let i = long(&[1, 1, 2], &[3]);
            move |x| {
                fresh(&x[0])?.try_index_put_with_(&[Some(i.clone())], &x[1], IndexPutInplaceOpts { accumulate: true })
            }
        }),
    ]
}
