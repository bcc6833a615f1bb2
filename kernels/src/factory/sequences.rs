//! `linspace`, `logspace`, `eye`, `scalar_tensor` and the `new_*` factories of a tensor.
//!
//! `linspace`/`logspace` compute as PyTorch's CPU kernel does, so the values match bit for bit
//! in float32 and float64: the step in the output's precision (float64 for integer outputs),
//! the first half counted up from `start` and the second half down from `end`, so both ends are
//! exact. float16/bfloat16 compute in float32 and round once.

use crate::generated::decls::{
    EyeCompositeImplicit, EyeMCompositeImplicit, LinspaceCompositeImplicit, LinspaceScalarTensorCompositeImplicit,
    LinspaceTensorScalarCompositeImplicit, LinspaceTensorTensorCompositeImplicit, LogspaceCompositeImplicit,
    LogspaceScalarTensorCompositeImplicit, LogspaceTensorScalarCompositeImplicit,
    LogspaceTensorTensorCompositeImplicit, NewEmptyCompositeImplicit, NewEmptyStridedCompositeImplicit,
    NewFullCompositeImplicit, NewOnesCompositeImplicit, NewZerosCompositeImplicit, ScalarTensorCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::dtype::DEFAULT_FLOAT;
use oxten_runtime::{ops, DType, Device, Error, Layout, Result, Scalar, Tensor};

/// The values of `linspace` (`log_base` None) or `logspace`, in f64 after the output dtype's
/// arithmetic.
fn sequence(start: f64, end: f64, steps: i64, dtype: DType, log_base: Option<f64>) -> Result<Vec<f64>> {
    let n = steps as usize;
    let halfway = steps / 2;
    // Out-of-memory is an error, not an abort.
    let mut out = oxten_runtime::error::try_vec_with_capacity(n)?;
    if dtype == DType::F64 || !dtype.is_floating_point() {
        let step = if steps > 1 { (end - start) / (steps - 1) as f64 } else { 0.0 };
        let exp = |i: i64| if i < halfway { start + step * i as f64 } else { end - step * (steps - i - 1) as f64 };
        out.extend((0..n as i64).map(|i| log_base.map_or(exp(i), |b| b.powf(exp(i)))));
    } else {
        let (start, end) = (start as f32, end as f32);
        let step = if steps > 1 { (end - start) / (steps - 1) as f32 } else { 0.0 };
        let exp = |i: i64| if i < halfway { start + step * i as f32 } else { end - step * (steps - i - 1) as f32 };
        out.extend((0..n as i64).map(|i| f64::from(log_base.map_or(exp(i), |b| (b as f32).powf(exp(i))))));
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn spaced(
    op: &str,
    start: Scalar,
    end: Scalar,
    steps: i64,
    log_base: Option<f64>,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
) -> Result<Tensor> {
    if steps < 0 {
        return Err(Error::runtime(format!("{op}: number of steps must be non-negative")));
    }
    let _ = layout;
    let dtype = dtype.unwrap_or(DEFAULT_FLOAT);
    if dtype == DType::Bool {
        return Err(crate::support::not_implemented(&format!("{op}_cpu"), DType::Bool));
    }
    // An integer output reads the bounds as integers first, as PyTorch's `Scalar::to<int>`.
    let bound = |s: Scalar| if dtype.is_floating_point() { s.to_f64() } else { s.to_f64().trunc() };
    // One step is `start` (PyTorch fills it), not the second half's `end`.
    let end = if steps == 1 { start } else { end };
    let values = sequence(bound(start), bound(end), steps, dtype, log_base)?;
    let t = Tensor::from_vec(values, &[steps])?.try_to_dtype(dtype)?;
    match device {
        Some(d) if d != Device::Cpu => t.try_to_device(d),
        _ => Ok(t),
    }
}

/// The value of a 0-dim `start`/`end` tensor.
fn bound_of(op: &str, start: Option<&Tensor>, end: Option<&Tensor>) -> Result<(Option<Scalar>, Option<Scalar>)> {
    let dims = |t: Option<&Tensor>| t.map_or(0, |t| t.dim());
    if dims(start) != 0 || dims(end) != 0 {
        return Err(Error::runtime(format!(
            "{op} only supports 0-dimensional start and end tensors, but got start with {} dimension(s) and end with {} dimension(s).",
            dims(start),
            dims(end)
        )));
    }
    let value = |t: &Tensor| -> Result<Scalar> {
        Ok(if t.dtype().is_floating_point() {
            Scalar::Float(t.try_to_dtype(DType::F64)?.item::<f64>()?)
        } else {
            Scalar::Int(t.try_to_dtype(DType::I64)?.item::<i64>()?)
        })
    };
    Ok((start.map(value).transpose()?, end.map(value).transpose()?))
}

impl LinspaceCompositeImplicit for Composite {
    fn linspace(
        start: Scalar,
        end: Scalar,
        steps: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        spaced("linspace", start, end, steps, None, dtype, layout, device)
    }
}

impl LinspaceTensorTensorCompositeImplicit for Composite {
    fn linspace_tensor_tensor(
        start: &Tensor,
        end: &Tensor,
        steps: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (s, e) = bound_of("linspace", Some(start), Some(end))?;
        spaced("linspace", s.unwrap_or(Scalar::Int(0)), e.unwrap_or(Scalar::Int(0)), steps, None, dtype, layout, device)
    }
}

impl LinspaceTensorScalarCompositeImplicit for Composite {
    fn linspace_tensor_scalar(
        start: &Tensor,
        end: Scalar,
        steps: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (s, _) = bound_of("linspace", Some(start), None)?;
        spaced("linspace", s.unwrap_or(Scalar::Int(0)), end, steps, None, dtype, layout, device)
    }
}

impl LinspaceScalarTensorCompositeImplicit for Composite {
    fn linspace_scalar_tensor(
        start: Scalar,
        end: &Tensor,
        steps: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (_, e) = bound_of("linspace", None, Some(end))?;
        spaced("linspace", start, e.unwrap_or(Scalar::Int(0)), steps, None, dtype, layout, device)
    }
}

impl LogspaceCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn logspace(
        start: Scalar,
        end: Scalar,
        steps: i64,
        base: f64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        spaced("logspace", start, end, steps, Some(base), dtype, layout, device)
    }
}

impl LogspaceTensorTensorCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn logspace_tensor_tensor(
        start: &Tensor,
        end: &Tensor,
        steps: i64,
        base: f64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (s, e) = bound_of("logspace", Some(start), Some(end))?;
        let (s, e) = (s.unwrap_or(Scalar::Int(0)), e.unwrap_or(Scalar::Int(0)));
        spaced("logspace", s, e, steps, Some(base), dtype, layout, device)
    }
}

impl LogspaceTensorScalarCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn logspace_tensor_scalar(
        start: &Tensor,
        end: Scalar,
        steps: i64,
        base: f64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (s, _) = bound_of("logspace", Some(start), None)?;
        spaced("logspace", s.unwrap_or(Scalar::Int(0)), end, steps, Some(base), dtype, layout, device)
    }
}

impl LogspaceScalarTensorCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn logspace_scalar_tensor(
        start: Scalar,
        end: &Tensor,
        steps: i64,
        base: f64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (_, e) = bound_of("logspace", None, Some(end))?;
        spaced("logspace", start, e.unwrap_or(Scalar::Int(0)), steps, Some(base), dtype, layout, device)
    }
}

fn eye_nm(
    n: i64,
    m: i64,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    if n < 0 {
        return Err(Error::runtime(format!("n must be greater or equal to 0, got {n}")));
    }
    if m < 0 {
        return Err(Error::runtime(format!("m must be greater or equal to 0, got {m}")));
    }
    let z = ops::zeros::call(&[n, m], Some(dtype.unwrap_or(DEFAULT_FLOAT)), layout, device, pin_memory)?;
    ops::fill_scalar_::call(&ops::diagonal::call(&z, 0, 0, 1)?, Scalar::Int(1))?;
    Ok(z)
}

impl EyeCompositeImplicit for Composite {
    fn eye(
        n: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        eye_nm(n, n, dtype, layout, device, pin_memory)
    }
}

impl EyeMCompositeImplicit for Composite {
    fn eye_m(
        n: i64,
        m: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        eye_nm(n, m, dtype, layout, device, pin_memory)
    }
}

impl ScalarTensorCompositeImplicit for Composite {
    fn scalar_tensor(
        s: Scalar,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        ops::full::call(&[], s, Some(dtype.unwrap_or(DEFAULT_FLOAT)), layout, device, pin_memory)
    }
}

impl NewZerosCompositeImplicit for Composite {
    fn new_zeros(
        self_: &Tensor,
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (dtype, device) = (dtype.unwrap_or(self_.dtype()), device.unwrap_or(self_.device()));
        ops::zeros::call(size, Some(dtype), layout, Some(device), pin_memory)
    }
}

impl NewOnesCompositeImplicit for Composite {
    fn new_ones(
        self_: &Tensor,
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (dtype, device) = (dtype.unwrap_or(self_.dtype()), device.unwrap_or(self_.device()));
        ops::ones::call(size, Some(dtype), layout, Some(device), pin_memory)
    }
}

impl NewFullCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn new_full(
        self_: &Tensor,
        size: &[i64],
        fill_value: Scalar,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (dtype, device) = (dtype.unwrap_or(self_.dtype()), device.unwrap_or(self_.device()));
        ops::full::call(size, fill_value, Some(dtype), layout, Some(device), pin_memory)
    }
}

impl NewEmptyCompositeImplicit for Composite {
    fn new_empty(
        self_: &Tensor,
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (dtype, device) = (dtype.unwrap_or(self_.dtype()), device.unwrap_or(self_.device()));
        ops::empty::call(size, Some(dtype), layout, Some(device), pin_memory, None)
    }
}

impl NewEmptyStridedCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn new_empty_strided(
        self_: &Tensor,
        size: &[i64],
        stride: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let (dtype, device) = (dtype.unwrap_or(self_.dtype()), device.unwrap_or(self_.device()));
        ops::empty_strided::call(size, stride, Some(dtype), layout, Some(device), pin_memory)
    }
}
