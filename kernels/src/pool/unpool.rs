//! `max_unpool2d` and `max_unpool3d`: the partial inverse of max pooling. Each input value is
//! written at the flat position its index names in a zero-filled plane of `output_size`
//! (PyTorch's `max_unpooling` kernels: a later repeat of an index wins, as its loop over a plane
//! runs in order). Composed of `scatter`, so autograd (the gradient gathers at the indices, as
//! PyTorch's `max_pool_double_backward` does) and every backend come from it. `max_unpool1d`
//! (PyTorch has it in Python only) is `max_unpool2d` over a width of 1, its output size worked out
//! by [`unpool_output_size`] as `F.max_unpool1d` works it out.

use crate::generated::decls::{
    MaxUnpool1dCompositeImplicit, MaxUnpool2dCompositeImplicit, MaxUnpool3dCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Tensor};

/// The checks both unpoolings share, after their own: int64 indices of the input's shape, and
/// no empty non-batch dim (`fn_name` is PyTorch's kernel name in that message).
fn check_input(fn_name: &str, self_: &Tensor, indices: &Tensor) -> Result<()> {
    if self_.sizes() != indices.sizes() {
        return Err(Error::shape(format!(
            "Expected shape of indices to be same as that of the input tensor ({:?}) but got indices tensor with shape: \
             {:?}",
            &self_.sizes()[..],
            &indices.sizes()[..]
        )));
    }
    for i in 1..self_.dim() {
        if self_.sizes()[i] <= 0 {
            return Err(Error::shape(format!(
                "{fn_name}(): Expected input to have non-zero size for non-batch dimensions, but got {:?} with dimension \
                 {i} being empty.",
                &self_.sizes()[..]
            )));
        }
    }
    Ok(())
}

/// `indices` must be int64.
fn check_index_dtype(indices: &Tensor) -> Result<()> {
    if indices.dtype() != DType::I64 {
        return Err(Error::dtype(format!(
            "elements in indices should be type int64 but got: {}",
            scalar_type_name(indices.dtype())
        )));
    }
    Ok(())
}

/// The unpooling itself: `self` (batched or not) scattered into planes of `output_size`.
fn unpool(self_: &Tensor, indices: &Tensor, output_size: &[i64], batched: bool) -> Result<Tensor> {
    let plane = output_size
        .iter()
        .try_fold(1i64, |acc, &s| if s < 0 { None } else { acc.checked_mul(s) })
        .ok_or_else(|| Error::shape(format!("max_unpool: invalid output_size {output_size:?}")))?;
    let (x, idx) =
        if batched { (self_.clone(), indices.clone()) } else { (self_.try_unsqueeze(0)?, indices.try_unsqueeze(0)?) };
    let (n, c) = (x.sizes()[0], x.sizes()[1]);
    if idx.numel() > 0 {
        let (lo, hi) = ops::aminmax::call(&idx, None, false)?;
        let bad = [lo.to_vec::<i64>()?[0], hi.to_vec::<i64>()?[0]].into_iter().find(|&v| v < 0 || v >= plane);
        if let Some(v) = bad {
            let sizes: Vec<String> = output_size.iter().map(i64::to_string).collect();
            return Err(Error::index(format!(
                "Found an invalid max index: {v} (output volumes are of size {})",
                sizes.join("x")
            )));
        }
    }
    let zeros = ops::zeros::call(&[n, c, plane], Some(x.dtype()), None, Some(x.device()), None)?;
    // (The plane's length spelled out: `-1` cannot be inferred for an empty batch.)
    let in_plane: i64 = x.sizes()[2..].iter().product();
    let flat_idx = idx.try_reshape(&[n, c, in_plane])?;
    let flat_x = x.try_reshape(&[n, c, in_plane])?;
    let out = ops::scatter_src::call(&zeros, 2, &flat_idx, &flat_x)?;
    let mut sizes = vec![n, c];
    sizes.extend_from_slice(output_size);
    let out = out.try_reshape(&sizes)?;
    if batched {
        Ok(out)
    } else {
        out.try_squeeze_dim(0)
    }
}

impl MaxUnpool2dCompositeImplicit for Composite {
    fn max_unpool2d(self_: &Tensor, indices: &Tensor, output_size: &[i64]) -> Result<Tensor> {
        check_index_dtype(indices)?;
        if output_size.len() != 2 {
            return Err(Error::value(format!(
                "There should be exactly two elements (height, width) in output_size, but got {} elements.",
                output_size.len()
            )));
        }
        let d = self_.dim();
        if d != 3 && d != 4 {
            return Err(Error::shape(format!(
                "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with {d} dimensions."
            )));
        }
        check_input("max_unpooling2d_forward_out_cpu", self_, indices)?;
        unpool(self_, indices, output_size, d == 4)
    }
}

impl MaxUnpool3dCompositeImplicit for Composite {
    /// `stride` and `padding` are only checked (the indices already say where each value goes),
    /// as in PyTorch.
    fn max_unpool3d(
        self_: &Tensor,
        indices: &Tensor,
        output_size: &[i64],
        stride: &[i64],
        padding: &[i64],
    ) -> Result<Tensor> {
        check_index_dtype(indices)?;
        let d = self_.dim();
        if d != 4 && d != 5 {
            return Err(Error::shape(format!(
                "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {d} dimensions."
            )));
        }
        for (what, v) in [("output_size", output_size), ("stride", stride), ("padding", padding)] {
            if v.len() != 3 {
                let got = if what == "output_size" { "" } else { ":" };
                return Err(Error::value(format!(
                    "There should be exactly three elements (depth, height, width) in {what}, but got{got} {} elements.",
                    v.len()
                )));
            }
        }
        check_input("max_unpooling3d_forward_out_cpu", self_, indices)?;
        if stride.iter().any(|&s| s <= 0) {
            return Err(Error::value(format!("strides should be greater than zero, but got stride: {stride:?}")));
        }
        unpool(self_, indices, output_size, d == 5)
    }
}

/// The spatial size an unpooling produces (PyTorch's `_unpool_output_size`): `(in - 1)·stride +
/// kernel - 2·padding` along each of the `kernel.len()` last dims of `input`, or `output_size`
/// (its last `kernel.len()` entries where it also has the batch and channel sizes), which must lie
/// strictly within a stride of that and be non-negative. `stride` and `padding` have
/// `kernel.len()` entries.
pub fn unpool_output_size(
    input: &Tensor,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    output_size: Option<&[i64]>,
) -> Result<Vec<i64>> {
    let n = kernel.len();
    let s = input.sizes();
    if s.len() < n || stride.len() != n || padding.len() != n {
        return Err(Error::value(format!(
            "max_unpool{n}d: expected an input of at least {n} dims and {n} strides and paddings, got sizes {:?}, \
             stride {stride:?} and padding {padding:?}",
            &s[..]
        )));
    }
    let spatial = &s[s.len() - n..];
    let too_large = || Error::value(format!("max_unpool{n}d: the output size overflows int64"));
    let mut default = Vec::with_capacity(n);
    for d in 0..n {
        let v = (spatial[d] - 1)
            .checked_mul(stride[d])
            .and_then(|v| v.checked_add(kernel[d]))
            .and_then(|v| v.checked_sub(padding[d].checked_mul(2)?))
            .ok_or_else(too_large)?;
        default.push(v);
    }
    let out = match output_size {
        None => default,
        Some(given) => {
            let given = if given.len() == n + 2 { &given[2..] } else { given };
            if given.len() != n {
                return Err(Error::value(format!(
                    "output_size should be a sequence containing {n} or {} elements, but it has a length of '{}'",
                    n + 2,
                    given.len()
                )));
            }
            for d in 0..n {
                let lo = default[d].checked_sub(stride[d]).ok_or_else(too_large)?;
                let hi = default[d].checked_add(stride[d]).ok_or_else(too_large)?;
                if !(lo < given[d] && given[d] < hi) {
                    return Err(Error::value(format!(
                        "invalid output_size \"{given:?}\" (dim {d} must be between {lo} and {hi})"
                    )));
                }
            }
            given.to_vec()
        }
    };
    if let Some(d) = out.iter().position(|&v| v < 0) {
        return Err(Error::value(format!(
            "max_unpooling: output_size must contain non-negative spatial dimensions, but got output_size[{d}]={}",
            out[d]
        )));
    }
    Ok(out)
}

impl MaxUnpool1dCompositeImplicit for Composite {
    fn max_unpool1d(
        self_: &Tensor,
        indices: &Tensor,
        kernel_size: &[i64],
        stride: Option<&[i64]>,
        padding: &[i64],
        output_size: Option<&[i64]>,
    ) -> Result<Tensor> {
        let stride = stride.unwrap_or(kernel_size);
        let size = unpool_output_size(self_, kernel_size, stride, padding, output_size)?;
        let out = ops::max_unpool2d::call(&self_.try_unsqueeze(-1)?, &indices.try_unsqueeze(-1)?, &[size[0], 1])?;
        out.try_squeeze_dim(-1)
    }
}
