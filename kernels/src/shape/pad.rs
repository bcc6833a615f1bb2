//! `pad` and `constant_pad_nd`. Constant padding is `cat` with constant blocks (negative amounts
//! crop with `narrow`); reflect, replicate and circular padding are one `index_select` per
//! padded dimension with the source index of every output position, so all four differentiate
//! through those operators.

use crate::generated::decls::{ConstantPadNdCompositeImplicit, PadCompositeImplicit};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

/// The dims padded by `pad` (pairs from the last dim backwards) with their (before, after).
fn padded_dims(ndim: usize, pad: &[i64]) -> Result<Vec<(usize, i64, i64)>> {
    if !pad.len().is_multiple_of(2) {
        return Err(Error::value("Padding length must be divisible by 2"));
    }
    if pad.len() / 2 > ndim {
        return Err(Error::value(format!(
            "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {ndim}",
            pad.len()
        )));
    }
    Ok(pad.chunks(2).enumerate().map(|(i, p)| (ndim - 1 - i, p[0], p[1])).collect())
}

impl ConstantPadNdCompositeImplicit for Composite {
    fn constant_pad_nd(self_: &Tensor, pad: &[i64], value: Scalar) -> Result<Tensor> {
        let mut x = self_.clone();
        for (d, before, after) in padded_dims(self_.dim(), pad)? {
            let dim = d as i64;
            // Crop first (negative amounts), then add constant blocks.
            if before < 0 {
                x = x.try_narrow(dim, -before, x.sizes()[d] + before)?;
            }
            if after < 0 {
                x = x.try_narrow(dim, 0, x.sizes()[d] + after)?;
            }
            let block = |n: i64| -> Result<Tensor> {
                let mut s = x.sizes().to_vec();
                s[d] = n;
                ops::full::call(&s, value, Some(x.dtype()), None, Some(x.device()), None)
            };
            let mut parts = Vec::new();
            if before > 0 {
                parts.push(block(before)?);
            }
            parts.push(x.clone());
            if after > 0 {
                parts.push(block(after)?);
            }
            if parts.len() > 1 {
                x = ops::cat::call(&parts, dim)?;
            }
        }
        Ok(x)
    }
}

/// The source position of output position `j` (counted from `-before`) in a dim of length `n`.
fn source(mode: &str, j: i64, n: i64) -> i64 {
    match mode {
        // Mirror at the edges without repeating them: -1 → 1, n → n - 2.
        "reflect" => {
            if n == 1 {
                return 0;
            }
            let period = 2 * (n - 1);
            let k = j.rem_euclid(period);
            if k < n {
                k
            } else {
                period - k
            }
        }
        "replicate" => j.clamp(0, n - 1),
        _ => j.rem_euclid(n),
    }
}

impl PadCompositeImplicit for Composite {
    fn pad(self_: &Tensor, pad: &[i64], mode: &str, value: Option<f64>) -> Result<Tensor> {
        if mode == "constant" {
            return ops::constant_pad_nd::call(self_, pad, Scalar::Float(value.unwrap_or(0.0)));
        }
        if !matches!(mode, "reflect" | "replicate" | "circular") {
            return Err(Error::value(format!("Unrecognised padding mode {mode}")));
        }
        if value.is_some() {
            return Err(Error::value(format!("Padding mode \"{mode}\" doesn't take in value argument")));
        }
        let ndim = self_.dim();
        let dims = padded_dims(ndim, pad)?;
        // PyTorch has these modes for 1-, 2- and 3-D padding of (un)batched inputs only.
        if !(1..=3).contains(&dims.len()) || !(dims.len() + 1..=dims.len() + 2).contains(&ndim) {
            return Err(Error::value(format!("Padding size {} is not supported for {ndim}D input tensor.", pad.len())));
        }
        let sizes = self_.sizes();
        let mut x = self_.clone();
        for &(d, before, after) in &dims {
            let n = sizes[d];
            match mode {
                "reflect" if before >= n || after >= n => {
                    return Err(Error::value(format!(
                        "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ({before}, {after}) at dimension {d} of input {:?}",
                        &sizes[..]
                    )))
                }
                "circular" if before > n || after > n => {
                    return Err(Error::value("Padding value causes wrapping around more than once."))
                }
                // Replicate reads through negative padding (the edge element repeats even when
                // the crop removes everything), so only an empty output is refused.
                "replicate" if n > 0 && n + before + after > 0 => {}
                _ if n + before.min(0) + after.min(0) <= 0 => {
                    return Err(Error::value(format!(
                        "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
                        dims.len() + 1,
                        dims.len() + 2,
                        &sizes[..]
                    )))
                }
                _ => {}
            }
            if mode == "replicate" {
                // Output j reads input clamp(j - before, 0, n - 1), whatever the signs.
                let idx: Vec<i64> = (0..n + before + after).map(|j| (j - before).clamp(0, n - 1)).collect();
                let len = idx.len() as i64;
                x = x.try_index_select(d as i64, &Tensor::from_vec(idx, &[len])?.try_to_device(x.device())?)?;
                continue;
            }
            // Negative amounts crop first; the padding then wraps or mirrors what is left
            // (PyTorch's circular padding reads the cropped tensor).
            let (start, n) = (before.min(0).abs(), n + before.min(0) + after.min(0));
            let (before, after) = (before.max(0), after.max(0));
            let total = n.checked_add(before).and_then(|t| t.checked_add(after)).filter(|t| *t >= 0);
            let total =
                total.ok_or_else(|| Error::value(format!("pad: the padded size of dimension {d} overflows")))?;
            let mut idx = oxten_runtime::error::try_vec_with_capacity(total as usize)?;
            idx.extend((-before..n + after).map(|j| start + source(mode, j, n)));
            let len = idx.len() as i64;
            let idx = Tensor::from_vec(idx, &[len])?.try_to_device(x.device())?;
            x = x.try_index_select(d as i64, &idx)?;
        }
        Ok(x)
    }
}
