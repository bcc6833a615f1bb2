//! `linalg.multi_dot`: a chain of matrix products multiplied in the order that needs the fewest
//! scalar multiplications (the textbook dynamic programme, ties to the leftmost split as in
//! PyTorch, so results round the same way). CompositeImplicitAutograd over `mm`.

use crate::generated::decls::LinalgMultiDotCompositeImplicit;
use crate::support::type_meta_name;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

fn shape(t: &Tensor) -> String {
    format!("{:?}", t.sizes())
}

impl LinalgMultiDotCompositeImplicit for Composite {
    /// A 1-D first operand is a row vector and a 1-D last one a column vector; their dimension
    /// is dropped from the result.
    fn linalg_multi_dot(tensors: &[Tensor]) -> Result<Tensor> {
        let n = tensors.len();
        if n < 2 {
            return Err(Error::runtime(format!("multi_dot(): expected at least 2 tensors but got {n}")));
        }
        let mut out_shape = Vec::new();
        let mut chain: Vec<Tensor> = tensors.to_vec();
        match tensors[0].dim() {
            1 => chain[0] = ops::unsqueeze::call(&tensors[0], 0)?,
            2 => out_shape.push(tensors[0].sizes()[0]),
            d => return Err(Error::runtime(format!("multi_dot(): the first tensor must be 1D or 2D but got {d}D"))),
        }
        match tensors[n - 1].dim() {
            1 => chain[n - 1] = ops::unsqueeze::call(&tensors[n - 1], -1)?,
            2 => out_shape.push(tensors[n - 1].sizes()[1]),
            d => return Err(Error::runtime(format!("multi_dot(): the last tensor must be 1D or 2D but got {d}D"))),
        }
        for (i, t) in tensors.iter().enumerate().take(n - 1).skip(1) {
            if t.dim() != 2 {
                return Err(Error::runtime(format!("multi_dot(): tensor {i} must be 2D but got {}D", t.dim())));
            }
        }
        for i in 1..n {
            if chain[i].dtype() != chain[0].dtype() {
                return Err(Error::runtime(format!(
                    "multi_dot(): all tensors must have be the same dtype but tensor 0 is {} and tensor {i} {}",
                    type_meta_name(chain[0].dtype()),
                    type_meta_name(chain[i].dtype())
                )));
            }
            if chain[i].device() != chain[0].device() {
                return Err(Error::runtime(format!(
                    "multi_dot(): all tensors must be on the same device but tensor 0 is on {} and tensor {i} on {}",
                    chain[0].device(),
                    chain[i].device()
                )));
            }
            if chain[i - 1].sizes()[1] != chain[i].sizes()[0] {
                return Err(Error::runtime(format!(
                    "multi_dot(): tensors {} and {i} with shapes {} and {} cannot be multiplied",
                    i - 1,
                    shape(&tensors[i - 1]),
                    shape(&tensors[i])
                )));
            }
        }
        let result = if n == 2 {
            ops::mm::call(&chain[0], &chain[1])?
        } else {
            let split = chain_order(&chain);
            multiply(&chain, &split, 0, n - 1)?
        };
        ops::view::call(&result, &out_shape)
    }
}

/// `split[i][j]`: where the best order for matrices `i..=j` splits the chain.
fn chain_order(chain: &[Tensor]) -> Vec<Vec<usize>> {
    let n = chain.len();
    // Dimensions p[0] x p[1], p[1] x p[2], ...; costs saturate (only their order matters).
    let mut p: Vec<u128> = vec![chain[0].sizes()[0] as u128];
    p.extend(chain.iter().map(|t| t.sizes()[1] as u128));
    let mut cost = vec![vec![0u128; n]; n];
    let mut split = vec![vec![0usize; n]; n];
    for len in 1..n {
        for i in 0..n - len {
            let j = i + len;
            cost[i][j] = u128::MAX;
            for k in i..j {
                let q = cost[i][k].saturating_add(cost[k + 1][j]).saturating_add(p[i] * p[k + 1] * p[j + 1]);
                if q < cost[i][j] {
                    cost[i][j] = q;
                    split[i][j] = k;
                }
            }
        }
    }
    split
}

fn multiply(chain: &[Tensor], split: &[Vec<usize>], i: usize, j: usize) -> Result<Tensor> {
    if i == j {
        return Ok(chain[i].clone());
    }
    let k = split[i][j];
    ops::mm::call(&multiply(chain, split, i, k)?, &multiply(chain, split, k + 1, j)?)
}
