//! Convolution arguments: expansion of the per-dimension lists, PyTorch's shape and dtype checks
//! (with its messages, in its order), output sizes and the memory format of the computation.

use crate::iter::scalar_type_name;
use crate::support::type_meta_name;
use oxten_runtime::{DType, Error, MemoryFormat, Result, Tensor};

/// The arguments of `convolution`, expanded to one value per spatial dimension.
#[derive(Clone, Debug)]
pub(crate) struct Params {
    pub stride: Vec<i64>,
    pub padding: Vec<i64>,
    pub dilation: Vec<i64>,
    pub transposed: bool,
    pub output_padding: Vec<i64>,
    pub groups: i64,
}

/// Formats a list as PyTorch prints an `IntArrayRef`: `[1, 2]`.
pub(crate) fn list(v: &[i64]) -> String {
    format!("[{}]", v.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
}

/// `expand_param_if_needed`: one value stands for every dimension; otherwise there must be one
/// per dimension.
fn expand(v: &[i64], name: &str, dim: usize) -> Result<Vec<i64>> {
    if v.len() == 1 {
        return Ok(vec![v[0]; dim]);
    }
    if v.len() != dim {
        return Err(Error::value(format!(
            "expected {name} to be a single integer value or a list of {dim} values to match the convolution \
             dimensions, but got {name}={}",
            list(v)
        )));
    }
    Ok(v.to_vec())
}

impl Params {
    /// The parameters of a convolution with a `weight_dim`-dimensional weight, checked and
    /// expanded as `_convolution` does before looking at the tensors.
    pub(crate) fn new(
        weight_dim: usize,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        transposed: bool,
        output_padding: &[i64],
        groups: i64,
    ) -> Result<Params> {
        if weight_dim < 3 {
            return Err(Error::value("weight should have at least three dimensions"));
        }
        if groups <= 0 {
            return Err(Error::value("non-positive groups is not supported"));
        }
        let dim = weight_dim - 2;
        Ok(Params {
            stride: expand(stride, "stride", dim)?,
            padding: expand(padding, "padding", dim)?,
            dilation: expand(dilation, "dilation", dim)?,
            transposed,
            output_padding: expand(output_padding, "output_padding", dim)?,
            groups,
        })
    }

    /// `view1d_as_2d`: a 1-d convolution as a 2-d one over a height of 1.
    pub(crate) fn as_2d(&self) -> Params {
        let pre = |v: &[i64], x: i64| if v.len() == 1 { vec![x, v[0]] } else { v.to_vec() };
        Params {
            stride: pre(&self.stride, 1),
            padding: pre(&self.padding, 0),
            dilation: pre(&self.dilation, 1),
            transposed: self.transposed,
            output_padding: pre(&self.output_padding, 0),
            groups: self.groups,
        }
    }
}

/// `check_shape_forward` (also used by the backward, without a bias).
pub(crate) fn check_shape(input: &Tensor, weight_sizes: &[i64], bias: Option<&Tensor>, p: &Params) -> Result<()> {
    let k = input.dim();
    let weight_dim = weight_sizes.len();
    let groups = p.groups;
    if p.padding.iter().any(|&x| x < 0) {
        return Err(Error::value("negative padding is not supported"));
    }
    if p.output_padding.iter().any(|&x| x < 0) {
        return Err(Error::value("negative output_padding is not supported"));
    }
    if p.stride.iter().any(|&x| x <= 0) {
        return Err(Error::value("non-positive stride is not supported"));
    }
    if p.dilation.iter().any(|&x| x <= 0) {
        return Err(Error::value("non-positive dilation is not supported"));
    }
    let ws = list(weight_sizes);
    let is = list(&input.sizes());
    if weight_dim != k {
        return Err(Error::shape(format!(
            "Expected {weight_dim}-dimensional input for {weight_dim}-dimensional weight {ws}, but got {k}-dimensional \
             input of size {is} instead"
        )));
    }
    if weight_sizes[0] < groups {
        return Err(Error::shape(format!(
            "Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of size {ws} \
             instead"
        )));
    }
    if weight_sizes[0] % groups != 0 {
        return Err(Error::shape(format!(
            "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size \
             [{ws}] instead"
        )));
    }
    let bias_ok = |n: i64| bias.is_none_or(|b| b.dim() == 1 && b.sizes()[0] == n);
    let bias_sizes = || bias.map_or_else(|| "[]".to_string(), |b| list(&b.sizes()));
    if !p.transposed {
        let c = input.sizes()[1];
        if c != weight_sizes[1] * groups {
            return Err(Error::shape(format!(
                "Given groups={groups}, weight of size {ws}, expected input{is} to have {} channels, but got {c} \
                 channels instead",
                weight_sizes[1] * groups
            )));
        }
        if !bias_ok(weight_sizes[0]) {
            return Err(Error::shape(format!(
                "Given weight of size {ws}, expected bias to be 1-dimensional with {} elements, but got bias of size {} \
                 instead",
                weight_sizes[0],
                bias_sizes()
            )));
        }
        let (mut padded, mut kernel, mut fits) = (Vec::new(), Vec::new(), true);
        // In i128: huge paddings and dilations must give an error, not a wrapped size.
        for i in 2..k {
            padded.push(input.sizes()[i] as i128 + 2 * p.padding[i - 2] as i128);
            kernel.push(p.dilation[i - 2] as i128 * (weight_sizes[i] as i128 - 1) + 1);
            fits &= padded[i - 2] >= kernel[i - 2];
        }
        if !fits {
            let join = |v: &[i128]| v.iter().map(i128::to_string).collect::<Vec<_>>().join(" x ");
            return Err(Error::shape(format!(
                "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than \
                 actual input size",
                join(&padded),
                join(&kernel)
            )));
        }
    } else {
        let c = input.sizes()[1];
        if c != weight_sizes[0] {
            return Err(Error::shape(format!(
                "Given transposed=1, weight of size {ws}, expected input{is} to have {} channels, but got {c} channels \
                 instead",
                weight_sizes[0]
            )));
        }
        if !bias_ok(weight_sizes[1] * groups) {
            return Err(Error::shape(format!(
                "Given transposed=1, weight of size {ws}, expected bias to be 1-dimensional with {} elements, but got \
                 bias of size {} instead",
                weight_sizes[1] * groups,
                bias_sizes()
            )));
        }
    }
    Ok(())
}

/// The output sizes of the convolution (`input` batched, checked by [`check_shape`]), with the
/// transposed convolution's own checks.
pub(crate) fn output_sizes(input: &[i64], weight: &[i64], p: &Params) -> Result<Vec<i64>> {
    let dim = input.len() - 2;
    // Spatial sizes are computed in i128 and must fit in i64 (huge paddings or dilations).
    let fit = |v: i128| {
        i64::try_from(v).map_err(|_| {
            Error::value(format!(
                "the output size {v} of the convolution does not fit in int64 (input {input:?}, weight {weight:?}, \
                 padding {:?}, dilation {:?})",
                p.padding, p.dilation
            ))
        })
    };
    let mut out = vec![input[0]];
    if !p.transposed {
        out.push(weight[0]);
        for d in 0..dim {
            let k = p.dilation[d] as i128 * (weight[d + 2] as i128 - 1) + 1;
            out.push(fit((input[d + 2] as i128 + 2 * p.padding[d] as i128 - k) / p.stride[d] as i128 + 1)?);
        }
        return Ok(out);
    }
    out.push(weight[1] * p.groups);
    for d in 0..dim {
        if p.output_padding[d] >= p.stride[d] && p.output_padding[d] >= p.dilation[d] {
            let (op, s, dl) = (&p.output_padding, &p.stride, &p.dilation);
            let (h, w) = if dim == 2 { (0, 1) } else { (0, 0) };
            return Err(Error::value(format!(
                "output padding must be smaller than either stride or dilation, but got output_padding_height: {} \
                 output_padding_width: {} stride_height: {} stride_width: {} dilation_height: {} dilation_width: {}",
                op[h], op[w], s[h], s[w], dl[h], dl[w]
            )));
        }
        let (i, w) = (input[d + 2] as i128, weight[d + 2] as i128);
        let (s, pad, dl, op) =
            (p.stride[d] as i128, p.padding[d] as i128, p.dilation[d] as i128, p.output_padding[d] as i128);
        out.push(fit((i - 1) * s - 2 * pad + dl * (w - 1) + op + 1)?);
    }
    if out[2..].iter().any(|&s| s < 1) {
        let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(" x ");
        return Err(Error::shape(format!(
            "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size is too small",
            join(&input[2..]),
            join(&out[2..])
        )));
    }
    Ok(out)
}

/// The legacy type name PyTorch's `Tensor::toString` prints (`torch.FloatTensor`).
fn legacy_type_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "torch.FloatTensor",
        DType::F64 => "torch.DoubleTensor",
        DType::F16 => "torch.HalfTensor",
        DType::BF16 => "CPUBFloat16Type",
        DType::I64 => "torch.LongTensor",
        DType::I32 => "torch.IntTensor",
        DType::I16 => "torch.ShortTensor",
        DType::I8 => "torch.CharTensor",
        DType::U8 => "torch.ByteTensor",
        DType::Bool => "torch.BoolTensor",
    }
}

/// The dtype checks of the backend PyTorch picks: the oneDNN one for f32/f16/bf16 inputs, the
/// native one (`slow_conv2d`) otherwise, which also rejects bool.
pub(crate) fn check_dtypes(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>, kernel: &str) -> Result<()> {
    let x = input.dtype();
    let onednn = matches!(x, DType::F32 | DType::F16 | DType::BF16);
    for (what, t) in [("weight", Some(weight)), ("bias", bias)] {
        let Some(t) = t else { continue };
        if t.dtype() == x {
            continue;
        }
        return Err(Error::dtype(if onednn {
            format!(
                "Input type ({}) and {what} type ({}) should be the same or input should be a MKLDNN tensor and {what} \
                 is a dense tensor",
                legacy_type_name(x),
                legacy_type_name(t.dtype())
            )
        } else {
            format!("expected scalar type {} but found {}", scalar_type_name(x), scalar_type_name(t.dtype()))
        }));
    }
    if x == DType::Bool {
        return Err(Error::dtype(format!("\"{kernel}\" not implemented for 'Bool'")));
    }
    Ok(())
}

/// `conv1d`/`conv2d`'s check that the bias has the input's dtype.
pub(crate) fn check_bias_dtype(input: &Tensor, bias: Option<&Tensor>) -> Result<()> {
    match bias {
        Some(b) if b.dtype() != input.dtype() => Err(Error::dtype(format!(
            "Input type ({}) and bias type ({}) should be the same",
            type_meta_name(input.dtype()),
            type_meta_name(b.dtype())
        ))),
        _ => Ok(()),
    }
}

/// The memory format the computation (and so the output) uses: channels-last when the input or
/// the weight suggests it, as PyTorch's CPU backends do.
pub(crate) fn backend_format(input: &Tensor, weight: &Tensor) -> MemoryFormat {
    if input.dim() == 4
        && (input.suggest_memory_format() == MemoryFormat::ChannelsLast
            || weight.suggest_memory_format() == MemoryFormat::ChannelsLast)
    {
        MemoryFormat::ChannelsLast
    } else {
        MemoryFormat::Contiguous
    }
}

/// PyTorch's `ConvParams::use_mkldnn` on CPU (oneDNN available, bf16/f16 supported by the CPU):
/// whether PyTorch runs this convolution through oneDNN rather than its native kernels. oxten
/// computes both the same way; the choice only decides how a weight gradient is laid out in the
/// ambiguous cases (size-1 dims), where oneDNN's is canonical in the backend format and the
/// native one keeps the weight's own strides. f32 takes oneDNN except where PyTorch's
/// heuristic finds its native kernel faster (small 1x1 single-image convolutions).
pub(crate) fn uses_mkldnn(input: &Tensor, weight: &Tensor, p: &Params) -> bool {
    if p.transposed && p.output_padding.iter().zip(&p.stride).any(|(o, s)| o >= s) {
        return false;
    }
    match input.dtype() {
        DType::BF16 | DType::F16 => return true,
        DType::F32 => {}
        _ => return false,
    }
    let (x, w) = (input.sizes(), weight.sizes());
    if x.len() != 4 || w.len() != 4 {
        return false;
    }
    let strided = p.stride.iter().any(|&s| s != 1);
    let dilated = p.dilation.iter().any(|&d| d != 1);
    let one_by_one = w[2] == 1 && w[3] == 1;
    (strided || dilated || x[0] >= 16 || !one_by_one || rayon::current_num_threads() > 1)
        && (p.groups > 1 || (w[2] > 3 && w[3] > 3) || x[0] > 1 || x.iter().product::<i64>() > 20480)
}

/// `batchify`: an unbatched input gets a batch dimension of 1.
pub(crate) fn batchify(input: &Tensor, spatial: usize, name: &str) -> Result<(Tensor, bool)> {
    let (unbatched, batched) = (spatial + 1, spatial + 2);
    let is_batched = input.dim() == batched;
    if input.dim() != unbatched && !is_batched {
        return Err(Error::shape(format!(
            "Expected {unbatched}D (unbatched) or {batched}D (batched) input to {name}, but got input of size: {}",
            list(&input.sizes())
        )));
    }
    let x = if is_batched { input.clone() } else { oxten_runtime::ops::unsqueeze::call(input, 0)? };
    Ok((x, is_batched))
}

/// The result of a convolution on [`batchify`]'s input, without the batch it added.
pub(crate) fn unbatch(y: Tensor, batched: bool) -> Result<Tensor> {
    if batched {
        Ok(y)
    } else {
        oxten_runtime::ops::squeeze_dim::call(&y, 0)
    }
}
