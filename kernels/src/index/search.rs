//! `put`, `argwhere` and `isin`: CompositeImplicitAutograd over `index_put`, `nonzero` and
//! `eq`/`any`.

use crate::generated::decls::{
    ArgwhereCompositeImplicit, IsinCompositeImplicit, IsinScalarTensorCompositeImplicit,
    IsinTensorScalarCompositeImplicit, PutCompositeImplicit,
};
use crate::support::type_meta_name;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

impl PutCompositeImplicit for Composite {
    fn put(self_: &Tensor, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<Tensor> {
        if index.dtype() != DType::I64 {
            return Err(Error::index(format!(
                "put_(): Expected a long tensor for index, but got {}",
                type_meta_name(index.dtype())
            )));
        }
        if source.dtype() != self_.dtype() {
            return Err(Error::runtime(format!(
                "put_(): self and source expected to have the same dtype, but got self.dtype = {} and source.dtype = {}",
                type_meta_name(self_.dtype()),
                type_meta_name(source.dtype())
            )));
        }
        if source.numel() != index.numel() {
            return Err(Error::runtime(format!(
                "put_(): Expected source and index to have the same number of elements, but got source.numel() = {}, index.numel() = {}",
                source.numel(),
                index.numel()
            )));
        }
        let flat = ops::reshape::call(self_, &[-1])?;
        let idx = ops::reshape::call(index, &[-1])?;
        let put = ops::index_put::call(&flat, &[Some(idx)], &ops::reshape::call(source, &[-1])?, accumulate)?;
        ops::reshape::call(&put, &self_.sizes())
    }
}

impl ArgwhereCompositeImplicit for Composite {
    fn argwhere(self_: &Tensor) -> Result<Tensor> {
        ops::nonzero::call(self_)
    }
}

/// Whether each element equals one of the test elements: one comparison of every pair.
fn member(elements: &Tensor, test_elements: &Tensor, invert: bool) -> Result<Tensor> {
    let tests = ops::reshape::call(test_elements, &[-1])?;
    let pairs = ops::eq::call(&elements.try_unsqueeze(-1)?, &tests)?;
    let found = ops::any_dim::call(&pairs, -1, false)?;
    if invert {
        found.try_logical_not()
    } else {
        Ok(found)
    }
}

impl IsinCompositeImplicit for Composite {
    fn isin(elements: &Tensor, test_elements: &Tensor, _assume_unique: bool, invert: bool) -> Result<Tensor> {
        member(elements, test_elements, invert)
    }
}

impl IsinTensorScalarCompositeImplicit for Composite {
    fn isin_tensor_scalar(
        elements: &Tensor,
        test_element: Scalar,
        _assume_unique: bool,
        invert: bool,
    ) -> Result<Tensor> {
        let found = ops::eq_scalar::call(elements, test_element)?;
        if invert {
            found.try_logical_not()
        } else {
            Ok(found)
        }
    }
}

impl IsinScalarTensorCompositeImplicit for Composite {
    fn isin_scalar_tensor(
        element: Scalar,
        test_elements: &Tensor,
        _assume_unique: bool,
        invert: bool,
    ) -> Result<Tensor> {
        let e = ops::scalar_tensor::call(element, None, None, Some(test_elements.device()), None)?;
        let e = match element {
            Scalar::Float(_) => e,
            Scalar::Int(_) => e.try_to_dtype(DType::I64)?,
            Scalar::Bool(_) => e.try_to_dtype(DType::Bool)?,
        };
        member(&e, test_elements, invert)
    }
}
