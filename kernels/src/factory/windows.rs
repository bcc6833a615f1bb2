//! Window functions: aten's `hann_window`, `hamming_window`, `blackman_window`,
//! `bartlett_window` and `kaiser_window` (periodic by default, for `stft`), and the
//! `torch.signal.windows` family (`signal_windows_*`: symmetric by default; PyTorch has them in
//! Python only). Each is composed of the factories and pointwise operators PyTorch's own
//! definition uses, in the same order and in the output's dtype, so float32 windows agree with
//! PyTorch's to rounding and every backend has them.

use crate::generated::decls::{
    BartlettWindowCompositeImplicit, BartlettWindowPeriodicCompositeImplicit, BlackmanWindowCompositeImplicit,
    BlackmanWindowPeriodicCompositeImplicit, HammingWindowCompositeImplicit,
    HammingWindowPeriodicAlphaBetaCompositeImplicit, HammingWindowPeriodicAlphaCompositeImplicit,
    HammingWindowPeriodicCompositeImplicit, HannWindowCompositeImplicit, HannWindowPeriodicCompositeImplicit,
    KaiserWindowBetaCompositeImplicit, KaiserWindowCompositeImplicit, KaiserWindowPeriodicCompositeImplicit,
    SignalWindowsBartlettCompositeImplicit, SignalWindowsBlackmanCompositeImplicit,
    SignalWindowsCosineCompositeImplicit, SignalWindowsExponentialCompositeImplicit,
    SignalWindowsGaussianCompositeImplicit, SignalWindowsGeneralCosineCompositeImplicit,
    SignalWindowsGeneralHammingCompositeImplicit, SignalWindowsHammingCompositeImplicit,
    SignalWindowsHannCompositeImplicit, SignalWindowsKaiserCompositeImplicit, SignalWindowsNuttallCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::dtype::DEFAULT_FLOAT;
use oxten_runtime::{ops, DType, Device, Error, Layout, Result, Scalar, Tensor};
use std::f64::consts::PI;

/// The tensor options every window takes.
#[derive(Clone, Copy)]
struct Options {
    dtype: DType,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
}

impl Options {
    fn new(dtype: Option<DType>, layout: Option<Layout>, device: Option<Device>, pin_memory: Option<bool>) -> Self {
        Options { dtype: dtype.unwrap_or(DEFAULT_FLOAT), layout, device, pin_memory }
    }
    fn arange(&self, n: i64) -> Result<Tensor> {
        ops::arange::call(Scalar::Int(n), Some(self.dtype), self.layout, self.device, self.pin_memory)
    }
    fn linspace(&self, start: f64, end: f64, steps: i64) -> Result<Tensor> {
        let (s, e) = (Scalar::Float(start), Scalar::Float(end));
        ops::linspace::call(s, e, steps, Some(self.dtype), self.layout, self.device, self.pin_memory)
    }
    fn filled(&self, n: i64, value: f64) -> Result<Tensor> {
        ops::full::call(&[n], Scalar::Float(value), Some(self.dtype), self.layout, self.device, self.pin_memory)
    }
    /// A 0-dim tensor of `v` in the window's dtype.
    fn scalar(&self, v: f64) -> Result<Tensor> {
        let t = ops::to_dtype::call(&Tensor::from_vec(vec![v], &[])?, self.dtype, false, false, None)?;
        t.try_to_device(self.device.unwrap_or_default())
    }
}

// ---- aten's windows ----------------------------------------------------------------------------

/// aten's `window_function_checks`: a floating dtype and a non-negative length.
fn check_aten(name: &str, o: &Options, n: i64) -> Result<()> {
    if !o.dtype.is_floating_point() {
        return Err(Error::dtype(format!("{name} expects floating point dtypes, got: torch.{}", o.dtype.name())));
    }
    if n < 0 {
        return Err(Error::value(format!("{name} requires non-negative window_length, got window_length={n}")));
    }
    Ok(())
}

/// The empty and one-point windows every aten window returns as such, or `None`.
fn trivial(o: &Options, n: i64) -> Result<Option<Tensor>> {
    match n {
        0 => o.filled(0, 0.0).map(Some),
        1 => o.filled(1, 1.0).map(Some),
        _ => Ok(None),
    }
}

/// `window` of `n + 1` points without its last (a periodic window), or `window` itself.
fn periodic_cut(window: Tensor, periodic: bool, n: i64) -> Result<Tensor> {
    if periodic {
        ops::narrow::call(&window, 0, 0, n)
    } else {
        Ok(window)
    }
}

fn hamming(n: i64, periodic: bool, alpha: f64, beta: f64, o: Options) -> Result<Tensor> {
    check_aten("hamming_window", &o, n)?;
    if let Some(w) = trivial(&o, n)? {
        return Ok(w);
    }
    let len = if periodic { n + 1 } else { n };
    let w = ops::mul_scalar::call(&o.arange(len)?, Scalar::Float(PI * 2.0 / (len - 1) as f64))?;
    let w = ops::mul_scalar::call(&ops::cos::call(&w)?, Scalar::Float(-beta))?;
    let w = ops::add_scalar::call(&w, Scalar::Float(alpha), Scalar::Int(1))?;
    periodic_cut(w, periodic, n)
}

fn blackman(n: i64, periodic: bool, o: Options) -> Result<Tensor> {
    check_aten("blackman_window", &o, n)?;
    if let Some(w) = trivial(&o, n)? {
        return Ok(w);
    }
    let len = if periodic { n + 1 } else { n };
    let w = ops::mul_scalar::call(&o.arange(len)?, Scalar::Float(PI / (len - 1) as f64))?;
    let term = |k: i64, c: f64| -> Result<Tensor> {
        ops::mul_scalar::call(&ops::cos::call(&ops::mul_scalar::call(&w, Scalar::Int(k))?)?, Scalar::Float(c))
    };
    let w = ops::sub::call(&term(4, 0.08)?, &term(2, 0.5)?, Scalar::Int(1))?;
    periodic_cut(ops::add_scalar::call(&w, Scalar::Float(0.42), Scalar::Int(1))?, periodic, n)
}

fn bartlett(n: i64, periodic: bool, o: Options) -> Result<Tensor> {
    check_aten("bartlett_window", &o, n)?;
    if let Some(w) = trivial(&o, n)? {
        return Ok(w);
    }
    let len = if periodic { n + 1 } else { n };
    let w = ops::mul_scalar::call(&o.arange(len)?, Scalar::Float(2.0 / (len - 1) as f64))?;
    // The second half descends: 2 - w.
    let first = ((len - 1) >> 1) + 1;
    let rising = ops::narrow::call(&w, 0, 0, first)?;
    let falling =
        ops::rsub_scalar::call(&ops::narrow::call(&w, 0, first, len - first)?, Scalar::Int(2), Scalar::Int(1))?;
    periodic_cut(ops::cat::call(&[rising, falling], 0)?, periodic, n)
}

fn kaiser(n: i64, periodic: bool, beta: f64, o: Options) -> Result<Tensor> {
    check_aten("kaiser_window", &o, n)?;
    if let Some(w) = trivial(&o, n)? {
        return Ok(w);
    }
    let len = if periodic { n + 1 } else { n };
    // i0(β·sqrt(1 - ((k - α)/α)²)) / i0(β), α = (len - 1)/2, in the dtype's opmath (float64 for
    // float64, float32 otherwise), as PyTorch's kernel.
    let math = if o.dtype == DType::F64 { DType::F64 } else { DType::F32 };
    let alpha = (len - 1) as f64 / 2.0;
    let k = ops::to_dtype::call(&o.arange(len)?, math, false, false, None)?;
    let r =
        ops::div_scalar::call(&ops::sub_scalar::call(&k, Scalar::Float(alpha), Scalar::Int(1))?, Scalar::Float(alpha))?;
    let r =
        ops::rsub_scalar::call(&ops::pow_tensor_scalar::call(&r, Scalar::Float(2.0))?, Scalar::Int(1), Scalar::Int(1))?;
    let arg = ops::mul_scalar::call(&ops::sqrt::call(&ops::abs::call(&r)?)?, Scalar::Float(beta))?;
    let denominator = ops::i0::call(&ops::full_like::call(&arg, Scalar::Float(beta), None, None, None, None, None)?)?;
    let w = ops::div::call(&ops::i0::call(&arg)?, &denominator)?;
    periodic_cut(ops::to_dtype::call(&w, o.dtype, false, false, None)?, periodic, n)
}

impl HannWindowCompositeImplicit for Composite {
    fn hann_window(
        window_length: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        hann_checked(window_length, true, Options::new(dtype, layout, device, pin_memory))
    }
}

impl HannWindowPeriodicCompositeImplicit for Composite {
    fn hann_window_periodic(
        window_length: i64,
        periodic: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        hann_checked(window_length, periodic, Options::new(dtype, layout, device, pin_memory))
    }
}

/// `hann_window` is `hamming_window` with α = β = 1/2, its checks named for itself.
fn hann_checked(n: i64, periodic: bool, o: Options) -> Result<Tensor> {
    check_aten("hann_window", &o, n)?;
    hamming(n, periodic, 0.5, 0.5, o)
}

impl HammingWindowCompositeImplicit for Composite {
    fn hamming_window(
        window_length: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        hamming(window_length, true, 0.54, 0.46, Options::new(dtype, layout, device, pin_memory))
    }
}

impl HammingWindowPeriodicCompositeImplicit for Composite {
    fn hamming_window_periodic(
        window_length: i64,
        periodic: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        hamming(window_length, periodic, 0.54, 0.46, Options::new(dtype, layout, device, pin_memory))
    }
}

impl HammingWindowPeriodicAlphaCompositeImplicit for Composite {
    fn hamming_window_periodic_alpha(
        window_length: i64,
        periodic: bool,
        alpha: f64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        hamming(window_length, periodic, alpha, 0.46, Options::new(dtype, layout, device, pin_memory))
    }
}

impl HammingWindowPeriodicAlphaBetaCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn hamming_window_periodic_alpha_beta(
        window_length: i64,
        periodic: bool,
        alpha: f64,
        beta: f64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        hamming(window_length, periodic, alpha, beta, Options::new(dtype, layout, device, pin_memory))
    }
}

impl BlackmanWindowCompositeImplicit for Composite {
    fn blackman_window(
        window_length: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        blackman(window_length, true, Options::new(dtype, layout, device, pin_memory))
    }
}

impl BlackmanWindowPeriodicCompositeImplicit for Composite {
    fn blackman_window_periodic(
        window_length: i64,
        periodic: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        blackman(window_length, periodic, Options::new(dtype, layout, device, pin_memory))
    }
}

impl BartlettWindowCompositeImplicit for Composite {
    fn bartlett_window(
        window_length: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        bartlett(window_length, true, Options::new(dtype, layout, device, pin_memory))
    }
}

impl BartlettWindowPeriodicCompositeImplicit for Composite {
    fn bartlett_window_periodic(
        window_length: i64,
        periodic: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        bartlett(window_length, periodic, Options::new(dtype, layout, device, pin_memory))
    }
}

impl KaiserWindowCompositeImplicit for Composite {
    fn kaiser_window(
        window_length: i64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        kaiser(window_length, true, 12.0, Options::new(dtype, layout, device, pin_memory))
    }
}

impl KaiserWindowPeriodicCompositeImplicit for Composite {
    fn kaiser_window_periodic(
        window_length: i64,
        periodic: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        kaiser(window_length, periodic, 12.0, Options::new(dtype, layout, device, pin_memory))
    }
}

impl KaiserWindowBetaCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn kaiser_window_beta(
        window_length: i64,
        periodic: bool,
        beta: f64,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        kaiser(window_length, periodic, beta, Options::new(dtype, layout, device, pin_memory))
    }
}

// ---- torch.signal.windows ----------------------------------------------------------------------

/// `_window_function_checks` of `torch.signal.windows`: a non-negative length, float32 or
/// float64.
fn check_signal(name: &str, m: i64, o: &Options) -> Result<()> {
    if m < 0 {
        return Err(Error::value(format!("{name} requires non-negative window length, got M={m}")));
    }
    if !matches!(o.dtype, DType::F32 | DType::F64) {
        return Err(Error::value(format!("{name} expects float32 or float64 dtypes, got: torch.{}", o.dtype.name())));
    }
    Ok(())
}

/// `M` for a periodic window (`sym` false), `M - 1` for a symmetric one (and for `M` ≤ 1).
fn span(m: i64, sym: bool) -> f64 {
    if !sym && m > 1 {
        m as f64
    } else {
        (m - 1) as f64
    }
}

/// `Σᵢ (-1)ⁱ aᵢ cos(i k)` over `M` points `k` from 0 by `2π / (M - 1)` (by `2π / M` periodic).
fn general_cosine(m: i64, a: &[f64], sym: bool, o: Options) -> Result<Tensor> {
    check_signal("general_cosine", m, &o)?;
    if m == 0 {
        return o.filled(0, 0.0);
    }
    if m == 1 {
        return o.filled(1, 1.0);
    }
    if a.is_empty() {
        return Err(Error::value("Coefficients cannot be empty"));
    }
    let step = 2.0 * PI / (if sym { m - 1 } else { m }) as f64;
    let k = o.linspace(0.0, (m - 1) as f64 * step, m)?;
    let signed: Vec<f64> = a.iter().enumerate().map(|(i, w)| if i % 2 == 0 { *w } else { -w }).collect();
    let coefficients =
        ops::to_dtype::call(&Tensor::from_vec(signed, &[a.len() as i64, 1])?, o.dtype, false, false, None)?
            .try_to_device(o.device.unwrap_or_default())?;
    let i = o.arange(a.len() as i64)?.try_unsqueeze(-1)?;
    let terms = ops::mul::call(&coefficients, &ops::cos::call(&ops::mul::call(&i, &k)?)?)?;
    ops::sum_dim_intlist::call(&terms, Some(&[0]), false, None)
}

impl SignalWindowsGeneralCosineCompositeImplicit for Composite {
    fn signal_windows_general_cosine(
        m: i64,
        a: &[f64],
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        general_cosine(m, a, sym, o)
    }
}

impl SignalWindowsGeneralHammingCompositeImplicit for Composite {
    fn signal_windows_general_hamming(
        m: i64,
        alpha: f64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        general_cosine(m, &[alpha, 1.0 - alpha], sym, o)
    }
}

impl SignalWindowsHammingCompositeImplicit for Composite {
    fn signal_windows_hamming(
        m: i64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        general_cosine(m, &[0.54, 0.46], sym, o)
    }
}

impl SignalWindowsHannCompositeImplicit for Composite {
    fn signal_windows_hann(
        m: i64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        general_cosine(m, &[0.5, 0.5], sym, o)
    }
}

impl SignalWindowsBlackmanCompositeImplicit for Composite {
    fn signal_windows_blackman(
        m: i64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        check_signal("blackman", m, &o)?;
        general_cosine(m, &[0.42, 0.5, 0.08], sym, o)
    }
}

impl SignalWindowsNuttallCompositeImplicit for Composite {
    fn signal_windows_nuttall(
        m: i64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        general_cosine(m, &[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym, o)
    }
}

impl SignalWindowsBartlettCompositeImplicit for Composite {
    fn signal_windows_bartlett(
        m: i64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        check_signal("bartlett", m, &o)?;
        if m <= 1 {
            return o.filled(m, 1.0);
        }
        let step = 2.0 / (if sym { m - 1 } else { m }) as f64;
        let k = o.linspace(-1.0, -1.0 + (m - 1) as f64 * step, m)?;
        ops::rsub_scalar::call(&ops::abs::call(&k)?, Scalar::Int(1), Scalar::Int(1))
    }
}

impl SignalWindowsCosineCompositeImplicit for Composite {
    fn signal_windows_cosine(
        m: i64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        check_signal("cosine", m, &o)?;
        if m == 0 {
            return o.filled(0, 0.0);
        }
        let step = PI / (if !sym && m > 1 { m + 1 } else { m }) as f64;
        let k = o.linspace(0.5 * step, (0.5 + (m - 1) as f64) * step, m)?;
        ops::sin::call(&k)
    }
}

impl SignalWindowsGaussianCompositeImplicit for Composite {
    fn signal_windows_gaussian(
        m: i64,
        std: f64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        check_signal("gaussian", m, &o)?;
        if std <= 0.0 {
            return Err(Error::value(format!(
                "Standard deviation must be positive, got: {} instead.",
                crate::support::format_g(std)
            )));
        }
        if m == 0 {
            return o.filled(0, 0.0);
        }
        let start = -span(m, sym) / 2.0;
        let c = 1.0 / (std * 2f64.sqrt());
        let k = o.linspace(start * c, (start + (m - 1) as f64) * c, m)?;
        ops::exp::call(&ops::neg::call(&ops::pow_tensor_scalar::call(&k, Scalar::Int(2))?)?)
    }
}

impl SignalWindowsExponentialCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn signal_windows_exponential(
        m: i64,
        center: Option<f64>,
        tau: f64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        check_signal("exponential", m, &o)?;
        if tau <= 0.0 {
            return Err(Error::value(format!("Tau must be positive, got: {} instead.", crate::support::format_g(tau))));
        }
        if sym && center.is_some() {
            return Err(Error::value("Center must be None for symmetric windows"));
        }
        if m == 0 {
            return o.filled(0, 0.0);
        }
        let center = center.unwrap_or(span(m, sym) / 2.0);
        let c = 1.0 / tau;
        let k = o.linspace(-center * c, (-center + (m - 1) as f64) * c, m)?;
        ops::exp::call(&ops::neg::call(&ops::abs::call(&k)?)?)
    }
}

impl SignalWindowsKaiserCompositeImplicit for Composite {
    fn signal_windows_kaiser(
        m: i64,
        beta: f64,
        sym: bool,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let o = Options::new(dtype, layout, device, pin_memory);
        check_signal("kaiser", m, &o)?;
        if beta < 0.0 {
            return Err(Error::value(format!(
                "beta must be non-negative, got: {} instead.",
                crate::support::format_g(beta)
            )));
        }
        if m <= 1 {
            return o.filled(m, 1.0);
        }
        // As PyTorch: β a 0-dim tensor of the dtype, the ends computed from it, then
        // i0(sqrt(β² - k²)) / i0(β).
        let beta = o.scalar(beta)?;
        let start = ops::neg::call(&beta)?;
        let step = ops::div_scalar::call(
            &ops::mul_scalar::call(&beta, Scalar::Float(2.0))?,
            Scalar::Int(if sym { m - 1 } else { m }),
        )?;
        let end = ops::add::call(&start, &ops::mul_scalar::call(&step, Scalar::Int(m - 1))?, Scalar::Int(1))?;
        let end = ops::minimum::call(&beta, &end)?;
        let k = ops::linspace_tensor_tensor::call(&start, &end, m, Some(o.dtype), o.layout, o.device, o.pin_memory)?;
        let inner = ops::sub::call(
            &ops::mul::call(&beta, &beta)?,
            &ops::pow_tensor_scalar::call(&k, Scalar::Int(2))?,
            Scalar::Int(1),
        )?;
        ops::div::call(&ops::i0::call(&ops::sqrt::call(&inner)?)?, &ops::i0::call(&beta)?)
    }
}
