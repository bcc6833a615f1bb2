//! Convolution of integer tensors, which PyTorch's native CPU backend supports: a direct loop in
//! i64 with wrapping arithmetic (the result cast back is what arithmetic wrapping in the
//! narrower type gives). Not tuned: integer convolutions are rare.

use super::im2col::Geom;
use crate::iter::to_dtype;
use oxten_runtime::{ops, DType, MemoryFormat, Result, Tensor};

/// The values of `t` as i64, in contiguous order.
fn values(t: &Tensor) -> Result<Vec<i64>> {
    to_dtype(&ops::contiguous::call(t, MemoryFormat::Contiguous)?, DType::I64)?.to_vec::<i64>()
}

/// `y = conv(x, w) + bias` (or the transposed convolution when `transposed`, `x` then being the
/// output-sized operand of `g`) for integer tensors, in `format` and `x`'s dtype.
pub(crate) fn convolution_int(
    g: &Geom,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    transposed: bool,
    out_sizes: &[i64],
    format: MemoryFormat,
) -> Result<Tensor> {
    let (xv, wv) = (values(x)?, values(w)?);
    let (cg, og) = (g.cg(), g.og());
    let (taps, hw, m) = (g.kh * g.kw, g.hw(), g.m());
    let out_len: usize = out_sizes.iter().map(|&s| s as usize).product();
    let mut out = vec![0i64; out_len];
    for n in 0..g.n {
        for grp in 0..g.groups {
            for o in grp * og..(grp + 1) * og {
                for oh in 0..g.oh {
                    for ow in 0..g.ow {
                        let y_at = (n * g.o + o) * m + oh * g.ow + ow;
                        for c in 0..cg {
                            let ci = grp * cg + c;
                            for i in 0..g.kh {
                                let r = oh * g.sh + i * g.dh;
                                if r < g.ph || r - g.ph >= g.h {
                                    continue;
                                }
                                for j in 0..g.kw {
                                    let s = ow * g.sw + j * g.dw;
                                    if s < g.pw || s - g.pw >= g.w {
                                        continue;
                                    }
                                    let x_at = (n * g.c + ci) * hw + (r - g.ph) * g.w + (s - g.pw);
                                    let wt = wv[(o * cg + c) * taps + i * g.kw + j];
                                    if transposed {
                                        out[x_at] = out[x_at].wrapping_add(xv[y_at].wrapping_mul(wt));
                                    } else {
                                        out[y_at] = out[y_at].wrapping_add(xv[x_at].wrapping_mul(wt));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(b) = bias {
        let bv = values(b)?;
        let channels = out_sizes[1] as usize;
        let plane = out_len / (out_sizes[0] as usize * channels).max(1);
        for (q, v) in out.iter_mut().enumerate() {
            *v = v.wrapping_add(bv[(q / plane) % channels]);
        }
    }
    let y = to_dtype(&Tensor::from_vec(out, out_sizes)?, x.dtype())?;
    ops::contiguous::call(&y, format)
}
