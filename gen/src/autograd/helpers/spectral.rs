//! Formula helpers of the QR, symmetric eigen- and singular value decompositions: PyTorch's
//! formulas (`linalg_qr_backward`, `linalg_eig_backward`, `svd_backward` and their JVPs) for
//! real dtypes, derived in the comments (`<X, Y>` is the Frobenius product, `Kᵀ` the transpose
//! of the last two dimensions, `∘` the elementwise product). A file of their own, so that a
//! selective build keeping the matrix products does not keep the decompositions.

use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

fn mt(x: &Tensor) -> Result<Tensor> {
    ops::transpose::call(x, -2, -1)
}

fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::matmul::call(a, b)
}

fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::add::call(a, b, Scalar::Int(1))
}

fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::sub::call(a, b, Scalar::Int(1))
}

fn dim_from_end(x: &Tensor, from_end: usize) -> i64 {
    let s = x.sizes();
    s[s.len() - from_end]
}

/// Whether a gradient is all zeros (none flowed to that output): its terms are skipped, as
/// PyTorch skips an undefined gradient's, so that they bring no `0 / 0` from repeated values.
fn nothing_flowed(g: &Tensor) -> Result<bool> {
    if g.numel() == 0 {
        return Ok(true);
    }
    let any = ops::any::call(&ops::ne_scalar::call(g, Scalar::Int(0))?)?;
    Ok(!any.item::<bool>()?)
}

/// `X` with its diagonal replaced by `d` (a batch of vectors).
fn with_diagonal(x: &Tensor, d: &Tensor) -> Result<Tensor> {
    let off = sub(x, &ops::diag_embed::call(&ops::diagonal::call(x, 0, -2, -1)?, 0, -2, -1)?)?;
    add(&off, &ops::diag_embed::call(d, 0, -2, -1)?)
}

/// `E[i, j] = v[j] - v[i]`, its diagonal set to one (the entries it divides are zero there).
fn pairwise_differences(v: &Tensor) -> Result<Tensor> {
    let e = sub(&ops::unsqueeze::call(v, -2)?, &ops::unsqueeze::call(v, -1)?)?;
    let ones = ops::ones_like::call(v, None, None, None, None, None)?;
    with_diagonal(&e, &ones)
}

fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::div::call(a, b)
}

/// The QR mode strings' checks of differentiability, shared by the gradient and the tangent.
fn check_qr_differentiable(q: &Tensor, r: &Tensor, mode: &str) -> Result<()> {
    if mode == "r" {
        return Err(Error::runtime(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
        ));
    }
    if mode == "complete" && dim_from_end(q, 2) > dim_from_end(r, 1) {
        return Err(Error::runtime(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
        ));
    }
    Ok(())
}

/// The gradient of `linalg_qr`. For `m >= n` (`Q` `m x n`, `R` `n x n`): with `X = Qᵀ dA R⁻¹`,
/// the skew-symmetric `C = Qᵀ dQ` is `tril(X, -1) - tril(X, -1)ᵀ`, `dR = (X - C) R` and
/// `dQ = dA R⁻¹ - Q (X - C)`. With `M = gR Rᵀ - Qᵀ gQ`, `<gQ, dQ> + <gR, dR> =
/// <gQ R⁻ᵀ, dA> + <N, X>` for `N = triu(M) + triu(M, 1)ᵀ`, so `gA = (gQ + Q N) R⁻ᵀ`. A wide
/// matrix (`R = [R1 R2]`, `R2 = Qᵀ A2`) passes `gA2 = Q gR2` and adds `A2 gR2ᵀ` to `gQ`.
pub fn linalg_qr_backward(g_q: &Tensor, g_r: &Tensor, q: &Tensor, r: &Tensor, mode: &str) -> Result<Tensor> {
    check_qr_differentiable(q, r, mode)?;
    let (m, n) = (dim_from_end(q, 2), dim_from_end(r, 1));
    let square_case = |g_q: &Tensor, g_r: &Tensor, r: &Tensor| -> Result<Tensor> {
        let mm_ = sub(&mm(g_r, &mt(r)?)?, &mm(&mt(q)?, g_q)?)?;
        let n_ = add(&ops::triu::call(&mm_, 0)?, &mt(&ops::triu::call(&mm_, 1)?)?)?;
        let lhs = add(g_q, &mm(q, &n_)?)?;
        // (…) R⁻ᵀ: the right solve with the lower triangular Rᵀ.
        ops::linalg_solve_triangular::call(&mt(r)?, &lhs, false, false, false)
    };
    if m >= n {
        return square_case(g_q, g_r, r);
    }
    let part = |x: &Tensor, start: i64, len: i64| ops::narrow::call(x, -1, start, len);
    let (r1, g_r1, g_r2) = (part(r, 0, m)?, part(g_r, 0, m)?, part(g_r, m, n - m)?);
    let a2 = mm(q, &part(r, m, n - m)?)?;
    let g_q = add(g_q, &mm(&a2, &mt(&g_r2)?)?)?;
    let g_a1 = square_case(&g_q, &g_r1, &r1)?;
    ops::cat::call(&[g_a1, mm(q, &g_r2)?], -1)
}

/// The tangents of `linalg_qr`'s `Q` and `R` (see [`linalg_qr_backward`]); a wide matrix adds
/// `dR2 = dQᵀ A2 + Qᵀ dA2`.
pub fn linalg_qr_jvp(da: &Tensor, q: &Tensor, r: &Tensor, mode: &str) -> Result<(Tensor, Tensor)> {
    check_qr_differentiable(q, r, mode)?;
    let (m, n) = (dim_from_end(q, 2), dim_from_end(r, 1));
    let square_case = |da: &Tensor, r: &Tensor| -> Result<(Tensor, Tensor)> {
        // dA R⁻¹: the right solve with the upper triangular R.
        let da_rinv = ops::linalg_solve_triangular::call(r, da, true, false, false)?;
        let x = mm(&mt(q)?, &da_rinv)?;
        let low = ops::tril::call(&x, -1)?;
        let x_minus_c = add(&ops::triu::call(&x, 0)?, &mt(&low)?)?;
        let dq = sub(&da_rinv, &mm(q, &x_minus_c)?)?;
        let dr = mm(&x_minus_c, r)?;
        Ok((dq, dr))
    };
    if m >= n {
        return square_case(da, r);
    }
    let part = |x: &Tensor, start: i64, len: i64| ops::narrow::call(x, -1, start, len);
    let (dq, dr1) = square_case(&part(da, 0, m)?, &part(r, 0, m)?)?;
    let a2 = mm(q, &part(r, m, n - m)?)?;
    let dr2 = add(&mm(&mt(&dq)?, &a2)?, &mm(&mt(q)?, &part(da, m, n - m)?)?)?;
    Ok((dq, ops::cat::call(&[dr1, dr2], -1)?))
}

/// The gradient of `_linalg_eigh` (`A = V diag(L) Vᵀ`): from `dL = diag(Vᵀ dA V)` and
/// `dV = V (Vᵀ dA V / E)` (off the diagonal; `E[i, j] = L[j] - L[i]`),
/// `gA = V (diag(gL) + skew(Vᵀ gV) / E) Vᵀ` with `skew(K) = (K - Kᵀ) / 2`: PyTorch projects
/// `Vᵀ gV` onto the skew-symmetric matrices, which makes `gA` symmetric (the gradient with
/// respect to a symmetric `A`).
pub fn eigh_backward(g_l: &Tensor, g_v: &Tensor, l: &Tensor, v: &Tensor) -> Result<Tensor> {
    if v.numel() == 0 && l.numel() != 0 {
        return Err(Error::runtime(
            "linalg.eigh: the gradient needs the eigenvectors, which compute_v=False does not compute",
        ));
    }
    let inner = if nothing_flowed(g_v)? {
        ops::diag_embed::call(g_l, 0, -2, -1)?
    } else {
        let k = mm(&mt(v)?, g_v)?;
        let skew = ops::mul_scalar::call(&sub(&k, &mt(&k)?)?, Scalar::Float(0.5))?;
        with_diagonal(&div(&skew, &pairwise_differences(l)?)?, g_l)?
    };
    mm(v, &mm(&inner, &mt(v)?)?)
}

/// The tangents of `_linalg_eigh`'s eigenvalues and eigenvectors (see [`eigh_backward`]).
pub fn eigh_jvp(da: &Tensor, l: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
    if v.numel() == 0 && l.numel() != 0 {
        return Err(Error::runtime(
            "linalg.eigh: the tangent needs the eigenvectors, which compute_v=False does not compute",
        ));
    }
    let p = mm(&mt(v)?, &mm(da, v)?)?;
    let dl = ops::diagonal::call(&p, 0, -2, -1)?;
    let zeros = ops::zeros_like::call(&dl, None, None, None, None, None)?;
    let c = with_diagonal(&div(&p, &pairwise_differences(l)?)?, &zeros)?;
    Ok((ops::contiguous::call(&dl, oxten_runtime::MemoryFormat::Contiguous)?, mm(v, &c)?))
}

/// The first `k` columns of `U` and rows of `Vᴴ` (the thin factors) when the full ones were
/// computed.
fn thin_factors(u: &Tensor, vh: &Tensor, k: i64, full: bool) -> Result<(Tensor, Tensor)> {
    if full {
        Ok((ops::narrow::call(u, -1, 0, k)?, ops::narrow::call(vh, -2, 0, k)?))
    } else {
        Ok((u.clone(), vh.clone()))
    }
}

/// The gradient of `_linalg_svd` (`A = U S Vᵀ`, thin factors, `k = min(m, n)`). With
/// `dP = Uᵀ dA V`: `dS = diag(dP)`, `Uᵀ dU = (dP S + S dPᵀ) / E`, `Vᵀ dV = (S dP + dPᵀ S) / E`
/// (`E[i, j] = S[j]² - S[i]²`), `(I - U Uᵀ) dU = (I - U Uᵀ) dA V S⁻¹` and
/// `(I - V Vᵀ) dV = (I - V Vᵀ) dAᵀ U S⁻¹`; so
/// `gA = U [((J - Jᵀ) / E) S + S ((K - Kᵀ) / E) + diag(gS)] Vᵀ + (I - U Uᵀ) gU S⁻¹ Vᵀ
/// + U S⁻¹ gVᵀ (I - V Vᵀ)` with `J = Uᵀ gU`, `K = Vᵀ gV`. The full factors' extra columns do not
/// reach `A`'s gradient (PyTorch narrows them the same way).
pub fn svd_backward(
    g_u: &Tensor,
    g_s: &Tensor,
    g_vh: &Tensor,
    u: &Tensor,
    s: &Tensor,
    vh: &Tensor,
    full_matrices: bool,
) -> Result<Tensor> {
    if u.dim() < 2 || vh.dim() < 2 {
        return Err(Error::runtime(
            "linalg.svd: the gradient needs the singular vectors, which compute_uv=False does not compute",
        ));
    }
    let k = dim_from_end(s, 1);
    let (u, vh) = thin_factors(u, vh, k, full_matrices)?;
    let (g_u, g_vh) = thin_factors(g_u, g_vh, k, full_matrices)?;
    let (m, n) = (dim_from_end(&u, 2), dim_from_end(&vh, 1));
    let with_u = !nothing_flowed(&g_u)?;
    let with_v = !nothing_flowed(&g_vh)?;
    let v = mt(&vh)?;
    let s_mat = |x: &Tensor, left: bool| -> Result<Tensor> {
        // diag(S) X (left) or X diag(S).
        let s = if left { ops::unsqueeze::call(s, -1)? } else { ops::unsqueeze::call(s, -2)? };
        ops::mul::call(x, &s)
    };
    let mut inner = ops::diag_embed::call(g_s, 0, -2, -1)?;
    let e = if with_u || with_v { Some(pairwise_differences(&ops::mul::call(s, s)?)?) } else { None };
    if let (true, Some(e)) = (with_u, &e) {
        let j = mm(&mt(&u)?, &g_u)?;
        inner = add(&inner, &s_mat(&div(&sub(&j, &mt(&j)?)?, e)?, false)?)?;
    }
    if let (true, Some(e)) = (with_v, &e) {
        let kk = mm(&vh, &mt(&g_vh)?)?;
        inner = add(&inner, &s_mat(&div(&sub(&kk, &mt(&kk)?)?, e)?, true)?)?;
    }
    let mut ga = mm(&u, &mm(&inner, &vh)?)?;
    let s_inv = ops::reciprocal::call(s)?;
    if with_u && m > k {
        // (I - U Uᵀ) gU S⁻¹ Vᵀ
        let proj = sub(&g_u, &mm(&u, &mm(&mt(&u)?, &g_u)?)?)?;
        ga = add(&ga, &mm(&ops::mul::call(&proj, &ops::unsqueeze::call(&s_inv, -2)?)?, &vh)?)?;
    }
    if with_v && n > k {
        // U S⁻¹ gVᵀ (I - V Vᵀ), gVᵀ = gVh
        let proj = sub(&g_vh, &mm(&mm(&g_vh, &v)?, &vh)?)?;
        ga = add(&ga, &mm(&u, &ops::mul::call(&proj, &ops::unsqueeze::call(&s_inv, -1)?)?)?)?;
    }
    Ok(ga)
}

/// The tangents of `_linalg_svd`'s `U`, `S` and `Vᴴ` (see [`svd_backward`]); with the full
/// factors, their extra columns (rows of `Vᴴ`) get zero tangents, as PyTorch's.
pub fn svd_jvp(
    da: &Tensor,
    u: &Tensor,
    s: &Tensor,
    vh: &Tensor,
    full_matrices: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    if u.dim() < 2 || vh.dim() < 2 {
        return Err(Error::runtime(
            "linalg.svd: the tangent needs the singular vectors, which compute_uv=False does not compute",
        ));
    }
    let k = dim_from_end(s, 1);
    // The full factors' extra columns (rows of `Vᴴ`) are any orthonormal completion: PyTorch
    // gives them a zero tangent and the thin ones theirs.
    let (u_full, vh_full) = (u, vh);
    let (u, vh) = thin_factors(u_full, vh_full, k, full_matrices)?;
    let (u, vh) = (&u, &vh);
    let (m, n) = (dim_from_end(u, 2), dim_from_end(vh, 1));
    let v = mt(vh)?;
    let dp = mm(&mt(u)?, &mm(da, &v)?)?;
    let ds = ops::contiguous::call(&ops::diagonal::call(&dp, 0, -2, -1)?, oxten_runtime::MemoryFormat::Contiguous)?;
    let e = pairwise_differences(&ops::mul::call(s, s)?)?;
    let srow = ops::unsqueeze::call(s, -2)?;
    let scol = ops::unsqueeze::call(s, -1)?;
    let zeros = ops::zeros_like::call(&ds, None, None, None, None, None)?;
    // (dP S + S dPᵀ) / E and (S dP + dPᵀ S) / E, zero on the diagonal.
    let omega_u =
        with_diagonal(&div(&add(&ops::mul::call(&dp, &srow)?, &ops::mul::call(&mt(&dp)?, &scol)?)?, &e)?, &zeros)?;
    let omega_v =
        with_diagonal(&div(&add(&ops::mul::call(&dp, &scol)?, &ops::mul::call(&mt(&dp)?, &srow)?)?, &e)?, &zeros)?;
    let s_inv_row = ops::unsqueeze::call(&ops::reciprocal::call(s)?, -2)?;
    let mut du = mm(u, &omega_u)?;
    if m > k {
        let da_v = mm(da, &v)?;
        let proj = sub(&da_v, &mm(u, &mm(&mt(u)?, &da_v)?)?)?;
        du = add(&du, &ops::mul::call(&proj, &s_inv_row)?)?;
    }
    let mut dv = mm(&v, &omega_v)?;
    if n > k {
        let dat_u = mm(&mt(da)?, u)?;
        let proj = sub(&dat_u, &mm(&v, &mm(vh, &dat_u)?)?)?;
        dv = add(&dv, &ops::mul::call(&proj, &s_inv_row)?)?;
    }
    let mut dvh = mt(&dv)?;
    if full_matrices {
        let (mu, nv) = (dim_from_end(u_full, 1), dim_from_end(vh_full, 2));
        if mu > k {
            let zeros =
                ops::zeros_like::call(&ops::narrow::call(u_full, -1, k, mu - k)?, None, None, None, None, None)?;
            du = ops::cat::call(&[du, zeros], -1)?;
        }
        if nv > k {
            let zeros =
                ops::zeros_like::call(&ops::narrow::call(vh_full, -2, k, nv - k)?, None, None, None, None, None)?;
            dvh = ops::cat::call(&[dvh, zeros], -2)?;
        }
    }
    Ok((du, ds, dvh))
}

/// The gradient of the pseudo-inverse `X = A⁺` (of constant rank): from
/// `dX = -X dA X + X Xᵀ dAᵀ (I - A X) + (I - X A) dAᵀ Xᵀ X` (Golub and Pereyra),
/// `gA = -Xᵀ G Xᵀ + (I - A X) Gᵀ X Xᵀ + Xᵀ X Gᵀ (I - X A)`.
pub fn pinv_backward(grad: &Tensor, x: &Tensor, a: &Tensor) -> Result<Tensor> {
    let (xt, gt) = (mt(x)?, mt(grad)?);
    let first = ops::neg::call(&mm(&xt, &mm(grad, &xt)?)?)?;
    // (I - A X) Gᵀ X Xᵀ = M - A (X M) with M = Gᵀ X Xᵀ.
    let m = mm(&gt, &mm(x, &xt)?)?;
    let second = sub(&m, &mm(a, &mm(x, &m)?)?)?;
    // Xᵀ X Gᵀ (I - X A) = N - (N X) A with N = Xᵀ X Gᵀ.
    let n = mm(&mm(&xt, x)?, &gt)?;
    let third = sub(&n, &mm(&mm(&n, x)?, a)?)?;
    add(&add(&first, &second)?, &third)
}

/// The tangent of the pseudo-inverse `X = A⁺`: `-X dA X + X Xᵀ dAᵀ (I - A X) + (I - X A) dAᵀ Xᵀ X`.
pub fn pinv_jvp(a: &Tensor, x: &Tensor, da: &Tensor) -> Result<Tensor> {
    let (xt, dat) = (mt(x)?, mt(da)?);
    let first = ops::neg::call(&mm(x, &mm(da, x)?)?)?;
    // X Xᵀ dAᵀ (I - A X) = P - (P A) X with P = X Xᵀ dAᵀ.
    let p = mm(&mm(x, &xt)?, &dat)?;
    let second = sub(&p, &mm(&mm(&p, a)?, x)?)?;
    // (I - X A) dAᵀ Xᵀ X = Q - X (A Q) with Q = dAᵀ Xᵀ X.
    let q = mm(&dat, &mm(&xt, x)?)?;
    let third = sub(&q, &mm(x, &mm(a, &q)?)?)?;
    add(&add(&first, &second)?, &third)
}

/// `b` as a batch of matrices and whether it was a vector (one dimension less than `a`).
fn as_matrix(a: &Tensor, b: &Tensor) -> Result<(Tensor, bool)> {
    if b.dim() + 1 == a.dim() {
        Ok((ops::unsqueeze::call(b, -1)?, true))
    } else {
        Ok((b.clone(), false))
    }
}

/// The gradients of `linalg_lstsq`: through the solution `X = A⁺ B`, `gB = A⁺ᵀ gX` and `gA` the
/// gradient of `A⁺` for `gX Bᵀ` ([`pinv_backward`]); through the residuals
/// `res_j = ‖A x_j - b_j‖²` (reported only at a least-squares minimum, where their derivative in
/// `X` vanishes), `gA += 2 R diag(g_res) Xᵀ` and `gB -= 2 R diag(g_res)` with `R = A X - B`.
/// Each is summed back to its operand's batch shape.
pub fn lstsq_backward(
    grad: &Tensor,
    grad_residuals: &Tensor,
    a: &Tensor,
    b: &Tensor,
    solution: &Tensor,
    residuals: &Tensor,
    mask: [bool; 2],
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let (b2, vector) = as_matrix(a, b)?;
    let g = if vector { ops::unsqueeze::call(grad, -1)? } else { grad.clone() };
    let x = if vector { ops::unsqueeze::call(solution, -1)? } else { solution.clone() };
    let pinv = ops::linalg_pinv_atol_rtol_tensor::call(a, None, None, false)?;
    // 2 R diag(g_res), when the residuals were reported and a gradient reached them.
    let weighted = if residuals.numel() > 0 && !nothing_flowed(grad_residuals)? {
        let r = sub(&mm(a, &x)?, &b2)?;
        Some(ops::mul_scalar::call(
            &ops::mul::call(&r, &ops::unsqueeze::call(grad_residuals, -2)?)?,
            Scalar::Float(2.0),
        )?)
    } else {
        None
    };
    let ga = if mask[0] {
        let mut ga = pinv_backward(&mm(&g, &mt(&b2)?)?, &pinv, a)?;
        if let Some(w) = &weighted {
            ga = add(&ga, &mm(w, &mt(&x)?)?)?;
        }
        Some(reduce_to_shape(&ga, &a.sizes())?)
    } else {
        None
    };
    let gb = if mask[1] {
        let mut gb = mm(&mt(&pinv)?, &g)?;
        if let Some(w) = &weighted {
            gb = sub(&gb, w)?;
        }
        let gb = reduce_to_shape(&gb, &b2.sizes())?;
        Some(if vector { ops::squeeze_dim::call(&gb, -1)? } else { gb })
    } else {
        None
    };
    Ok((ga, gb))
}

/// The tangent of `linalg_lstsq`'s residuals: `d res_j = 2 r_jᵀ (dA x_j - db_j)` (`X` is a
/// minimum, so its own tangent does not contribute); empty when they are.
pub fn lstsq_residuals_jvp(
    a: &Tensor,
    b: &Tensor,
    da: &Tensor,
    db: &Tensor,
    solution: &Tensor,
    residuals: &Tensor,
) -> Result<Tensor> {
    if residuals.numel() == 0 {
        return Ok(residuals.clone());
    }
    let (b2, vector) = as_matrix(a, b)?;
    let db2 = if vector { ops::unsqueeze::call(db, -1)? } else { db.clone() };
    let x = if vector { ops::unsqueeze::call(solution, -1)? } else { solution.clone() };
    let r = sub(&mm(a, &x)?, &b2)?;
    let dr = sub(&mm(da, &x)?, &db2)?;
    let d = ops::sum_dim_intlist::call(&ops::mul::call(&r, &dr)?, Some(&[-2]), false, None)?;
    ops::mul_scalar::call(&d, Scalar::Float(2.0))
}

/// The tangent of `linalg_lstsq`'s solution: `dX = dA⁺ B + A⁺ dB` ([`pinv_jvp`]).
pub fn lstsq_solution_jvp(a: &Tensor, b: &Tensor, da: &Tensor, db: &Tensor) -> Result<Tensor> {
    let (b2, vector) = as_matrix(a, b)?;
    let db2 = if vector { ops::unsqueeze::call(db, -1)? } else { db.clone() };
    let pinv = ops::linalg_pinv_atol_rtol_tensor::call(a, None, None, false)?;
    let dx = add(&mm(&pinv_jvp(a, &pinv, da)?, &b2)?, &mm(&pinv, &db2)?)?;
    if vector {
        ops::squeeze_dim::call(&dx, -1)
    } else {
        Ok(dx)
    }
}

/// `x` summed over the leading dimensions that broadcasting added to reach `x`'s shape from
/// `shape` (and over those of size one there).
fn reduce_to_shape(x: &Tensor, shape: &[i64]) -> Result<Tensor> {
    if x.sizes()[..] == shape[..] {
        return Ok(x.clone());
    }
    ops::sum_to_size::call(x, shape)
}

/// `Π_{j≠i} s_j` for each `i` (over the last dimension), without dividing (a zero `s_i` is
/// fine): the product of a matrix of copies of `s` whose diagonal is one.
fn products_of_the_others(s: &Tensor) -> Result<Tensor> {
    let k = dim_from_end(s, 1);
    let mut shape = s.sizes().to_vec();
    shape.push(k);
    let rows = ops::expand::call(&ops::unsqueeze::call(s, -2)?, &shape, false)?;
    let ones = ops::ones_like::call(s, None, None, None, None, None)?;
    ops::prod_dim_int::call(&with_diagonal(&rows, &ones)?, -1, false, None)
}

/// The gradient of the determinant: `g det(A) A⁻ᵀ` (from the LU factors) where `A` is
/// invertible; where `det(A) = 0`, from `A = U S Vᵀ`: `det(A) = det(U) det(Vᵀ) Π s_i`, so
/// `gA = U diag(g det(U) det(Vᵀ) Π_{j≠i} s_j) Vᵀ` (the adjugate's transpose, which the inverse
/// cannot give).
pub fn linalg_det_backward(grad: &Tensor, det: &Tensor, a: &Tensor, lu: &Tensor, pivots: &Tensor) -> Result<Tensor> {
    let n = dim_from_end(a, 1);
    let scale = ops::mul::call(grad, det)?;
    let eye = ops::eye::call(n, Some(a.dtype()), None, Some(a.device()), None)?;
    let scaled_eye = ops::mul::call(&eye, &ops::unsqueeze::call(&ops::unsqueeze::call(&scale, -1)?, -1)?)?;
    // `A⁻ᵀ (c I)`: from the saved factors, or (when this backward is itself differentiated,
    // the factors being constants of the graph) by a solve with `A`.
    let solve = |a: &Tensor, lu: &Tensor| {
        if oxten_runtime::autograd::is_grad_enabled() {
            ops::linalg_solve::call(&mt(a)?, &scaled_eye, true)
        } else {
            ops::linalg_lu_solve::call(lu, pivots, &scaled_eye, true, true)
        }
    };
    let singular = ops::eq_scalar::call(det, Scalar::Int(0))?;
    if !ops::any::call(&singular)?.item::<bool>()? {
        return solve(a, lu);
    }
    // The SVD of the singular matrices only (the others replaced by the identity, whose result
    // `where` discards): a NaN elsewhere in the batch does not make it fail, and repeated
    // singular values of the others do not reach a second derivative.
    let eye_batch = ops::expand::call(&eye, &a.sizes(), false)?;
    let mask = ops::unsqueeze::call(&ops::unsqueeze::call(&singular, -1)?, -1)?;
    let (u, s, vh) = ops::linalg_svd::call(&ops::where_self::call(&mask, a, &eye_batch)?, false, None)?;
    let alpha = ops::mul::call(&ops::linalg_det::call(&u)?, &ops::linalg_det::call(&vh)?)?;
    let d = ops::mul::call(&products_of_the_others(&s)?, &ops::unsqueeze::call(&ops::mul::call(grad, &alpha)?, -1)?)?;
    let by_svd = mm(&ops::mul::call(&u, &ops::unsqueeze::call(&d, -2)?)?, &vh)?;
    // The inverse route on the invertible matrices only (the singular ones replaced by the
    // identity, whose result is discarded, so that no infinity reaches a gradient).
    let (safe_a, safe_lu) =
        (ops::where_self::call(&mask, &eye_batch, a)?, ops::where_self::call(&mask, &eye_batch, lu)?);
    let by_inverse = solve(&safe_a, &safe_lu)?;
    ops::where_self::call(&mask, &by_svd, &by_inverse)
}

/// The tangent of the determinant: `<G, dA>` for `G` its gradient at `g = 1` (`det(A) tr(A⁻¹ dA)`
/// for an invertible `A`).
pub fn linalg_det_jvp(a: &Tensor, da: &Tensor, det: &Tensor, lu: &Tensor, pivots: &Tensor) -> Result<Tensor> {
    let ones = ops::ones_like::call(det, None, None, None, None, None)?;
    let g = linalg_det_backward(&ones, det, a, lu, pivots)?;
    ops::sum_dim_intlist::call(&ops::mul::call(&g, da)?, Some(&[-2, -1]), false, None)
}
