//! Every derivatives.yaml entry is checked against finite differences: `gradcheck` (slow and fast
//! mode) and `gradgradcheck`, on seeded random float64 inputs, including broadcasting and
//! non-contiguous (transposed) inputs and the in-place variants. The table of cases must cover
//! every entry the generator exports in `oxten::autograd::DERIVATIVES`, so a new formula without
//! a case fails `every_entry_has_a_case`.

use oxten::autograd::{gradcheck, gradgradcheck, GradcheckOpts, DERIVATIVES};
use oxten::{Result, Tensor};
use std::cell::Cell;

mod conv;
mod core_ops;
mod index;
mod linalg;
mod nn;
mod norm;
mod pointwise_math;
mod random;
mod random_out;
mod reductions;
mod shape;
mod sort;

/// SplitMix64, so inputs are the same on every run.
pub(crate) struct Rng(Cell<u64>);

impl Rng {
    pub(crate) fn next(&self) -> f64 {
        let s = self.0.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.0.set(s);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    pub(crate) fn values(&self, n: usize, f: impl Fn(f64) -> f64) -> Vec<f64> {
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
    pub(crate) fn any(&self, shape: &[i64]) -> Tensor {
        leaf(self.values(numel(shape), |u| 4.0 * u - 2.0), shape)
    }
    /// Uniform in [0.5, 2): for log, sqrt, rsqrt, pow, division.
    pub(crate) fn pos(&self, shape: &[i64]) -> Tensor {
        leaf(self.values(numel(shape), |u| 0.5 + 1.5 * u), shape)
    }
    /// Magnitude in [0.2, 1.2) with a random sign: away from the kinks of abs, relu, sgn.
    pub(crate) fn away_from_zero(&self, shape: &[i64]) -> Tensor {
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
    pub(crate) fn distinct(&self, shape: &[i64]) -> Tensor {
        let n = numel(shape);
        let mut v: Vec<f64> = (0..n).map(|i| i as f64 * 0.37 - 1.0).collect();
        for i in (1..n).rev() {
            let j = (self.next() * (i + 1) as f64) as usize;
            v.swap(i, j.min(i));
        }
        leaf(v, shape)
    }
    /// A non-contiguous leaf of `shape` (2-d): the transpose of a contiguous tensor.
    pub(crate) fn transposed(&self, shape: &[i64]) -> Tensor {
        let t = Tensor::from_vec(self.values(numel(shape), |u| 4.0 * u - 2.0), &[shape[1], shape[0]]).unwrap();
        let nc = t.t().detach().requires_grad_(true);
        assert!(!nc.is_contiguous());
        nc
    }
}

pub(crate) type F = Box<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>>;

pub(crate) struct Case {
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

pub(crate) fn case(
    op: &'static str,
    what: &'static str,
    inputs: Vec<Tensor>,
    f: impl Fn(&[Tensor]) -> Result<Tensor> + 'static,
) -> Case {
    Case { op, what, inputs, f: Box::new(move |x| Ok(vec![f(x)?])), gradgrad: true, eps: 1e-6 }
}

/// `x * 1`, so that an in-place op writes to a non-leaf.
pub(crate) fn fresh(x: &Tensor) -> Result<Tensor> {
    x.try_mul_scalar(1.0)
}

/// Every family's cases (one module per family, each with the same seeded generator).
fn cases() -> Vec<Case> {
    let mut all = Vec::new();
    all.extend(core_ops::cases(&Rng(Cell::new(42))));
    all.extend(nn::cases(&Rng(Cell::new(4242))));
    all.extend(index::cases(&Rng(Cell::new(4242))));
    all.extend(norm::cases(&Rng(Cell::new(4242))));
    all.extend(linalg::cases(&Rng(Cell::new(4242))));
    all.extend(conv::cases(&Rng(Cell::new(4004))));
    all.extend(reductions::cases(&Rng(Cell::new(4242))));
    all.extend(random::cases(&Rng(Cell::new(4004))));
    all.extend(random_out::cases(&Rng(Cell::new(4321))));
    all.extend(pointwise_math::cases(&Rng(Cell::new(1717))));
    all.extend(sort::cases(&Rng(Cell::new(2323))));
    all.extend(shape::cases(&Rng(Cell::new(3131))));
    all
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

/// Forward mode: the JVP Jacobian of every case against the numerical and reverse-mode ones
/// (PyTorch's `check_forward_ad`), for every entry with a forward formula.
#[test]
fn forward_ad_every_entry() {
    run_all(|c| {
        if oxten::autograd::NO_FORWARD_FORMULA.contains(&c.op) {
            return Ok(());
        }
        gradcheck(|x: &[Tensor]| (c.f)(x), &c.inputs, GradcheckOpts { check_forward_ad: true, ..opts(c) })
    });
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
