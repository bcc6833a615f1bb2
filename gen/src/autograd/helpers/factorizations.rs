//! Formula helpers of the LU and Cholesky factorizations and the triangular solves: PyTorch's
//! formulas, derived in the comments (`<X, Y>` is the Frobenius product, `Kᵀ` the transpose of
//! the last two dimensions; real dtypes only, so PyTorch's `ᴴ` is `ᵀ`). A file of their own, so
//! that a selective build keeping the matrix products does not keep the factorizations.

use oxten_runtime::{ops, Result, Scalar, Tensor};

/// The transpose of the last two dimensions.
fn mt(x: &Tensor) -> Result<Tensor> {
    ops::transpose::call(x, -2, -1)
}

fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::matmul::call(a, b)
}

/// `linalg_solve_triangular(a, b, upper, left, unitriangular)`.
fn solve_tri(a: &Tensor, b: &Tensor, upper: bool, left: bool, unit: bool) -> Result<Tensor> {
    ops::linalg_solve_triangular::call(a, b, upper, left, unit)
}

/// The part of `x` a triangular solve reads: its upper (or lower) triangle, without the diagonal
/// when it is taken to be ones.
fn triangle(x: &Tensor, upper: bool, unit: bool) -> Result<Tensor> {
    if upper {
        ops::triu::call(x, unit as i64)
    } else {
        ops::tril::call(x, -(unit as i64))
    }
}

/// Columns (`dim = -1`) or rows (`-2`) `start .. start + len` of a batch of matrices.
fn part(x: &Tensor, dim: i64, start: i64, len: i64) -> Result<Tensor> {
    ops::narrow::call(x, dim, start, len)
}

/// The gradient of `linalg_lu_factor_ex`'s packed factors `LU` (`A = P L U`, `L` unit lower
/// `m x k`, `U` upper `k x n`), from `grad`, the gradient of `LU`: its strictly lower part is
/// `L`'s, its upper part `U`'s. With `dK = L⁻¹ Pᵀ dA U⁻¹` (square case), `dL = L tril(dK, -1)`
/// and `dU = triu(dK) U`, so `<gL, dL> + <gU, dU> = <R, dK>` for
/// `R = tril(Lᵀ gL, -1) + triu(gU Uᵀ)`, and `gA = P L⁻ᵀ R U⁻ᵀ`. A wide matrix (`U = [U1 U2]`)
/// adds `dU2 = L⁻¹ Pᵀ dA2 - tril(dK, -1) U2`; a tall one (`L = [L1; L2]`) adds
/// `dL2 = dB2 U⁻¹ - L2 triu(dK)` with `dB = Pᵀ dA`.
pub fn lu_factor_ex_backward(grad: &Tensor, lu: &Tensor, pivots: &Tensor, pivot: bool) -> Result<Tensor> {
    let (p, l, u) = ops::lu_unpack::call(lu, pivots, true, pivot)?;
    let sizes = lu.sizes();
    let (m, n) = (sizes[sizes.len() - 2], sizes[sizes.len() - 1]);
    let k = m.min(n);
    let g_l = ops::tril::call(&part(grad, -1, 0, k)?, -1)?;
    let g_u = ops::triu::call(&part(grad, -2, 0, k)?, 0)?;
    let ga = if m == n {
        let r = ops::add::call(
            &ops::tril::call(&mm(&mt(&l)?, &g_l)?, -1)?,
            &ops::triu::call(&mm(&g_u, &mt(&u)?)?, 0)?,
            Scalar::Int(1),
        )?;
        let r = solve_tri(&mt(&u)?, &r, false, false, false)?;
        solve_tri(&mt(&l)?, &r, true, true, true)?
    } else if m < n {
        let (u1, u2) = (part(&u, -1, 0, k)?, part(&u, -1, k, n - k)?);
        let (g_u1, g_u2) = (part(&g_u, -1, 0, k)?, part(&g_u, -1, k, n - k)?);
        let lower = ops::sub::call(&mm(&mt(&l)?, &g_l)?, &mm(&g_u2, &mt(&u2)?)?, Scalar::Int(1))?;
        let r = ops::add::call(
            &ops::tril::call(&lower, -1)?,
            &ops::triu::call(&mm(&g_u1, &mt(&u1)?)?, 0)?,
            Scalar::Int(1),
        )?;
        let g1 = solve_tri(&mt(&u1)?, &r, false, false, false)?;
        solve_tri(&mt(&l)?, &ops::cat::call(&[g1, g_u2], -1)?, true, true, true)?
    } else {
        let (l1, l2) = (part(&l, -2, 0, k)?, part(&l, -2, k, m - k)?);
        let (g_l1, g_l2) = (part(&g_l, -2, 0, k)?, part(&g_l, -2, k, m - k)?);
        let upper = ops::sub::call(&mm(&g_u, &mt(&u)?)?, &mm(&mt(&l2)?, &g_l2)?, Scalar::Int(1))?;
        let r = ops::add::call(
            &ops::tril::call(&mm(&mt(&l1)?, &g_l1)?, -1)?,
            &ops::triu::call(&upper, 0)?,
            Scalar::Int(1),
        )?;
        let g1 = solve_tri(&mt(&l1)?, &r, true, true, true)?;
        solve_tri(&mt(&u)?, &ops::cat::call(&[g1, g_l2], -2)?, false, false, false)?
    };
    if pivot {
        mm(&p, &ga)
    } else {
        Ok(ga)
    }
}

/// The tangent of `linalg_lu_factor_ex`'s `LU` for the tangent `da` of `A` (see
/// [`lu_factor_ex_backward`] for `dK`, `dL`, `dU`): `dLU = dL + dU`, packed as `LU` is.
pub fn lu_factor_ex_jvp(da: &Tensor, lu: &Tensor, pivots: &Tensor, pivot: bool) -> Result<Tensor> {
    let (p, l, u) = ops::lu_unpack::call(lu, pivots, true, pivot)?;
    let sizes = lu.sizes();
    let (m, n) = (sizes[sizes.len() - 2], sizes[sizes.len() - 1]);
    let k = m.min(n);
    let db = if pivot { mm(&mt(&p)?, da)? } else { da.clone() };
    let add = |a: &Tensor, b: &Tensor| ops::add::call(a, b, Scalar::Int(1));
    let sub = |a: &Tensor, b: &Tensor| ops::sub::call(a, b, Scalar::Int(1));
    if m == n {
        let dk = solve_tri(&u, &solve_tri(&l, &db, false, true, true)?, true, false, false)?;
        return add(&mm(&l, &ops::tril::call(&dk, -1)?)?, &mm(&ops::triu::call(&dk, 0)?, &u)?);
    }
    if m < n {
        let (u1, u2) = (part(&u, -1, 0, k)?, part(&u, -1, k, n - k)?);
        let linv_db = solve_tri(&l, &db, false, true, true)?;
        let dk = solve_tri(&u1, &part(&linv_db, -1, 0, k)?, true, false, false)?;
        let dk_l = ops::tril::call(&dk, -1)?;
        let d1 = add(&mm(&l, &dk_l)?, &mm(&ops::triu::call(&dk, 0)?, &u1)?)?;
        let d2 = sub(&part(&linv_db, -1, k, n - k)?, &mm(&dk_l, &u2)?)?;
        return ops::cat::call(&[d1, d2], -1);
    }
    let (l1, l2) = (part(&l, -2, 0, k)?, part(&l, -2, k, m - k)?);
    let (db1, db2) = (part(&db, -2, 0, k)?, part(&db, -2, k, m - k)?);
    let dk = solve_tri(&u, &solve_tri(&l1, &db1, false, true, true)?, true, false, false)?;
    let dk_u = ops::triu::call(&dk, 0)?;
    let d1 = add(&mm(&l1, &ops::tril::call(&dk, -1)?)?, &mm(&dk_u, &u)?)?;
    let d2 = sub(&solve_tri(&u, &db2, true, false, false)?, &mm(&l2, &dk_u)?)?;
    ops::cat::call(&[d1, d2], -2)
}

/// The gradients of `linalg_solve_triangular(A, B)` for `X = A⁻¹ B` (`left`) or `B A⁻¹`:
/// `gB = A⁻ᵀ gX` (or `gX A⁻ᵀ`) and `gA = -gB Xᵀ` (or `-Xᵀ gB`) restricted to the triangle
/// the solve reads.
pub fn solve_triangular_backward(
    grad: &Tensor,
    a: &Tensor,
    x: &Tensor,
    upper: bool,
    left: bool,
    unit: bool,
    mask: [bool; 2],
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let gb = solve_tri(&mt(a)?, grad, !upper, left, unit)?;
    let ga = if mask[0] {
        let g = if left { mm(&gb, &mt(x)?)? } else { mm(&mt(x)?, &gb)? };
        Some(triangle(&ops::neg::call(&g)?, upper, unit)?)
    } else {
        None
    };
    Ok((ga, mask[1].then_some(gb)))
}

/// The tangent of `X = A⁻¹ B` (`left`) or `B A⁻¹`: `A⁻¹ (dB - dA X)` or `(dB - X dA) A⁻¹`, with
/// `dA` restricted to the triangle the solve reads.
pub fn solve_triangular_jvp(
    a: &Tensor,
    da: &Tensor,
    db: &Tensor,
    x: &Tensor,
    upper: bool,
    left: bool,
    unit: bool,
) -> Result<Tensor> {
    let da = triangle(da, upper, unit)?;
    let rhs = if left { mm(&da, x)? } else { mm(x, &da)? };
    solve_tri(a, &ops::sub::call(db, &rhs, Scalar::Int(1))?, upper, left, unit)
}

/// The lower factor of `A = L Lᵀ` and its gradient, whichever factor the operator returned.
fn lower_factor(l: &Tensor, g: &Tensor, upper: bool) -> Result<(Tensor, Tensor)> {
    if upper {
        Ok((mt(l)?, mt(g)?))
    } else {
        Ok((l.clone(), g.clone()))
    }
}

/// `Φ(X)`: the lower triangle of `X` with its diagonal halved.
fn phi(x: &Tensor) -> Result<Tensor> {
    let half_diagonal = ops::diag_embed::call(
        &ops::mul_scalar::call(&ops::diagonal::call(x, 0, -2, -1)?, Scalar::Float(0.5))?,
        0,
        -2,
        -1,
    )?;
    ops::sub::call(&ops::tril::call(x, 0)?, &half_diagonal, Scalar::Int(1))
}

/// The gradient of `linalg_cholesky_ex`'s factor: `A = L Lᵀ` gives `L⁻¹ dA L⁻ᵀ = X + Xᵀ` for
/// the lower triangular `X = L⁻¹ dL`, so `dL = L Φ(L⁻¹ dA L⁻ᵀ)` and
/// `gA = L⁻ᵀ Φ(Lᵀ gL) L⁻¹`, returned symmetrized (`(gA + gAᵀ) / 2`) as PyTorch does: the input
/// is taken to be symmetric.
pub fn cholesky_backward(grad: &Tensor, upper: bool, factor: &Tensor) -> Result<Tensor> {
    let (l, gl) = lower_factor(factor, grad, upper)?;
    let m = ops::tril::call(&mm(&mt(&l)?, &gl)?, 0)?;
    // (Φ(M) + Φ(M)ᵀ) / 2 = (M + tril(M, -1)ᵀ) / 2.
    let sym = ops::mul_scalar::call(
        &ops::add::call(&m, &mt(&ops::tril::call(&m, -1)?)?, Scalar::Int(1))?,
        Scalar::Float(0.5),
    )?;
    let g = solve_tri(&mt(&l)?, &sym, true, true, false)?;
    solve_tri(&l, &g, false, false, false)
}

/// The tangent of `linalg_cholesky_ex`'s factor: `dL = L Φ(L⁻¹ dA L⁻ᵀ)` (transposed for the
/// upper factor).
pub fn cholesky_jvp(da: &Tensor, factor: &Tensor, upper: bool) -> Result<Tensor> {
    let l = if upper { mt(factor)? } else { factor.clone() };
    let s = solve_tri(&mt(&l)?, &solve_tri(&l, da, false, true, false)?, true, false, false)?;
    let dl = mm(&l, &phi(&s)?)?;
    if upper {
        mt(&dl)
    } else {
        Ok(dl)
    }
}

/// `dA` of `A = L Lᵀ` (`Uᵀ U` when `upper`) for the factor's tangent `df`.
fn cholesky_product_tangent(f: &Tensor, df: &Tensor, upper: bool) -> Result<Tensor> {
    let k = if upper { mm(&mt(df)?, f)? } else { mm(df, &mt(f)?)? };
    ops::add::call(&k, &mt(&k)?, Scalar::Int(1))
}

/// The gradient of a factor `f` from `S`, the symmetric gradient of `A` = `L Lᵀ` (or `Uᵀ U`):
/// `-S L` (or `-U S`) with the sign folded in by the callers.
fn cholesky_factor_grad(s: &Tensor, f: &Tensor, upper: bool) -> Result<Tensor> {
    if upper {
        mm(f, s)
    } else {
        mm(s, f)
    }
}

/// The gradients of `cholesky_solve(B, F)`, `X = A⁻¹ B` with `A = L Lᵀ` (or `Uᵀ U`):
/// `gB = A⁻¹ gX` and, with `M = gB Xᵀ`, `gL = -(M + Mᵀ) L` (`gU = -U (M + Mᵀ)`), PyTorch's
/// gradient over the whole factor.
pub fn cholesky_solve_backward(
    grad: &Tensor,
    _b: &Tensor,
    f: &Tensor,
    x: &Tensor,
    upper: bool,
    mask: [bool; 2],
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let gb = ops::cholesky_solve::call(grad, f, upper)?;
    let gf = if mask[1] {
        let m = mm(&gb, &mt(x)?)?;
        let s = ops::add::call(&m, &mt(&m)?, Scalar::Int(1))?;
        Some(ops::neg::call(&cholesky_factor_grad(&s, f, upper)?)?)
    } else {
        None
    };
    Ok((mask[0].then_some(gb), gf))
}

/// The tangent of `cholesky_solve`: `A⁻¹ (dB - dA X)`.
pub fn cholesky_solve_jvp(x: &Tensor, f: &Tensor, df: &Tensor, db: &Tensor, upper: bool) -> Result<Tensor> {
    let da = cholesky_product_tangent(f, df, upper)?;
    ops::cholesky_solve::call(&ops::sub::call(db, &mm(&da, x)?, Scalar::Int(1))?, f, upper)
}

/// The gradient of `cholesky_inverse(F)`, `R = A⁻¹`: `dR = -R dA R`, so the gradient of `A` is
/// `-R gR R` and, through `A = L Lᵀ`, `gL = -R (gR + gRᵀ) R L` (`gU = -U R (gR + gRᵀ) R`).
pub fn cholesky_inverse_backward(grad: &Tensor, f: &Tensor, upper: bool, r: &Tensor) -> Result<Tensor> {
    let s = mm(r, &mm(&ops::add::call(grad, &mt(grad)?, Scalar::Int(1))?, r)?)?;
    ops::neg::call(&cholesky_factor_grad(&s, f, upper)?)
}

/// The tangent of `cholesky_inverse`: `-R dA R`.
pub fn cholesky_inverse_jvp(f: &Tensor, df: &Tensor, r: &Tensor, upper: bool) -> Result<Tensor> {
    let da = cholesky_product_tangent(f, df, upper)?;
    ops::neg::call(&mm(r, &mm(&da, r)?)?)
}
