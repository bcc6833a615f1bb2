//! Every derivatives.yaml entry is checked against finite differences: `gradcheck` (slow and fast
//! mode) and `gradgradcheck`, on seeded random float64 inputs, including broadcasting and
//! non-contiguous (transposed) inputs and the in-place variants. The table of cases must cover
//! every entry the generator exports in `oxten::autograd::DERIVATIVES`, so a new formula without
//! a case fails `every_entry_has_a_case`.

use oxten::autograd::{gradcheck, gradgradcheck, GradcheckOpts, DERIVATIVES};
use oxten::options::*;
use oxten::{DType, MemoryFormat, Result, Scalar, Tensor};
use std::cell::Cell;

/// SplitMix64, so inputs are the same on every run.
struct Rng(Cell<u64>);

impl Rng {
    fn next(&self) -> f64 {
        let s = self.0.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.0.set(s);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn values(&self, n: usize, f: impl Fn(f64) -> f64) -> Vec<f64> {
        (0..n).map(|_| f(self.next())).collect()
    }
}

fn numel(shape: &[i64]) -> usize {
    shape.iter().product::<i64>() as usize
}

fn leaf(values: Vec<f64>, shape: &[i64]) -> Tensor {
    Tensor::from_vec(values, shape).unwrap().requires_grad_(true)
}

/// Inputs of a case: the kinds of values formulas need.
impl Rng {
    /// Uniform in [-2, 2).
    fn any(&self, shape: &[i64]) -> Tensor {
        leaf(self.values(numel(shape), |u| 4.0 * u - 2.0), shape)
    }
    /// Uniform in [0.5, 2): for log, sqrt, rsqrt, pow, division.
    fn pos(&self, shape: &[i64]) -> Tensor {
        leaf(self.values(numel(shape), |u| 0.5 + 1.5 * u), shape)
    }
    /// Magnitude in [0.2, 1.2) with a random sign: away from the kinks of abs, relu, sgn.
    fn away_from_zero(&self, shape: &[i64]) -> Tensor {
        let v: Vec<f64> = (0..numel(shape))
            .map(|_| {
                let m = 0.2 + self.next();
                if self.next() < 0.5 {
                    -m
                } else {
                    m
                }
            })
            .collect();
        leaf(v, shape)
    }
    /// Distinct values (a shuffled, scaled 0..n): reductions that select have a unique answer.
    fn distinct(&self, shape: &[i64]) -> Tensor {
        let n = numel(shape);
        let mut v: Vec<f64> = (0..n).map(|i| i as f64 * 0.37 - 1.0).collect();
        for i in (1..n).rev() {
            let j = (self.next() * (i + 1) as f64) as usize;
            v.swap(i, j.min(i));
        }
        leaf(v, shape)
    }
    /// A non-contiguous leaf of `shape` (2-d): the transpose of a contiguous tensor.
    fn transposed(&self, shape: &[i64]) -> Tensor {
        let t = Tensor::from_vec(self.values(numel(shape), |u| 4.0 * u - 2.0), &[shape[1], shape[0]]).unwrap();
        let nc = t.t().detach().requires_grad_(true);
        assert!(!nc.is_contiguous());
        nc
    }
}

type F = Box<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>>;

struct Case {
    /// The derivatives.yaml entry it checks.
    op: &'static str,
    /// What is special about it.
    what: &'static str,
    inputs: Vec<Tensor>,
    f: F,
    /// Whether to check second derivatives too.
    gradgrad: bool,
    /// The finite-difference step.
    eps: f64,
}

fn case(
    op: &'static str,
    what: &'static str,
    inputs: Vec<Tensor>,
    f: impl Fn(&[Tensor]) -> Result<Tensor> + 'static,
) -> Case {
    Case { op, what, inputs, f: Box::new(move |x| Ok(vec![f(x)?])), gradgrad: true, eps: 1e-6 }
}

/// `x * 1`, so that an in-place op writes to a non-leaf.
fn fresh(x: &Tensor) -> Result<Tensor> {
    x.try_mul_scalar(1.0)
}

fn cases() -> Vec<Case> {
    let r = Rng(Cell::new(42));
    let alpha = |a: f64| AddOpts { alpha: Scalar::Float(a) };
    vec![
        // ---- binary arithmetic ----
        case("add.Tensor", "alpha", vec![r.any(&[2, 3]), r.any(&[2, 3])], move |x| {
            x[0].try_add_with(&x[1], alpha(2.5))
        }),
        case("add.Tensor", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| x[0].try_add(&x[1])),
        case("add.Tensor", "transposed", vec![r.transposed(&[2, 3]), r.any(&[2, 1])], |x| x[0].try_add(&x[1])),
        case("add.Tensor", "in-place", vec![r.any(&[2, 3]), r.any(&[3])], move |x| {
            fresh(&x[0])?.try_add_with_(&x[1], AddInplaceOpts { alpha: Scalar::Float(-1.5) })
        }),
        case("add.Scalar", "", vec![r.any(&[4])], |x| x[0].try_add_scalar(1.5)),
        case("add.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_add_scalar_(1.5)),
        case("sub.Tensor", "alpha, broadcast", vec![r.any(&[2, 3]), r.any(&[2, 1])], |x| {
            x[0].try_sub_with(&x[1], SubOpts { alpha: Scalar::Float(0.5) })
        }),
        case("sub.Tensor", "in-place", vec![r.transposed(&[2, 3]), r.any(&[3])], |x| fresh(&x[0])?.try_sub_(&x[1])),
        case("sub.Scalar", "", vec![r.any(&[4])], |x| x[0].try_sub_scalar(0.5)),
        case("sub.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_sub_scalar_(0.5)),
        case("mul.Tensor", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| x[0].try_mul(&x[1])),
        case("mul.Tensor", "transposed", vec![r.transposed(&[3, 2]), r.transposed(&[3, 2])], |x| x[0].try_mul(&x[1])),
        case("mul.Tensor", "same input twice", vec![r.any(&[3])], |x| x[0].try_mul(&x[0])),
        case("mul.Tensor", "in-place", vec![r.any(&[2, 3]), r.any(&[2, 3])], |x| fresh(&x[0])?.try_mul_(&x[1])),
        case("mul.Tensor", "in-place on a slice of a base", vec![r.any(&[4, 2]), r.any(&[2])], |x| {
            let base = fresh(&x[0])?;
            base.try_slice_with(SliceOpts { dim: 0, start: Some(1), end: Some(3), step: 1 })?.try_mul_(&x[1])?;
            Ok(base)
        }),
        case("mul.Scalar", "", vec![r.any(&[4])], |x| x[0].try_mul_scalar(-3.0)),
        case("mul.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_mul_scalar_(-3.0)),
        case("div.Tensor", "broadcast", vec![r.any(&[2, 3]), r.pos(&[2, 1])], |x| x[0].try_div(&x[1])),
        case("div.Tensor", "in-place", vec![r.any(&[2, 3]), r.pos(&[3])], |x| fresh(&x[0])?.try_div_(&x[1])),
        case("div.Scalar", "", vec![r.any(&[4])], |x| x[0].try_div_scalar(4.0)),
        case("div.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_div_scalar_(4.0)),
        case("maximum", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| x[0].try_maximum(&x[1])),
        case("minimum", "broadcast", vec![r.any(&[2, 3]), r.any(&[2, 1])], |x| x[0].try_minimum(&x[1])),
        case("pow.Tensor_Scalar", "float exponent", vec![r.pos(&[2, 3])], |x| x[0].try_pow_tensor_scalar(2.5)),
        case("pow.Tensor_Scalar", "int exponent", vec![r.any(&[5])], |x| x[0].try_pow_tensor_scalar(3)),
        case("pow.Tensor_Scalar", "exponent 0", vec![r.any(&[3])], |x| x[0].try_pow_tensor_scalar(0)),
        case("pow.Tensor_Scalar", "in-place", vec![r.pos(&[4])], |x| fresh(&x[0])?.try_pow_scalar_(1.5)),
        // ---- unary ----
        case("neg", "", vec![r.transposed(&[2, 3])], |x| x[0].try_neg()),
        case("neg", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_neg_()),
        case("abs", "", vec![r.away_from_zero(&[6])], |x| x[0].try_abs()),
        case("abs", "in-place", vec![r.away_from_zero(&[6])], |x| fresh(&x[0])?.try_abs_()),
        case("exp", "", vec![r.transposed(&[2, 3])], |x| x[0].try_exp()),
        case("exp", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_exp_()),
        case("log", "", vec![r.pos(&[5])], |x| x[0].try_log()),
        case("log", "in-place", vec![r.pos(&[5])], |x| fresh(&x[0])?.try_log_()),
        case("sqrt", "", vec![r.pos(&[5])], |x| x[0].try_sqrt()),
        case("sqrt", "in-place", vec![r.pos(&[5])], |x| fresh(&x[0])?.try_sqrt_()),
        case("rsqrt", "", vec![r.pos(&[5])], |x| x[0].try_rsqrt()),
        case("rsqrt", "in-place", vec![r.pos(&[5])], |x| fresh(&x[0])?.try_rsqrt_()),
        case("sin", "", vec![r.transposed(&[2, 3])], |x| x[0].try_sin()),
        case("sin", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_sin_()),
        case("cos", "", vec![r.any(&[5])], |x| x[0].try_cos()),
        case("cos", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_cos_()),
        case("tanh", "", vec![r.any(&[5])], |x| x[0].try_tanh()),
        case("tanh", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_tanh_()),
        case("sigmoid", "", vec![r.any(&[5])], |x| x[0].try_sigmoid()),
        case("sigmoid", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_sigmoid_()),
        case("silu", "", vec![r.any(&[5])], |x| x[0].try_silu()),
        case("silu", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_silu_()),
        case("relu", "", vec![r.away_from_zero(&[6])], |x| x[0].try_relu()),
        case("relu", "in-place", vec![r.away_from_zero(&[6])], |x| fresh(&x[0])?.try_relu_()),
        case("gelu", "none", vec![r.any(&[6])], |x| x[0].try_gelu()),
        case("gelu", "tanh", vec![r.any(&[6])], |x| x[0].try_gelu_with(GeluOpts { approximate: "tanh" })),
        case("gelu", "in-place", vec![r.any(&[4])], |x| {
            fresh(&x[0])?.try_gelu_with_(GeluInplaceOpts { approximate: "tanh" })
        }),
        case("clamp", "min and max", vec![r.distinct(&[8])], |x| {
            x[0].try_clamp_with(ClampOpts { min: Some(Scalar::Float(-0.45)), max: Some(Scalar::Float(0.6)) })
        }),
        case("clamp", "min only, in-place", vec![r.distinct(&[8])], |x| {
            fresh(&x[0])?.try_clamp_with_(ClampInplaceOpts { min: Some(Scalar::Float(-0.45)), max: None })
        }),
        case("where.self", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| {
            let cond = Tensor::from_vec(vec![true, false, true, false, false, true], &[2, 3])?;
            x[0].try_where_self(&cond, &x[1])
        }),
        // ---- reductions ----
        case("sum", "", vec![r.transposed(&[2, 3])], |x| x[0].try_sum()),
        case("sum.dim_IntList", "dim 1", vec![r.any(&[2, 3])], |x| x[0].try_sum_dim_intlist(Some(&[1]))),
        case("sum.dim_IntList", "dims (0, -1), keepdim", vec![r.any(&[2, 3, 2])], |x| {
            x[0].try_sum_dim_intlist_with(Some(&[0, -1]), SumDimIntlistOpts { keepdim: true, dtype: None })
        }),
        case("sum.dim_IntList", "all dims", vec![r.any(&[2, 3])], |x| x[0].try_sum_dim_intlist(None)),
        case("mean.dim", "dim 0", vec![r.transposed(&[2, 3])], |x| x[0].try_mean_dim(Some(&[0]))),
        case("mean.dim", "all dims, keepdim", vec![r.any(&[2, 3])], |x| {
            x[0].try_mean_dim_with(None, MeanDimOpts { keepdim: true, dtype: None })
        }),
        case("amax", "dim 1", vec![r.distinct(&[2, 4])], |x| {
            x[0].try_amax_with(AmaxOpts { dim: &[1], keepdim: false })
        }),
        case("amax", "all dims", vec![r.distinct(&[2, 3])], |x| x[0].try_amax()),
        case("amin", "dim 0, keepdim", vec![r.distinct(&[3, 2])], |x| {
            x[0].try_amin_with(AminOpts { dim: &[0], keepdim: true })
        }),
        Case {
            op: "max.dim",
            what: "values (indices are not differentiable)",
            inputs: vec![r.distinct(&[3, 4])],
            f: Box::new(|x| {
                let (values, indices) = x[0].try_max_dim(1)?;
                Ok(vec![values, indices])
            }),
            gradgrad: true,
            eps: 1e-6,
        },
        case("max.dim", "keepdim", vec![r.distinct(&[3, 4])], |x| {
            Ok(x[0].try_max_dim_with(0, MaxDimOpts { keepdim: true })?.0)
        }),
        // ---- matrix products ----
        case("mm", "", vec![r.any(&[2, 3]), r.any(&[3, 4])], |x| x[0].try_mm(&x[1])),
        case("mm", "transposed (column-major) self", vec![r.transposed(&[3, 2]), r.any(&[2, 4])], |x| {
            x[0].try_mm(&x[1])
        }),
        case("mm", "transposed (column-major) mat2", vec![r.any(&[2, 3]), r.transposed(&[3, 4])], |x| {
            x[0].try_mm(&x[1])
        }),
        case("mm", "x.mm(w.t()), as a linear layer", vec![r.any(&[2, 3]), r.any(&[4, 3])], |x| {
            x[0].try_mm(&x[1].try_t()?)
        }),
        case("mm", "same input twice", vec![r.any(&[3, 3])], |x| x[0].try_mm(&x[0])),
        // ---- writes ----
        case("fill_.Scalar", "", vec![r.any(&[4])], |x| fresh(&x[0])?.try_fill_scalar_(2.0)),
        case("zero_", "", vec![r.any(&[4])], |x| fresh(&x[0])?.try_zero_()),
        case("copy_", "broadcast source", vec![r.any(&[2, 3]), r.any(&[3])], |x| {
            fresh(&x[0])?.try_copy_(&x[1])?.try_mul(&x[0])
        }),
        case("copy_", "into a slice of a base", vec![r.any(&[4]), r.any(&[2])], |x| {
            let base = fresh(&x[0])?;
            base.try_slice_with(SliceOpts { dim: 0, start: Some(1), end: Some(3), step: 1 })?.try_copy_(&x[1])?;
            base.try_mul(&base)
        }),
        // ---- copies ----
        case("_to_copy", "to contiguous", vec![r.transposed(&[2, 3])], |x| {
            oxten::ops::_to_copy::call(&x[0], None, None, None, None, false, Some(MemoryFormat::Contiguous))
        }),
        Case {
            eps: 1e-3, // f32 rounding (~1e-7) is then well below the tolerance
            ..case("_to_copy", "through float32 and back", vec![r.any(&[3])], |x| {
                x[0].try_to_dtype(DType::F32)?.try_to_dtype(DType::F64)
            })
        },
        case("clone", "", vec![r.transposed(&[2, 3])], |x| x[0].try_deep_clone()),
        // ---- views ----
        case("as_strided", "transpose", vec![r.any(&[2, 3])], |x| x[0].try_as_strided(&[3, 2], &[1, 3])),
        case("as_strided", "offset window", vec![r.any(&[3, 3])], |x| {
            x[0].try_as_strided_with(&[2, 2], &[3, 1], AsStridedOpts { storage_offset: Some(4) })
        }),
        case("as_strided", "expanded (stride 0)", vec![r.any(&[3])], |x| x[0].try_as_strided(&[2, 3], &[0, 1])),
        case("view", "", vec![r.any(&[2, 3])], |x| x[0].try_view(&[3, 2])?.try_mul_scalar(2.0)),
        case("permute", "", vec![r.any(&[2, 3, 4])], |x| x[0].try_permute(&[2, 0, 1])?.try_mul_scalar(2.0)),
        case("transpose.int", "", vec![r.any(&[2, 3])], |x| x[0].try_transpose(0, 1)?.try_exp()),
        case("t", "", vec![r.any(&[2, 3])], |x| x[0].try_t()?.try_sin()),
        case("expand", "", vec![r.any(&[3, 1])], |x| x[0].try_expand(&[2, 3, 4])?.try_mul_scalar(1.0)),
        case("squeeze", "", vec![r.any(&[1, 3, 1])], |x| x[0].try_squeeze()?.try_exp()),
        case("squeeze.dim", "size-1 dim", vec![r.any(&[1, 3])], |x| x[0].try_squeeze_dim(0)?.try_exp()),
        case("squeeze.dim", "other dim (no-op)", vec![r.any(&[2, 3])], |x| x[0].try_squeeze_dim(-1)?.try_exp()),
        case("unsqueeze", "", vec![r.any(&[2, 3])], |x| x[0].try_unsqueeze(1)?.try_exp()),
        case("slice.Tensor", "step 2", vec![r.any(&[2, 5])], |x| {
            x[0].try_slice_with(SliceOpts { dim: 1, start: Some(1), end: Some(5), step: 2 })?.try_exp()
        }),
        case("select.int", "", vec![r.any(&[3, 4])], |x| x[0].try_select(0, 1)?.try_exp()),
        case("select.int", "negative index, transposed", vec![r.transposed(&[3, 4])], |x| {
            x[0].try_select(1, -1)?.try_exp()
        }),
    ]
}

fn opts(c: &Case) -> GradcheckOpts {
    GradcheckOpts { eps: c.eps, ..Default::default() }
}

fn run_all(check: impl Fn(&Case) -> Result<()>) {
    let mut failures = Vec::new();
    let all = cases();
    for c in &all {
        if let Err(e) = check(c) {
            failures.push(format!("{} ({}): {e}", c.op, c.what));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n\n{}", failures.len(), all.len(), failures.join("\n\n"));
}

#[test]
fn every_entry_has_a_case() {
    let all = cases();
    let missing: Vec<&str> = DERIVATIVES
        .iter()
        .filter(|d| d.node.is_some())
        .map(|d| d.op)
        .filter(|op| !all.iter().any(|c| c.op == *op))
        .collect();
    assert!(missing.is_empty(), "entries without a gradcheck case: {missing:?}");
    for c in &all {
        assert!(DERIVATIVES.iter().any(|d| d.op == c.op), "case for unknown entry `{}`", c.op);
    }
}

#[test]
fn gradcheck_every_entry() {
    run_all(|c| gradcheck(|x: &[Tensor]| (c.f)(x), &c.inputs, opts(c)));
}

#[test]
fn gradcheck_every_entry_fast_mode() {
    run_all(|c| gradcheck(|x: &[Tensor]| (c.f)(x), &c.inputs, GradcheckOpts { fast_mode: true, seed: 7, ..opts(c) }));
}

#[test]
fn gradgradcheck_every_entry() {
    run_all(|c| {
        if !c.gradgrad {
            return Ok(());
        }
        gradgradcheck(|x: &[Tensor]| (c.f)(x), &c.inputs, opts(c))
    });
}
