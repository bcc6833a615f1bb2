//! Reduction setup: output shapes, the stride-0 output view and the iterator. The loops that
//! run over it are the backends' (`oxten_kernels::cpu::reduce_kernel`, `sum_kernel` …).
//!
//! A structured reduction's meta function computes the output shape with
//! [`reduction_output_shape`], calls `set_output`, and the kernel then builds the iterator with
//! [`make_reduction`]:
//!
//! ```
//! use oxten_runtime::iter::{make_reduction, reduction_output_shape, StructuredOutputs};
//! use oxten_runtime::{Device, Tensor};
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
//! let (shape, _mask) = reduction_output_shape(&x.sizes(), Some(&[1]), false).unwrap();
//! let mut outs = StructuredOutputs::functional(1);
//! outs.set_output(0, &shape, None, x.dtype(), Device::Cpu).unwrap();
//! let iter = make_reduction(outs.output(0), &x, Some(&[1]), false).unwrap();
//! // One output element per row, each reducing the 3 elements of its row.
//! assert_eq!((iter.noutputs(), iter.numel()), (1, 6));
//! ```

use super::config::reduce_op_config;
use super::iterator::TensorIterator;
use super::overlap::assert_no_overlap;
use crate::error::{Error, Result};
use crate::tensor::{wrap_dim, Tensor};

/// The output shape of reducing `sizes` over `dims` (`None` or empty: every dim, as
/// `torch.sum(x, dim=[])` does), and the mask of reduced dims. Negative dims wrap; a repeated
/// dim is an error.
pub fn reduction_output_shape(sizes: &[i64], dims: Option<&[i64]>, keepdim: bool) -> Result<(Vec<i64>, Vec<bool>)> {
    let nd = sizes.len();
    // PyTorch keeps the reduced dims in a 64-bit mask and refuses more dims, whatever the op.
    if nd > 64 {
        return Err(Error::runtime("only tensors with up to 64 dims are supported"));
    }
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
