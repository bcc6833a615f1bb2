//! Reductions that return an index: `max.dim`, `min.dim`, `argmax`, `argmin`.

use super::opmath::OpMath;
use super::reduce_plan::{drive, ReducePlan};
use oxten_runtime::device::MemoryFormat;
use oxten_runtime::dtype::DType;
use oxten_runtime::error::{Error, Result};
use oxten_runtime::iter::assert_no_overlap;
use oxten_runtime::iter::reduce_op_config;
use oxten_runtime::iter::{check_reduction_nonempty, reduction_output_shape, review_reduce_result};
use oxten_runtime::tensor::Tensor;
use std::ops::Range;

/// The best value so far, its index, and whether anything was seen.
type Best<M> = (M, i64, bool);

#[inline(always)]
#[allow(clippy::eq_op)]
fn is_nan<M: PartialOrd>(x: M) -> bool {
    x.partial_cmp(&x).is_none()
}

/// Reduces `input` (dtype `T`) along `dim` to the best element per position and its index.
///
/// * `values`: the value output (dtype `T`), or `None` for `argmax`/`argmin`; `indices`: the
///   i64 index output. Both must already have the shape
///   `reduction_output_shape(input.sizes(), Some(&[dim]), keepdim)` (the meta function's
///   `set_output` allocated or resized them).
/// * `dim == None` reduces the flattened input (`argmax(x)`): the outputs then hold one
///   element (shape `[]`, or all ones with `keepdim`), and the index is the row-major flat index.
/// * `better(candidate, current)` orders non-NaN values strictly (`a > b` for max, `a < b` for
///   min). As in PyTorch, NaN beats everything and the first NaN is kept; on ties the first
///   occurrence wins.
/// * `op` names the operator in errors: reducing an empty dim gives
///   `"max(): Expected reduction dim 0 to have non-zero size."`.
///
/// Meta tensors: everything is checked, nothing computed.
pub fn reduce_with_index_kernel<T: OpMath>(
    op: &str,
    values: Option<&Tensor>,
    indices: &Tensor,
    input: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    better: impl Fn(T::Math, T::Math) -> bool + Sync,
) -> Result<()> {
    let dim_list = dim.map(|d| [d]);
    check_reduction_nonempty(op, &input.sizes(), dim_list.as_ref().map(|d| &d[..]))?;
    if input.dtype() != T::DTYPE || values.is_some_and(|v| v.dtype() != T::DTYPE) {
        return Err(Error::dtype(format!(
            "{op}(): expected input and values of dtype {}, got {} and {}",
            T::DTYPE,
            input.dtype(),
            values.map_or("none".to_string(), |v| v.dtype().to_string())
        )));
    }
    if indices.dtype() != DType::I64 {
        return Err(Error::dtype(format!("{op}(): expected indices of dtype int64, got {}", indices.dtype())));
    }
    let outputs: Vec<&Tensor> = values.into_iter().chain([indices]).collect();
    for o in &outputs {
        assert_no_overlap(o, input)?;
    }
    // The input seen by the iterator, the reduced dim in it, and the outputs' view of rank 0/n.
    let (src, rdim, views): (Tensor, i64, Vec<Tensor>) = match dim {
        Some(d) => {
            let (shape, _) = reduction_output_shape(&input.sizes(), Some(&[d]), keepdim)?;
            for o in &outputs {
                if o.sizes() != shape[..] {
                    return Err(Error::shape(format!(
                        "{op}(): output has shape {:?} but {shape:?} was expected",
                        &o.sizes()[..]
                    )));
                }
            }
            (input.clone(), d, outputs.iter().map(|&o| o.clone()).collect())
        }
        None => {
            let flat = flatten(input)?;
            let mut views = Vec::new();
            for o in &outputs {
                if o.numel() != 1 {
                    return Err(Error::shape(format!(
                        "{op}(): output has shape {:?} but one element was expected",
                        &o.sizes()[..]
                    )));
                }
                views.push(o.alias_with_layout(&[], &[], o.storage_offset())?);
            }
            (flat, 0, views)
        }
    };
    let keep = keepdim && dim.is_some();
    let (_, mask) = reduction_output_shape(&src.sizes(), Some(&[rdim]), keep)?;
    let mut config = reduce_op_config();
    for v in &views {
        config = config.add_output(&review_reduce_result(v, &mask, keep)?);
    }
    let iter = config.add_input(&src).build()?;
    if iter.is_meta() {
        return Ok(());
    }
    let plan = ReducePlan::new(&iter);
    let nouts = iter.noutputs();
    let has_values = values.is_some();
    let partial = |u: usize, range: Range<usize>| -> Best<T::Math> {
        let mut outs = [std::ptr::null_mut(); 2];
        let base = plan.locate(u, &mut outs[..nouts]);
        let mut best: Best<T::Math> = (T::from_f64(0.0).to_math(), 0, false);
        plan.walk(base, range, &mut |p, st, len, first| {
            for i in 0..len {
                // SAFETY: the plan's addresses and strides come from the iterator and address
                // valid input elements of dtype T (checked above).
                let x = unsafe { *(p.offset(i as isize * st) as *const T) }.to_math();
                if !best.2 || (!is_nan(best.0) && (is_nan(x) || better(x, best.0))) {
                    best = (x, (first + i) as i64, true);
                }
            }
        });
        best
    };
    let combine = |a: Best<T::Math>, b: Best<T::Math>| {
        if !a.2 || (b.2 && !is_nan(a.0) && (is_nan(b.0) || better(b.0, a.0))) {
            b
        } else {
            a
        }
    };
    let finish = |u: usize, best: Best<T::Math>| {
        let mut outs = [std::ptr::null_mut(); 2];
        plan.locate(u, &mut outs[..nouts]);
        // SAFETY: the output pointers address element `u` of the values (dtype T) and indices
        // (i64) outputs; each unit is finished by exactly one thread.
        unsafe {
            if has_values {
                *(outs[0] as *mut T) = T::from_math(best.0);
            }
            *(outs[nouts - 1] as *mut i64) = best.1;
        }
    };
    drive(plan.nout, plan.nred, &partial, &combine, &finish);
    Ok(())
}

/// A 1-D row-major view of `t` (a contiguous copy when no view exists).
fn flatten(t: &Tensor) -> Result<Tensor> {
    let n = t.numel();
    if t.is_contiguous() {
        return t.alias_with_layout(&[n], &[1], t.storage_offset());
    }
    let c = Tensor::empty(&t.sizes(), t.dtype(), t.device(), MemoryFormat::Contiguous)?;
    super::copy::copy_(&c, t)?;
    c.alias_with_layout(&[n], &[1], 0)
}
