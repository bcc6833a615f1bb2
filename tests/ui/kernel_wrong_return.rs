// The meta function of `sum.IntList_out` must return `Result<()>`; returning a tensor is caught.
use oxten::iter::StructuredOutputs;
use oxten::{DType, Result, Tensor};
use oxten_kernels::generated::decls::SumIntlistOutMetaFn;

struct MyMeta;

impl SumIntlistOutMetaFn for MyMeta {
    fn sum_intlist_out(
        _outs: &mut StructuredOutputs,
        self_: &Tensor,
        _dim: Option<&[i64]>,
        _keepdim: bool,
        _dtype: Option<DType>,
    ) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

fn main() {}
