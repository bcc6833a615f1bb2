//! The matrix products against PyTorch (tests/golden/linalg.txt, recorded by
//! scripts/golden_linalg.py: mm, addmm, addmm_, bmm, dot, mv, matmul, linear and their out=
//! overloads, baddbmm, addbmm, outer, the cross products and einsum), then `mm` beyond the golden cases: products large enough for `gemm`'s blocking and
//! rayon split, every operand layout (transposed, sliced, expanded), f16/bf16 accumulation,
//! integer wrap-around, `out=` tensors (resized, strided, aliasing an input), meta tensors and
//! autograd through a linear layer. References are computed in f64 by a plain loop.

use oxten::options::{AddmmInplaceOpts, AddmmOpts, AddmmOutOpts, LinearOutOpts};
use oxten::{DType, Device, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::golden::{replay, Case};

const GOLDEN: &str = include_str!("../golden/linalg.txt");

/// Input `i` of a golden case, with the case's `mt` (transpose the last two dims) and `every2`
/// (every other element) attributes applied.
fn input(c: &Case, i: usize) -> Tensor {
    let mut t = c.t(i).clone();
    if c.ints("mt").is_some_and(|v| v.contains(&(i as i64))) {
        t = t.transpose(-2, -1);
    }
    if c.ints("every2").is_some_and(|v| v.contains(&(i as i64))) {
        t = t.slice(0, None, None, 2);
    }
    t
}

/// The `out=` tensor of a case: empty (`out=c`, resized by the op) or a transposed tensor of the
/// result's size (`out=t`, which keeps its strides).
fn out_tensor(c: &Case, dtype: DType, result_sizes: impl FnOnce() -> Result<Vec<i64>>) -> Result<Tensor> {
    match c.attr("out") {
        Some("t") => {
            let s = result_sizes()?;
            Ok(Tensor::empty(&[s[1], s[0]], dtype, Device::Cpu, MemoryFormat::Contiguous)?.t())
        }
        _ => Tensor::empty(&[0], dtype, Device::Cpu, MemoryFormat::Contiguous),
    }
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let x = |i: usize| input(c, i);
    let beta = c.scalar("beta").unwrap_or(Scalar::Int(1));
    let alpha = c.scalar("alpha").unwrap_or(Scalar::Int(1));
    let bias = c.flag("bias").then(|| x(2));
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let dtype = x(0).dtype();
    match c.op.as_str() {
        "mm" => one(x(0).try_mm(&x(1))),
        "mm_out" => {
            let out = out_tensor(c, dtype, || Ok(x(0).try_mm(&x(1))?.sizes().to_vec()))?;
            one(oxten::try_mm_out(&x(0), &x(1), &out))
        }
        "addmm" => one(x(0).try_addmm_with(&x(1), &x(2), AddmmOpts { beta, alpha })),
        "addmm_" => one(x(0).deep_clone().try_addmm_with_(&x(1), &x(2), AddmmInplaceOpts { beta, alpha })),
        "addmm_out" => {
            let out = out_tensor(c, dtype, || Ok(x(0).try_addmm(&x(1), &x(2))?.sizes().to_vec()))?;
            one(oxten::try_addmm_out_with(&x(0), &x(1), &x(2), &out, AddmmOutOpts { beta, alpha }))
        }
        "bmm" => one(x(0).try_bmm(&x(1))),
        "bmm_out" => one(oxten::try_bmm_out(&x(0), &x(1), &out_tensor(c, dtype, || unreachable!())?)),
        "dot" => one(x(0).try_dot(&x(1))),
        "dot_out" => one(oxten::try_dot_out(&x(0), &x(1), &out_tensor(c, dtype, || unreachable!())?)),
        "mv" => one(x(0).try_mv(&x(1))),
        "mv_out" => one(oxten::try_mv_out(&x(0), &x(1), &out_tensor(c, dtype, || unreachable!())?)),
        "matmul" => one(x(0).try_matmul(&x(1))),
        "matmul_out" => {
            let out = out_tensor(c, dtype, || Ok(x(0).try_matmul(&x(1))?.sizes().to_vec()))?;
            one(oxten::try_matmul_out(&x(0), &x(1), &out))
        }
        "linear" => one(oxten::try_linear(&x(0), &x(1), bias.as_ref())),
        "linear_out" => {
            let out = out_tensor(c, dtype, || unreachable!())?;
            one(oxten::try_linear_out_with(&x(0), &x(1), &out, LinearOutOpts { bias: bias.as_ref() }))
        }
        "baddbmm" => one(oxten::ops::baddbmm::call(&x(0), &x(1), &x(2), beta, alpha)),
        "addbmm" => one(oxten::ops::addbmm::call(&x(0), &x(1), &x(2), beta, alpha)),
        "outer" => one(x(0).try_outer(&x(1))),
        "linalg_cross" => one(oxten::ops::linalg_cross::call(&x(0), &x(1), c.int("dim").unwrap_or(-1))),
        "cross" => one(oxten::ops::cross::call(&x(0), &x(1), c.int("dim"))),
        "einsum" => {
            let operands: Vec<Tensor> = (0..c.args.len()).map(x).collect();
            one(oxten::ops::einsum::call(c.attr("equation").unwrap(), &operands, None))
        }
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn matrix_products_match_pytorch() {
    replay(GOLDEN, 300, run);
}

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn matrix(rows: i64, cols: i64, dtype: DType, seed: u64) -> Tensor {
    Tensor::from_vec(values((rows * cols) as usize, seed), &[rows, cols]).unwrap().to_dtype(dtype)
}

/// `a @ b` in f64 from the operands' values (in logical order).
fn reference(a: &Tensor, b: &Tensor) -> Vec<f64> {
    let (m, k, n) = (a.sizes()[0] as usize, a.sizes()[1] as usize, b.sizes()[1] as usize);
    let (av, bv) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| av[i * k + p] * bv[p * n + j]).sum();
        }
    }
    c
}

#[track_caller]
fn assert_product(got: &Tensor, a: &Tensor, b: &Tensor, tol: f64) {
    assert_eq!(&got.sizes()[..], &[a.sizes()[0], b.sizes()[1]]);
    let want = reference(a, b);
    for (i, (g, w)) in got.to_f64_vec().unwrap().iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "element {i}: {g} vs {w}");
    }
}

/// The operand layouts `mm` must read in place: contiguous, transposed, every other column of a
/// wider matrix, and a column broadcast along rows (stride 0).
fn layouts(rows: i64, cols: i64, dtype: DType, seed: u64) -> Vec<(&'static str, Tensor)> {
    let wide = matrix(rows, 2 * cols, dtype, seed + 2);
    vec![
        ("contiguous", matrix(rows, cols, dtype, seed)),
        ("transposed", matrix(cols, rows, dtype, seed + 1).t()),
        ("sliced", wide.slice(1, Some(0), Some(2 * cols), 2)),
        ("expanded", matrix(1, cols, dtype, seed + 3).expand(&[rows, cols])),
    ]
}

#[test]
fn large_products_in_every_layout() {
    // 97 x 130 x 75 is above gemm's threading threshold and not a multiple of its tiles;
    // 40 x 130 x 90 (fewer rows than columns) goes through the column-major staging matrix
    // when `b` is not row-major.
    for (dtype, tol) in [(DType::F32, 1e-4), (DType::F64, 1e-12)] {
        for (m, k, n) in [(97, 130, 75), (40, 130, 90)] {
            for (la, a) in layouts(m, k, dtype, 10) {
                for (lb, b) in layouts(k, n, dtype, 20) {
                    let c = a.mm(&b);
                    assert!(c.is_contiguous(), "{la} x {lb}");
                    assert_eq!(c.dtype(), dtype);
                    assert_product(&c, &a, &b, tol);
                }
            }
        }
    }
}

#[test]
fn reduced_precision_accumulates_in_f32() {
    // k = 512: accumulating in f16/bf16 would lose several digits; f32 accumulation is within
    // one rounding of the output.
    for (dtype, tol) in [(DType::F16, 2e-3), (DType::BF16, 1.6e-2)] {
        for (la, a) in layouts(40, 512, dtype, 30) {
            let b = matrix(512, 24, dtype, 40);
            let c = a.mm(&b);
            assert_eq!(c.dtype(), dtype, "{la}");
            // The reference multiplies the rounded operands exactly; the tolerance is relative to
            // the size of the sum's terms (|c| can be small after cancellation).
            let want = reference(&a, &b);
            for (g, w) in c.to_f64_vec().unwrap().iter().zip(&want) {
                assert!((g - w).abs() <= tol * (1.0 + w.abs()) * 4.0, "{dtype:?} {la}: {g} vs {w}");
            }
        }
        let bt = matrix(24, 512, dtype, 50).t();
        let a = matrix(40, 512, dtype, 60);
        assert_product(&a.mm(&bt), &a, &bt, 4.0 * tol);
    }
}

#[test]
fn integer_products_wrap() {
    let a = Tensor::from_vec(vec![16u8, 1, 2, 3], &[2, 2]).unwrap();
    let b = Tensor::from_vec(vec![16u8, 0, 0, 1], &[2, 2]).unwrap();
    // 16 * 16 = 256 wraps to 0 in uint8, as in PyTorch.
    assert_eq!(a.mm(&b).to_vec::<u8>().unwrap(), [0, 1, 32, 3]);
    let big = Tensor::from_vec(vec![1i64 << 40, 3], &[1, 2]).unwrap();
    let col = Tensor::from_vec(vec![1i64 << 20, 5], &[2, 1]).unwrap();
    assert_eq!(big.mm(&col).to_vec::<i64>().unwrap(), [(1i64 << 60) + 15]);
    let a = matrix(7, 9, DType::F64, 70).mul_scalar(10.0).to_dtype(DType::I32);
    let b = matrix(9, 4, DType::F64, 80).mul_scalar(10.0).to_dtype(DType::I32).t().contiguous().t();
    assert_product(&a.mm(&b), &a, &b, 0.0);
}

#[test]
fn empty_inner_dimension_gives_zeros() {
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64] {
        let c = matrix(3, 0, dtype, 1).mm(&matrix(0, 2, dtype, 2));
        assert_eq!(&c.sizes()[..], &[3, 2]);
        assert_eq!(c.to_f64_vec().unwrap(), [0.0; 6], "{dtype:?}");
    }
    assert_eq!(&matrix(0, 3, DType::F32, 1).mm(&matrix(3, 2, DType::F32, 2)).sizes()[..], &[0, 2]);
}

#[test]
fn out_tensors() {
    let a = matrix(6, 5, DType::F32, 90);
    let b = matrix(5, 4, DType::F32, 91);
    // A wrongly sized out= tensor is resized.
    let out = Tensor::empty(&[0], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let r = oxten::mm_out(&a, &b, &out);
    assert!(r.is_same(&out));
    assert_product(&out, &a, &b, 1e-5);
    // A column-major out= tensor of the right size keeps its layout.
    let out_t = Tensor::empty(&[4, 6], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap().t();
    oxten::mm_out(&a, &b, &out_t);
    assert_eq!(&out_t.strides()[..], &[1, 6]);
    assert_product(&out_t, &a, &b, 1e-5);
    // out= aliasing an input: the product of the original values.
    let sq = matrix(5, 5, DType::F64, 92);
    let before = sq.deep_clone();
    let w = matrix(5, 5, DType::F64, 93);
    oxten::mm_out(&sq, &w, &sq);
    assert_product(&sq, &before, &w, 1e-12);
    // out= of another dtype is an error, as in PyTorch.
    let wrong = Tensor::empty(&[6, 4], DType::F64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let e = oxten::try_mm_out(&a, &b, &wrong).unwrap_err().to_string();
    assert!(e.contains("Expected out tensor to have dtype"), "{e}");
}

#[test]
fn staged_products_into_strided_and_aliased_outputs() {
    // `x @ w.t()` (a linear layer) goes through the column-major staging matrix, whose blocks
    // the calling thread copies into a row-major `out` while the other threads finish theirs.
    // 48 x 200 x 130 splits its 130 columns into blocks that are not all alike.
    let x = matrix(48, 200, DType::F32, 94);
    let w = matrix(130, 200, DType::F32, 95);
    let wt = w.t();
    assert_product(&x.mm(&wt), &x, &wt, 1e-4);
    // A row-major out= tensor whose rows are 150 elements apart (columns 10..140 of a wider
    // matrix): only those columns are written.
    let wide = oxten::full(&[48, 150], 7.0f32);
    let out = wide.slice(1, Some(10), Some(140), 1);
    oxten::mm_out(&x, &wt, &out);
    assert_product(&out, &x, &wt, 1e-4);
    let all = wide.to_vec::<f32>().unwrap();
    for (i, row) in all.chunks(150).enumerate() {
        assert!(row[..10].iter().chain(&row[140..]).all(|&v| v == 7.0), "row {i} written outside out");
    }
    // addmm with a broadcast bias, and addmm_ into its own bias, through the same staging.
    let bias = matrix(1, 130, DType::F32, 96).expand(&[48, 130]);
    let want: Vec<f64> = reference(&x, &wt).iter().zip(bias.to_f64_vec().unwrap()).map(|(p, b)| p + b).collect();
    let check = |got: &Tensor| {
        for (i, (g, w)) in got.to_f64_vec().unwrap().iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "element {i}: {g} vs {w}");
        }
    };
    check(&bias.addmm(&x, &wt));
    let acc = bias.deep_clone();
    acc.addmm_(&x, &wt);
    check(&acc);
}

#[test]
fn products_whose_blocks_do_not_divide_over_the_threads() {
    // On a pool of several threads these are cut into one block per thread plus spare parts
    // that the first threads to finish take: 101 columns of a row-major result are 7 units of
    // 16 (the last one 5 wide); 75 rows of a column-major `out=` are 10 units of 8 (the last 3
    // high); 256 x 784 is the MLP's weight gradient, `g.t() @ x`.
    let a = matrix(70, 64, DType::F32, 60);
    let b = matrix(64, 101, DType::F32, 61);
    assert_product(&a.mm(&b), &a, &b, 1e-4);
    let (a, b) = (matrix(75, 100, DType::F64, 62), matrix(100, 40, DType::F64, 63));
    let out = Tensor::empty(&[40, 75], DType::F64, Device::Cpu, MemoryFormat::Contiguous).unwrap().t();
    oxten::mm_out(&a, &b, &out);
    assert_eq!(out.strides(), [1, 75]);
    assert_product(&out, &a, &b, 1e-12);
    let g = matrix(64, 256, DType::F32, 64);
    let x = matrix(64, 784, DType::F32, 65);
    assert_product(&g.t().mm(&x), &g.t(), &x, 1e-4);
}

#[test]
fn meta_tensors_get_shapes_without_data() {
    let a = Tensor::empty(&[7, 3], DType::BF16, Device::Meta, MemoryFormat::Contiguous).unwrap();
    let b = Tensor::empty(&[3, 11], DType::BF16, Device::Meta, MemoryFormat::Contiguous).unwrap();
    let c = a.mm(&b);
    assert_eq!((c.device(), c.dtype(), &c.sizes()[..]), (Device::Meta, DType::BF16, &[7i64, 11][..]));
    let bad = Tensor::empty(&[4, 11], DType::BF16, Device::Meta, MemoryFormat::Contiguous).unwrap();
    let e = a.try_mm(&bad).unwrap_err().to_string();
    assert_eq!(e, "mm: mat1 and mat2 shapes cannot be multiplied (7x3 and 4x11)");
}

#[test]
fn linear_layer_gradients_keep_the_weight_layout() {
    // y = x @ w.t(): mat2 is column-major, so (as in PyTorch) w's gradient is computed as
    // (grad.t() @ x) and arrives contiguous, like w.
    let x = matrix(8, 6, DType::F32, 100);
    let w = matrix(3, 6, DType::F32, 101).requires_grad_(true);
    let y = x.mm(&w.t());
    y.sum().backward();
    let g = w.grad().unwrap();
    assert!(g.is_contiguous(), "strides {:?}", &g.strides()[..]);
    // d(sum(x @ w.t()))/dw[o, i] = sum over rows of x[:, i].
    let xs = x.sum_dim_intlist(Some(&[0]), false).to_f64_vec().unwrap();
    for (idx, v) in g.to_f64_vec().unwrap().iter().enumerate() {
        assert!((v - xs[idx % 6]).abs() < 1e-5);
    }
}

#[test]
fn a_view_of_the_callers_gradient_is_copied_into_grad() {
    // `.grad` may take over a gradient that only the engine holds (mm's transposed results are
    // views), but never one that shares memory with a tensor the caller still has.
    let x = matrix(2, 3, DType::F32, 102).requires_grad_(true);
    let g = matrix(3, 2, DType::F32, 103);
    x.t().backward_with(oxten::autograd::BackwardOpts { gradient: Some(g.clone()), ..Default::default() });
    let grad = x.grad().unwrap();
    assert!(!grad.storage().is_alias_of(g.storage()));
    assert_eq!(grad.to_f64_vec().unwrap(), g.t().to_f64_vec().unwrap());
}

/// The composite products (and einsum, diagonal included) differentiate through `bmm`, `addmm`,
/// `mul`, `roll` and the views (first and second derivatives against finite differences).
#[test]
fn composite_products_pass_gradcheck() -> Result<()> {
    use oxten::autograd::{gradcheck, gradgradcheck, GradcheckOpts};
    let mut seed = 7u64;
    let mut leaf = |shape: &[i64]| {
        let n: i64 = shape.iter().product();
        let v: Vec<f64> = (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
            })
            .collect();
        Tensor::from_vec(v, shape).unwrap().requires_grad_(true)
    };
    let half = Scalar::Float(0.5);
    type Op = Box<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>>;
    let cases: Vec<(Vec<Tensor>, Op)> = vec![
        (
            vec![leaf(&[3, 1]), leaf(&[2, 3, 4]), leaf(&[2, 4, 2])],
            Box::new(move |x| Ok(vec![oxten::ops::baddbmm::call(&x[0], &x[1], &x[2], half, Scalar::Int(2))?])),
        ),
        (
            vec![leaf(&[2]), leaf(&[3, 2, 4]), leaf(&[3, 4, 2])],
            Box::new(move |x| Ok(vec![oxten::ops::addbmm::call(&x[0], &x[1], &x[2], half, Scalar::Float(-1.5))?])),
        ),
        (vec![leaf(&[3]), leaf(&[4])], Box::new(|x| Ok(vec![x[0].try_outer(&x[1])?]))),
        (vec![leaf(&[2, 3]), leaf(&[1, 3])], Box::new(|x| Ok(vec![oxten::ops::linalg_cross::call(&x[0], &x[1], -1)?]))),
        (
            vec![leaf(&[2, 3, 4]), leaf(&[2, 4, 2])],
            Box::new(|x| Ok(vec![oxten::ops::einsum::call("bij,bjk->bik", x, None)?])),
        ),
        (vec![leaf(&[3, 2, 3]), leaf(&[2])], Box::new(|x| Ok(vec![oxten::ops::einsum::call("iji,j->i", x, None)?]))),
        (vec![leaf(&[2, 1, 3]), leaf(&[3, 2])], Box::new(|x| Ok(vec![oxten::ops::einsum::call("...ij,jk", x, None)?]))),
    ];
    for (inputs, f) in &cases {
        gradcheck(|x: &[Tensor]| f(x), inputs, GradcheckOpts::default())?;
        gradgradcheck(|x: &[Tensor]| f(x), inputs, GradcheckOpts::default())?;
    }
    Ok(())
}
