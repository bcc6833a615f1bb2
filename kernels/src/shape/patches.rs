//! Rearranging pixels into channels and patches: `pixel_shuffle`/`pixel_unshuffle` (a reshape,
//! permute, reshape), `im2col` (`F.unfold`: padding, then one `index_select` gathering every
//! block into columns) and its adjoint `col2im` (`F.fold`: the columns summed back with one
//! `scatter_add`, then the padding cropped).

use crate::generated::decls::{
    Col2imCompositeImplicit, Im2colCompositeImplicit, PixelShuffleCompositeImplicit, PixelUnshuffleCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

fn check_factor(op: &str, what: &str, r: i64) -> Result<()> {
    if r <= 0 {
        return Err(Error::runtime(format!("{op} expects a positive {what}, but got {r}")));
    }
    Ok(())
}

fn check_rank(op: &str, t: &Tensor) -> Result<()> {
    if t.dim() < 3 {
        return Err(Error::runtime(format!(
            "{op} expects input to have at least 3 dimensions, but got input with {} dimension(s)",
            t.dim()
        )));
    }
    Ok(())
}

impl PixelShuffleCompositeImplicit for Composite {
    fn pixel_shuffle(self_: &Tensor, upscale_factor: i64) -> Result<Tensor> {
        let r = upscale_factor;
        check_rank("pixel_shuffle", self_)?;
        check_factor("pixel_shuffle", "upscale_factor", r)?;
        let s = self_.sizes();
        let nd = s.len();
        let (c, h, w) = (s[nd - 3], s[nd - 2], s[nd - 1]);
        let Some(rr) = r.checked_mul(r) else {
            return Err(Error::runtime(format!("pixel_shuffle: upscale_factor {r} is too large")));
        };
        if c % rr != 0 {
            return Err(Error::runtime(format!(
                "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible by {}",
                r * r
            )));
        }
        let batch = &s[..nd - 3];
        let oc = c / (r * r);
        // [b…, oc, r, r, h, w] → [b…, oc, h, r, w, r] → [b…, oc, h·r, w·r]
        let split: Vec<i64> = batch.iter().copied().chain([oc, r, r, h, w]).collect();
        let b = batch.len() as i64;
        let perm: Vec<i64> = (0..b).chain([b, b + 3, b + 1, b + 4, b + 2]).collect();
        let out: Vec<i64> = batch.iter().copied().chain([oc, h * r, w * r]).collect();
        self_.try_reshape(&split)?.try_permute(&perm)?.try_reshape(&out)
    }
}

impl PixelUnshuffleCompositeImplicit for Composite {
    fn pixel_unshuffle(self_: &Tensor, downscale_factor: i64) -> Result<Tensor> {
        let r = downscale_factor;
        check_rank("pixel_unshuffle", self_)?;
        check_factor("pixel_unshuffle", "downscale_factor", r)?;
        let s = self_.sizes();
        let nd = s.len();
        let (c, h, w) = (s[nd - 3], s[nd - 2], s[nd - 1]);
        for (name, len, dim) in [("height", h, -2), ("width", w, -1)] {
            if len % r != 0 {
                return Err(Error::runtime(format!(
                    "pixel_unshuffle expects {name} to be divisible by downscale_factor, but input.size({dim})={len} is not divisible by {r}"
                )));
            }
        }
        let batch = &s[..nd - 3];
        // [b…, c, h/r, r, w/r, r] → [b…, c, r, r, h/r, w/r] → [b…, c·r², h/r, w/r]
        let split: Vec<i64> = batch.iter().copied().chain([c, h / r, r, w / r, r]).collect();
        let b = batch.len() as i64;
        let perm: Vec<i64> = (0..b).chain([b, b + 2, b + 4, b + 1, b + 3]).collect();
        let out: Vec<i64> = batch.iter().copied().chain([c * r * r, h / r, w / r]).collect();
        self_.try_reshape(&split)?.try_permute(&perm)?.try_reshape(&out)
    }
}

/// The flat position in a padded image `wp` wide of element `(ki, kj)` of block `(bi, bj)`, in
/// the column order of `im2col` (kernel position major, block minor).
fn block_positions(k: &[i64], d: &[i64], st: &[i64], oh: i64, ow: i64, wp: i64) -> Result<Vec<i64>> {
    let mut index = oxten_runtime::error::try_vec_with_capacity((k[0] * k[1] * oh.max(0) * ow.max(0)) as usize)?;
    for ki in 0..k[0] {
        for kj in 0..k[1] {
            for bi in 0..oh {
                for bj in 0..ow {
                    index.push((ki * d[0] + bi * st[0]) * wp + kj * d[1] + bj * st[1]);
                }
            }
        }
    }
    Ok(index)
}

/// The block grid `(oh, ow)` of a `(h, w)` input, or PyTorch's error when it is empty.
fn blocks(h: i64, w: i64, k: &[i64], d: &[i64], p: &[i64], s: &[i64]) -> Result<(i64, i64)> {
    for (name, v, min) in [("kernel_size", k, 1), ("dilation", d, 1), ("padding", p, 0), ("stride", s, 1)] {
        if v.len() != 2 || v.iter().any(|&x| x < min) {
            return Err(Error::runtime(format!(
                "im2col/col2im: {name} must be two values of at least {min}, got {v:?}"
            )));
        }
    }
    let extent = |len: i64, i: usize| -> Option<i64> {
        let padded = len.checked_add(p[i].checked_mul(2)?)?;
        let reach = d[i].checked_mul(k[i] - 1)?.checked_add(1)?;
        Some(padded.checked_sub(reach)?.div_euclid(s[i]) + 1)
    };
    match (extent(h, 0), extent(w, 1)) {
        (Some(oh), Some(ow)) if oh.checked_mul(ow).and_then(|b| b.checked_mul(k[0].checked_mul(k[1])?)).is_some() => {
            Ok((oh, ow))
        }
        _ => Err(Error::runtime(format!(
            "im2col/col2im: kernel_size={k:?}, dilation={d:?}, padding={p:?}, stride={s:?} overflow for an input of {h} × {w}"
        ))),
    }
}

impl Im2colCompositeImplicit for Composite {
    fn im2col(
        self_: &Tensor,
        kernel_size: &[i64],
        dilation: &[i64],
        padding: &[i64],
        stride: &[i64],
    ) -> Result<Tensor> {
        let batched = match self_.dim() {
            4 => true,
            3 => false,
            n => return Err(Error::runtime(format!("Expected 3D or 4D (batch mode) tensor for input, but got {n}D"))),
        };
        let x = if batched { self_.clone() } else { self_.try_unsqueeze(0)? };
        let s = x.sizes();
        let (n, c, h, w) = (s[0], s[1], s[2], s[3]);
        let (k, d, p, st) = (kernel_size, dilation, padding, stride);
        let (oh, ow) = blocks(h, w, k, d, p, st)?;
        if oh < 1 || ow < 1 {
            return Err(Error::runtime(format!(
                "Given input with spatial size ({h}, {w}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), calculated shape of the array of sliding blocks as ({oh}, {ow}), but its components must be at least one.",
                k[0], k[1], d[0], d[1], p[0], p[1]
            )));
        }
        let padded = ops::constant_pad_nd::call(&x, &[p[1], p[1], p[0], p[0]], Scalar::Int(0))?;
        // One gather of every block element from the flattened padded image: its gradient is a
        // scatter-add, which handles blocks that overlap (a strided view's would not).
        let wp = w + 2 * p[1];
        let index = block_positions(k, d, st, oh, ow, wp)?;
        let len = index.len() as i64;
        let index = Tensor::from_vec(index, &[len])?.try_to_device(x.device())?;
        // Sizes spelled out: with an empty batch, -1 would be ambiguous.
        let flat = padded.try_reshape(&[n, c, (h + 2 * p[0]) * wp])?;
        let cols = flat.try_index_select(2, &index)?.try_reshape(&[n, c * k[0] * k[1], oh * ow])?;
        if batched {
            Ok(cols)
        } else {
            cols.try_squeeze_dim(0)
        }
    }
}

impl Col2imCompositeImplicit for Composite {
    fn col2im(
        self_: &Tensor,
        output_size: &[i64],
        kernel_size: &[i64],
        dilation: &[i64],
        padding: &[i64],
        stride: &[i64],
    ) -> Result<Tensor> {
        let batched = match self_.dim() {
            3 => true,
            2 => false,
            n => return Err(Error::runtime(format!("Expected 2D or 3D (batch mode) tensor for input, but got {n}D"))),
        };
        let cols = if batched { self_.clone() } else { self_.try_unsqueeze(0)? };
        let (k, d, p, st) = (kernel_size, dilation, padding, stride);
        if output_size.len() != 2 {
            return Err(Error::runtime(format!("col2im: output_size must have two values, got {output_size:?}")));
        }
        let (h, w) = (output_size[0], output_size[1]);
        let (oh, ow) = blocks(h, w, k, d, p, st)?;
        let s = cols.sizes();
        let (n, ckk, l) = (s[0], s[1], s[2]);
        let kk = k[0] * k[1];
        if ckk % kk != 0 {
            return Err(Error::runtime(format!(
                "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={ckk} and kernel_size=({}, {}).",
                k[0], k[1]
            )));
        }
        if oh < 1 || ow < 1 || l != oh * ow {
            return Err(Error::runtime(format!(
                "Given output_size=({h}, {w}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), stride=({}, {}), expected size of input's dimension 2 to match the calculated number of sliding blocks {oh} * {ow} = {}, but got input.size(2)={l}.",
                k[0], k[1], d[0], d[1], p[0], p[1], st[0], st[1], oh * ow
            )));
        }
        let c = ckk / kk;
        let (hp, wp) = (h + 2 * p[0], w + 2 * p[1]);
        let index = block_positions(k, d, st, oh, ow, wp)?;
        let index =
            Tensor::from_vec(index, &[1, 1, kk * l])?.try_to_device(cols.device())?.try_expand(&[n, c, kk * l])?;
        let src = cols.try_reshape(&[n, c, kk * l])?;
        let zeros = ops::zeros::call(&[n, c, hp * wp], Some(cols.dtype()), None, Some(cols.device()), None)?;
        let image = ops::scatter_add::call(&zeros, 2, &index, &src)?.try_reshape(&[n, c, hp, wp])?;
        let image = image.try_narrow(2, p[0], h)?.try_narrow(3, p[1], w)?.try_contiguous()?;
        if batched {
            Ok(image)
        } else {
            image.try_squeeze_dim(0)
        }
    }
}
