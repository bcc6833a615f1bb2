//! Cases for the core elementwise, view and matmul entries.

use super::{case, fresh, Case, Rng};
use oxten::options::*;
use oxten::{ops, DType, MemoryFormat, Scalar, Tensor};

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    let alpha = |a: f64| AddOpts { alpha: Scalar::Float(a) };
    vec![
        // ---- binary arithmetic ----
        case("add.Tensor", "alpha", vec![r.any(&[2, 3]), r.any(&[2, 3])], move |x| {
            x[0].try_add_with(&x[1], alpha(2.5))
        }),
        case("add.Tensor", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| x[0].try_add(&x[1])),
        case("add.Tensor", "transposed", vec![r.transposed(&[2, 3]), r.any(&[2, 1])], |x| x[0].try_add(&x[1])),
        case("add.Tensor", "in-place", vec![r.any(&[2, 3]), r.any(&[3])], move |x| {
            fresh(&x[0])?.try_add_with_(&x[1], AddInplaceOpts { alpha: Scalar::Float(-1.5) })
        }),
        case("add.Scalar", "", vec![r.any(&[4])], |x| x[0].try_add_scalar(1.5)),
        case("add.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_add_scalar_(1.5)),
        case("sub.Tensor", "alpha, broadcast", vec![r.any(&[2, 3]), r.any(&[2, 1])], |x| {
            x[0].try_sub_with(&x[1], SubOpts { alpha: Scalar::Float(0.5) })
        }),
        case("sub.Tensor", "in-place", vec![r.transposed(&[2, 3]), r.any(&[3])], |x| fresh(&x[0])?.try_sub_(&x[1])),
        case("sub.Scalar", "", vec![r.any(&[4])], |x| x[0].try_sub_scalar(0.5)),
        case("sub.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_sub_scalar_(0.5)),
        case("mul.Tensor", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| x[0].try_mul(&x[1])),
        case("mul.Tensor", "transposed", vec![r.transposed(&[3, 2]), r.transposed(&[3, 2])], |x| x[0].try_mul(&x[1])),
        case("mul.Tensor", "same input twice", vec![r.any(&[3])], |x| x[0].try_mul(&x[0])),
        case("mul.Tensor", "in-place", vec![r.any(&[2, 3]), r.any(&[2, 3])], |x| fresh(&x[0])?.try_mul_(&x[1])),
        case("mul.Tensor", "in-place on a slice of a base", vec![r.any(&[4, 2]), r.any(&[2])], |x| {
            let base = fresh(&x[0])?;
            base.try_slice(0, Some(1), Some(3), 1)?.try_mul_(&x[1])?;
            Ok(base)
        }),
        case("mul.Scalar", "", vec![r.any(&[4])], |x| x[0].try_mul_scalar(-3.0)),
        case("mul.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_mul_scalar_(-3.0)),
        case("div.Tensor", "broadcast", vec![r.any(&[2, 3]), r.pos(&[2, 1])], |x| x[0].try_div(&x[1])),
        case("div.Tensor", "in-place", vec![r.any(&[2, 3]), r.pos(&[3])], |x| fresh(&x[0])?.try_div_(&x[1])),
        case("div.Scalar", "", vec![r.any(&[4])], |x| x[0].try_div_scalar(4.0)),
        case("div.Scalar", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_div_scalar_(4.0)),
        case("maximum", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| x[0].try_maximum(&x[1])),
        case("minimum", "broadcast", vec![r.any(&[2, 3]), r.any(&[2, 1])], |x| x[0].try_minimum(&x[1])),
        case("pow.Tensor_Scalar", "float exponent", vec![r.pos(&[2, 3])], |x| x[0].try_pow_tensor_scalar(2.5)),
        case("pow.Tensor_Scalar", "int exponent", vec![r.any(&[5])], |x| x[0].try_pow_tensor_scalar(3)),
        case("pow.Tensor_Scalar", "exponent 0", vec![r.any(&[3])], |x| x[0].try_pow_tensor_scalar(0)),
        case("pow.Tensor_Scalar", "in-place", vec![r.pos(&[4])], |x| fresh(&x[0])?.try_pow_scalar_(1.5)),
        // ---- unary ----
        case("neg", "", vec![r.transposed(&[2, 3])], |x| x[0].try_neg()),
        case("neg", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_neg_()),
        case("abs", "", vec![r.away_from_zero(&[6])], |x| x[0].try_abs()),
        case("abs", "in-place", vec![r.away_from_zero(&[6])], |x| fresh(&x[0])?.try_abs_()),
        case("exp", "", vec![r.transposed(&[2, 3])], |x| x[0].try_exp()),
        case("exp", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_exp_()),
        case("log", "", vec![r.pos(&[5])], |x| x[0].try_log()),
        case("log", "in-place", vec![r.pos(&[5])], |x| fresh(&x[0])?.try_log_()),
        case("sqrt", "", vec![r.pos(&[5])], |x| x[0].try_sqrt()),
        case("sqrt", "in-place", vec![r.pos(&[5])], |x| fresh(&x[0])?.try_sqrt_()),
        case("rsqrt", "", vec![r.pos(&[5])], |x| x[0].try_rsqrt()),
        case("rsqrt", "in-place", vec![r.pos(&[5])], |x| fresh(&x[0])?.try_rsqrt_()),
        case("sin", "", vec![r.transposed(&[2, 3])], |x| x[0].try_sin()),
        case("sin", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_sin_()),
        case("cos", "", vec![r.any(&[5])], |x| x[0].try_cos()),
        case("cos", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_cos_()),
        case("tanh", "", vec![r.any(&[5])], |x| x[0].try_tanh()),
        case("tanh", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_tanh_()),
        case("sigmoid", "", vec![r.any(&[5])], |x| x[0].try_sigmoid()),
        case("sigmoid", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_sigmoid_()),
        case("silu", "", vec![r.any(&[5])], |x| x[0].try_silu()),
        case("silu", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_silu_()),
        case("relu", "", vec![r.away_from_zero(&[6])], |x| x[0].try_relu()),
        case("relu", "in-place", vec![r.away_from_zero(&[6])], |x| fresh(&x[0])?.try_relu_()),
        case("gelu", "none", vec![r.any(&[6])], |x| x[0].try_gelu()),
        case("gelu", "tanh", vec![r.any(&[6])], |x| x[0].try_gelu_with(GeluOpts { approximate: "tanh" })),
        case("gelu", "in-place", vec![r.any(&[4])], |x| {
            fresh(&x[0])?.try_gelu_with_(GeluInplaceOpts { approximate: "tanh" })
        }),
        case("clamp", "min and max", vec![r.distinct(&[8])], |x| {
            x[0].try_clamp_with(ClampOpts { min: Some(Scalar::Float(-0.45)), max: Some(Scalar::Float(0.6)) })
        }),
        case("clamp", "min only, in-place", vec![r.distinct(&[8])], |x| {
            fresh(&x[0])?.try_clamp_with_(ClampInplaceOpts { min: Some(Scalar::Float(-0.45)), max: None })
        }),
        case("clamp.Tensor", "broadcast bounds", vec![r.any(&[2, 3]), r.any(&[3]), r.any(&[2, 1])], |x| {
            let (lo, hi) = (x[1].try_sub_scalar(0.5)?, x[2].try_add_scalar(0.5)?);
            ops::clamp_tensor::call(&x[0], Some(&lo), Some(&hi))
        }),
        case("clamp.Tensor", "min only", vec![r.any(&[2, 3]), r.any(&[3])], |x| {
            ops::clamp_tensor::call(&x[0], Some(&x[1]), None)
        }),
        case("where.self", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| {
            let cond = Tensor::from_vec(vec![true, false, true, false, false, true], &[2, 3])?;
            x[0].try_where_self(&cond, &x[1])
        }),
        // ---- reductions ----
        case("sum", "", vec![r.transposed(&[2, 3])], |x| x[0].try_sum()),
        case("sum.dim_IntList", "dim 1", vec![r.any(&[2, 3])], |x| x[0].try_sum_dim_intlist(Some(&[1]), false)),
        case("sum.dim_IntList", "dims (0, -1), keepdim", vec![r.any(&[2, 3, 2])], |x| {
            x[0].try_sum_dim_intlist_with(Some(&[0, -1]), true, SumDimIntlistOpts { dtype: None })
        }),
        case("sum.dim_IntList", "all dims", vec![r.any(&[2, 3])], |x| x[0].try_sum_dim_intlist(None, false)),
        case("mean.dim", "dim 0", vec![r.transposed(&[2, 3])], |x| x[0].try_mean_dim(Some(&[0]), false)),
        case("mean.dim", "all dims, keepdim", vec![r.any(&[2, 3])], |x| {
            x[0].try_mean_dim_with(None, true, MeanDimOpts { dtype: None })
        }),
        case("amax", "dim 1", vec![r.distinct(&[2, 4])], |x| x[0].try_amax(&[1], false)),
        case("amax", "all dims", vec![r.distinct(&[2, 3])], |x| x[0].try_amax(&[], false)),
        case("amin", "dim 0, keepdim", vec![r.distinct(&[3, 2])], |x| {
            x[0].try_amin_with(AminOpts { dim: &[0], keepdim: true })
        }),
        Case {
            op: "max.dim",
            what: "values (indices are not differentiable)",
            inputs: vec![r.distinct(&[3, 4])],
            f: Box::new(|x| {
                let (values, indices) = x[0].try_max_dim(1, false)?;
                Ok(vec![values, indices])
            }),
            gradgrad: true,
            eps: 1e-6,
        },
        case("max.dim", "keepdim", vec![r.distinct(&[3, 4])], |x| Ok(x[0].try_max_dim(0, true)?.0)),
        // ---- matrix products ----
        case("mm", "", vec![r.any(&[2, 3]), r.any(&[3, 4])], |x| x[0].try_mm(&x[1])),
        case("mm", "transposed (column-major) self", vec![r.transposed(&[3, 2]), r.any(&[2, 4])], |x| {
            x[0].try_mm(&x[1])
        }),
        case("mm", "transposed (column-major) mat2", vec![r.any(&[2, 3]), r.transposed(&[3, 4])], |x| {
            x[0].try_mm(&x[1])
        }),
        case("mm", "x.mm(w.t()), as a linear layer", vec![r.any(&[2, 3]), r.any(&[4, 3])], |x| {
            x[0].try_mm(&x[1].try_t()?)
        }),
        case("mm", "same input twice", vec![r.any(&[3, 3])], |x| x[0].try_mm(&x[0])),
        // ---- writes ----
        case("fill_.Scalar", "", vec![r.any(&[4])], |x| fresh(&x[0])?.try_fill_scalar_(2.0)),
        case("zero", "", vec![r.transposed(&[2, 3])], |x| ops::zero::call(&x[0])),
        case("zero", "in-place", vec![r.any(&[4])], |x| fresh(&x[0])?.try_zero_()),
        case("copy_", "broadcast source", vec![r.any(&[2, 3]), r.any(&[3])], |x| {
            fresh(&x[0])?.try_copy_(&x[1])?.try_mul(&x[0])
        }),
        case("copy_", "into a slice of a base", vec![r.any(&[4]), r.any(&[2])], |x| {
            let base = fresh(&x[0])?;
            base.try_slice(0, Some(1), Some(3), 1)?.try_copy_(&x[1])?;
            base.try_mul(&base)
        }),
        // ---- copies ----
        case("_to_copy", "to contiguous", vec![r.transposed(&[2, 3])], |x| {
            oxten::ops::_to_copy::call(&x[0], None, None, None, None, false, Some(MemoryFormat::Contiguous))
        }),
        Case {
            eps: 1e-3, // f32 rounding (~1e-7) is then well below the tolerance
            ..case("_to_copy", "through float32 and back", vec![r.any(&[3])], |x| {
                x[0].try_to_dtype(DType::F32)?.try_to_dtype(DType::F64)
            })
        },
        case("clone", "", vec![r.transposed(&[2, 3])], |x| x[0].try_deep_clone()),
        // ---- views ----
        case("as_strided", "transpose", vec![r.any(&[2, 3])], |x| x[0].try_as_strided(&[3, 2], &[1, 3])),
        case("as_strided", "offset window", vec![r.any(&[3, 3])], |x| {
            x[0].try_as_strided_with(&[2, 2], &[3, 1], AsStridedOpts { storage_offset: Some(4) })
        }),
        case("as_strided", "expanded (stride 0)", vec![r.any(&[3])], |x| x[0].try_as_strided(&[2, 3], &[0, 1])),
        case("view", "", vec![r.any(&[2, 3])], |x| x[0].try_view(&[3, 2])?.try_mul_scalar(2.0)),
        case("alias", "", vec![r.any(&[2, 3])], |x| x[0].try_t()?.try_alias()?.try_mul_scalar(2.0)),
        case("permute", "", vec![r.any(&[2, 3, 4])], |x| x[0].try_permute(&[2, 0, 1])?.try_mul_scalar(2.0)),
        case("transpose.int", "", vec![r.any(&[2, 3])], |x| x[0].try_transpose(0, 1)?.try_exp()),
        case("t", "", vec![r.any(&[2, 3])], |x| x[0].try_t()?.try_sin()),
        case("expand", "", vec![r.any(&[3, 1])], |x| x[0].try_expand(&[2, 3, 4])?.try_mul_scalar(1.0)),
        case("squeeze", "", vec![r.any(&[1, 3, 1])], |x| x[0].try_squeeze()?.try_exp()),
        case("squeeze.dim", "size-1 dim", vec![r.any(&[1, 3])], |x| x[0].try_squeeze_dim(0)?.try_exp()),
        case("squeeze.dim", "other dim (no-op)", vec![r.any(&[2, 3])], |x| x[0].try_squeeze_dim(-1)?.try_exp()),
        case("unsqueeze", "", vec![r.any(&[2, 3])], |x| x[0].try_unsqueeze(1)?.try_exp()),
        case("slice.Tensor", "step 2", vec![r.any(&[2, 5])], |x| x[0].try_slice(1, Some(1), Some(5), 2)?.try_exp()),
        case("select.int", "", vec![r.any(&[3, 4])], |x| x[0].try_select(0, 1)?.try_exp()),
        case("select.int", "negative index, transposed", vec![r.transposed(&[3, 4])], |x| {
            x[0].try_select(1, -1)?.try_exp()
        }),
    ]
}
