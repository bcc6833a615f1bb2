//! `segment_reduce`: reductions (`sum`, `mean`, `max`, `min`, `prod`) over consecutive segments
//! of `data` along `axis`, the segments given by their `lengths` or by `offsets` (one row of them
//! per index of the dims before `axis`).
//!
//! Composed of `scatter_reduce`: each position along `axis` gets its segment's number (positions
//! after the last segment, which PyTorch skips under `unsafe`, a spare one that is cut off), and
//! the data are scattered into a tensor filled with `initial` (or the reduction's identity) with
//! `include_self`, so empty segments keep `initial`. `mean` is the scattered sum divided by the
//! segment's length (not counting `initial`, as PyTorch), NaN for an empty segment without
//! `initial`. Autograd (PyTorch's `_segment_reduce_backward`, up to how ties of `max`/`min` share
//! a gradient) and every backend come from the operators it is made of.

use crate::generated::decls::SegmentReduceCompositeImplicit;
use crate::support::not_implemented;
use crate::Composite;
use oxten_runtime::error::try_vec_with_capacity;
use oxten_runtime::tensor::wrap_dim;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// The segment lengths (shaped `[outer…, S]`: from `lengths`, or the differences of `offsets`)
/// and where each row's first segment starts (0 with `lengths`).
fn segments(lengths: Option<&Tensor>, offsets: Option<&Tensor>) -> Result<(Vec<i64>, Vec<i64>, Vec<i64>)> {
    let given = offsets.or(lengths).ok_or_else(|| Error::runtime("segment_reduce(): no lengths or offsets"))?;
    let host = ops::to_dtype::call(&given.try_to_device(oxten_runtime::Device::Cpu)?, DType::I64, false, false, None)?;
    let values = host.to_vec::<i64>()?;
    let sizes = given.sizes();
    let (outer, per_row) = (&sizes[..sizes.len() - 1], sizes[sizes.len() - 1] as usize);
    let rows = outer.iter().product::<i64>() as usize;
    let mut shape = outer.to_vec();
    if offsets.is_none() {
        shape.push(per_row as i64);
        let mut starts = try_vec_with_capacity(rows)?;
        starts.resize(rows, 0);
        return Ok((values, starts, shape));
    }
    if per_row == 0 {
        return Err(Error::runtime("segment_reduce(): offsets need at least one element along axis"));
    }
    shape.push(per_row as i64 - 1);
    let (mut lens, mut starts) = (try_vec_with_capacity(rows * (per_row - 1))?, try_vec_with_capacity(rows)?);
    for row in values.chunks_exact(per_row) {
        starts.push(row[0]);
        for w in row.windows(2) {
            if w[1] < w[0] {
                return Err(Error::runtime(format!(
                    "segment_reduce(): Expected segment_length >= 0, but offsets decrease from {} to {}",
                    w[0], w[1]
                )));
            }
            lens.push(w[1] - w[0]);
        }
    }
    Ok((lens, starts, shape))
}

impl SegmentReduceCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn segment_reduce(
        data: &Tensor,
        reduce: &str,
        lengths: Option<&Tensor>,
        indices: Option<&Tensor>,
        offsets: Option<&Tensor>,
        axis: i64,
        unsafe_: bool,
        initial: Option<Scalar>,
    ) -> Result<Tensor> {
        let axis = wrap_dim(axis, data.dim())?;
        if indices.is_some() {
            return Err(Error::runtime("segment_reduce(): indices based reduction is not supported yet."));
        }
        let (what, given) = match (offsets, lengths) {
            (Some(o), _) => ("offsets", o),
            (None, Some(l)) => ("lengths", l),
            (None, None) => return Err(Error::runtime("segment_reduce(): Either lengths or offsets must be defined.")),
        };
        let (mode, identity) = match reduce {
            "max" | "amax" => ("amax", f64::NEG_INFINITY),
            "min" | "amin" => ("amin", f64::INFINITY),
            "sum" => ("sum", 0.0),
            "mean" => ("mean", 0.0),
            "prod" => ("prod", 1.0),
            _ => {
                return Err(Error::value(format!(
                    "reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
                )))
            }
        };
        if data.device() != given.device() {
            return Err(Error::device(format!(
                "segment_reduce(): expected data and {what} on the same device, but got {:?} and {:?}",
                data.device(),
                given.device()
            )));
        }
        if data.dim() < given.dim() {
            return Err(Error::runtime(format!(
                "segment_reduce(): Expected data.dim() >= {what}.dim(), but got {} and {}",
                data.dim(),
                given.dim()
            )));
        }
        if axis as i64 != given.dim() as i64 - 1 {
            return Err(Error::runtime(format!(
                "segment_reduce(): Expected axis to be the last dimension of {what} but got {axis}."
            )));
        }
        if data.sizes()[..axis] != given.sizes()[..axis] {
            return Err(Error::shape(format!(
                "segment_reduce(): Expected the dims of {what} before the last to be data's before axis {axis}, but got \
                 {what} of shape {:?} and data of shape {:?}",
                &given.sizes()[..],
                &data.sizes()[..]
            )));
        }
        let (lens, starts, seg_shape) = segments(lengths, offsets)?;
        let size = data.sizes()[axis];
        if offsets.is_none() && !unsafe_ {
            if lens.iter().any(|&l| l < 0) {
                return Err(Error::runtime("lengths contains negative value!"));
            }
            let per_row = *seg_shape.last().unwrap_or(&0) as usize;
            let row_sum = |r: usize| lens[r * per_row..(r + 1) * per_row].iter().sum::<i64>();
            if (0..starts.len()).any(|r| row_sum(r) != size) {
                return Err(Error::runtime(
                    "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) \
                     when !unsafe.",
                ));
            }
        }
        if !matches!(data.dtype(), DType::F32 | DType::F64 | DType::BF16 | DType::F16) {
            return Err(not_implemented("_segment_reduce_cpu", data.dtype()));
        }
        if !matches!(given.dtype(), DType::I32 | DType::I64) {
            let kernel = if offsets.is_some() {
                "_segment_reduce_offsets_cpu_kernel1"
            } else {
                "_segment_reduce_lengths_cpu_kernel1"
            };
            return Err(not_implemented(kernel, given.dtype()));
        }
        // Each row's position → segment number (`s` for positions outside every segment).
        let s = *seg_shape.last().unwrap_or(&0);
        let rows = starts.len();
        let total = rows.checked_mul(size as usize).ok_or_else(|| Error::out_of_memory(u128::MAX, "segment ids"))?;
        let mut ids = try_vec_with_capacity(total)?;
        for (r, &start) in starts.iter().enumerate() {
            let row = &lens[r * s as usize..(r + 1) * s as usize];
            let mut seg_of = try_vec_with_capacity(size as usize)?;
            seg_of.resize(size as usize, s);
            let mut at = start;
            for (j, &len) in row.iter().enumerate() {
                if len < 0 {
                    return Err(Error::runtime("lengths contains negative value!"));
                }
                let end = at.checked_add(len).filter(|&e| at >= 0 && e <= size).ok_or_else(|| {
                    Error::index(format!(
                        "segment_reduce(): segment {j} of row {r} covers [{at}, {}) beyond the {size} positions of axis \
                         {axis}",
                        at.saturating_add(len)
                    ))
                })?;
                seg_of[at as usize..end as usize].fill(j as i64);
                at = end;
            }
            ids.extend(seg_of);
        }
        let sizes = data.sizes();
        let inner = sizes.len() - axis - 1;
        let mut id_shape = sizes[..=axis].to_vec();
        id_shape.extend(std::iter::repeat_n(1, inner));
        let ids = Tensor::from_vec(ids, &id_shape)?.try_to_device(data.device())?;
        let ids = ops::expand::call(&ids, &sizes, false)?;
        let mut out_shape = sizes.to_vec();
        out_shape[axis] = s + 1;
        let fill = initial.unwrap_or(Scalar::Float(identity));
        let base = ops::full::call(&out_shape, fill, Some(data.dtype()), None, Some(data.device()), None)?;
        let scatter = if mode == "mean" { "sum" } else { mode };
        let out = ops::scatter_reduce_two::call(&base, axis as i64, &ids, data, scatter, true)?;
        let out = ops::narrow::call(&out, axis as i64, 0, s)?;
        if mode != "mean" {
            return Ok(out);
        }
        let mut len_shape = seg_shape.clone();
        len_shape.extend(std::iter::repeat_n(1, inner));
        let counts = Tensor::from_vec(lens, &len_shape)?.try_to_device(data.device())?;
        let counts = ops::to_dtype::call(&counts, data.dtype(), false, false, None)?;
        let empty_value = if initial.is_some() {
            out.clone()
        } else {
            ops::full_like::call(&out, Scalar::Float(f64::NAN), None, None, None, None, None)?
        };
        let mean = ops::div::call(&out, &counts)?;
        let nonempty = ops::gt_scalar::call(&counts, Scalar::Int(0))?;
        ops::where_self::call(&nonempty, &mean, &empty_value)
    }
}
