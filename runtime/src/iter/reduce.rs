//! Reduction setup (output shapes, the stride-0 output view, the iterator) and the generic
//! reduction kernel.
//!
//! A structured reduction's meta function computes the output shape with
//! [`reduction_output_shape`], calls `set_output`, and the kernel then builds the iterator with
//! [`make_reduction`]:
//!
//! ```
//! use oxten_runtime::iter::{make_reduction, reduction_output_shape, sum_kernel, StructuredOutputs};
//! use oxten_runtime::{Device, Tensor};
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
//! let (shape, _mask) = reduction_output_shape(&x.sizes(), Some(&[1]), false).unwrap();
//! let mut outs = StructuredOutputs::functional(1);
//! outs.set_output(0, &shape, None, x.dtype(), Device::Cpu).unwrap();
//! let iter = make_reduction(outs.output(0), &x, Some(&[1]), false).unwrap();
//! sum_kernel(&iter);
//! assert_eq!(outs.output(0).to_vec::<f32>().unwrap(), [6.0, 15.0]);
//! ```

use super::config::reduce_op_config;
use super::iterator::TensorIterator;
use super::opmath::OpMath;
use super::overlap::assert_no_overlap;
use super::reduce_plan::{drive, ReducePlan};
use crate::error::{Error, Result};
use crate::tensor::{wrap_dim, Element, Tensor};

/// The output shape of reducing `sizes` over `dims` (`None` or empty: every dim, as
/// `torch.sum(x, dim=[])` does), and the mask of reduced dims. Negative dims wrap; a repeated
/// dim is an error.
pub fn reduction_output_shape(sizes: &[i64], dims: Option<&[i64]>, keepdim: bool) -> Result<(Vec<i64>, Vec<bool>)> {
    let nd = sizes.len();
    let mut mask = vec![false; nd];
    match dims {
        None | Some([]) => mask.iter_mut().for_each(|m| *m = true),
        Some(ds) => {
            for &d in ds {
                let w = wrap_dim(d, nd)?;
                if nd == 0 {
                    continue;
                }
                if mask[w] {
                    return Err(Error::value(format!("dim {w} appears multiple times in the list of dims")));
                }
                mask[w] = true;
            }
        }
    }
    let shape = sizes
        .iter()
        .zip(&mask)
        .filter_map(|(&s, &m)| match (m, keepdim) {
            (false, _) => Some(s),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok((shape, mask))
}

/// A view of a reduction output with the input's rank: size 1 and stride 0 on the reduced dims
/// (`out` itself when `keepdim`).
pub fn review_reduce_result(out: &Tensor, mask: &[bool], keepdim: bool) -> Result<Tensor> {
    if keepdim {
        return Ok(out.clone());
    }
    let l = out.layout();
    let (mut sizes, mut strides) = (Vec::with_capacity(mask.len()), Vec::with_capacity(mask.len()));
    let mut src = 0;
    for &m in mask {
        if m {
            sizes.push(1);
            strides.push(0);
        } else {
            sizes.push(*l.sizes.get(src).ok_or_else(|| Error::shape("reduction output has too few dims"))?);
            strides.push(l.strides[src]);
            src += 1;
        }
    }
    if src != l.dim() {
        return Err(Error::shape(format!(
            "reduction output with shape {:?} does not fit the reduction mask {mask:?}",
            &l.sizes[..]
        )));
    }
    out.alias_with_layout(&sizes, &strides, l.offset)
}

/// Builds the iterator of a reduction of `input` over `dims` into `out`, which must already
/// have the shape [`reduction_output_shape`] gives (the meta function's `set_output` did that).
/// The kernel sees output 0 as the stride-0 view; `iter.output(0)` is that view too.
///
/// The kernels want input and output of one dtype (PyTorch's CPU `sum` converts the input to
/// the output dtype first): pass `to_dtype(input, out.dtype())` when they differ.
pub fn make_reduction(out: &Tensor, input: &Tensor, dims: Option<&[i64]>, keepdim: bool) -> Result<TensorIterator> {
    let (shape, mask) = reduction_output_shape(&input.sizes(), dims, keepdim)?;
    if out.sizes() != shape[..] {
        return Err(Error::shape(format!(
            "reduction output has shape {:?} but {shape:?} was expected",
            &out.sizes()[..]
        )));
    }
    assert_no_overlap(out, input)?;
    let viewed = review_reduce_result(out, &mask, keepdim)?;
    reduce_op_config().add_output(&viewed).add_input(input).build()
}

/// Errors when a reduction without identity (`max`, `amax`, `argmax` …) would reduce nothing:
/// `"max(): Expected reduction dim 0 to have non-zero size."`, or, with no dims on an empty
/// tensor, that a dim must be specified. `op` is the name without parentheses.
pub fn check_reduction_nonempty(op: &str, sizes: &[i64], dims: Option<&[i64]>) -> Result<()> {
    if sizes.iter().product::<i64>() != 0 {
        return Ok(());
    }
    match dims {
        None | Some([]) => Err(Error::index(format!(
            "{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with \
             the 'dim' argument."
        ))),
        Some(ds) => {
            for &d in ds {
                let w = wrap_dim(d, sizes.len())?;
                if sizes.get(w) == Some(&0) {
                    return Err(Error::index(format!("{op}(): Expected reduction dim {w} to have non-zero size.")));
                }
            }
            Ok(())
        }
    }
}

/// A generic reduction into output 0 (dtype `Out`) of input 0 (dtype `T`): each output element
/// is `project(fold(… fold(init, x0) …, xn))`, where the reduced elements arrive as `T::Math`.
/// Long reductions of few outputs are split across threads and the partial accumulators merged
/// with `combine` (so `init` must be an identity of `combine`). Empty reductions write
/// `project(init)`; check [`check_reduction_nonempty`] first for ops without identity.
///
/// ```
/// # use oxten_runtime::iter::{make_reduction, reduce_kernel, StructuredOutputs};
/// # use oxten_runtime::{Device, Tensor};
/// let x = Tensor::from_vec(vec![1.0f32, f32::NAN, 3.0], &[3]).unwrap();
/// let out = Tensor::scalar(0.0f32);
/// let iter = make_reduction(&out, &x, None, false).unwrap();
/// // amax: NaN propagates.
/// let nan_max = |a: f32, b: f32| if a.is_nan() || b.is_nan() { f32::NAN } else { a.max(b) };
/// reduce_kernel::<f32, f32, f32>(&iter, f32::NEG_INFINITY, nan_max, nan_max, |a| a);
/// assert!(out.item::<f32>().unwrap().is_nan());
/// ```
pub fn reduce_kernel<T: OpMath, Acc: Copy + Send + Sync, Out: Element>(
    iter: &TensorIterator,
    init: Acc,
    fold: impl Fn(Acc, T::Math) -> Acc + Sync,
    combine: impl Fn(Acc, Acc) -> Acc + Sync,
    project: impl Fn(Acc) -> Out + Sync,
) {
    assert!(iter.noutputs() == 1 && iter.ninputs() == 1, "reduce_kernel: needs one output and one input");
    assert!(
        iter.dtype(0) == Out::DTYPE && iter.dtype(1) == T::DTYPE,
        "reduce_kernel: operands are {} <- {} but the kernel was instantiated for {} <- {}",
        iter.dtype(0),
        iter.dtype(1),
        Out::DTYPE,
        T::DTYPE
    );
    if iter.is_meta() {
        return;
    }
    let plan = ReducePlan::new(iter);
    let partial = |u: usize, range: std::ops::Range<usize>| {
        let mut outs = [std::ptr::null_mut(); 1];
        let base = plan.locate(u, &mut outs);
        let mut acc = init;
        plan.walk(base, range, &mut |p, st, len, _| {
            for i in 0..len {
                // SAFETY: the plan's addresses and strides come from the iterator and address
                // valid input elements of dtype T (checked above).
                let x = unsafe { *(p.offset(i as isize * st) as *const T) };
                acc = fold(acc, x.to_math());
            }
        });
        acc
    };
    let finish = |u: usize, acc: Acc| {
        let mut outs = [std::ptr::null_mut(); 1];
        plan.locate(u, &mut outs);
        // SAFETY: `outs[0]` addresses output element `u` (dtype Out, checked above); each unit
        // is finished by exactly one thread.
        unsafe { *(outs[0] as *mut Out) = project(acc) };
    };
    drive(plan.nout, plan.nred, &partial, &combine, &finish);
}
