//! Formula helpers of the reductions beyond sum and mean: `var`/`std` (and their `_mean` forms), `prod`,
//! `min`/`max` over every element, `cumsum` and `linalg_vector_norm`.
//!
//! Like every helper they are built from operators called through the dispatcher, so a gradient
//! computed with `create_graph` can be differentiated again. The few data-dependent branches
//! (whether `prod`'s input has a zero, whether a full `max` is NaN) read a bool reduction of the
//! input, as PyTorch's `.item()` calls do; meta tensors take the general path.

use super::{cast_to, mean_backward, restore_reduced_dims, scale_grad_by_count, where_, zeros_like};
use oxten_runtime::{ops, wrap_dim, DType, Result, Scalar, Tensor};

const ONE: Scalar = Scalar::Int(1);

fn full_like(t: &Tensor, v: f64) -> Result<Tensor> {
    ops::full_like::call(t, Scalar::Float(v), None, None, None, None, None)
}

fn ones_like(t: &Tensor) -> Result<Tensor> {
    ops::ones_like::call(t, None, None, None, None, None)
}

/// `x != x`.
fn isnan(t: &Tensor) -> Result<Tensor> {
    ops::ne::call(t, t)
}

/// The longest slice whose exclusive products [`prod_backward`] forms directly (`n²` elements
/// per slice); longer slices with both a zero and an infinity get NaN where PyTorch has a value.
pub const EXCLUSIVE_PRODUCT_MAX: i64 = 4096;

/// The value of a one-element bool tensor (false for a meta tensor, which has no data).
fn truth(t: &Tensor) -> Result<bool> {
    if t.is_meta() {
        return Ok(false);
    }
    t.item::<bool>()
}

/// Whether `dim` (the optional dim list of `var`, `std`, `linalg_vector_norm`) reduces every dim.
fn reduces_all(dim: Option<&[i64]>, ndim: usize) -> bool {
    ndim == 0 || dim.is_none_or(|d| d.is_empty())
}

// ---------------------------------------------------------------------------------------------
// var / std
// ---------------------------------------------------------------------------------------------

/// The gradient of `var(self, dim, correction, keepdim)`:
/// `2 / (N - correction) * grad * (self - mean(self, dim))`, with `N` the number of elements
/// reduced. As in PyTorch, a full reduction with `N <= correction` gives NaN where `self`
/// equals its mean and inf elsewhere. Unlike PyTorch (whose formula takes `N = 1` there), an
/// empty dim list reduces every dim here too, as the forward does.
pub fn var_backward(
    grad: &Tensor,
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let c = correction.map_or(1.0, |c| c.to_f64());
    let ndim = self_.dim();
    if reduces_all(dim, ndim) {
        let dof = self_.numel() as f64 - c;
        let mean = ops::mean_dim::call(self_, None, false, None)?;
        if dof <= 0.0 {
            let at_mean = ops::eq::call(self_, &mean)?;
            let nan_or_inf = where_(&at_mean, &full_like(self_, f64::NAN)?, &full_like(self_, f64::INFINITY)?)?;
            return ops::mul::call(grad, &nan_or_inf);
        }
        let centered = ops::sub::call(self_, &mean, ONE)?;
        return ops::mul::call(&ops::mul_scalar::call(grad, Scalar::Float(2.0 / dof))?, &centered);
    }
    let dims = dim.unwrap_or(&[]);
    let sizes = self_.sizes();
    let mut n = 1i64;
    for &d in dims {
        n *= sizes[wrap_dim(d, ndim)?];
    }
    let g = restore_reduced_dims(grad, Some(dims), keepdim, ndim)?;
    let mean = ops::mean_dim::call(self_, Some(dims), true, None)?;
    let centered = ops::sub::call(self_, &mean, ONE)?;
    ops::mul::call(&ops::mul_scalar::call(&g, Scalar::Float(2.0 / (n as f64 - c)))?, &centered)
}

/// The gradient of `std`: `var`'s, for the gradient `grad / (2 * std)` (0 where `std` is 0).
pub fn std_backward(
    result: &Tensor,
    grad: &Tensor,
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let scaled = ops::div::call(grad, &ops::mul_scalar::call(result, Scalar::Int(2))?)?;
    let grad_var = where_(&ops::eq_scalar::call(result, Scalar::Int(0))?, &zeros_like(&scaled)?, &scaled)?;
    var_backward(&grad_var, self_, dim, correction, keepdim)
}

/// The gradient of `var_mean`: the sum of `var`'s and `mean`'s.
pub fn var_mean_backward(
    gvar: &Tensor,
    gmean: &Tensor,
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let a = var_backward(gvar, self_, dim, correction, keepdim)?;
    let b = mean_backward(gmean, &self_.sizes(), dim, keepdim)?;
    ops::add::call(&a, &b, ONE)
}

/// The gradient of `std_mean`: the sum of `std`'s and `mean`'s.
pub fn std_mean_backward(
    gstd: &Tensor,
    gmean: &Tensor,
    self_: &Tensor,
    std: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let a = std_backward(std, gstd, self_, dim, correction, keepdim)?;
    let b = mean_backward(gmean, &self_.sizes(), dim, keepdim)?;
    ops::add::call(&a, &b, ONE)
}

// ---------------------------------------------------------------------------------------------
// prod
// ---------------------------------------------------------------------------------------------

/// The gradient of `prod` over `dim` (`None`: every element): each element gets `grad` times the
/// product of the *other* elements of its slice, which stays right when the input has zeros.
///
/// Without zeros that is `grad * result / input` (PyTorch's fast path). With zeros, PyTorch
/// multiplies exclusive cumulative products; here the same value comes from
/// `p / s_i * Z_i`, with `s` the input with its zeros replaced by 1, `p` the product of `s`
/// over the slice, and `Z_i` the product of the slice's zeros other than element `i`: 1 when
/// there is none, that zero itself when there is one (its value 0, its derivative 1), and 0
/// when there are more. Built from differentiable operators, this is exact in value and in its
/// first derivative, so double backward is right too (a slice with one zero has non-zero second
/// derivatives between the zero and every other element; one with two zeros, between the two).
/// When the input also holds an infinity, the division is not safe: the products of the others
/// are formed directly for slices of up to [`EXCLUSIVE_PRODUCT_MAX`] elements.
pub fn prod_backward(
    grad: &Tensor,
    input: &Tensor,
    result: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
) -> Result<Tensor> {
    let ndim = input.dim();
    if ndim == 0 {
        return Ok(grad.clone());
    }
    let dim = match dim {
        Some(d) => Some(wrap_dim(d, ndim)? as i64),
        None => None,
    };
    let (grad, result) = match dim {
        Some(d) if !keepdim => (ops::unsqueeze::call(grad, d)?, ops::unsqueeze::call(result, d)?),
        _ => (grad.clone(), result.clone()),
    };
    let is_zero = ops::eq_scalar::call(input, Scalar::Int(0))?;
    if !input.is_meta() && !truth(&ops::any::call(&is_zero)?)? {
        return ops::mul::call(&grad, &ops::div::call(&result, input)?);
    }
    // With an infinity as well as a zero, no division is safe: the product of the others, by
    // brute force over the slice (PyTorch's exclusive cumulative products give the same).
    let n = match dim {
        Some(d) => input.sizes()[d as usize],
        None => input.numel(),
    };
    let infinite = ops::eq_scalar::call(&ops::abs::call(input)?, Scalar::Float(f64::INFINITY))?;
    if n <= EXCLUSIVE_PRODUCT_MAX && truth(&ops::any::call(&infinite)?)? {
        let d = dim.unwrap_or(0);
        let rows = match dim {
            Some(d) => ops::transpose::call(input, d, -1)?,
            None => ops::reshape::call(input, &[-1])?,
        };
        let idx = ops::arange::call(Scalar::Int(n), Some(DType::I64), None, Some(input.device()), None)?;
        let eye = ops::eq::call(&ops::unsqueeze::call(&idx, 1)?, &idx)?;
        let mut sizes = rows.sizes().to_vec();
        sizes.insert(sizes.len() - 1, n);
        let spread = ops::expand::call(&ops::unsqueeze::call(&rows, -2)?, &sizes, false)?;
        let others = ops::prod_dim_int::call(&where_(&eye, &ones_like(&spread)?, &spread)?, -1, false, None)?;
        let others = match dim {
            Some(_) => ops::transpose::call(&others, d, -1)?,
            None => ops::reshape::call(&others, &input.sizes())?,
        };
        return ops::mul::call(&grad, &others);
    }
    // Reductions over the slice, keeping its dims so that they broadcast against `input`.
    let prod_slice = |t: &Tensor| match dim {
        Some(d) => ops::prod_dim_int::call(t, d, true, None),
        None => ops::prod::call(t, None),
    };
    let sum_slice = |t: &Tensor| match dim {
        Some(d) => ops::sum_dim_intlist::call(t, Some(&[d]), true, None),
        None => ops::sum::call(t, None),
    };
    let zero_f = cast_to(&is_zero, input.dtype())?;
    let safe = where_(&is_zero, &ones_like(input)?, input)?;
    let nonzero_prod = prod_slice(&safe)?;
    let zeros_only = where_(&is_zero, input, &zeros_like(input)?)?;
    let zeros_sum = sum_slice(&zeros_only)?;
    // Zeros of the slice other than element i.
    let others = ops::sub::call(&sum_slice(&zero_f)?, &zero_f, ONE)?;
    let one_other = ops::sub::call(&zeros_sum, &zeros_only, ONE)?;
    let z = where_(
        &ops::eq_scalar::call(&others, Scalar::Int(0))?,
        &ones_like(input)?,
        &where_(&ops::eq_scalar::call(&others, Scalar::Int(1))?, &one_other, &zeros_like(input)?)?,
    )?;
    let others_prod = ops::mul::call(&ops::div::call(&nonzero_prod, &safe)?, &z)?;
    ops::mul::call(&grad, &others_prod)
}

// ---------------------------------------------------------------------------------------------
// min / max over every element
// ---------------------------------------------------------------------------------------------

/// The gradient of `max(self)` / `min(self)`: shared evenly between the elements equal to the
/// result (the NaNs, when the result is NaN).
pub fn evenly_distribute_backward(grad: &Tensor, input: &Tensor, value: &Tensor) -> Result<Tensor> {
    let mask = if truth(&isnan(value)?)? { isnan(input)? } else { ops::eq::call(input, value)? };
    let mask = cast_to(&mask, grad.dtype())?;
    let count = ops::sum::call(&mask, None)?;
    ops::mul::call(&mask, &ops::div::call(grad, &count)?)
}

// ---------------------------------------------------------------------------------------------
// cumsum
// ---------------------------------------------------------------------------------------------

/// The gradient of `cumsum(dim)`: the reversed cumulative sum of `grad`, computed as
/// `sum(grad, dim) - cumsum(grad, dim) + grad` (one scan, where `flip` would copy twice).
pub fn cumsum_backward(grad: &Tensor, dim: i64) -> Result<Tensor> {
    if grad.dim() == 0 || grad.numel() <= 1 {
        return Ok(grad.clone());
    }
    let d = wrap_dim(dim, grad.dim())? as i64;
    if grad.size(d)? == 1 {
        return Ok(grad.clone());
    }
    let total = ops::sum_dim_intlist::call(grad, Some(&[d]), true, None)?;
    let running = ops::cumsum::call(grad, d, None)?;
    ops::add::call(&ops::sub::call(&total, &running, ONE)?, grad, ONE)
}

// ---------------------------------------------------------------------------------------------
// cumprod and logcumsumexp
// ---------------------------------------------------------------------------------------------

/// Where a slice of `x` along `d` holds its first zero, and where it holds no zero yet: the two
/// places where `cumprod`'s derivatives differ from the zero-free formula.
struct FirstZero {
    /// Before the first zero of the slice (inclusive running count of zeros is 0).
    before: Tensor,
    /// At the first zero.
    at: Tensor,
    /// `x` with each slice's first zero replaced by 1.
    patched: Tensor,
}

fn first_zero(x: &Tensor, d: i64) -> Result<Option<FirstZero>> {
    let is_zero = x.try_eq_scalar(0)?;
    if !truth(&ops::any::call(&is_zero)?)? {
        return Ok(None);
    }
    let count = ops::cumsum::call(&is_zero, d, Some(DType::I64))?;
    let before = count.try_eq_scalar(0)?;
    let at = is_zero.try_logical_and(&count.try_eq_scalar(1)?)?;
    let patched = x.try_masked_fill_scalar(&at, Scalar::Int(1))?;
    Ok(Some(FirstZero { before, at, patched }))
}

/// The gradient of `cumprod(x, dim)`: `grad_k = Σ_{j≥k} grad_j · Π_{i≤j, i≠k} x_i`. Before a
/// slice's first zero that is `revcumsum(grad · result) / x`; at the first zero the product
/// skips it, so it is `revcumsum(grad · cumprod(x with that zero set to 1))`; after it every
/// product holds the zero, so 0 (PyTorch's `cumprod_backward`, without its O(n²) fallback).
pub fn cumprod_backward(grad: &Tensor, x: &Tensor, dim: i64, result: &Tensor) -> Result<Tensor> {
    if x.dim() == 0 || x.numel() == 0 {
        return Ok(grad.clone());
    }
    let d = wrap_dim(dim, x.dim())? as i64;
    let result = cast_to(result, x.dtype())?;
    let spread = cumsum_backward(&grad.try_mul(&result)?, d)?;
    let Some(z) = first_zero(x, d)? else {
        return spread.try_div(x);
    };
    let n = x.sizes()[d as usize];
    if oxten_runtime::autograd::is_grad_enabled() && n <= EXCLUSIVE_PRODUCT_MAX {
        return cumprod_backward_exclusive(grad, x, d);
    }
    // Divide by 1 where the quotient is not used, so double backward sees no 0 · inf.
    let plain = spread.try_div(&x.try_masked_fill_scalar(&z.before.try_logical_not()?, Scalar::Int(1))?)?;
    let at_zero = cumsum_backward(&grad.try_mul(&ops::cumprod::call(&z.patched, d, None)?)?, d)?;
    let after = where_(&z.at, &at_zero, &zeros_like(&at_zero)?)?;
    where_(&z.before, &plain, &after)
}

/// `cumprod_backward` from every product `Π_{i≤j, i≠k} x_i` formed directly (`n²` per slice):
/// the zero branches above are constants in `x`, which is right for the gradient but not for
/// its own derivative, so a backward that is itself recorded (double backward) takes this path.
fn cumprod_backward_exclusive(grad: &Tensor, x: &Tensor, d: i64) -> Result<Tensor> {
    let n = x.sizes()[d as usize];
    let rows = ops::transpose::call(x, d, -1)?;
    let idx = ops::arange::call(Scalar::Int(n), Some(DType::I64), None, Some(x.device()), None)?;
    let col = ops::unsqueeze::call(&idx, 1)?;
    let eye = ops::eq::call(&col, &idx)?;
    let later = ops::ge::call(&idx, &col)?;
    let mut sizes = rows.sizes().to_vec();
    sizes.insert(sizes.len() - 1, n);
    let spread = ops::expand::call(&ops::unsqueeze::call(&rows, -2)?, &sizes, false)?;
    // [..., k, j]: the running product up to j without element k.
    let without_k = ops::cumprod::call(&where_(&eye, &ones_like(&spread)?, &spread)?, -1, None)?;
    let g = ops::unsqueeze::call(&ops::transpose::call(grad, d, -1)?, -2)?;
    let terms = without_k.try_mul(&g)?;
    let terms = where_(&later, &terms, &zeros_like(&terms)?)?;
    let summed = ops::sum_dim_intlist::call(&terms, Some(&[-1]), false, None)?;
    ops::transpose::call(&summed, d, -1)
}

/// The forward derivative of `cumprod(x, dim)` along tangent `t`: `result · cumsum(t / x)`
/// before a slice's first zero, and from it on `t_zero · cumprod(x with the zero set to 1)`
/// (every other term's product holds the zero).
pub fn cumprod_jvp(t: &Tensor, x: &Tensor, result: &Tensor, dim: i64) -> Result<Tensor> {
    if x.dim() == 0 || x.numel() == 0 {
        return Ok(t.clone());
    }
    let d = wrap_dim(dim, x.dim())? as i64;
    let Some(z) = first_zero(x, d)? else {
        return result.try_mul(&ops::cumsum::call(&t.try_div(x)?, d, None)?);
    };
    let safe_x = x.try_masked_fill_scalar(&z.before.try_logical_not()?, Scalar::Int(1))?;
    let ratio = where_(&z.before, &t.try_div(&safe_x)?, &zeros_like(t)?)?;
    let plain = result.try_mul(&ops::cumsum::call(&ratio, d, None)?)?;
    let t_zero = ops::sum_dim_intlist::call(&where_(&z.at, t, &zeros_like(t)?)?, Some(&[d]), true, None)?;
    let from_zero = t_zero.try_mul(&ops::cumprod::call(&z.patched, d, None)?)?;
    where_(&z.before, &plain, &from_zero)
}

/// The most negative finite value of a floating dtype: "log of zero" that stays finite.
fn lowest(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::MIN,
        DType::F16 => -65504.0,
        _ => f32::MIN as f64,
    }
}

/// The gradient of `logcumsumexp(x, dim)`: `grad_k = Σ_{j≥k} grad_j · exp(x_k - result_j)`,
/// summed in log space (a reversed `logcumsumexp`) separately for the positive and negative
/// parts of `grad`, so nothing overflows.
pub fn logcumsumexp_backward(grad: &Tensor, x: &Tensor, result: &Tensor, dim: i64) -> Result<Tensor> {
    if x.dim() == 0 || x.numel() == 0 {
        return Ok(grad.clone());
    }
    let d = wrap_dim(dim, x.dim())? as i64;
    let floor = ops::full_like::call(grad, Scalar::Float(lowest(grad.dtype())), None, None, None, None, None)?;
    let log_abs = grad.try_abs()?.try_log()?;
    let reversed_lcse = |t: &Tensor| -> Result<Tensor> {
        let flipped = ops::flip::call(t, &[d])?;
        ops::flip::call(&ops::logcumsumexp::call(&flipped, d)?, &[d])
    };
    let part = |sign: Tensor| -> Result<Tensor> {
        let log_part = where_(&sign, &log_abs, &floor)?;
        reversed_lcse(&log_part.try_sub(result)?)?.try_add(x)?.try_exp()
    };
    part(grad.try_gt_scalar(0)?)?.try_sub(&part(grad.try_lt_scalar(0)?)?)
}

/// The forward derivative of `logcumsumexp(x, dim)`: `cumsum(t · e) / cumsum(e)` with
/// `e = exp(x - max(x))` along `dim` (the softmax weights of each prefix).
pub fn logcumsumexp_jvp(x: &Tensor, t: &Tensor, dim: i64) -> Result<Tensor> {
    if x.dim() == 0 || x.numel() == 0 {
        return Ok(t.clone());
    }
    let d = wrap_dim(dim, x.dim())? as i64;
    let m = ops::amax::call(x, &[d], true)?;
    let m = m.try_masked_fill_scalar(&ops::isinf::call(&m)?, Scalar::Int(0))?;
    let e = x.try_sub(&m)?.try_exp()?;
    ops::cumsum::call(&t.try_mul(&e)?, d, None)?.try_div(&ops::cumsum::call(&e, d, None)?)
}

// ---------------------------------------------------------------------------------------------
// linalg_vector_norm
// ---------------------------------------------------------------------------------------------

/// The gradient of `linalg_vector_norm(self, ord, dim, keepdim)` (PyTorch's `norm_backward`):
///
/// - `ord = 0`: zero (the count of non-zeros is piecewise constant);
/// - `ord = 1`: `sgn(self) * grad`;
/// - `ord = 2`: `grad * self / norm` (0 where the norm is 0);
/// - `ord = ±inf`: `sgn(self) * grad` shared evenly between the elements whose `|x|` equals
///   the norm (or is NaN);
/// - other `p`: `grad * sgn(self) |self|^(p-1) / norm^(p-1)` (0 where the norm is 0; for
///   `p < 1`, written `… * norm^(1-p)` and 0 where `self` is 0).
pub fn linalg_vector_norm_backward(
    grad: &Tensor,
    self_: &Tensor,
    ord: Scalar,
    norm: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
) -> Result<Tensor> {
    let p = ord.to_f64();
    let ndim = self_.dim();
    let dims = if reduces_all(dim, ndim) { None } else { dim };
    let grad = restore_reduced_dims(grad, dims, keepdim, ndim)?;
    let norm = restore_reduced_dims(norm, dims, keepdim, ndim)?;
    let norm_is_zero = ops::eq_scalar::call(&norm, Scalar::Int(0))?;
    // `t` with zeros where the norm is 0.
    let mask_zero_norm = |t: Tensor| -> Result<Tensor> { where_(&norm_is_zero, &zeros_like(&t)?, &t) };
    if p == 0.0 {
        return zeros_like(self_);
    }
    if p == 1.0 {
        return ops::mul::call(&ops::sign::call(self_)?, &grad);
    }
    if p == 2.0 {
        return ops::mul::call(&grad, &mask_zero_norm(ops::div::call(self_, &norm)?)?);
    }
    if p.is_infinite() {
        let abs = ops::abs::call(self_)?;
        let hit = ops::eq::call(&abs, &norm)?;
        let nan = isnan(&abs)?;
        let mask = cast_to(&where_(&nan, &nan, &hit)?, grad.dtype())?;
        let shared = scale_grad_by_count(&grad, &mask, dims.unwrap_or(&[]))?;
        return ops::mul::call(&ops::sign::call(self_)?, &shared);
    }
    let abs = ops::abs::call(self_)?;
    if p < 1.0 {
        let pow = ops::pow_tensor_scalar::call(&abs, Scalar::Float(p - 1.0))?;
        let pow = where_(&ops::eq_scalar::call(self_, Scalar::Int(0))?, &zeros_like(&pow)?, &pow)?;
        let scaled = ops::mul::call(&ops::sign::call(self_)?, &pow)?;
        let norm_pow = ops::pow_tensor_scalar::call(&norm, Scalar::Float(1.0 - p))?;
        return ops::mul::call(&ops::mul::call(&scaled, &grad)?, &norm_pow);
    }
    let scaled = if p < 2.0 {
        ops::mul::call(&ops::sign::call(self_)?, &ops::pow_tensor_scalar::call(&abs, Scalar::Float(p - 1.0))?)?
    } else {
        ops::mul::call(self_, &ops::pow_tensor_scalar::call(&abs, Scalar::Float(p - 2.0))?)?
    };
    let scale = mask_zero_norm(ops::div::call(&grad, &ops::pow_tensor_scalar::call(&norm, Scalar::Float(p - 1.0))?)?)?;
    ops::mul::call(&scaled, &scale)
}
