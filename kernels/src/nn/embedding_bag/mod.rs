//! `embedding_bag` (+ `.padding_idx`): the sum, mean or max of the `weight` rows each bag of
//! `indices` names, a bag running from its offset to the next. CompositeImplicitAutograd: the
//! bags are read on the host. Sum and mean go to `_embedding_bag_sum` ([`sum`]), which adds
//! each row into its bag (its derivative is in derivatives.yaml). Max (and the frequency
//! scaling of the gradient) picks the rows with `index_select` and reduces them with `amax`
//! over dim 1 of the rows viewed as `[bags, L, dim]` when every bag holds L rows, else with
//! `scatter_reduce(amax)`; the gradient of `weight` is theirs. Entries equal to `padding_idx`
//! take no part (and do not count for the mean); an empty bag gives zeros. `sparse` is
//! accepted and the gradient is dense.
//!
//! The four outputs are PyTorch's: the bags, `offset2bag` (each index's bag), `bag_size` (each
//! bag's entries) and `max_indices` (the row each maximum came from in max mode, else
//! `bag_size`).

use crate::generated::decls::{EmbeddingBagCompositeImplicit, EmbeddingBagPaddingIdxCompositeImplicit};
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

mod sum;

fn long(v: Vec<i64>, sizes: &[i64], like: &Tensor) -> Result<Tensor> {
    Tensor::from_vec(v, sizes)?.try_to_device(like.device())
}

/// f16/bf16 bags are reduced in f32 and rounded once, as PyTorch's CPU kernel accumulates.
#[allow(clippy::too_many_arguments)]
fn embedding_bag(
    weight: &Tensor,
    indices: &Tensor,
    offsets: &Tensor,
    scale_grad_by_freq: bool,
    mode: i64,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: Option<i64>,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    let dtype = weight.dtype();
    // The sum kernel reduces half types in f32 itself; max and the frequency scaling go
    // through f32 copies.
    let fused = mode != 2 && !scale_grad_by_freq;
    let widen =
        !fused && matches!(dtype, DType::F16 | DType::BF16) && per_sample_weights.is_none_or(|w| w.dtype() == dtype);
    let wide = |t: &Tensor| if widen { t.try_to_dtype(DType::F32) } else { Ok(t.clone()) };
    let psw = per_sample_weights.map(wide).transpose()?;
    let (out, offset2bag, bag_size, max_indices) = bags(
        &wide(weight)?,
        indices,
        offsets,
        scale_grad_by_freq,
        mode,
        psw.as_ref(),
        include_last_offset,
        padding_idx,
    )?;
    let out = if widen { out.try_to_dtype(dtype)? } else { out };
    Ok((out, offset2bag, bag_size, max_indices))
}

#[allow(clippy::too_many_arguments)]
fn bags(
    weight: &Tensor,
    indices: &Tensor,
    offsets: &Tensor,
    scale_grad_by_freq: bool,
    mode: i64,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: Option<i64>,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    if weight.dim() != 2 {
        return Err(Error::runtime(format!(
            "embedding_bag: weight has to be a 2D Tensor, but got Tensor of dimension {}",
            weight.dim()
        )));
    }
    for (t, name, arg) in [(indices, "indices", 2), (offsets, "offsets", 3)] {
        if t.dim() != 1 {
            return Err(Error::runtime(format!(
                "Expected 1-dimensional tensor, but got {}-dimensional tensor for argument #{arg} '{name}' (while \
                 checking arguments for embedding_bag)",
                t.dim()
            )));
        }
    }
    if !(0..=2).contains(&mode) {
        return Err(Error::value(format!("embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 (max), got {mode}")));
    }
    if per_sample_weights.is_some() && mode != 0 {
        return Err(Error::runtime("embedding_bag: per_sample_weights only supported with mode='sum'"));
    }
    if let Some(w) = per_sample_weights {
        if w.dim() != 1 || w.numel() != indices.numel() {
            return Err(Error::runtime(format!(
                "embedding_bag: per_sample_weights ({:?}) must have the shape of the indices ({:?})",
                &w.sizes()[..],
                &indices.sizes()[..]
            )));
        }
        if w.dtype() != weight.dtype() {
            return Err(Error::dtype(format!(
                "embedding_bag: expected per_sample_weights to have the weight's dtype {}, but got {}",
                crate::support::type_meta_name(weight.dtype()),
                crate::support::type_meta_name(w.dtype())
            )));
        }
    }
    if mode == 2 && scale_grad_by_freq {
        return Err(Error::runtime("max mode does not support scaling the gradient by the frequency"));
    }
    let idx = sum::host_indices(indices, "embedding_bag", "indices")?;
    let offs = sum::host_indices(offsets, "embedding_bag", "offsets")?;
    let (n, rows, dims) = (idx.len() as i64, weight.sizes()[0], weight.sizes()[1]);
    if let Some(&first) = offs.first() {
        if first != 0 {
            return Err(Error::runtime(format!(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. \
                 However, got {first}"
            )));
        }
    }
    if let Some(&last) = offs.last() {
        if last > n {
            return Err(Error::runtime(format!(
                "offsets[-1] can not be greater than input's length ({n}), but got offsets[-1] of {last}"
            )));
        }
    }
    if offs.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::runtime("embedding_bag: offsets must be non-decreasing"));
    }
    let bags = if include_last_offset { offs.len().saturating_sub(1) } else { offs.len() };
    // Positions from `end` on (past the last bag, with include_last_offset) take no part.
    let end = if include_last_offset { offs.get(bags).copied().unwrap_or(0) } else { n };
    // A negative padding_idx counts from the end, as in `embedding`.
    let pad = match padding_idx {
        Some(p) if !(-rows..rows).contains(&p) => {
            return Err(Error::index(format!(
                "padding_idx must be within the number of embeddings, -{rows} through {}, but got {p}",
                rows - 1
            )))
        }
        Some(p) if p < 0 => Some(p + rows),
        other => other,
    };
    if let Some(v) = idx.iter().find(|&v| !(0..rows).contains(v)) {
        return Err(Error::index(format!("embedding_bag: index {v} is out of bounds for a weight of {rows} rows")));
    }
    // Bag `b` holds positions `offs[b]..bag_end(b)`; positions past the last bag
    // (include_last_offset) carry the last bag's number in `offset2bag`, as in PyTorch, but
    // take no part.
    let bag_end = |b: usize| if b + 1 < bags { offs[b + 1] } else { n };
    let mut offset2bag = vec![0i64; idx.len()];
    for b in 1..bags {
        offset2bag[offs[b] as usize..bag_end(b) as usize].fill(b as i64);
    }
    let all_kept = bags > 0 && end == n && pad.is_none_or(|p| !idx.contains(&p));
    let mut bag_size = vec![0i64; bags];
    let (mut kept_pos, mut kept_bag, mut kept_idx) = (vec![], vec![], vec![]);
    if all_kept {
        for (b, size) in bag_size.iter_mut().enumerate() {
            *size = bag_end(b) - offs[b];
        }
    } else {
        for (p, &v) in idx.iter().enumerate() {
            if bags == 0 || p as i64 >= end || Some(v) == pad {
                continue;
            }
            let b = offset2bag[p];
            kept_pos.push(p as i64);
            kept_bag.push(b);
            kept_idx.push(v);
            bag_size[b as usize] += 1;
        }
    }
    let bag_size_t = long(bag_size.clone(), &[bags as i64], weight)?;
    if mode != 2 && !scale_grad_by_freq && weight.dtype().is_floating_point() {
        // Each bag's rows added straight into its output row (`_embedding_bag_sum`), over
        // the kept entries: the bags' starts move down past the dropped ones.
        let (kept_indices, psw, starts) = if all_kept {
            (indices.clone(), per_sample_weights.cloned(), offs[..bags].to_vec())
        } else {
            let k = kept_idx.len() as i64;
            let psw = per_sample_weights
                .map(|w| ops::index_select::call(w, 0, &long(kept_pos, &[k], weight)?))
                .transpose()?;
            let starts = bag_size
                .iter()
                .scan(0i64, |at, &s| {
                    let start = *at;
                    *at += s;
                    Some(start)
                })
                .collect();
            (long(kept_idx, &[k], weight)?, psw, starts)
        };
        let starts = long(starts, &[bags as i64], weight)?;
        let sum = ops::_embedding_bag_sum::call(weight, &kept_indices, &starts, psw.as_ref())?;
        let out = if mode == 1 { ops::div::call(&sum, &bag_divisor(&bag_size, weight)?)? } else { sum };
        return Ok((out, long(offset2bag, &[n], weight)?, bag_size_t.clone(), bag_size_t));
    }
    if all_kept {
        kept_pos = (0..n).collect();
        kept_bag = offset2bag.clone();
        kept_idx = idx.to_vec();
    }
    let k = kept_idx.len() as i64;
    let mut picked = ops::index_select::call(weight, 0, &long(kept_idx.clone(), &[k], weight)?)?;
    if scale_grad_by_freq {
        // The gradient of each row divided by how often its index occurs; the values unchanged.
        let mut freq = vec![0f64; rows as usize];
        for &v in idx.iter() {
            freq[v as usize] += 1.0;
        }
        let scale: Vec<f64> = kept_idx.iter().map(|&v| 1.0 / freq[v as usize]).collect();
        let scale = Tensor::from_vec(scale, &[k, 1])?.try_to_device(weight.device())?.try_to_dtype(weight.dtype())?;
        let frozen = picked.detach();
        let moving = ops::sub::call(&picked, &frozen, Scalar::Int(1))?;
        picked = ops::add::call(&frozen, &ops::mul::call(&moving, &scale)?, Scalar::Int(1))?;
    }
    if let Some(w) = per_sample_weights {
        let w = ops::index_select::call(w, 0, &long(kept_pos, &[k], weight)?)?;
        picked = ops::mul::call(&picked, &ops::unsqueeze::call(&w, 1)?)?;
    }
    // Bags of one size L (fixed-size bags, the 2-D input's case): the rows are a
    // [bags, L, dims] block reduced over L, one pass and no scatter.
    let uniform = bag_size.first().copied().filter(|&l| l > 0 && bag_size.iter().all(|&s| s == l));
    if let Some(l) = uniform {
        let block = ops::reshape::call(&picked, &[bags as i64, l, dims])?;
        let out = match mode {
            0 => ops::sum_dim_intlist::call(&block, Some(&[1]), false, None)?,
            1 => ops::mean_dim::call(&block, Some(&[1]), false, None)?,
            _ => ops::amax::call(&block, &[1], false)?,
        };
        let max_indices = if mode == 2 {
            let at = ops::argmax::call(&block, Some(1), false)?;
            let rows = ops::reshape::call(&long(kept_idx, &[k], weight)?, &[bags as i64, l])?;
            ops::gather::call(&rows, 1, &at, false)?
        } else {
            bag_size_t.clone()
        };
        return Ok((out, long(offset2bag, &[n], weight)?, bag_size_t, max_indices));
    }
    let zeros = ops::new_zeros::call(weight, &[bags as i64, dims], None, None, None, None)?;
    let bag_t = long(kept_bag, &[k], weight)?;
    let (out, max_indices) = match mode {
        0 | 1 => {
            let sum = ops::index_add::call(&zeros, 0, &bag_t, &picked, Scalar::Int(1))?;
            let out = if mode == 1 { ops::div::call(&sum, &bag_divisor(&bag_size, weight)?)? } else { sum };
            (out, bag_size_t.clone())
        }
        _ => {
            let spread = ops::expand::call(&ops::unsqueeze::call(&bag_t, 1)?, &[k, dims], false)?;
            let out = ops::scatter_reduce_two::call(&zeros, 0, &spread, &picked, "amax", false)?;
            // The row each maximum came from (the largest such row where several tie).
            let rows_t =
                ops::expand::call(&ops::unsqueeze::call(&long(kept_idx, &[k], weight)?, 1)?, &[k, dims], false)?;
            let won = ops::eq::call(&picked, &ops::gather::call(&out, 0, &spread, false)?)?;
            let cand = ops::where_scalarother::call(&won, &rows_t, Scalar::Int(-1))?;
            let none = ops::full::call(
                &[bags as i64, dims],
                Scalar::Int(-1),
                Some(DType::I64),
                None,
                Some(weight.device()),
                None,
            )?;
            let at = ops::scatter_reduce_two::call(&none, 0, &spread, &cand, "amax", true)?;
            (out, ops::clamp_min::call(&at, Scalar::Int(0))?)
        }
    };
    Ok((out, long(offset2bag, &[n], weight)?, bag_size_t, max_indices))
}

/// The mean's `[bags, 1]` divisor in the weight's dtype: each bag's size, 1 for an empty bag.
fn bag_divisor(bag_size: &[i64], weight: &Tensor) -> Result<Tensor> {
    let count: Vec<f64> = bag_size.iter().map(|&c| c.max(1) as f64).collect();
    Tensor::from_vec(count, &[bag_size.len() as i64, 1])?.try_to_device(weight.device())?.try_to_dtype(weight.dtype())
}

impl EmbeddingBagCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn embedding_bag(
        weight: &Tensor,
        indices: &Tensor,
        offsets: &Tensor,
        scale_grad_by_freq: bool,
        mode: i64,
        _sparse: bool,
        per_sample_weights: Option<&Tensor>,
        include_last_offset: bool,
    ) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, per_sample_weights, include_last_offset, None)
    }
}

impl EmbeddingBagPaddingIdxCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn embedding_bag_padding_idx(
        weight: &Tensor,
        indices: &Tensor,
        offsets: &Tensor,
        scale_grad_by_freq: bool,
        mode: i64,
        _sparse: bool,
        per_sample_weights: Option<&Tensor>,
        include_last_offset: bool,
        padding_idx: Option<i64>,
    ) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        embedding_bag(
            weight,
            indices,
            offsets,
            scale_grad_by_freq,
            mode,
            per_sample_weights,
            include_last_offset,
            padding_idx,
        )
    }
}
