//! `one_hot`: int64 class indices to a trailing dimension of 0/1 (a composite of `zeros` and
//! `scatter`, as PyTorch's).

use crate::generated::decls::OneHotCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

impl OneHotCompositeImplicit for Composite {
    fn one_hot(self_: &Tensor, num_classes: i64) -> Result<Tensor> {
        if self_.dtype() != DType::I64 {
            return Err(Error::dtype("one_hot is only applicable to index tensor of type LongTensor."));
        }
        let mut shape = self_.sizes().to_vec();
        if self_.numel() == 0 {
            if num_classes <= 0 {
                return Err(Error::runtime("Can not infer total number of classes from empty tensor."));
            }
            shape.push(num_classes);
            return ops::zeros::call(&shape, Some(DType::I64), None, Some(self_.device()), None);
        }
        if self_.try_min()?.item::<i64>()? < 0 {
            return Err(Error::runtime("Class values must be non-negative."));
        }
        let max = self_.try_max()?.item::<i64>()?;
        let classes = if num_classes == -1 {
            max + 1
        } else if max >= num_classes {
            return Err(Error::runtime("Class values must be smaller than num_classes."));
        } else {
            num_classes
        };
        shape.push(classes);
        let zeros = ops::zeros::call(&shape, Some(DType::I64), None, Some(self_.device()), None)?;
        ops::scatter_value::call(&zeros, -1, &self_.try_unsqueeze(-1)?, Scalar::Int(1))
    }
}
