//! `matmul` and `linear` (CompositeImplicitAutograd, so not derivatives.yaml entries): gradcheck
//! and gradgradcheck through every dispatch branch, with the product operator each branch must
//! reach checked in the autograd graph. Then `bmm`, `addmm`, `dot` and `mv` beyond the golden
//! cases: batches large enough for the parallel paths, bf16 accumulation, aliasing `out=` and
//! in-place calls, scalars, and meta tensors. References are computed in f64 by plain loops.

use oxten::autograd::{gradcheck, gradgradcheck, GradcheckOpts};
use oxten::options::{AddmmInplaceOpts, AddmmOpts, AddmmOutOpts};
use oxten::{DType, Device, MemoryFormat, Result, Scalar, Tensor};
use std::collections::BTreeSet;

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

fn tensor(shape: &[i64], dtype: DType, seed: u64) -> Tensor {
    let n = shape.iter().product::<i64>() as usize;
    Tensor::from_vec(values(n, seed), shape).unwrap().to_dtype(dtype)
}

fn leaf(shape: &[i64], seed: u64, requires_grad: bool) -> Tensor {
    tensor(shape, DType::F64, seed).requires_grad_(requires_grad)
}

/// The names of every node in `t`'s autograd graph.
fn graph_nodes(t: &Tensor) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<_> = t.grad_fn().into_iter().collect();
    while let Some(node) = stack.pop() {
        seen.insert(node.name());
        for e in node.base().next_edges() {
            if let Some(f) = &e.function {
                stack.push(f.clone());
            }
        }
    }
    seen
}

/// `gradcheck` and `gradgradcheck` of `f` at `inputs`, and the product node `f` records.
#[track_caller]
fn check_branch(what: &str, inputs: &[Tensor], node: &str, f: impl Fn(&[Tensor]) -> Result<Tensor>) {
    let nodes = graph_nodes(&f(inputs).unwrap());
    assert!(nodes.contains(node), "{what}: expected {node} in the graph, got {nodes:?}");
    gradcheck(&f, inputs, GradcheckOpts::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
    gradcheck(&f, inputs, GradcheckOpts { fast_mode: true, seed: 3, ..Default::default() })
        .unwrap_or_else(|e| panic!("{what} (fast): {e}"));
    gradgradcheck(&f, inputs, GradcheckOpts::default()).unwrap_or_else(|e| panic!("{what} (gradgrad): {e}"));
}

/// A matmul case: what it covers, the shapes of self and other, which require grad, and the
/// product node its branch reaches.
type MatmulCase = (&'static str, &'static [i64], &'static [i64], [bool; 2], &'static str);

/// A linear case: what it covers, the input's shape, the bias's shape, the node reached.
type LinearCase = (&'static str, &'static [i64], Option<&'static [i64]>, &'static str);

#[test]
fn matmul_gradients_through_every_branch() {
    let cases: &[MatmulCase] = &[
        ("1-D · 1-D: dot", &[3], &[3], [true, true], "DotBackward0"),
        ("2-D · 1-D: mv", &[2, 3], &[3], [true, true], "MvBackward0"),
        ("1-D · 2-D: unsqueeze, mm, squeeze", &[3], &[3, 4], [true, true], "MmBackward0"),
        ("2-D · 2-D: mm", &[2, 3], &[3, 4], [true, true], "MmBackward0"),
        ("3-D · 2-D: batch folded into one mm", &[2, 2, 3], &[3, 4], [true, true], "MmBackward0"),
        ("3-D · 2-D, only self requires grad: folded (contiguous)", &[2, 2, 3], &[3, 4], [true, false], "MmBackward0"),
        ("3-D · 1-D: folded into one mv", &[2, 2, 3], &[3], [true, true], "MvBackward0"),
        ("2-D · 3-D, self requires grad: folded, transposed back", &[2, 3], &[2, 3, 4], [true, true], "MmBackward0"),
        ("2-D · 3-D, only other requires grad: bmm", &[2, 3], &[2, 3, 4], [false, true], "BmmBackward0"),
        ("1-D · 3-D: bmm", &[3], &[2, 3, 4], [false, true], "BmmBackward0"),
        ("1-D · 3-D, self requires grad: folded mv", &[3], &[2, 3, 4], [true, true], "MvBackward0"),
        ("3-D · 3-D: bmm", &[2, 2, 3], &[2, 3, 4], [true, true], "BmmBackward0"),
        ("broadcast batch dims: bmm", &[2, 1, 3, 2], &[3, 2, 2], [true, true], "BmmBackward0"),
        ("4-D · 1-D, vector rhs not requiring grad: folded mv", &[2, 1, 2, 3], &[3], [true, false], "MvBackward0"),
    ];
    for (i, &(what, a, b, rg, node)) in cases.iter().enumerate() {
        let inputs = [leaf(a, 10 + i as u64, rg[0]), leaf(b, 50 + i as u64, rg[1])];
        check_branch(what, &inputs, node, |x| x[0].try_matmul(&x[1]));
    }
    // A 3-D operand whose batch dims do not merge (transposed batch) goes through bmm.
    let inputs = [leaf(&[2, 3, 4], 90, true), leaf(&[4, 2], 91, false)];
    check_branch("non-foldable 3-D · 2-D: bmm", &inputs, "BmmBackward0", |x| {
        x[0].try_transpose(0, 1)?.try_matmul(&x[1])
    });
    // Transposed 2-D operands reach mm without a copy and still differentiate correctly.
    let inputs = [leaf(&[3, 2], 92, true), leaf(&[4, 3], 93, true)];
    check_branch("transposed 2-D operands", &inputs, "MmBackward0", |x| x[0].try_t()?.try_matmul(&x[1].try_t()?));
}

#[test]
fn linear_gradients_through_every_branch() {
    let lin = |x: &[Tensor]| oxten::try_linear(&x[0], &x[1], x.get(2));
    let cases: &[LinearCase] = &[
        ("2-D input with bias: addmm", &[3, 4], Some(&[2]), "AddmmBackward0"),
        ("3-D contiguous input with bias: flattened addmm", &[2, 3, 4], Some(&[2]), "AddmmBackward0"),
        ("4-D input, 1-D bias: flattened addmm", &[2, 1, 2, 4], Some(&[2]), "AddmmBackward0"),
        ("no bias: matmul", &[2, 3, 4], None, "MmBackward0"),
        ("1-D input with bias: flattened addmm", &[4], Some(&[2]), "AddmmBackward0"),
        ("4-D input, 2-D bias: matmul, then add_", &[2, 1, 3, 4], Some(&[3, 2]), "AddBackward0"),
    ];
    for (i, &(what, input, bias, node)) in cases.iter().enumerate() {
        let mut inputs = vec![leaf(input, 100 + i as u64, true), leaf(&[2, 4], 120 + i as u64, true)];
        if let Some(b) = bias {
            inputs.push(leaf(b, 140 + i as u64, true));
        }
        check_branch(what, &inputs, node, lin);
    }
    // A non-contiguous 3-D input with a bias: matmul (folded into mm, the weight requiring
    // grad), then add_.
    let inputs = [leaf(&[3, 2, 4], 160, true), leaf(&[2, 4], 161, true), leaf(&[2], 162, true)];
    check_branch("non-contiguous 3-D input with bias", &inputs, "AddBackward0", |x| {
        oxten::try_linear(&x[0].try_transpose(0, 1)?, &x[1], Some(&x[2]))
    });
}

#[test]
fn matmul_out_refuses_inputs_that_require_grad() {
    let a = leaf(&[2, 3], 1, true);
    let out = Tensor::empty(&[0], DType::F64, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let e = oxten::try_matmul_out(&a, &leaf(&[3, 4], 2, false), &out).unwrap_err().to_string();
    assert!(e.contains("matmul(): functions with out=... arguments don't support automatic differentiation"), "{e}");
    // Without grad mode it computes.
    let r = oxten::autograd::no_grad(|| oxten::try_matmul_out(&a, &leaf(&[3, 4], 2, false), &out)).unwrap();
    assert!(r.is_same(&out) && out.sizes()[..] == [2, 4]);
}

// ---------------------------------------------------------------------------------------------
// Kernels beyond the golden cases.
// ---------------------------------------------------------------------------------------------

/// `a @ b` in f64 for matrices or batches (`[.., m, k] @ [.., k, n]`, same batch).
fn reference(a: &Tensor, b: &Tensor) -> Vec<f64> {
    let (sa, sb) = (a.sizes(), b.sizes());
    let r = sa.len();
    let (m, k, n) = (sa[r - 2] as usize, sa[r - 1] as usize, sb[r - 1] as usize);
    let batch = (a.numel() as usize) / (m * k).max(1);
    let (av, bv) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    let mut c = vec![0.0; batch * m * n];
    for q in 0..batch {
        for i in 0..m {
            for j in 0..n {
                c[(q * m + i) * n + j] = (0..k).map(|p| av[(q * m + i) * k + p] * bv[(q * k + p) * n + j]).sum();
            }
        }
    }
    c
}

#[track_caller]
fn assert_close(got: &Tensor, want: &[f64], tol: f64) {
    let g = got.to_f64_vec().unwrap();
    assert_eq!(g.len(), want.len());
    for (i, (g, w)) in g.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "element {i}: {g} vs {w}");
    }
}

#[test]
fn batched_products_in_every_layout_and_dtype() {
    // 32 products of 17 x 40 x 9 run one per rayon task; 3 of 70 x 300 x 90 each split by gemm.
    for (batch, m, k, n) in [(32, 17, 40, 9), (3, 70, 300, 90)] {
        for (dtype, tol) in
            [(DType::F32, 1e-4), (DType::F64, 1e-12), (DType::F16, 8e-3), (DType::BF16, 6e-2), (DType::I64, 0.0)]
        {
            let scale = if dtype == DType::I64 { 10.0 } else { 1.0 };
            let make = |s: &[i64], seed| tensor(s, DType::F64, seed).mul_scalar(scale).to_dtype(dtype);
            let a = make(&[batch, m, k], 1);
            let b = make(&[batch, k, n], 2);
            let at = make(&[batch, k, m], 3).transpose(1, 2);
            let bt = make(&[batch, n, k], 4).transpose(1, 2);
            // A batch broadcast with stride 0, as matmul's expand produces.
            let b0 = make(&[1, k, n], 5).expand(&[batch, k, n]);
            for (x, y) in [(&a, &b), (&at, &bt), (&a, &bt), (&at, &b0)] {
                let c = x.bmm(y);
                assert!(c.is_contiguous());
                assert_close(&c, &reference(x, y), tol);
            }
        }
    }
}

#[test]
fn bf16_products_accumulate_in_f32() {
    // k = 1024: bf16 accumulation would be off by whole units; f32 accumulation is within a few
    // bf16 roundings of the exact product of the rounded operands.
    let a = tensor(&[33, 1024], DType::BF16, 7);
    let b = tensor(&[1024, 21], DType::BF16, 8);
    let want = reference(&a, &b);
    assert_close(&a.mm(&b), &want, 2e-2);
    assert_close(&a.mm(&b.t().contiguous().t()), &want, 2e-2);
    let bias = tensor(&[21], DType::BF16, 9);
    let r = bias.addmm_with(&a, &b, AddmmOpts { beta: Scalar::Float(0.5), alpha: Scalar::Int(2) });
    let bv = bias.to_f64_vec().unwrap();
    let want2: Vec<f64> = want.iter().enumerate().map(|(i, w)| 2.0 * w + 0.5 * bv[i % 21]).collect();
    assert_close(&r, &want2, 2e-2);
    // A column-major out= tensor is written in place.
    let out = Tensor::empty(&[21, 33], DType::BF16, Device::Cpu, MemoryFormat::Contiguous).unwrap().t();
    oxten::mm_out(&a, &b, &out);
    assert_eq!(&out.strides()[..], &[1, 33]);
    assert_close(&out, &want, 2e-2);
}

#[test]
fn addmm_in_place_and_aliasing() {
    let a = tensor(&[5, 5], DType::F64, 11);
    let b = tensor(&[5, 5], DType::F64, 12);
    let want = |s: &Tensor, x: &Tensor, y: &Tensor, beta: f64, alpha: f64| -> Vec<f64> {
        let p = reference(x, y);
        s.to_f64_vec().unwrap().iter().zip(p).map(|(s, p)| beta * s + alpha * p).collect()
    };
    // self is also mat1 and mat2.
    let s = a.deep_clone();
    let expect = want(&a, &a, &a, 0.5, 2.0);
    s.addmm_with_(&s, &s, AddmmInplaceOpts { beta: Scalar::Float(0.5), alpha: Scalar::Int(2) });
    assert_close(&s, &expect, 1e-12);
    // A transposed self, in place: stays transposed.
    let st = a.deep_clone().t();
    let expect = want(&st, &b, &a, 1.0, 1.0);
    st.addmm_(&b, &a);
    assert_eq!(&st.strides()[..], &[1, 5]);
    assert_close(&st, &expect, 1e-12);
    // out= aliasing mat2, and out= that is self.
    let out = b.deep_clone();
    let expect = want(&a, &a, &out, 1.0, 1.0);
    oxten::addmm_out(&a, &a, &out, &out);
    assert_close(&out, &expect, 1e-12);
    let sb = a.deep_clone();
    let expect = want(&sb, &a, &b, 3.0, 1.0);
    oxten::addmm_out_with(&sb, &a, &b, &sb, AddmmOutOpts { beta: Scalar::Int(3), alpha: Scalar::Int(1) });
    assert_close(&sb, &expect, 1e-12);
}

#[test]
fn addmm_scalars() {
    // beta = 0 ignores NaN in self, for every dtype family.
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        let nan = Tensor::from_vec(vec![f64::NAN; 6], &[2, 3]).unwrap().to_dtype(dtype);
        let a = Tensor::from_vec(vec![1.0f64; 8], &[2, 4]).unwrap().to_dtype(dtype);
        let b = Tensor::from_vec(vec![1.0f64; 12], &[4, 3]).unwrap().to_dtype(dtype);
        let r = nan.addmm_with(&a, &b, AddmmOpts { beta: Scalar::Int(0), alpha: Scalar::Float(0.5) });
        assert_eq!(r.to_f64_vec().unwrap(), [2.0; 6], "{dtype:?}");
    }
    // Integers truncate float scalars and wrap.
    let s = Tensor::from_vec(vec![100u8; 4], &[2, 2]).unwrap();
    let a = Tensor::from_vec(vec![16u8, 0, 0, 16], &[2, 2]).unwrap();
    let r = s.addmm_with(&a, &a, AddmmOpts { beta: Scalar::Float(2.9), alpha: Scalar::Int(1) });
    // 2 * 100 + 256 = 456 = 200 (mod 256) on the diagonal, 200 elsewhere.
    assert_eq!(r.to_vec::<u8>().unwrap(), [200, 200, 200, 200]);
}

#[test]
fn vector_products() {
    // Long vectors: the f32 kernel's lanes and tail; strided and reduced-precision blocks.
    let x = tensor(&[4099], DType::F64, 21);
    let y = tensor(&[8198], DType::F64, 22);
    for (dtype, tol) in [(DType::F32, 1e-4), (DType::F64, 1e-12), (DType::F16, 2e-2), (DType::BF16, 8e-2)] {
        let (xd, yd) = (x.to_dtype(dtype), y.to_dtype(dtype));
        let yds = yd.slice(0, None, None, 2);
        let exact: f64 = xd.to_f64_vec().unwrap().iter().zip(yds.to_f64_vec().unwrap()).map(|(a, b)| a * b).sum();
        for r in [xd.dot(&yds), yds.dot(&xd)] {
            assert_eq!(r.dtype(), dtype);
            let v = r.to_f64_vec().unwrap()[0];
            assert!((v - exact).abs() <= tol * (1.0 + exact.abs()), "{dtype:?}: {v} vs {exact}");
        }
    }
    // mv: matrix layouts, strided vector, out= aliasing the vector.
    let m = tensor(&[300, 200], DType::F64, 23);
    let v = tensor(&[400], DType::F64, 24).slice(0, None, None, 2);
    let want = reference(&m, &v.unsqueeze(1));
    assert_close(&m.mv(&v), &want, 1e-12);
    assert_close(&m.t().contiguous().t().mv(&v), &want, 1e-12);
    let sq = tensor(&[6, 6], DType::F32, 25);
    let w = tensor(&[6], DType::F32, 26);
    let want = reference(&sq, &w.unsqueeze(1));
    oxten::mv_out(&sq, &w, &w);
    assert_close(&w, &want, 1e-5);
}

#[test]
fn bmm_out_aliasing_an_input() {
    let a = tensor(&[4, 3, 3], DType::F32, 31);
    let b = tensor(&[4, 3, 3], DType::F32, 32);
    let want = reference(&a, &b);
    let out = a.clone();
    oxten::bmm_out(&a, &b, &out);
    assert_close(&out, &want, 1e-5);
}

#[test]
fn meta_tensors_get_shapes_without_data() {
    let meta = |s: &[i64]| Tensor::empty(s, DType::BF16, Device::Meta, MemoryFormat::Contiguous).unwrap();
    let shape = |t: Tensor| (t.device(), t.sizes().to_vec());
    assert_eq!(shape(meta(&[2, 3, 4]).bmm(&meta(&[2, 4, 5]))), (Device::Meta, vec![2, 3, 5]));
    assert_eq!(shape(meta(&[5]).addmm(&meta(&[3, 4]), &meta(&[4, 5]))), (Device::Meta, vec![3, 5]));
    assert_eq!(shape(meta(&[4]).dot(&meta(&[4]))), (Device::Meta, vec![]));
    assert_eq!(shape(meta(&[3, 4]).mv(&meta(&[4]))), (Device::Meta, vec![3]));
    assert_eq!(shape(meta(&[2, 1, 3, 4]).matmul(&meta(&[5, 4, 2]))), (Device::Meta, vec![2, 5, 3, 2]));
    let lin = oxten::linear(&meta(&[7, 2, 4]), &meta(&[3, 4]), Some(&meta(&[3])));
    assert_eq!(shape(lin), (Device::Meta, vec![7, 2, 3]));
    let e = meta(&[5]).try_addmm(&meta(&[3, 4]), &meta(&[5, 5])).unwrap_err().to_string();
    assert_eq!(e, "addmm: mat1 and mat2 shapes cannot be multiplied (3x4 and 5x5)");
}
