//! `gradcheck` itself: it passes correct formulas, fails a wrong one in both modes with a
//! message showing both Jacobians and the node, is deterministic, and checks second derivatives.
//! Also the gradient conventions gradcheck cannot see (ties of max/min and amax).

use oxten::autograd::{
    collect_next_edges, gradcheck, gradgradcheck, no_grad, set_history, GradcheckOpts, Node, NodeBase, SavedVariable,
};
use oxten::{Result, Tensor};
use std::sync::Arc;

fn leaf(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len() as i64]).unwrap().requires_grad_(true)
}

/// `sin` with a backward that is twice too large, recorded by a hand-built node.
struct DoubledSinBackward {
    base: NodeBase,
    x: SavedVariable,
}

impl Node for DoubledSinBackward {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "DoubledSinBackward".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = grads.into_iter().next().flatten() else { return Ok(vec![None]) };
        let x = self.x.unpack(self)?;
        Ok(vec![Some(g.try_mul(&x.try_cos()?)?.try_mul_scalar(2.0)?)])
    }
    fn release_variables(&self) {
        self.x.reset();
    }
}

fn wrong_sin(x: &Tensor) -> Result<Tensor> {
    let out = no_grad(|| x.try_sin())?;
    if x.requires_grad() {
        let node = DoubledSinBackward {
            base: NodeBase::new(collect_next_edges(&[Some(x)])),
            x: SavedVariable::new(x, false)?,
        };
        set_history(&[&out], Arc::new(node));
    }
    Ok(out)
}

#[test]
fn correct_sin_passes_in_both_modes() {
    let x = leaf(&[0.3, -1.2, 2.0, 0.0]);
    gradcheck(|t: &[Tensor]| t[0].try_sin(), std::slice::from_ref(&x), GradcheckOpts::default()).unwrap();
    gradcheck(|t: &[Tensor]| t[0].try_sin(), &[x], GradcheckOpts { fast_mode: true, seed: 3, ..Default::default() })
        .unwrap();
}

#[test]
fn a_wrong_formula_fails_in_both_modes() {
    let x = leaf(&[0.3, -1.2, 2.0]);
    let slow =
        gradcheck(|t: &[Tensor]| wrong_sin(&t[0]), std::slice::from_ref(&x), GradcheckOpts::default()).unwrap_err();
    let msg = slow.to_string();
    assert!(msg.contains("gradcheck failed"), "{msg}");
    assert!(msg.contains("DoubledSinBackward"), "the message names the node: {msg}");
    assert!(msg.contains("numerical:") && msg.contains("analytical:"), "{msg}");
    // cos(0.3) numerically, twice that analytically.
    assert!(msg.contains(&format!("{:10.6}", 0.3f64.cos())), "{msg}");
    assert!(msg.contains(&format!("{:10.6}", 2.0 * 0.3f64.cos())), "{msg}");

    let fast = |seed| {
        gradcheck(
            |t: &[Tensor]| wrong_sin(&t[0]),
            std::slice::from_ref(&x),
            GradcheckOpts { fast_mode: true, seed, ..Default::default() },
        )
        .unwrap_err()
        .to_string()
    };
    let msg = fast(11);
    assert!(msg.contains("fast mode, seed 11") && msg.contains("vᵀJu"), "{msg}");
    assert!(msg.contains("DoubledSinBackward"), "{msg}");
    // Seeded: the same seed gives the same report.
    assert_eq!(fast(11), msg);
}

#[test]
fn gradcheck_covers_every_input_and_output() {
    // Two outputs, two inputs; the second input only reaches the second output.
    let a = leaf(&[0.5, 1.5]);
    let b = leaf(&[2.0, -1.0]);
    gradcheck(
        |t: &[Tensor]| Ok(vec![t[0].try_exp()?, t[0].try_mul(&t[1])?]),
        &[a.clone(), b.clone()],
        GradcheckOpts::default(),
    )
    .unwrap();
    // An input that does not require grad is held constant.
    let c = Tensor::from_vec(vec![3.0f64, 4.0], &[2]).unwrap();
    gradcheck(|t: &[Tensor]| t[0].try_mul(&t[1]), &[a, c], GradcheckOpts::default()).unwrap();
}

#[test]
fn gradcheck_wants_float64() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().requires_grad_(true);
    let e = gradcheck(|t: &[Tensor]| t[0].try_sin(), &[x], GradcheckOpts::default()).unwrap_err();
    assert!(e.to_string().contains("float64"), "{e}");
    let y = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    let e = gradcheck(|t: &[Tensor]| t[0].try_sin(), &[y], GradcheckOpts::default()).unwrap_err();
    assert!(e.to_string().contains("at least one input that requires grad"), "{e}");
}

/// `sin` whose backward is right but computed without recording history, so it cannot be
/// differentiated again.
struct OpaqueSinBackward {
    base: NodeBase,
    x: SavedVariable,
}

impl Node for OpaqueSinBackward {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "OpaqueSinBackward".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = grads.into_iter().next().flatten() else { return Ok(vec![None]) };
        let x = self.x.unpack(self)?;
        Ok(vec![Some(no_grad(|| g.try_mul(&x.try_cos()?))?)])
    }
}

fn opaque_sin(x: &Tensor) -> Result<Tensor> {
    let out = no_grad(|| x.try_sin())?;
    let node =
        OpaqueSinBackward { base: NodeBase::new(collect_next_edges(&[Some(x)])), x: SavedVariable::new(x, false)? };
    set_history(&[&out], Arc::new(node));
    Ok(out)
}

#[test]
fn gradgradcheck_passes_mul_and_fails_a_backward_that_is_not_differentiable() {
    let a = leaf(&[0.5, -1.5, 2.0]);
    let b = leaf(&[1.0, 0.25, -3.0]);
    gradgradcheck(|t: &[Tensor]| t[0].try_mul(&t[1]), &[a.clone(), b], GradcheckOpts::default()).unwrap();
    // First order is right …
    gradcheck(|t: &[Tensor]| opaque_sin(&t[0]), std::slice::from_ref(&a), GradcheckOpts::default()).unwrap();
    // … second order is not.
    let e = gradgradcheck(|t: &[Tensor]| opaque_sin(&t[0]), &[a], GradcheckOpts::default()).unwrap_err();
    assert!(e.to_string().contains("gradcheck failed"), "{e}");
}

#[test]
fn ties_split_the_gradient_like_pytorch() {
    // maximum/minimum: half to each input where they tie.
    let a = leaf(&[1.0, 2.0, 3.0]);
    let b = leaf(&[1.0, 5.0, 0.0]);
    a.try_maximum(&b).unwrap().sum().backward();
    assert_eq!(a.grad().unwrap().to_vec::<f64>().unwrap(), [0.5, 0.0, 1.0]);
    assert_eq!(b.grad().unwrap().to_vec::<f64>().unwrap(), [0.5, 1.0, 0.0]);
    // amax: shared evenly between the maxima.
    let x = leaf(&[3.0, 1.0, 3.0, 3.0]);
    x.amax(&[], false).backward();
    let third = 1.0 / 3.0;
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), [third, 0.0, third, third]);
    // max.dim: all of it to the selected index.
    let y = leaf(&[1.0, 4.0, 2.0]);
    y.max_dim(0, false).0.backward();
    assert_eq!(y.grad().unwrap().to_vec::<f64>().unwrap(), [0.0, 1.0, 0.0]);
}
