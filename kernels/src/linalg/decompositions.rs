//! The public forms of the QR, symmetric eigen- and singular value decompositions:
//! CompositeImplicitAutograd over the kernels `linalg_qr`, `_linalg_eigh` and `_linalg_svd`
//! (whose derivatives are defined), as PyTorch's. The values-only forms (`linalg_eigvalsh`,
//! `linalg_svdvals`) skip the vectors unless a gradient or tangent will need them.

use super::factor::check_is_matrix;
use crate::generated::decls::{
    LinalgEighCompositeImplicit, LinalgEigvalshCompositeImplicit, LinalgSvdCompositeImplicit,
    LinalgSvdvalsCompositeImplicit, QrCompositeImplicit, SvdCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::autograd::{forward_ad, is_grad_enabled};
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

/// PyTorch's `_may_require_fw_or_bw_grad`: whether `a` takes part in a backward or forward
/// derivative, so that a values-only decomposition must compute the vectors too.
fn may_require_grad(a: &Tensor) -> bool {
    (is_grad_enabled() && a.requires_grad()) || !forward_ad::levels_of(&[Some(a)]).is_empty()
}

/// PyTorch's check of `driver=`: a cuSOLVER algorithm, for CUDA inputs only.
fn check_driver(a: &Tensor, driver: Option<&str>) -> Result<()> {
    if driver.is_some() && a.device() == oxten_runtime::Device::Cpu {
        return Err(Error::runtime(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.",
        ));
    }
    Ok(())
}

impl QrCompositeImplicit for Composite {
    fn qr(self_: &Tensor, some: bool) -> Result<(Tensor, Tensor)> {
        ops::linalg_qr::call(self_, if some { "reduced" } else { "complete" })
    }
}

impl LinalgEighCompositeImplicit for Composite {
    fn linalg_eigh(self_: &Tensor, uplo: &str) -> Result<(Tensor, Tensor)> {
        ops::_linalg_eigh::call(self_, uplo, true)
    }
}

impl LinalgEigvalshCompositeImplicit for Composite {
    fn linalg_eigvalsh(self_: &Tensor, uplo: &str) -> Result<Tensor> {
        Ok(ops::_linalg_eigh::call(self_, uplo, may_require_grad(self_))?.0)
    }
}

impl LinalgSvdCompositeImplicit for Composite {
    fn linalg_svd(a: &Tensor, full_matrices: bool, driver: Option<&str>) -> Result<(Tensor, Tensor, Tensor)> {
        check_driver(a, driver)?;
        ops::_linalg_svd::call(a, full_matrices, true)
    }
}

impl LinalgSvdvalsCompositeImplicit for Composite {
    fn linalg_svdvals(a: &Tensor, driver: Option<&str>) -> Result<Tensor> {
        check_driver(a, driver)?;
        Ok(ops::_linalg_svd::call(a, false, may_require_grad(a))?.1)
    }
}

impl SvdCompositeImplicit for Composite {
    fn svd(self_: &Tensor, some: bool, compute_uv: bool) -> Result<(Tensor, Tensor, Tensor)> {
        check_is_matrix("linalg.svd", "A", self_)?;
        if compute_uv {
            let (u, s, vh) = ops::linalg_svd::call(self_, !some, None)?;
            return Ok((u, s, ops::transpose::call(&vh, -2, -1)?));
        }
        // Without the vectors, `U` and `V` are zero `m x m` and `n x n` matrices.
        let s = ops::linalg_svdvals::call(self_, None)?;
        let sizes = self_.sizes();
        let (m, n) = (sizes[sizes.len() - 2], sizes[sizes.len() - 1]);
        let zeros = |k: i64| {
            let mut shape = sizes[..sizes.len() - 2].to_vec();
            shape.extend([k, k]);
            ops::full::call(&shape, Scalar::Int(0), Some(self_.dtype()), None, Some(self_.device()), None)
        };
        Ok((zeros(m)?, s, zeros(n)?))
    }
}
