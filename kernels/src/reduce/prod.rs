//! `prod` (every element) and `prod.dim_int` (structured, one dim).
//!
//! The dtype rules are `sum`'s: the `dtype` argument, else an `out=` tensor's dtype, else i64
//! for integral and bool inputs, else the input's dtype. The input is converted to the output
//! dtype first (as PyTorch's `make_reduction_from_out_ty`) and multiplied in its math type:
//! f32 for f16/bf16 (rounded once at the end), wrapping for integers, `&&` for bool. An empty
//! reduction gives 1.

use super::{infer_out_dtype, set_reduction_output};
use crate::generated::decls::{ProdCpu, ProdIntOutMetaFn, ProdMeta, ProdOutCpu};
use crate::iter::{make_reduction, reduce_kernel, to_dtype, OpMath, StructuredOutputs};
use crate::{Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{match_dtype, DType, MemoryFormat, Result, Tensor};

/// Multiplication of an element type in its math type, with its identity.
trait ProdElem: OpMath {
    const ONE: Self::Math;
    fn mul(a: Self::Math, b: Self::Math) -> Self::Math;
}

macro_rules! prod_int {
    ($($t:ty),*) => {$(
        impl ProdElem for $t {
            const ONE: $t = 1;
            #[inline(always)]
            fn mul(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
        }
    )*};
}
prod_int!(u8, i8, i16, i32, i64);

macro_rules! prod_float {
    ($($t:ty => $m:ty),*) => {$(
        impl ProdElem for $t {
            const ONE: $m = 1.0;
            #[inline(always)]
            fn mul(a: $m, b: $m) -> $m { a * b }
        }
    )*};
}
prod_float!(f32 => f32, f64 => f64, f16 => f32, bf16 => f32);

impl ProdElem for bool {
    const ONE: bool = true;
    #[inline(always)]
    fn mul(a: bool, b: bool) -> bool {
        a && b
    }
}

fn prod_loop<T: ProdElem>(iter: &crate::iter::TensorIterator) {
    reduce_kernel::<T, T::Math, T>(iter, T::ONE, T::mul, T::mul, T::from_math);
}

/// The product of `self_` over `dim` (`None`: every dim) into `out`, which has the reduction
/// shape already; computed in `out`'s dtype.
fn prod_into(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, out: &Tensor) -> Result<()> {
    let input = to_dtype(self_, out.dtype())?;
    let iter = make_reduction(out, &input, dim, keepdim)?;
    match_dtype!(out.dtype(), T => prod_loop::<T>(&iter));
    Ok(())
}

/// `prod(self, dtype)`'s result: 0-dim, in the dtype `sum` would use.
pub(super) fn prod_all_output(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    let out_dtype = infer_out_dtype(self_, dtype, None);
    Tensor::empty(&[], out_dtype, self_.device(), MemoryFormat::Contiguous)
}

impl ProdCpu for Cpu {
    fn prod(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
        let out = prod_all_output(self_, dtype)?;
        prod_into(self_, None, false, &out)?;
        Ok(out)
    }
}

impl ProdMeta for Meta {
    fn prod(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
        prod_all_output(self_, dtype)
    }
}

/// `prod.dim_int`'s meta function: the reduction shape over the (wrapped) dim, in the dtype
/// `sum` would use.
impl ProdIntOutMetaFn for Meta {
    fn prod_int_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        dim: i64,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<()> {
        let out_dtype = infer_out_dtype(self_, dtype, outs.maybe_get_output(0));
        set_reduction_output(outs, 0, self_, Some(&[dim]), keepdim, out_dtype)
    }
}

impl ProdOutCpu for Cpu {
    fn prod_out(self_: &Tensor, dim: i64, keepdim: bool, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        prod_into(self_, Some(&[dim]), keepdim, out)
    }
}
