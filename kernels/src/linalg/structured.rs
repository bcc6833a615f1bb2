//! Matrices built from pieces: `diag`, `diagflat`, `block_diag` and `cartesian_prod`.
//! CompositeImplicitAutograd over `diag_embed`, `diagonal`, `constant_pad_nd`, `cat`,
//! `meshgrid` and `stack`.

use crate::generated::decls::{
    BlockDiagCompositeImplicit, CartesianProdCompositeImplicit, DiagCompositeImplicit, DiagflatCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, MemoryFormat, Result, Scalar, Tensor};

impl DiagCompositeImplicit for Composite {
    fn diag(self_: &Tensor, diagonal: i64) -> Result<Tensor> {
        match self_.dim() {
            1 => ops::diag_embed::call(self_, diagonal, 0, 1),
            2 => ops::deep_clone::call(&ops::diagonal::call(self_, diagonal, 0, 1)?, Some(MemoryFormat::Contiguous)),
            d => Err(Error::runtime(format!("diag(): Supports 1D or 2D tensors. Got {d}D"))),
        }
    }
}

impl DiagflatCompositeImplicit for Composite {
    fn diagflat(self_: &Tensor, offset: i64) -> Result<Tensor> {
        ops::diag_embed::call(&ops::reshape::call(self_, &[-1])?, offset, 0, 1)
    }
}

impl BlockDiagCompositeImplicit for Composite {
    fn block_diag(tensors: &[Tensor]) -> Result<Tensor> {
        let mut dtype = tensors[0].dtype();
        for t in &tensors[1..] {
            dtype = oxten_runtime::promote_types(dtype, t.dtype());
        }
        let mut blocks = Vec::with_capacity(tensors.len());
        for (i, t) in tensors.iter().enumerate() {
            let b = match t.dim() {
                0 => ops::reshape::call(t, &[1, 1])?,
                1 => ops::reshape::call(t, &[1, -1])?,
                2 => t.clone(),
                d => {
                    return Err(Error::runtime(format!(
                        "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {d} dimensions"
                    )))
                }
            };
            blocks.push(b.try_to_dtype(dtype)?);
        }
        let total: i64 = blocks.iter().map(|b| b.sizes()[1]).sum();
        let mut col = 0;
        let mut rows = Vec::with_capacity(blocks.len());
        for b in &blocks {
            let w = b.sizes()[1];
            rows.push(ops::constant_pad_nd::call(b, &[col, total - col - w], Scalar::Int(0))?);
            col += w;
        }
        ops::cat::call(&rows, 0)
    }
}

impl CartesianProdCompositeImplicit for Composite {
    fn cartesian_prod(tensors: &[Tensor]) -> Result<Tensor> {
        for t in tensors {
            if t.dim() != 1 {
                return Err(Error::runtime(format!("Expect a 1D vector, but got shape {:?}", &t.sizes()[..])));
            }
        }
        if tensors.len() == 1 {
            return Ok(tensors[0].clone());
        }
        let grids = ops::meshgrid_indexing::call(tensors, "ij")?;
        let flat = grids.iter().map(|g| ops::reshape::call(g, &[-1])).collect::<Result<Vec<_>>>()?;
        ops::stack::call(&flat, 1)
    }
}
