//! Formula helpers of the index family (`cat`, `stack`, gathers and scatters, `embedding`,
//! `repeat`, `roll`, triangles, advanced indexing), after PyTorch's `FunctionsManual.cpp`.
//! Every helper is built from differentiable operators, so double backward works.

use super::{zeros, zeros_like};
use oxten_runtime::{ops, wrap_dim, DType, DimVec, Result, Scalar, Tensor};

/// Whether a recorded shape is the legacy 1-d empty tensor `cat` skips.
fn cat_skipped(s: &[i64]) -> bool {
    s.len() == 1 && s[0] == 0
}

/// The gradient of every input of `cat(tensors, dim)`: `grad` narrowed to each input's extent
/// along `dim` (skipped 1-d empty inputs get an empty gradient).
pub fn cat_tensors_backward(grad: &Tensor, sizes: &[DimVec], dim: i64) -> Result<Vec<Tensor>> {
    let d = match sizes.iter().find(|s| !cat_skipped(s)) {
        Some(s) => wrap_dim(dim, s.len())? as i64,
        None => dim,
    };
    let mut at = 0;
    sizes
        .iter()
        .map(|s| {
            if cat_skipped(s) {
                return zeros(&[0], grad.dtype(), grad.device());
            }
            let n = s[d as usize];
            at += n;
            ops::narrow::call(grad, d, at - n, n)
        })
        .collect()
}

/// The gradient of every input of `stack(tensors, dim)`: `grad` unbound along `dim`.
pub fn stack_tensors_backward(grad: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
    let d = wrap_dim(dim, grad.dim())? as i64;
    (0..grad.size(d)?).map(|i| ops::select::call(grad, d, i)).collect()
}

/// `zeros(sizes).index_put_(indices, grad, accumulate=True)`, the adjoint of `index`.
pub fn index_backward(grad: &Tensor, sizes: &[i64], indices: &[Option<Tensor>]) -> Result<Tensor> {
    let z = zeros(sizes, grad.dtype(), grad.device())?;
    ops::index_put::call(&z, indices, grad, true)
}

/// The gradient of `index_select(self, dim, index)`: `grad`'s slices added back at the selected
/// positions of a zero tensor of `self`'s size (`index_add`, written as an accumulating
/// `index_put` along `dim`).
pub fn index_select_backward(grad: &Tensor, sizes: &[i64], dim: i64, index: &Tensor) -> Result<Tensor> {
    if sizes.is_empty() {
        return ops::reshape::call(grad, &[]);
    }
    let d = wrap_dim(dim, sizes.len())?;
    let mut indices: Vec<Option<Tensor>> = vec![None; d];
    indices.push(Some(ops::reshape::call(index, &[-1])?));
    index_backward(grad, sizes, &indices)
}

/// The gradient of `gather(self, dim, index)`: `zeros(self.sizes()).scatter_add(dim, index, grad)`.
pub fn gather_backward(grad: &Tensor, sizes: &[i64], dim: i64, index: &Tensor) -> Result<Tensor> {
    let z = zeros(sizes, grad.dtype(), grad.device())?;
    ops::scatter_add::call(&z, dim, index, grad)
}

/// The gradient of `masked_fill.Tensor`'s 0-dim value: the sum of `grad` where the mask is set.
pub fn masked_fill_backward(grad: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let picked = ops::where_self::call(mask, grad, &zeros_like(grad)?)?;
    ops::sum::call(&picked, None)
}

/// The gradient of `embedding`'s weight: `embedding_dense_backward` (oxten has no sparse
/// tensors, so `sparse=True` also gives the dense gradient).
pub fn embedding_backward(
    grad: &Tensor,
    indices: &Tensor,
    weight_sizes: &[i64],
    padding_idx: i64,
    scale_grad_by_freq: bool,
    _sparse: bool,
) -> Result<Tensor> {
    ops::embedding_dense_backward::call(grad, indices, weight_sizes[0], padding_idx, scale_grad_by_freq)
}

/// The gradient of `embedding_dense_backward`'s `grad_output`: the rows of `grad` that the
/// indices pick, zero where the index is `padding_idx` (PyTorch's
/// `embedding_dense_double_backward`, which like it ignores `scale_grad_by_freq`).
pub fn embedding_dense_double_backward(grad: &Tensor, indices: &Tensor, padding_idx: i64) -> Result<Tensor> {
    let flat = ops::reshape::call(indices, &[-1])?;
    let mut gg = ops::index_select::call(grad, 0, &flat)?;
    if padding_idx >= 0 {
        let pad = ops::reshape::call(&ops::eq_scalar::call(&flat, Scalar::Int(padding_idx))?, &[-1, 1])?;
        gg = ops::masked_fill_scalar::call(&gg, &pad, Scalar::Int(0))?;
    }
    let mut sizes = indices.sizes().to_vec();
    sizes.push(-1);
    ops::view::call(&gg, &sizes)
}

/// The gradient of `repeat(repeats)` for an input of `input_shape`: `grad` reshaped so that
/// every repeated dim splits into `[repeat, size]`, summed over the repeat dims (and over the
/// leading dims `repeat` added).
pub fn repeat_backward(grad: &Tensor, repeats: &[i64], input_shape: &[i64]) -> Result<Tensor> {
    if repeats.contains(&0) {
        return zeros(input_shape, grad.dtype(), grad.device());
    }
    let mut g = grad.clone();
    let added = repeats.len() - input_shape.len();
    for _ in 0..added {
        g = ops::sum_dim_intlist::call(&g, Some(&[0]), false, None)?;
    }
    let mut grad_size = Vec::new();
    let mut sum_dims = Vec::new();
    for (d, &size) in input_shape.iter().enumerate() {
        let r = repeats[d + added];
        if r != 1 {
            grad_size.push(r);
            sum_dims.push(grad_size.len() as i64 - 1);
        }
        grad_size.push(size);
    }
    if !sum_dims.is_empty() {
        g = ops::reshape::call(&g, &grad_size)?;
        g = ops::sum_dim_intlist::call(&g, Some(&sum_dims), false, None)?;
    }
    Ok(g)
}

/// The gradient of `roll(shifts, dims)`: `grad` rolled back (negated shifts, in reverse order).
pub fn roll_backward(grad: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    let back: Vec<i64> = shifts.iter().rev().map(|&s| s.wrapping_neg()).collect();
    let dims: Vec<i64> = dims.iter().rev().copied().collect();
    ops::roll::call(grad, &back, &dims)
}

/// The gradient of `tril(diagonal)`: `grad.tril(diagonal)`.
pub fn tril_backward(grad: &Tensor, diagonal: i64) -> Result<Tensor> {
    ops::tril::call(grad, diagonal)
}

/// The gradient of `triu(diagonal)`: `grad.triu(diagonal)`.
pub fn triu_backward(grad: &Tensor, diagonal: i64) -> Result<Tensor> {
    ops::triu::call(grad, diagonal)
}

/// The gradient of `index_put`'s `self`: `grad` itself when accumulating, else `grad` with the
/// overwritten positions zeroed.
pub fn index_put_self_backward(
    grad: &Tensor,
    indices: &[Option<Tensor>],
    values_sizes: &[i64],
    accumulate: bool,
) -> Result<Tensor> {
    if accumulate {
        return Ok(grad.clone());
    }
    let z = zeros(values_sizes, grad.dtype(), grad.device())?;
    ops::index_put::call(grad, indices, &z, false)
}

/// `scatter_reduce`'s gradients of `self` and `src` (PyTorch's `scatter_reduce_backward`):
/// `sum` passes the gradient; `mean` divides it by each position's count; `prod` multiplies
/// it by the product of the other contributions (formed without dividing by a zero where a
/// position received exactly one zero); `amax`/`amin` share it evenly among the elements
/// equal to the result. Without `include_self`, `self`'s scattered-to positions get none.
#[allow(clippy::too_many_arguments)]
pub fn scatter_reduce_backward(
    grad: &Tensor,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: &str,
    include_self: bool,
    result: &Tensor,
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    const ONE: Scalar = Scalar::Int(1);
    let (grad_self, grad_src) = match reduce {
        "sum" => (grad.clone(), ops::gather::call(grad, dim, index, false)?),
        "mean" => {
            let start = if include_self { ONE } else { Scalar::Int(0) };
            let n = ops::full_like::call(grad, start, None, None, None, None, None)?;
            let n = ops::scatter_add::call(&n, dim, index, &ops::ones_like::call(src, None, None, None, None, None)?)?;
            let n = ops::masked_fill_scalar::call(&n, &ops::eq_scalar::call(&n, Scalar::Int(0))?, ONE)?;
            let g = ops::div::call(grad, &n)?;
            let gs = ops::gather::call(&g, dim, index, false)?;
            (g, gs)
        }
        "prod" => {
            // self's share: the product of everything else at its position.
            let masked_self = ops::masked_fill_scalar::call(self_, &ops::eq_scalar::call(self_, Scalar::Int(0))?, ONE)?;
            let masked_self_result =
                ops::scatter_reduce_two::call(&masked_self, dim, index, src, reduce, include_self)?;
            let grad_self = ops::div::call(&ops::mul::call(grad, &masked_self_result)?, &masked_self)?;
            // src's share: result / src, or for the one zero at a position, the product of the
            // others (computed with that zero replaced by one).
            let src_zero = ops::eq_scalar::call(src, Scalar::Int(0))?;
            let zeros_at = ops::scatter_add::call(
                &zeros_like(self_)?,
                dim,
                index,
                &ops::to_dtype::call(&src_zero, self_.dtype(), false, false, None)?,
            )?;
            let src_num_zeros = ops::gather::call(&zeros_at, dim, index, false)?;
            let single_zero = ops::logical_and::call(&src_zero, &ops::eq_scalar::call(&src_num_zeros, ONE)?)?;
            let masked_src = ops::masked_fill_scalar::call(src, &single_zero, ONE)?;
            let masked_src_result =
                ops::scatter_reduce_two::call(self_, dim, index, &masked_src, reduce, include_self)?;
            let via_others = ops::gather::call(&ops::mul::call(grad, &masked_src_result)?, dim, index, false)?;
            let via_result = ops::div::call(
                &ops::gather::call(&ops::mul::call(grad, result)?, dim, index, false)?,
                &ops::masked_fill_scalar::call(src, &src_zero, ONE)?,
            )?;
            (grad_self, ops::where_self::call(&single_zero, &via_others, &via_result)?)
        }
        "amax" | "amin" => {
            let value = ops::gather::call(result, dim, index, false)?;
            let self_is_result = ops::to_dtype::call(&ops::eq::call(self_, result)?, grad.dtype(), false, false, None)?;
            let src_is_result = ops::to_dtype::call(&ops::eq::call(src, &value)?, grad.dtype(), false, false, None)?;
            let n = ops::scatter_add::call(&self_is_result, dim, index, &src_is_result)?;
            let shared = ops::div::call(grad, &n)?;
            let grad_self = ops::mul::call(&self_is_result, &shared)?;
            let grad_src = ops::mul::call(&src_is_result, &ops::gather::call(&shared, dim, index, false)?)?;
            (grad_self, grad_src)
        }
        other => {
            return Err(oxten_runtime::Error::value(format!(
                "reduce argument must be either sum, prod, mean, amax or amin, got {other}"
            )))
        }
    };
    let grad_self =
        if include_self { grad_self } else { ops::scatter_value::call(&grad_self, dim, index, Scalar::Int(0))? };
    Ok((Some(grad_self), Some(grad_src)))
}

/// `scatter_reduce`'s tangent: every element of `self` and `src` lands in one output element,
/// so the tangent is each one's tangent times its backward weight (the backward at a gradient
/// of ones), summed per output element.
#[allow(clippy::too_many_arguments)]
pub fn scatter_reduce_jvp(
    self_p: &Tensor,
    self_t: &Tensor,
    dim: i64,
    index: &Tensor,
    src_p: &Tensor,
    src_t: &Tensor,
    reduce: &str,
    include_self: bool,
    result: &Tensor,
) -> Result<Tensor> {
    if matches!(reduce, "sum" | "mean") {
        return ops::scatter_reduce_two::call(self_t, dim, index, src_t, reduce, include_self);
    }
    let ones = ops::ones_like::call(result, None, None, None, None, None)?;
    let (w_self, w_src) = scatter_reduce_backward(&ones, self_p, dim, index, src_p, reduce, include_self, result)?;
    let (w_self, w_src) = (w_self.unwrap_or(zeros_like(self_p)?), w_src.unwrap_or(zeros_like(src_p)?));
    let from_src = ops::mul::call(&w_src, src_t)?;
    ops::scatter_add::call(&ops::mul::call(&w_self, self_t)?, dim, index, &from_src)
}

/// `_embedding_bag_sum`'s gradients of `weight` and `per_sample_weights`: each index's bag
/// row of `grad` (times its per-sample weight) summed into the weight row the index names
/// (`embedding_dense_backward`), and the dot product of that bag row with the weight row.
pub fn embedding_bag_sum_backward(
    grad: &Tensor,
    weight: &Tensor,
    indices: &Tensor,
    offsets: &Tensor,
    per_sample_weights: Option<&Tensor>,
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let n = indices.numel();
    let host =
        ops::to_dtype::call(&offsets.try_to_device(oxten_runtime::Device::Cpu)?, DType::I64, false, false, None)?;
    let offs = host.to_vec::<i64>()?;
    // Each index's bag (the kernel has checked that the bags tile `indices`).
    let mut bag_of = Vec::with_capacity(n as usize);
    for (b, &start) in offs.iter().enumerate() {
        let end = offs.get(b + 1).copied().unwrap_or(n);
        bag_of.extend(std::iter::repeat_n(b as i64, (end - start).max(0) as usize));
    }
    if bag_of.len() as i64 != n || offs.is_empty() {
        // No bags (or indices past them): nothing reached the result.
        let none = |t: &Tensor| zeros_like(t).map(Some);
        return Ok((none(weight)?, per_sample_weights.map(none).transpose()?.flatten()));
    }
    let bag_of = Tensor::from_vec(bag_of, &[n])?.try_to_device(grad.device())?;
    let rows = ops::index_select::call(grad, 0, &bag_of)?;
    let scaled = match per_sample_weights {
        Some(p) => ops::mul::call(&rows, &ops::unsqueeze::call(p, 1)?)?,
        None => rows.clone(),
    };
    let grad_weight = ops::embedding_dense_backward::call(&scaled, indices, weight.sizes()[0], -1, false)?;
    let grad_psw = match per_sample_weights {
        Some(_) => {
            let picked = ops::index_select::call(weight, 0, indices)?;
            Some(ops::sum_dim_intlist::call(&ops::mul::call(&rows, &picked)?, Some(&[1]), false, None)?)
        }
        None => None,
    };
    Ok((Some(grad_weight), grad_psw))
}
