//! Cases for the reductions beyond sum and mean: var/std (and their `_mean` forms), prod (with zeros),
//! min.dim, min/max of every element, cumsum and linalg_vector_norm.

use super::{case, fresh, leaf, Case, Rng};
use oxten::options::*;
use oxten::{Scalar, Tensor};

/// A leaf with the given values.
fn given(values: &[f64], shape: &[i64]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).unwrap().requires_grad_(true)
}

/// A case whose function returns several outputs (all checked).
fn multi(
    op: &'static str,
    what: &'static str,
    inputs: Vec<Tensor>,
    f: impl Fn(&[Tensor]) -> oxten::Result<Vec<Tensor>> + 'static,
) -> Case {
    Case { f: Box::new(f), ..case(op, what, inputs, |x| Ok(x[0].clone())) }
}

fn var_opts(dim: Option<&[i64]>, correction: Option<Scalar>, keepdim: bool) -> VarCorrectionOpts<'_> {
    VarCorrectionOpts { dim, correction, keepdim }
}

fn std_opts(dim: Option<&[i64]>, correction: Option<Scalar>, keepdim: bool) -> StdCorrectionOpts<'_> {
    StdCorrectionOpts { dim, correction, keepdim }
}

fn norm_opts(ord: f64, dim: Option<&[i64]>, keepdim: bool) -> LinalgVectorNormOpts<'_> {
    LinalgVectorNormOpts { ord: Scalar::Float(ord), dim, keepdim, dtype: None }
}

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    // cumprod rows with no zero, one zero, and two zeros (the second one's gradient is 0).
    let with_zeros = || leaf(vec![1.5, -0.8, 1.2, 0.6, 1.1, 0.0, -1.4, 0.9, 0.0, 0.7, 0.0, 1.3], &[3, 4]);
    vec![
        // ---- var / std ----
        case("var.correction", "all dims", vec![r.any(&[2, 3])], |x| x[0].try_var_correction()),
        case("var.correction", "dim 1", vec![r.any(&[3, 4])], |x| {
            x[0].try_var_correction_with(var_opts(Some(&[1]), None, false))
        }),
        case("var.correction", "dims (0, -1), keepdim, correction 0", vec![r.any(&[2, 3, 2])], |x| {
            x[0].try_var_correction_with(var_opts(Some(&[0, -1]), Some(Scalar::Int(0)), true))
        }),
        case("var.correction", "transposed, correction 2.5", vec![r.transposed(&[4, 3])], |x| {
            x[0].try_var_correction_with(var_opts(Some(&[0]), Some(Scalar::Float(2.5)), false))
        }),
        case("var.correction", "empty dim list (every dim)", vec![r.any(&[2, 3])], |x| {
            x[0].try_var_correction_with(var_opts(Some(&[]), None, false))
        }),
        case("std.correction", "all dims", vec![r.any(&[2, 3])], |x| x[0].try_std_correction()),
        case("std.correction", "dim 0, keepdim", vec![r.transposed(&[3, 4])], |x| {
            x[0].try_std_correction_with(std_opts(Some(&[0]), None, true))
        }),
        case("std.correction", "dim -1, correction 0", vec![r.any(&[2, 5])], |x| {
            x[0].try_std_correction_with(std_opts(Some(&[-1]), Some(Scalar::Int(0)), false))
        }),
        multi("var_mean.correction", "both outputs, dim 1", vec![r.any(&[3, 4])], |x| {
            let (v, m) = oxten::try_var_mean_correction_with(
                &x[0],
                VarMeanCorrectionOpts { dim: Some(&[1]), correction: None, keepdim: false },
            )?;
            Ok(vec![v, m])
        }),
        multi("var_mean.correction", "both outputs, every dim, keepdim", vec![r.any(&[2, 3])], |x| {
            let (v, m) = oxten::try_var_mean_correction_with(
                &x[0],
                VarMeanCorrectionOpts { dim: None, correction: Some(Scalar::Int(0)), keepdim: true },
            )?;
            Ok(vec![v, m])
        }),
        multi("std_mean.correction", "both outputs, dim 0", vec![r.transposed(&[3, 4])], |x| {
            let (s, m) = oxten::try_std_mean_correction_with(
                &x[0],
                StdMeanCorrectionOpts { dim: Some(&[0]), correction: None, keepdim: false },
            )?;
            Ok(vec![s, m])
        }),
        case(
            "std_mean.correction",
            "mean only",
            vec![r.any(&[2, 3])],
            |x| Ok(oxten::try_std_mean_correction(&x[0])?.1),
        ),
        // ---- prod ----
        case("prod", "no zeros", vec![r.away_from_zero(&[2, 3])], |x| x[0].try_prod()),
        case("prod", "one zero", vec![given(&[0.7, -1.3, 0.0, 1.1, 0.9], &[5])], |x| x[0].try_prod()),
        case("prod", "two zeros", vec![given(&[0.0, -1.3, 0.8, 0.0, 1.2], &[5])], |x| x[0].try_prod()),
        case("prod", "three zeros", vec![given(&[0.0, 1.5, 0.0, 0.0], &[2, 2])], |x| x[0].try_prod()),
        case("prod.dim_int", "dim 1, no zeros", vec![r.away_from_zero(&[3, 4])], |x| x[0].try_prod_dim_int(1)),
        case("prod.dim_int", "dim 0, keepdim, transposed", vec![r.transposed(&[3, 2])], |x| {
            x[0].try_prod_dim_int_with(0, ProdDimIntOpts { keepdim: true, dtype: None })
        }),
        case(
            "prod.dim_int",
            "dim 1: a slice with one zero, one with two, one with none",
            vec![given(&[0.5, 0.0, 1.5, -0.8, 0.0, 1.1, 0.0, 0.6, 0.7, -1.2, 0.9, 1.3], &[3, 4])],
            |x| x[0].try_prod_dim_int(1),
        ),
        case("prod.dim_int", "dim -1 of a 1-d tensor with a zero", vec![given(&[1.2, 0.0, -0.7], &[3])], |x| {
            x[0].try_prod_dim_int(-1)
        }),
        // ---- min / max ----
        Case {
            f: Box::new(|x| {
                let (values, indices) = x[0].try_min_dim(1, false)?;
                Ok(vec![values, indices])
            }),
            ..case(
                "min.dim",
                "values (indices are not differentiable)",
                vec![r.distinct(&[3, 4])],
                |x| Ok(x[0].clone()),
            )
        },
        case(
            "min.dim",
            "keepdim, transposed",
            vec![r.distinct(&[3, 4]).try_t().unwrap().detach().requires_grad_(true)],
            |x| Ok(x[0].try_min_dim(0, true)?.0),
        ),
        case("min", "", vec![r.distinct(&[3, 4])], |x| x[0].try_min()),
        Case {
            // At a two-way tie the central difference is the mean of the one-sided slopes, which is
            // the evenly shared gradient; the second derivative jumps there, so only gradcheck.
            gradgrad: false,
            ..case("min", "tie (shared evenly)", vec![given(&[0.5, -1.0, 2.0, -1.0], &[4])], |x| x[0].try_min())
        },
        case("max", "", vec![r.transposed(&[3, 4])], |x| x[0].try_max()),
        // ---- cumsum ----
        case("cumsum", "dim 1", vec![r.any(&[3, 4])], |x| x[0].try_cumsum(1)),
        case("cumsum", "dim 0, transposed", vec![r.transposed(&[4, 3])], |x| x[0].try_cumsum(0)),
        case("cumsum", "dim -1 of 1-d", vec![r.any(&[5])], |x| x[0].try_cumsum(-1)),
        case("cumsum", "in-place", vec![r.any(&[2, 3])], |x| fresh(&x[0])?.try_cumsum_(0)),
        // ---- cumprod and logcumsumexp: zeros take cumprod's other branches ----
        case("cumprod", "dim 1", vec![r.any(&[3, 4])], |x| x[0].try_cumprod(1)),
        case("cumprod", "zeros, dim 1", vec![with_zeros()], |x| x[0].try_cumprod(1)),
        case("cumprod", "zeros, dim 0", vec![with_zeros()], |x| x[0].try_cumprod(0)),
        case("cumprod", "in-place, transposed", vec![r.transposed(&[4, 3])], |x| fresh(&x[0])?.try_cumprod_(0)),
        case("logcumsumexp", "dim 1", vec![r.any(&[3, 4])], |x| x[0].try_logcumsumexp(1)),
        case("logcumsumexp", "dim 0, transposed", vec![r.transposed(&[4, 3])], |x| x[0].try_logcumsumexp(0)),
        // ---- linalg_vector_norm ----
        case("linalg_vector_norm", "ord 2, every dim", vec![r.any(&[2, 3])], |x| oxten::try_linalg_vector_norm(&x[0])),
        case("linalg_vector_norm", "ord 2, dim 1, keepdim", vec![r.transposed(&[3, 4])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(2.0, Some(&[1]), true))
        }),
        case("linalg_vector_norm", "ord 1, dim 0", vec![r.away_from_zero(&[3, 4])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(1.0, Some(&[0]), false))
        }),
        case("linalg_vector_norm", "ord inf, dim -1", vec![r.distinct(&[3, 4])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(f64::INFINITY, Some(&[-1]), false))
        }),
        case("linalg_vector_norm", "ord -inf, every dim", vec![r.away_from_zero(&[2, 3])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(f64::NEG_INFINITY, None, false))
        }),
        case("linalg_vector_norm", "ord 3, dims (0, 1)", vec![r.away_from_zero(&[2, 3, 2])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(3.0, Some(&[0, 1]), false))
        }),
        case("linalg_vector_norm", "ord 1.5", vec![r.away_from_zero(&[5])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(1.5, None, false))
        }),
        case("linalg_vector_norm", "ord 0.5, dim 1", vec![r.away_from_zero(&[2, 4])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(0.5, Some(&[1]), false))
        }),
        case("linalg_vector_norm", "ord -1.5", vec![r.away_from_zero(&[4])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(-1.5, None, false))
        }),
        case("linalg_vector_norm", "ord 0 (zero gradient)", vec![r.away_from_zero(&[4])], |x| {
            oxten::try_linalg_vector_norm_with(&x[0], norm_opts(0.0, None, false))
        }),
        case("linalg_vector_norm", "through norm.ScalarOpt_dim", vec![r.any(&[3, 2])], |x| {
            x[0].try_norm_scalaropt_dim(None, &[0])
        }),
        case("linalg_vector_norm", "through norm.Scalar, p 3", vec![r.away_from_zero(&[3, 2])], |x| {
            x[0].try_norm_scalar_with(NormScalarOpts { p: Scalar::Int(3) })
        }),
    ]
}
