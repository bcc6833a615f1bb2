//! `gradcheck` and `gradgradcheck`: compare the gradients autograd computes with central finite
//! differences, PyTorch's way of testing derivative formulas.
//!
//! For a function `f` of some tensors, the *numerical* Jacobian perturbs one input element at a
//! time by `±eps` (column by column); the *analytical* Jacobian runs backward once per output
//! element with a one-hot gradient (row by row). They must agree within `atol + rtol * |numerical|`
//! element by element. Fast mode checks `vᵀ (J u)` (a finite-difference directional derivative)
//! against `(vᵀ J) u` (one backward pass) for random `u` and `v` instead. Use float64 inputs:
//! the default tolerances are meant for them.
//!
//! ```
//! use oxten::autograd::{gradcheck, GradcheckOpts};
//! use oxten::Tensor;
//! let x = Tensor::from_vec(vec![0.3f64, -1.2, 2.0], &[3]).unwrap().requires_grad_(true);
//! gradcheck(|t: &[Tensor]| t[0].try_sin(), &[x], GradcheckOpts::default()).unwrap();
//! ```

use super::{grad_with, GradOpts};
use oxten_runtime::{ops, DType, Error, Result, Tensor};

/// Options of [`gradcheck`] and [`gradgradcheck`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradcheckOpts {
    /// The finite-difference step.
    pub eps: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance (relative to the numerical value).
    pub rtol: f64,
    /// Check random projections `vᵀ J u` instead of whole Jacobians.
    pub fast_mode: bool,
    /// Seed of the random projections (fast mode) and of the random output gradients
    /// ([`gradgradcheck`]).
    pub seed: u64,
    /// Also check forward mode: the Jacobian from one JVP per input element (dual tensors)
    /// against the numerical one and the reverse-mode one (whole Jacobians, also in fast mode).
    pub check_forward_ad: bool,
}

impl Default for GradcheckOpts {
    fn default() -> Self {
        GradcheckOpts { eps: 1e-6, atol: 1e-5, rtol: 1e-3, fast_mode: false, seed: 0, check_forward_ad: false }
    }
}

/// What a checked function returns: one tensor or several.
pub trait Outputs {
    /// The outputs as a list.
    fn into_outputs(self) -> Vec<Tensor>;
}

impl Outputs for Tensor {
    fn into_outputs(self) -> Vec<Tensor> {
        vec![self]
    }
}

impl Outputs for Vec<Tensor> {
    fn into_outputs(self) -> Vec<Tensor> {
        self
    }
}

impl Outputs for (Tensor, Tensor) {
    fn into_outputs(self) -> Vec<Tensor> {
        vec![self.0, self.1]
    }
}

/// SplitMix64: a small seeded generator, so checks are deterministic.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[-1, 1)`.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.uniform()).collect()
    }
}

/// A tensor with `t`'s sizes, dtype and (when dense) strides, holding `values` (in logical
/// order), requiring grad like `t`: how inputs are perturbed without touching the caller's.
fn with_values(t: &Tensor, values: &[f64]) -> Result<Tensor> {
    let sizes = t.sizes();
    let dense = Tensor::from_vec(values.to_vec(), &sizes)?;
    let out = if t.is_non_overlapping_and_dense() {
        ops::empty_strided::call(&sizes, &t.strides(), Some(t.dtype()), None, Some(t.device()), None)?
    } else {
        ops::empty::call(&sizes, Some(t.dtype()), None, Some(t.device()), None, None)?
    };
    super::no_grad(|| ops::copy_::call(&out, &dense, false))?;
    if t.requires_grad() {
        out.try_requires_grad_(true)?;
    }
    Ok(out)
}

/// Whether autograd can differentiate with respect to this output.
fn differentiable(t: &Tensor) -> bool {
    t.dtype().is_floating_point() && t.requires_grad()
}

/// Evaluates `f`, returning every output flattened to f64 (non-floating outputs included, so
/// the numerical Jacobian covers them; their rows must then be zero).
fn eval_flat<O: Outputs>(f: &impl Fn(&[Tensor]) -> Result<O>, inputs: &[Tensor]) -> Result<Vec<f64>> {
    let outs = f(inputs)?.into_outputs();
    let mut flat = Vec::new();
    for o in outs.iter().filter(|o| o.dtype().is_floating_point()) {
        flat.extend(o.to_f64_vec()?);
    }
    Ok(flat)
}

/// The differentiated inputs: those that require grad.
fn wrt(inputs: &[Tensor]) -> Vec<usize> {
    (0..inputs.len()).filter(|&i| inputs[i].requires_grad()).collect()
}

/// `f(inputs with input i replaced)`.
fn eval_replacing<O: Outputs>(
    f: &impl Fn(&[Tensor]) -> Result<O>,
    inputs: &[Tensor],
    i: usize,
    values: &[f64],
) -> Result<Vec<f64>> {
    let mut args = inputs.to_vec();
    args[i] = with_values(&inputs[i], values)?;
    eval_flat(f, &args)
}

/// The numerical Jacobian: one matrix per differentiated input, `[output element][input element]`.
fn numerical_jacobian<O: Outputs>(
    f: &impl Fn(&[Tensor]) -> Result<O>,
    inputs: &[Tensor],
    eps: f64,
) -> Result<Vec<Vec<Vec<f64>>>> {
    let n_out = eval_flat(f, inputs)?.len();
    let mut jacobians = Vec::new();
    for i in wrt(inputs) {
        let x = inputs[i].to_f64_vec()?;
        let mut jac = vec![vec![0.0; x.len()]; n_out];
        for j in 0..x.len() {
            let mut plus = x.clone();
            plus[j] += eps;
            let mut minus = x.clone();
            minus[j] -= eps;
            let (fp, fm) = (eval_replacing(f, inputs, i, &plus)?, eval_replacing(f, inputs, i, &minus)?);
            for (k, row) in jac.iter_mut().enumerate() {
                row[j] = (fp[k] - fm[k]) / (2.0 * eps);
            }
        }
        jacobians.push(jac);
    }
    Ok(jacobians)
}

/// Backward from the outputs with the given (flattened, per floating output) gradient: the
/// gradient of each differentiated input, flattened (zeros where it is unused).
fn vjp(outputs: &[Tensor], inputs: &[Tensor], v: &[f64]) -> Result<Vec<Vec<f64>>> {
    let targets = wrt(inputs);
    let mut outs = Vec::new();
    let mut grads = Vec::new();
    let mut at = 0;
    for o in outputs.iter().filter(|o| o.dtype().is_floating_point()) {
        let n = o.numel() as usize;
        if differentiable(o) {
            let g = Tensor::from_vec(v[at..at + n].to_vec(), &o.sizes())?;
            outs.push(o.clone());
            grads.push(Some(ops::to_dtype::call(&g, o.dtype(), false, false, None)?));
        }
        at += n;
    }
    let xs: Vec<Tensor> = targets.iter().map(|&i| inputs[i].clone()).collect();
    if outs.is_empty() {
        return xs.iter().map(|x| Ok(vec![0.0; x.numel() as usize])).collect();
    }
    let res = grad_with(
        &outs,
        &xs,
        GradOpts { grad_outputs: grads, retain_graph: Some(true), allow_unused: true, ..Default::default() },
    )?;
    res.into_iter()
        .zip(&xs)
        .map(|(g, x)| match g {
            Some(g) => g.to_f64_vec(),
            None => Ok(vec![0.0; x.numel() as usize]),
        })
        .collect()
}

/// The analytical Jacobian, same layout as [`numerical_jacobian`].
fn analytical_jacobian<O: Outputs>(
    f: &impl Fn(&[Tensor]) -> Result<O>,
    inputs: &[Tensor],
) -> Result<Vec<Vec<Vec<f64>>>> {
    let outputs = f(inputs)?.into_outputs();
    let n_out: usize = outputs.iter().filter(|o| o.dtype().is_floating_point()).map(|o| o.numel() as usize).sum();
    let sizes: Vec<usize> = wrt(inputs).iter().map(|&i| inputs[i].numel() as usize).collect();
    let mut jacobians: Vec<Vec<Vec<f64>>> = sizes.iter().map(|&n| vec![vec![0.0; n]; n_out]).collect();
    for k in 0..n_out {
        let mut onehot = vec![0.0; n_out];
        onehot[k] = 1.0;
        for (jac, row) in jacobians.iter_mut().zip(vjp(&outputs, inputs, &onehot)?) {
            jac[k] = row;
        }
    }
    Ok(jacobians)
}

/// The Jacobian by forward mode, same layout as [`numerical_jacobian`]: one JVP per element of
/// each differentiated input.
fn forward_jacobian<O: Outputs>(f: &impl Fn(&[Tensor]) -> Result<O>, inputs: &[Tensor]) -> Result<Vec<Vec<Vec<f64>>>> {
    use super::forward_ad::{dual_level, make_dual, unpack_dual};
    let n_out = eval_flat(f, inputs)?.len();
    let mut jacobians = Vec::new();
    for i in wrt(inputs) {
        let n = inputs[i].numel() as usize;
        let mut jac = vec![vec![0.0; n]; n_out];
        for j in 0..n {
            let mut onehot = vec![0.0; n];
            onehot[j] = 1.0;
            let tangent = with_values(&inputs[i], &onehot)?;
            let column = dual_level(|| -> Result<Vec<f64>> {
                let mut args = inputs.to_vec();
                args[i] = make_dual(&inputs[i], &tangent)?;
                let mut col = Vec::with_capacity(n_out);
                for o in f(&args)?.into_outputs().iter().filter(|o| o.dtype().is_floating_point()) {
                    match unpack_dual(o)?.1 {
                        Some(t) => col.extend(t.to_f64_vec()?),
                        None => col.extend(std::iter::repeat_n(0.0, o.numel() as usize)),
                    }
                }
                Ok(col)
            })?;
            for (k, row) in jac.iter_mut().enumerate() {
                row[j] = column[k];
            }
        }
        jacobians.push(jac);
    }
    Ok(jacobians)
}

/// The names of the outputs' `grad_fn`s, to say which op failed.
fn describe_outputs(outputs: &[Tensor]) -> String {
    let names: Vec<String> = outputs
        .iter()
        .enumerate()
        .map(|(i, o)| match o.grad_fn() {
            Some(f) => format!("output {i}: {} {:?} (grad_fn {})", o.dtype(), &o.sizes()[..], f.name()),
            None => format!("output {i}: {} {:?} (no grad_fn)", o.dtype(), &o.sizes()[..]),
        })
        .collect();
    names.join(", ")
}

fn format_matrix(m: &[Vec<f64>]) -> String {
    m.iter()
        .map(|row| format!("  [{}]", row.iter().map(|x| format!("{x:10.6}")).collect::<Vec<_>>().join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

fn close(a: f64, n: f64, opts: &GradcheckOpts) -> bool {
    (a - n).abs() <= opts.atol + opts.rtol * n.abs() || (a.is_nan() && n.is_nan())
}

/// The full comparison, returning the error text for the first mismatching input.
fn compare_jacobians<O: Outputs>(
    f: &impl Fn(&[Tensor]) -> Result<O>,
    inputs: &[Tensor],
    opts: &GradcheckOpts,
) -> Result<Option<String>> {
    let numerical = numerical_jacobian(f, inputs, opts.eps)?;
    let analytical = analytical_jacobian(f, inputs)?;
    if opts.check_forward_ad {
        let forward = forward_jacobian(f, inputs)?;
        for (w, (fw, (num, ana))) in forward.iter().zip(numerical.iter().zip(&analytical)).enumerate() {
            let bad_num = num.iter().zip(fw).any(|(nr, fr)| nr.iter().zip(fr).any(|(&n, &a)| !close(a, n, opts)));
            let bad_rev = ana.iter().zip(fw).any(|(ar, fr)| ar.iter().zip(fr).any(|(&r, &a)| !close(a, r, opts)));
            if bad_num || bad_rev {
                let outputs = f(inputs)?.into_outputs();
                let against = if bad_num { ("numerical", num) } else { ("reverse mode", ana) };
                return Ok(Some(format!(
                    "Jacobian computed with forward mode mismatch with respect to input {} ({}).\n{}:\n{}\nforward mode:\n{}\n(rows: output elements, columns: input elements; atol {}, rtol {})",
                    wrt(inputs)[w],
                    describe_outputs(&outputs),
                    against.0,
                    format_matrix(against.1),
                    format_matrix(fw),
                    opts.atol,
                    opts.rtol
                )));
            }
        }
    }
    for (w, (num, ana)) in numerical.iter().zip(&analytical).enumerate() {
        let bad = num.iter().zip(ana).any(|(nr, ar)| nr.iter().zip(ar).any(|(&n, &a)| !close(a, n, opts)));
        if bad {
            let outputs = f(inputs)?.into_outputs();
            return Ok(Some(format!(
                "Jacobian mismatch with respect to input {} ({}).\nnumerical:\n{}\nanalytical:\n{}\n(rows: output elements, columns: input elements; atol {}, rtol {})",
                wrt(inputs)[w],
                describe_outputs(&outputs),
                format_matrix(num),
                format_matrix(ana),
                opts.atol,
                opts.rtol
            )));
        }
    }
    Ok(None)
}

/// Checks the gradients of `f` at `inputs` (those that require grad are differentiated) against
/// central finite differences. Returns an error showing the numerical and analytical Jacobians
/// and the op (the outputs' `grad_fn`) when they disagree.
pub fn gradcheck<O: Outputs>(f: impl Fn(&[Tensor]) -> Result<O>, inputs: &[Tensor], opts: GradcheckOpts) -> Result<()> {
    if wrt(inputs).is_empty() {
        return Err(Error::value("gradcheck expects at least one input that requires grad"));
    }
    if let Some(x) = inputs.iter().find(|x| x.requires_grad() && x.dtype() != DType::F64) {
        return Err(Error::value(format!(
            "gradcheck expects float64 inputs that require grad (finite differences in {} are not precise enough)",
            x.dtype()
        )));
    }
    if !opts.fast_mode || opts.check_forward_ad {
        return match compare_jacobians(&f, inputs, &opts)? {
            None => Ok(()),
            Some(msg) => Err(Error::runtime(format!("gradcheck failed: {msg}"))),
        };
    }
    // Fast mode: vᵀ (J u) numerically against (vᵀ J) u analytically.
    let mut rng = Rng(opts.seed ^ 0x6f78_7465_6e00_0000);
    let targets = wrt(inputs);
    let us: Vec<Vec<f64>> = targets.iter().map(|&i| rng.vec(inputs[i].numel() as usize)).collect();
    let n_out = eval_flat(&f, inputs)?.len();
    let v = rng.vec(n_out);
    let shifted = |sign: f64| -> Result<Vec<f64>> {
        let mut args = inputs.to_vec();
        for (&i, u) in targets.iter().zip(&us) {
            let x = inputs[i].to_f64_vec()?;
            let moved: Vec<f64> = x.iter().zip(u).map(|(a, b)| a + sign * opts.eps * b).collect();
            args[i] = with_values(&inputs[i], &moved)?;
        }
        eval_flat(&f, &args)
    };
    let (fp, fm) = (shifted(1.0)?, shifted(-1.0)?);
    let ju: Vec<f64> = fp.iter().zip(&fm).map(|(p, m)| (p - m) / (2.0 * opts.eps)).collect();
    let numerical: f64 = v.iter().zip(&ju).map(|(a, b)| a * b).sum();
    let outputs = f(inputs)?.into_outputs();
    let vj = vjp(&outputs, inputs, &v)?;
    let analytical: f64 = vj.iter().zip(&us).map(|(g, u)| g.iter().zip(u).map(|(a, b)| a * b).sum::<f64>()).sum();
    if close(analytical, numerical, &opts) {
        return Ok(());
    }
    let detail = compare_jacobians(&f, inputs, &opts)?.unwrap_or_else(|| {
        "the full Jacobians agree within tolerance; the projection differs only by accumulated rounding".into()
    });
    Err(Error::runtime(format!(
        "gradcheck failed (fast mode, seed {}): vᵀJu is {numerical} numerically but {analytical} analytically.\n{detail}",
        opts.seed
    )))
}

/// Checks second derivatives: [`gradcheck`] of the function that maps the inputs and (seeded,
/// random) output gradients to the input gradients computed with `create_graph`.
pub fn gradgradcheck<O: Outputs>(
    f: impl Fn(&[Tensor]) -> Result<O>,
    inputs: &[Tensor],
    opts: GradcheckOpts,
) -> Result<()> {
    let targets = wrt(inputs);
    if targets.is_empty() {
        return Err(Error::value("gradgradcheck expects at least one input that requires grad"));
    }
    let outputs = f(inputs)?.into_outputs();
    let mut rng = Rng(opts.seed ^ 0x6772_6164_6772_6164);
    let mut grad_outputs = Vec::new();
    for o in outputs.iter().filter(|o| differentiable(o)) {
        let v = rng.vec(o.numel() as usize);
        grad_outputs.push(Tensor::from_vec(v, &o.sizes())?.requires_grad_(true));
    }
    if grad_outputs.is_empty() {
        return Err(Error::value("gradgradcheck: no output of the function requires grad"));
    }
    let n = inputs.len();
    let first_order = move |args: &[Tensor]| -> Result<Vec<Tensor>> {
        let (xs, gs) = args.split_at(n);
        let outs: Vec<Tensor> = f(xs)?.into_outputs().into_iter().filter(differentiable).collect();
        let wrt_xs: Vec<Tensor> = wrt(xs).iter().map(|&i| xs[i].clone()).collect();
        let grads: Vec<Option<Tensor>> = gs.iter().map(|g| Some(g.clone())).collect();
        let res = grad_with(
            &outs,
            &wrt_xs,
            GradOpts { grad_outputs: grads, retain_graph: Some(true), create_graph: true, allow_unused: true },
        )?;
        res.into_iter()
            .zip(&wrt_xs)
            .map(|(g, x)| match g {
                Some(g) => Ok(g),
                None => super::helpers::zeros_like(x),
            })
            .collect()
    };
    let mut all = inputs.to_vec();
    all.extend(grad_outputs);
    gradcheck(first_order, &all, opts)
}
