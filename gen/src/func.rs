//! `torch.func` for closures over tensors: [`jvp`], [`vjp`], [`jacfwd`], [`jacrev`],
//! [`hessian`] and [`hvp`].
//!
//! A function is any `Fn(&[Tensor]) -> Result<O>` whose outputs `O` are a `Tensor`, a pair or
//! a `Vec<Tensor>`. Forward mode runs the function on dual tensors
//! ([`forward_ad`](crate::autograd::forward_ad)); reverse mode records it and calls
//! [`grad_with`](crate::autograd::grad_with) with `create_graph`, so every transform composes
//! with every other (`hessian` is `jacfwd` of `jacrev`, `hvp` is forward-over-reverse). Without
//! a `vmap`, the Jacobians loop over basis vectors: one `jvp` per input element (`jacfwd`) or
//! one `vjp` per output element (`jacrev`).
//!
//! ```
//! use oxten::{func, Tensor};
//! let x = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
//! // f(x) = x², J = diag(2x).
//! let v = Tensor::from_vec(vec![1.0f64, 1.0], &[2]).unwrap();
//! let (y, t) = func::jvp(|x| x[0].try_mul(&x[0]), &[x.clone()], &[v]).unwrap();
//! assert_eq!(y[0].to_vec::<f64>().unwrap(), [1.0, 4.0]);
//! assert_eq!(t[0].to_vec::<f64>().unwrap(), [2.0, 4.0]);
//! ```

use crate::autograd::forward_ad::{copy_tangents, dual_level, make_dual, unpack_dual};
use crate::autograd::{grad_with, GradOpts, Outputs};
use crate::{ops, Error, Result, Tensor};

fn zeros_like(t: &Tensor) -> Result<Tensor> {
    ops::zeros_like::call(t, None, None, None, None, None)
}

/// `(f(primals), J·tangents)`: the outputs and their Jacobian-vector products, in one forward
/// pass on dual tensors. `tangents` has one tensor per primal, of the same shape.
pub fn jvp<O: Outputs>(
    f: impl Fn(&[Tensor]) -> Result<O>,
    primals: &[Tensor],
    tangents: &[Tensor],
) -> Result<(Vec<Tensor>, Vec<Tensor>)> {
    if primals.len() != tangents.len() {
        return Err(Error::value(format!(
            "jvp: Expected primals and tangents to have the same length, got {} and {}",
            primals.len(),
            tangents.len()
        )));
    }
    dual_level(|| {
        let duals = primals.iter().zip(tangents).map(|(p, t)| make_dual(p, t)).collect::<Result<Vec<_>>>()?;
        let outs = f(&duals)?.into_outputs();
        let mut values = Vec::with_capacity(outs.len());
        let mut jvps = Vec::with_capacity(outs.len());
        for o in &outs {
            let (p, t) = unpack_dual(o)?;
            jvps.push(match t {
                Some(t) => t,
                None => zeros_like(&p)?,
            });
            values.push(p);
        }
        Ok((values, jvps))
    })
}

/// The function's outputs after [`vjp`], and a way to pull cotangents back to its inputs.
pub struct VjpFn {
    inputs: Vec<Tensor>,
    outputs: Vec<Tensor>,
}

impl VjpFn {
    /// `vᵀ·J` for one cotangent per output (shaped like it): one tensor per input (zeros for an
    /// input the outputs do not depend on). Can be called again; records its own graph.
    pub fn call(&self, cotangents: &[Tensor]) -> Result<Vec<Tensor>> {
        if cotangents.len() != self.outputs.len() {
            return Err(Error::value(format!(
                "vjp: Expected {} cotangents (one per output), got {}",
                self.outputs.len(),
                cotangents.len()
            )));
        }
        for (o, c) in self.outputs.iter().zip(cotangents) {
            if o.sizes() != c.sizes() {
                return Err(Error::value(format!(
                    "vjp: Expected the cotangent to have the shape of its output {:?}, got {:?}",
                    &o.sizes()[..],
                    &c.sizes()[..]
                )));
            }
        }
        // Outputs that do not depend on the inputs contribute nothing.
        let pairs: Vec<(&Tensor, &Tensor)> =
            self.outputs.iter().zip(cotangents).filter(|(o, _)| o.requires_grad()).collect();
        if pairs.is_empty() {
            return self.inputs.iter().map(zeros_like).collect();
        }
        let outs: Vec<&Tensor> = pairs.iter().map(|p| p.0).collect();
        let opts = GradOpts {
            grad_outputs: pairs.iter().map(|p| Some(p.1.clone())).collect(),
            retain_graph: Some(true),
            create_graph: true,
            allow_unused: true,
        };
        let grads = grad_with(&outs, &self.inputs, opts)?;
        grads.into_iter().zip(&self.inputs).map(|(g, x)| g.map_or_else(|| zeros_like(x), Ok)).collect()
    }
}

/// An input for reverse mode: the tensor itself when it already takes part in a graph (an outer
/// transform differentiates through it), else a fresh leaf that requires grad and keeps its
/// forward-mode tangents.
fn tracked(p: &Tensor) -> Tensor {
    if p.requires_grad() {
        return p.clone();
    }
    let x = p.detach().requires_grad_(true);
    copy_tangents(p, &x);
    x
}

/// `(f(primals), vjp_fn)`: runs `f` recording its graph; `vjp_fn.call(cotangents)` gives
/// `vᵀ·J` for each input.
pub fn vjp<O: Outputs>(f: impl Fn(&[Tensor]) -> Result<O>, primals: &[Tensor]) -> Result<(Vec<Tensor>, VjpFn)> {
    let inputs: Vec<Tensor> = crate::autograd::enable_grad(|| primals.iter().map(tracked).collect());
    let outputs = crate::autograd::enable_grad(|| f(&inputs))?.into_outputs();
    Ok((outputs.clone(), VjpFn { inputs, outputs }))
}

/// A one-hot tensor shaped like `like` (1 at flat position `k`).
fn basis(like: &Tensor, k: usize) -> Result<Tensor> {
    let z = zeros_like(like)?;
    let flat = ops::reshape::call(&z, &[-1])?.try_contiguous()?;
    let one = crate::Scalar::Int(1);
    ops::fill_scalar_::call(&ops::select::call(&flat, 0, k as i64)?, one)?;
    ops::reshape::call(&flat, &like.sizes())
}

/// `columns` (one per element of an input, each shaped like an output) as the Jacobian block
/// shaped `output.shape + input.shape`.
fn assemble(columns: Vec<Tensor>, out_sizes: &[i64], in_sizes: &[i64]) -> Result<Tensor> {
    let mut shape: Vec<i64> = out_sizes.to_vec();
    shape.extend_from_slice(in_sizes);
    if columns.is_empty() {
        return ops::zeros::call(&shape, None, None, None, None);
    }
    let stacked = ops::stack::call(&columns, -1)?;
    ops::reshape::call(&stacked, &shape)
}

/// The Jacobians by forward mode: `jac[o][i]` is the derivative of output `o` with respect to
/// input `i`, shaped `output.shape + input.shape`; one `jvp` per input element.
pub fn jacfwd<O: Outputs>(f: impl Fn(&[Tensor]) -> Result<O>, inputs: &[Tensor]) -> Result<Vec<Vec<Tensor>>> {
    let zeros: Vec<Tensor> = inputs.iter().map(zeros_like).collect::<Result<_>>()?;
    let mut per_input: Vec<Vec<Vec<Tensor>>> = Vec::new();
    let mut out_sizes: Vec<Vec<i64>> = Vec::new();
    for (i, x) in inputs.iter().enumerate() {
        let mut columns: Vec<Vec<Tensor>> = Vec::new();
        for k in 0..x.numel() as usize {
            let mut tangents = zeros.clone();
            tangents[i] = basis(x, k)?;
            let (values, jvps) = jvp(&f, inputs, &tangents)?;
            if out_sizes.is_empty() {
                out_sizes = values.iter().map(|v| v.sizes().to_vec()).collect();
            }
            columns.push(jvps);
        }
        if x.numel() == 0 && out_sizes.is_empty() {
            let (values, _) = jvp(&f, inputs, &zeros)?;
            out_sizes = values.iter().map(|v| v.sizes().to_vec()).collect();
        }
        per_input.push(columns);
    }
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    (0..out_sizes.len())
        .map(|o| {
            per_input
                .iter()
                .zip(inputs)
                .map(|(cols, x)| {
                    let col: Vec<Tensor> = cols.iter().map(|c| c[o].clone()).collect();
                    assemble(col, &out_sizes[o], &x.sizes())
                })
                .collect()
        })
        .collect()
}

/// The Jacobians by reverse mode (same layout as [`jacfwd`]): one `vjp` per output element.
pub fn jacrev<O: Outputs>(f: impl Fn(&[Tensor]) -> Result<O>, inputs: &[Tensor]) -> Result<Vec<Vec<Tensor>>> {
    let (outputs, pull) = vjp(f, inputs)?;
    let zeros: Vec<Tensor> = outputs.iter().map(zeros_like).collect::<Result<_>>()?;
    let mut jac = Vec::with_capacity(outputs.len());
    for (o, out) in outputs.iter().enumerate() {
        // rows[k][i]: the gradient of output element k with respect to input i.
        let mut rows: Vec<Vec<Tensor>> = Vec::new();
        for k in 0..out.numel() as usize {
            let mut cot = zeros.clone();
            cot[o] = basis(out, k)?;
            rows.push(pull.call(&cot)?);
        }
        let blocks = inputs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let mut shape: Vec<i64> = out.sizes().to_vec();
                shape.extend_from_slice(&x.sizes());
                if rows.is_empty() {
                    return ops::zeros::call(&shape, None, None, None, None);
                }
                let r: Vec<Tensor> = rows.iter().map(|row| row[i].clone()).collect();
                ops::reshape::call(&ops::stack::call(&r, 0)?, &shape)
            })
            .collect::<Result<Vec<_>>>()?;
        jac.push(blocks);
    }
    Ok(jac)
}

/// The gradients of a function with one output element (a loss) with respect to each input,
/// recorded (`create_graph`) so that they can be differentiated again.
fn gradients<O: Outputs>(f: &impl Fn(&[Tensor]) -> Result<O>, xs: &[Tensor]) -> Result<Vec<Tensor>> {
    let (outputs, pull) = vjp(f, xs)?;
    let [out] = &outputs[..] else {
        return Err(Error::value(format!("expected a function with one output, got {}", outputs.len())));
    };
    if out.numel() != 1 {
        return Err(Error::value(format!(
            "expected a function with one output element (a scalar), got shape {:?}",
            &out.sizes()[..]
        )));
    }
    pull.call(&[crate::ones_like(out)])
}

/// The Hessian of a function with one output element: `h[i][j]`, shaped
/// `input_i.shape + input_j.shape` (forward-over-reverse, as `torch.func.hessian`).
pub fn hessian<O: Outputs>(f: impl Fn(&[Tensor]) -> Result<O>, inputs: &[Tensor]) -> Result<Vec<Vec<Tensor>>> {
    jacfwd(|xs: &[Tensor]| gradients(&f, xs), inputs)
}

/// `(f(primals), H·tangents)` for a function with one output element: the Hessian-vector
/// product by forward-over-reverse, without forming the Hessian.
pub fn hvp<O: Outputs>(
    f: impl Fn(&[Tensor]) -> Result<O>,
    primals: &[Tensor],
    tangents: &[Tensor],
) -> Result<(Tensor, Vec<Tensor>)> {
    let value =
        f(primals)?.into_outputs().into_iter().next().ok_or_else(|| Error::value("hvp: the function has no output"))?;
    let (_, hv) = jvp(|xs: &[Tensor]| gradients(&f, xs), primals, tangents)?;
    Ok((value, hv))
}
