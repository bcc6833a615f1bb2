//! The CUDA backend against the CPU kernels: every CUDA op on random shapes, broadcast and
//! non-contiguous inputs and several dtypes, gradients through CUDA kernels, the caching
//! allocator, streams and events, and the errors of mixed-device calls.
//!
//! One binary, so it can be carried to a GPU machine:
//! `cargo test --release --features cuda -p oxten-tests --test cuda --no-run` prints its path.
//! Without a GPU (or without the `cuda` feature) every test says that it skipped and why, and
//! passes.

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_tests_need_the_cuda_feature() {
    eprintln!("skipped: oxten-tests was built without the `cuda` feature");
}

#[cfg(feature = "cuda")]
mod gpu {
    use oxten::{cuda, DType, Device, Tensor};

    const GPU: Device = Device::Cuda(0);

    /// Returns from the test, saying why, when there is no GPU.
    macro_rules! require_gpu {
        () => {
            oxten::init();
            if !cuda::is_available() {
                eprintln!("skipped: CUDA is not available ({})", cuda::unavailable_because().unwrap_or("?"));
                return;
            }
        };
    }

    /// Deterministic values in [-2, 2), a few exactly representable ones among them.
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
            })
            .collect()
    }

    fn rand(sizes: &[i64], dtype: DType, seed: u64) -> Tensor {
        let n = sizes.iter().product::<i64>() as usize;
        let mut v = values(n, seed);
        if !dtype.is_floating_point() {
            v.iter_mut().for_each(|x| *x = (*x * 20.0).round());
        }
        Tensor::from_vec(v, sizes).unwrap().to_dtype(dtype)
    }

    fn tolerance(dtype: DType) -> (f64, f64) {
        match dtype {
            DType::F16 => (2e-3, 2e-3),
            DType::BF16 => (1.6e-2, 1e-2),
            DType::F32 => (2e-5, 1e-5),
            DType::F64 => (1e-12, 1e-12),
            _ => (0.0, 0.0),
        }
    }

    /// `got` (any device) equals `want` (CPU) in sizes, dtype and values within the dtype's
    /// tolerance (NaN where NaN).
    fn assert_close(got: &Tensor, want: &Tensor, what: &str) {
        assert_eq!(got.sizes(), want.sizes(), "{what}: sizes");
        assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
        let (rtol, atol) = tolerance(want.dtype());
        let g = got.to_f64_vec().unwrap();
        let w = want.to_f64_vec().unwrap();
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs();
            assert!(ok, "{what}: element {i}: cuda {a} vs cpu {b}");
        }
    }

    /// Without a GPU, CUDA calls are errors that say why, not crashes.
    #[test]
    fn without_a_gpu_cuda_calls_are_errors() {
        oxten::init();
        if cuda::is_available() {
            eprintln!("skipped: a GPU is available");
            return;
        }
        assert_eq!(cuda::device_count(), 0);
        let e = Tensor::from_vec(vec![1.0f32], &[1]).unwrap().try_to_device(GPU).unwrap_err().to_string();
        assert!(e.contains("CUDA is not available"), "{e}");
        let z = oxten::try_zeros_with(&[2], oxten::options::ZerosOpts { device: Some(GPU), ..Default::default() });
        assert!(z.unwrap_err().to_string().contains("CUDA is not available"));
        assert_eq!(cuda::memory_allocated(GPU), 0);
        assert!(cuda::Stream::new(GPU).is_err());
    }

    #[test]
    fn device_roundtrip_every_dtype_and_layout() {
        require_gpu!();
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::U8, DType::Bool] {
            let x = rand(&[3, 5, 7], dtype, 1);
            let g = x.to_device(GPU);
            assert_eq!(g.device(), GPU);
            assert_close(&g.cpu(), &x, &format!("roundtrip {dtype:?}"));
            // Non-contiguous both ways.
            let t = x.transpose(0, 2);
            assert_close(&t.to_device(GPU).cpu(), &t, "transposed upload");
            assert_close(&g.transpose(0, 2).cpu(), &t, "transposed download");
        }
    }

    #[test]
    fn copies_convert_dtypes_on_the_device() {
        require_gpu!();
        let dtypes = [
            DType::F32,
            DType::F64,
            DType::F16,
            DType::BF16,
            DType::I64,
            DType::I32,
            DType::I8,
            DType::U8,
            DType::Bool,
        ];
        for from in dtypes {
            let x = rand(&[4, 6], from, 2);
            let g = x.to_device(GPU);
            for to in dtypes {
                let want = x.to_dtype(to);
                assert_close(&g.to_dtype(to).cpu(), &want, &format!("{from:?} -> {to:?}"));
                // Into a strided destination, broadcasting a row.
                let dst = oxten::zeros_with(
                    &[6, 4],
                    oxten::options::ZerosOpts { dtype: Some(to), device: Some(GPU), ..Default::default() },
                )
                .t();
                dst.copy_(&g.to_dtype(to));
                assert_close(&dst.cpu(), &want, &format!("strided copy {from:?} -> {to:?}"));
            }
        }
    }

    type Binary = fn(&Tensor, &Tensor) -> Tensor;
    type Unary = fn(&Tensor) -> Tensor;

    const BINARY: &[(&str, Binary)] = &[
        ("add", |a, b| a.add(b)),
        ("sub", |a, b| a.sub(b)),
        ("mul", |a, b| a.mul(b)),
        ("div", |a, b| a.div(b)),
        ("maximum", |a, b| a.maximum(b)),
        ("minimum", |a, b| a.minimum(b)),
        ("eq", |a, b| a.eq(b)),
        ("ne", |a, b| a.ne(b)),
        ("lt", |a, b| a.lt(b)),
        ("le", |a, b| a.le(b)),
        ("gt", |a, b| a.gt(b)),
        ("ge", |a, b| a.ge(b)),
        ("threshold_backward", |a, b| oxten::threshold_backward(a, b, 0.5)),
        ("leaky_relu_backward", |a, b| oxten::leaky_relu_backward(a, b, 0.01, false)),
    ];

    const UNARY: &[(&str, Unary)] = &[
        ("neg", |a| a.neg()),
        ("abs", |a| a.abs()),
        ("exp", |a| a.exp()),
        ("log", |a| a.abs().log()),
        ("sqrt", |a| a.abs().sqrt()),
        ("rsqrt", |a| a.abs().rsqrt()),
        ("sin", |a| a.sin()),
        ("cos", |a| a.cos()),
        ("tanh", |a| a.tanh()),
        ("sigmoid", |a| a.sigmoid()),
        ("silu", |a| a.silu()),
        ("relu", |a| a.relu()),
        ("leaky_relu", |a| oxten::leaky_relu(a, 0.01)),
        ("softplus", |a| oxten::softplus(a)),
        ("add_scalar", |a| a.add_scalar(2.5)),
        ("mul_scalar", |a| a.mul_scalar(3)),
        ("div_scalar", |a| a.div_scalar(4.0)),
        ("eq_scalar", |a| a.eq_scalar(0)),
    ];

    fn float_only(name: &str) -> bool {
        matches!(
            name,
            "div"
                | "exp"
                | "log"
                | "sqrt"
                | "rsqrt"
                | "sin"
                | "cos"
                | "tanh"
                | "sigmoid"
                | "silu"
                | "softplus"
                | "div_scalar"
                | "leaky_relu"
                | "leaky_relu_backward"
                | "threshold_backward"
        )
    }

    #[test]
    fn pointwise_ops_match_the_cpu() {
        require_gpu!();
        let shapes: [(&[i64], &[i64]); 4] =
            [(&[1000], &[1000]), (&[3, 1, 5], &[4, 1]), (&[2, 3, 4, 5], &[5]), (&[], &[7])];
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64] {
            for (sa, sb) in shapes {
                let (a, b) = (rand(sa, dtype, 3), rand(sb, dtype, 4));
                let (ga, gb) = (a.to_device(GPU), b.to_device(GPU));
                for (name, f) in BINARY {
                    if float_only(name) && !dtype.is_floating_point() {
                        continue;
                    }
                    if name.ends_with("backward") && a.sizes() != b.sizes() {
                        continue;
                    }
                    assert_close(&f(&ga, &gb), &f(&a, &b), &format!("{name} {dtype:?} {sa:?} {sb:?}"));
                }
                for (name, f) in UNARY {
                    if float_only(name) && !dtype.is_floating_point() {
                        continue;
                    }
                    assert_close(&f(&ga), &f(&a), &format!("{name} {dtype:?} {sa:?}"));
                }
            }
            // Non-contiguous operands (the strided loop) and an unaligned offset (no vector loads).
            let a = rand(&[33, 17], dtype, 5);
            let b = rand(&[17, 33], dtype, 6).t();
            let (ga, gb) = (a.to_device(GPU), rand(&[17, 33], dtype, 6).to_device(GPU).t());
            assert_close(&ga.add(&gb), &a.add(&b), &format!("add transposed {dtype:?}"));
            let sl = |t: &Tensor| t.narrow(1, 1, 15);
            assert_close(&sl(&ga).mul(&sl(&ga)), &sl(&a).mul(&sl(&a)), &format!("mul sliced {dtype:?}"));
        }
    }

    #[test]
    fn mixed_dtypes_scalars_and_out_of_place_outputs() {
        require_gpu!();
        let a = rand(&[8, 9], DType::F16, 7);
        let b = rand(&[9], DType::F32, 8);
        assert_close(&a.to_device(GPU).add(&b.to_device(GPU)), &a.add(&b), "f16 + f32");
        let i = rand(&[8, 9], DType::I64, 9);
        assert_close(&i.to_device(GPU).mul_scalar(0.5), &i.mul_scalar(0.5), "i64 * 0.5");
        // A 0-dim CPU tensor acts as a scalar on any device.
        let s = Tensor::from_vec(vec![1.5f32], &[]).unwrap();
        assert_close(&b.to_device(GPU).mul(&s), &b.mul(&s), "cuda * cpu scalar");
        // In place and out= on the device.
        let g = a.to_device(GPU).to_dtype(DType::F32);
        g.add_(&b.to_device(GPU));
        assert_close(&g, &a.to_dtype(DType::F32).add(&b), "add_");
        // Large enough for the vectorized loop and its tail.
        let big = rand(&[1 << 20 | 3], DType::BF16, 10);
        assert_close(&big.to_device(GPU).exp(), &big.exp(), "exp bf16 2^20+3");
    }

    #[test]
    fn mixing_devices_is_an_error_naming_both() {
        require_gpu!();
        let a = rand(&[3], DType::F32, 11);
        let e = a.to_device(GPU).try_add(&a).unwrap_err().to_string();
        assert!(
            e.contains("Expected all tensors to be on the same device") && e.contains("cuda:0") && e.contains("cpu"),
            "{e}"
        );
        assert!(e.starts_with("add"), "{e}");
    }

    #[test]
    fn factories_fill_and_printing() {
        require_gpu!();
        let z = oxten::zeros_with(&[2, 3], oxten::options::ZerosOpts { device: Some(GPU), ..Default::default() });
        assert_eq!(z.device(), GPU);
        assert_eq!(z.to_vec::<f32>().unwrap(), vec![0.0; 6]);
        z.fill_scalar_(7);
        assert_eq!(z.to_vec::<f32>().unwrap(), vec![7.0; 6]);
        let printed = Tensor::from_vec(vec![1.0f32, 2.5], &[2]).unwrap().to_device(GPU).to_string();
        assert_eq!(printed, "tensor([1.0000, 2.5000], device='cuda:0')");
        let i = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap().to_device(GPU).to_string();
        assert_eq!(i, "tensor([1, 2], device='cuda:0', dtype=int32)");
    }

    #[test]
    fn sums_match_the_cpu() {
        require_gpu!();
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64] {
            let x = rand(&[6, 7, 8], dtype, 12);
            let g = x.to_device(GPU);
            assert_close(&g.sum(), &x.sum(), &format!("sum {dtype:?}"));
            for dims in [&[0i64][..], &[1], &[2], &[0, 2], &[-1, 0]] {
                assert_close(
                    &g.sum_dim_intlist(Some(dims), false),
                    &x.sum_dim_intlist(Some(dims), false),
                    &format!("sum {dims:?} {dtype:?}"),
                );
            }
            let t = x.transpose(0, 2);
            assert_close(
                &t.to_device(GPU).sum_dim_intlist(Some(&[1]), false),
                &t.sum_dim_intlist(Some(&[1]), false),
                "sum transposed",
            );
        }
        // Long rows take two passes.
        let x = rand(&[3, 1 << 18], DType::F32, 13);
        let want = x.to_dtype(DType::F64).sum_dim_intlist(Some(&[1]), false).to_dtype(DType::F32);
        let got = x.to_device(GPU).sum_dim_intlist(Some(&[1]), false);
        let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        for (a, b) in g.iter().zip(&w) {
            assert!((a - b).abs() <= 1e-2 * b.abs().max(1.0), "two-pass sum: {a} vs {b}");
        }
        let big = rand(&[(1 << 22) + 5], DType::F32, 14);
        let want = big.to_dtype(DType::F64).sum().to_vec::<f64>().unwrap()[0];
        let got = big.to_device(GPU).sum().to_vec::<f32>().unwrap()[0] as f64;
        assert!((got - want).abs() <= 1e-3 * want.abs().max(100.0), "sum 2^22+5: {got} vs {want}");
    }

    #[test]
    fn matrix_products_match_the_cpu() {
        require_gpu!();
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
            let a = rand(&[37, 64], dtype, 15);
            let b = rand(&[64, 29], dtype, 16);
            let (ga, gb) = (a.to_device(GPU), b.to_device(GPU));
            let want = a.to_dtype(DType::F64).mm(&b.to_dtype(DType::F64)).to_dtype(dtype);
            let tol = if dtype == DType::F64 || dtype == DType::F32 { 1e-4 } else { 0.1 };
            let check = |got: &Tensor, what: &str| {
                let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
                for (x, y) in g.iter().zip(&w) {
                    assert!((x - y).abs() <= tol * y.abs().max(1.0), "{what} {dtype:?}: {x} vs {y}");
                }
            };
            check(&ga.mm(&gb), "mm");
            // Transposed operands go to cuBLAS without copies.
            check(&ga.t().contiguous().t().mm(&gb.t().contiguous().t()), "mm transposed");
            check(&ga.matmul(&gb), "matmul");
        }
        let e = rand(&[2, 2], DType::I64, 1).to_device(GPU).try_mm(&rand(&[2, 2], DType::I64, 2).to_device(GPU));
        assert!(e.unwrap_err().to_string().contains("not implemented for 'Long'"));
    }

    #[test]
    fn gradients_flow_through_cuda_kernels() {
        require_gpu!();
        let x = rand(&[16, 10], DType::F32, 17);
        let w = rand(&[10, 8], DType::F32, 18);
        let b = rand(&[8], DType::F32, 19);
        let run = |dev: Device| {
            // Fresh leaves on `dev` (`to_device` to the same device returns the tensor itself).
            let leaf = |t: &Tensor| t.to_device(dev).detach().requires_grad_(true);
            let (x, w, b) = (x.to_device(dev), leaf(&w), leaf(&b));
            let y = x.mm(&w).add(&b).relu().mul(&x.mm(&w).sigmoid()).sum();
            y.backward();
            (y.cpu(), w.grad().unwrap().cpu(), b.grad().unwrap().cpu(), w.grad().unwrap().device())
        };
        let (y0, gw0, gb0, _) = run(Device::Cpu);
        let (y1, gw1, gb1, dev) = run(GPU);
        assert_eq!(dev, GPU, "gradients accumulate on the parameter's device");
        assert_close(&y1, &y0, "loss");
        let close = |a: &Tensor, b: &Tensor, what: &str| {
            for (x, y) in a.to_vec::<f32>().unwrap().iter().zip(b.to_vec::<f32>().unwrap()) {
                assert!((x - y).abs() <= 1e-3 * y.abs().max(1.0), "{what}: {x} vs {y}");
            }
        };
        close(&gw1, &gw0, "dL/dw");
        close(&gb1, &gb0, "dL/db");
    }

    #[test]
    fn gradients_cross_devices_back_to_the_cpu() {
        require_gpu!();
        // A CPU leaf moved to the GPU: its gradient comes back to the CPU.
        let w = rand(&[4, 3], DType::F32, 21).requires_grad_(true);
        let y = w.to_device(GPU).mul(&w.to_device(GPU)).sum();
        y.backward();
        let g = w.grad().unwrap();
        assert_eq!(g.device(), Device::Cpu);
        assert_close(&g, &w.detach().mul_scalar(2.0), "d(sum w^2)/dw");
    }

    type Reduce = fn(&Tensor) -> Tensor;

    const REDUCTIONS: &[(&str, Reduce)] = &[
        ("mean", |x| x.mean_dim(Some(&[1]), false)),
        ("mean all", |x| x.mean_dim(None, false)),
        ("amax", |x| x.amax(&[0, 2], true)),
        ("amin", |x| x.amin()),
        ("prod", |x| x.prod_dim_int(2)),
        ("prod all", |x| x.prod()),
        ("var", |x| {
            x.var_correction_with(oxten::options::VarCorrectionOpts {
                dim: Some(&[1]),
                correction: None,
                keepdim: false,
            })
        }),
        ("std all", |x| x.std_correction()),
        ("max.dim values", |x| x.max_dim(1, false).0),
        ("max.dim indices", |x| x.max_dim(1, false).1),
        ("min.dim indices", |x| x.min_dim(0, false).1),
        ("argmax", |x| x.argmax(None, false)),
        ("argmin dim", |x| x.argmin(Some(-1), true)),
        ("all", |x| x.all()),
        ("any dim", |x| x.any_dim(2, false)),
        ("all dims []", |x| x.all_dims(Some(&[]), false)),
        ("cumsum 0", |x| x.cumsum(0)),
        ("cumsum 2", |x| x.cumsum(2)),
        ("logsumexp", |x| x.logsumexp(&[1], false)),
        ("norm", |x| x.norm_scalar()),
        ("norm ord 1 dim", |x| norm_with(x, 1, Some(&[1]), false)),
        ("norm ord 0 dims", |x| norm_with(x, 0, Some(&[0, 2]), true)),
        ("norm ord inf", |x| norm_with(x, f64::INFINITY, Some(&[2]), false)),
        ("norm ord -inf", |x| norm_with(x, f64::NEG_INFINITY, None, false)),
        ("norm ord 3", |x| norm_with(x, 3, Some(&[-1]), false)),
        ("norm ord -1.5", |x| norm_with(x, -1.5, Some(&[1]), false)),
        ("softmax", |x| x.softmax(1)),
        ("log_softmax last", |x| x.log_softmax(-1)),
    ];

    fn norm_with(x: &Tensor, ord: impl Into<oxten::Scalar>, dim: Option<&[i64]>, keepdim: bool) -> Tensor {
        let opts = oxten::options::LinalgVectorNormOpts { ord: ord.into(), dim, keepdim, dtype: None };
        oxten::linalg_vector_norm_with(x, opts)
    }

    fn float_reduction(name: &str) -> bool {
        name.starts_with("mean")
            || name.starts_with("norm")
            || name.starts_with("var")
            || name.starts_with("std")
            || name.starts_with("logsumexp")
            || name.contains("softmax")
    }

    #[test]
    fn reductions_softmax_and_scans_match_the_cpu() {
        require_gpu!();
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64] {
            // Small values keep products and half-precision sums comparable.
            let x = rand(&[5, 6, 7], dtype, 22);
            let x = if dtype.is_floating_point() { x.mul_scalar(0.5) } else { x };
            let x = if dtype.is_floating_point() {
                x
            } else {
                x.clamp_with(oxten::options::ClampOpts { min: Some((-3).into()), max: Some(3.into()) })
            };
            let g = x.to_device(GPU);
            for (name, f) in REDUCTIONS {
                if float_reduction(name) && !dtype.is_floating_point() {
                    continue;
                }
                let (got, want) = (f(&g), f(&x));
                if matches!(dtype, DType::F16 | DType::BF16)
                    && (name.starts_with("cumsum")
                        || name.starts_with("prod")
                        || name.starts_with("var")
                        || name.starts_with("std"))
                {
                    // Accumulated in f32 on the GPU, in other orders on the CPU: compare loosely.
                    let (a, b) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
                    for (u, v) in a.iter().zip(&b) {
                        assert!((u - v).abs() <= 0.05 * v.abs().max(1.0), "{name} {dtype:?}: {u} vs {v}");
                    }
                    continue;
                }
                assert_close(&got, &want, &format!("{name} {dtype:?}"));
            }
        }
        // Ties pick the first index; NaN wins.
        let t = Tensor::from_vec(vec![1.0f32, 3.0, 3.0, f32::NAN, 2.0, f32::NAN], &[2, 3]).unwrap();
        assert_close(&t.to_device(GPU).argmax(Some(1), false), &t.argmax(Some(1), false), "argmax ties/NaN");
        assert_close(&t.to_device(GPU).amax(&[], false), &t.amax(&[], false), "amax NaN");
        // Empty reductions give the identities.
        let e = oxten::zeros_with(&[3, 0], oxten::options::ZerosOpts { device: Some(GPU), ..Default::default() });
        assert_eq!(e.sum_dim_intlist(Some(&[1]), false).to_vec::<f32>().unwrap(), vec![0.0; 3]);
        assert_eq!(e.prod_dim_int(1).to_vec::<f32>().unwrap(), vec![1.0; 3]);
        assert!(e.mean_dim(Some(&[1]), false).to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
        // A long scan crosses many chunks.
        let long = rand(&[2, 5000], DType::F64, 23);
        assert_close(&long.to_device(GPU).cumsum(1), &long.cumsum(1), "cumsum 5000");
    }

    #[test]
    fn where_clamp_and_masked_fill_match_the_cpu() {
        require_gpu!();
        for dtype in [DType::F32, DType::F16, DType::I64] {
            let a = rand(&[4, 5], dtype, 24);
            let b = rand(&[5], dtype, 25);
            let c = rand(&[4, 1], DType::F32, 26).gt_scalar(0.0);
            let (ga, gb, gc) = (a.to_device(GPU), b.to_device(GPU), c.to_device(GPU));
            assert_close(&ga.where_self(&gc, &gb), &a.where_self(&c, &b), &format!("where {dtype:?}"));
            let lo = oxten::options::ClampOpts { min: Some((-1).into()), max: Some(1.into()) };
            assert_close(&ga.clamp_with(lo.clone()), &a.clamp_with(lo), &format!("clamp {dtype:?}"));
            let hi = oxten::options::ClampOpts { min: None, max: Some(0.into()) };
            assert_close(&ga.clamp_with(hi.clone()), &a.clamp_with(hi), &format!("clamp max {dtype:?}"));
            assert_close(
                &ga.masked_fill_scalar(&gc, 7),
                &a.masked_fill_scalar(&c, 7),
                &format!("masked_fill {dtype:?}"),
            );
        }
    }

    /// An operator library's `pointwise:` op (tests/ops_library) gets its CUDA kernel from the same
    /// expression, registered by the library's generated code.
    #[test]
    fn library_pointwise_ops_run_on_the_gpu() {
        require_gpu!();
        use oxten_tests::myops::TensorExt as _;
        for dtype in [DType::F32, DType::BF16, DType::I64] {
            let a = rand(&[4, 5], dtype, 40);
            let b = rand(&[5], dtype, 41);
            let (ga, gb) = (a.to_device(GPU), b.to_device(GPU));
            assert_close(&ga.sqdiff(&gb), &a.sqdiff(&b), &format!("myops::sqdiff {dtype:?}"));
        }
    }

    #[test]
    fn indexing_cat_and_embedding_match_the_cpu() {
        require_gpu!();
        let x = rand(&[6, 5, 4], DType::F32, 27);
        let g = x.to_device(GPU);
        let idx = Tensor::from_vec(vec![3i64, 0, 0, 2], &[4]).unwrap();
        for dim in 0..3 {
            assert_close(
                &g.index_select(dim, &idx.to_device(GPU)),
                &x.index_select(dim, &idx),
                &format!("index_select {dim}"),
            );
        }
        let bad = Tensor::from_vec(vec![9i64], &[1]).unwrap().to_device(GPU);
        let e = g.try_index_select(0, &bad).unwrap_err().to_string();
        assert!(e.contains("index_select") && e.contains("out of bounds"), "{e}");
        let gi = Tensor::from_vec((0..6 * 2 * 4).map(|i| (i * 7 % 5) as i64).collect::<Vec<_>>(), &[6, 2, 4]).unwrap();
        assert_close(&g.gather(1, &gi.to_device(GPU)), &x.gather(1, &gi), "gather");
        let parts = [x.narrow(0, 0, 2), x.narrow(0, 2, 4)];
        let gparts: Vec<Tensor> = parts.iter().map(|t| t.to_device(GPU)).collect();
        assert_close(&oxten::cat(&gparts, 0), &oxten::cat(&parts, 0), "cat");
        assert_close(
            &oxten::stack(&gparts[..1].iter().chain(&gparts[..1]).cloned().collect::<Vec<_>>(), 0),
            &oxten::stack(&[parts[0].clone(), parts[0].clone()], 0),
            "stack",
        );
        // Embedding forward and backward (repeated indices accumulate).
        let w = rand(&[10, 3], DType::F32, 28);
        let ids = Tensor::from_vec(vec![1i64, 3, 1, 9, 0, 1], &[2, 3]).unwrap();
        let run = |dev: Device| {
            let w = w.to_device(dev).detach().requires_grad_(true);
            let y = oxten::embedding(&w, &ids.to_device(dev));
            y.mul(&y).sum().backward();
            (y.cpu(), w.grad().unwrap().cpu())
        };
        let ((y0, g0), (y1, g1)) = (run(Device::Cpu), run(GPU));
        assert_close(&y1, &y0, "embedding");
        assert_close(&g1, &g0, "embedding backward");
    }

    #[test]
    fn batched_and_biased_products_match_the_cpu() {
        require_gpu!();
        for dtype in [DType::F32, DType::F64, DType::BF16] {
            let a = rand(&[3, 7, 5], dtype, 29);
            let b = rand(&[3, 5, 4], dtype, 30);
            let c = rand(&[4], dtype, 31);
            let tol = if dtype == DType::BF16 { 0.05 } else { 1e-4 };
            let close = |x: &Tensor, y: &Tensor, what: &str| {
                for (u, v) in x.to_f64_vec().unwrap().iter().zip(y.to_f64_vec().unwrap()) {
                    assert!((u - v).abs() <= tol * v.abs().max(1.0), "{what} {dtype:?}: {u} vs {v}");
                }
            };
            let (ga, gb, gc) = (a.to_device(GPU), b.to_device(GPU), c.to_device(GPU));
            close(&ga.bmm(&gb), &a.bmm(&b), "bmm");
            close(&ga.transpose(1, 2).contiguous().transpose(1, 2).bmm(&gb), &a.bmm(&b), "bmm transposed");
            let (a2, b2) = (a.select(0, 0), b.select(0, 0));
            close(&gc.addmm(&a2.to_device(GPU), &b2.to_device(GPU)), &c.addmm(&a2, &b2), "addmm");
            close(&ga.matmul(&gb), &a.matmul(&b), "matmul 3-d");
            let v = rand(&[5], dtype, 37);
            close(&a2.to_device(GPU).mv(&v.to_device(GPU)), &a2.mv(&v), "mv");
            close(&v.to_device(GPU).dot(&v.to_device(GPU)), &v.dot(&v), "dot");
            close(
                &oxten::linear(&a2.to_device(GPU), &b2.t().contiguous().to_device(GPU), None),
                &oxten::linear(&a2, &b2.t().contiguous(), None),
                "linear",
            );
        }
    }

    #[test]
    fn nll_loss_and_its_gradient_match_the_cpu() {
        require_gpu!();
        let x = rand(&[32, 5], DType::F32, 34).log_softmax(1);
        let y = Tensor::from_vec((0..32).map(|i| (i * 3 % 5) as i64).collect::<Vec<_>>(), &[32]).unwrap();
        let w = rand(&[5], DType::F32, 35).abs();
        for reduction in 0..3i64 {
            for weighted in [false, true] {
                let run = |dev: Device| {
                    let x = x.to_device(dev).detach().requires_grad_(true);
                    let wd = w.to_device(dev);
                    let opts =
                        oxten::options::NllLossOpts { weight: weighted.then_some(&wd), reduction, ignore_index: 2 };
                    let l = oxten::nll_loss_with(&x, &y.to_device(dev), opts);
                    l.sum().backward();
                    (l.cpu(), x.grad().unwrap().cpu())
                };
                let ((l0, g0), (l1, g1)) = (run(Device::Cpu), run(GPU));
                assert_close(&l1, &l0, &format!("nll_loss reduction {reduction} weighted {weighted}"));
                assert_close(&g1, &g0, &format!("nll_loss grad reduction {reduction} weighted {weighted}"));
            }
        }
        let bad = Tensor::from_vec(vec![7i64], &[1]).unwrap().to_device(GPU);
        let e = oxten::try_nll_loss(&x.narrow(0, 0, 1).to_device(GPU), &bad).unwrap_err().to_string();
        assert!(e.contains("Target 7 is out of bounds"), "{e}");
    }

    #[test]
    fn a_classifier_trains_the_same_on_both_devices() {
        require_gpu!();
        // Two SGD steps of a softmax classifier: linear, log_softmax, nll, backward, update.
        let x = rand(&[32, 12], DType::F32, 32);
        let y = Tensor::from_vec((0..32).map(|i| (i % 5) as i64).collect::<Vec<_>>(), &[32]).unwrap();
        let w0 = rand(&[5, 12], DType::F32, 33).mul_scalar(0.1);
        let logp = |x: &Tensor, w: &Tensor| oxten::linear(x, w, None).log_softmax(1);
        assert_close(&logp(&x.to_device(GPU), &w0.to_device(GPU)), &logp(&x, &w0), "log-probabilities");
        let run = |dev: Device| {
            // A fresh copy: `to_device` to the CPU would return `w0` itself, and the SGD steps
            // below update the weights in place.
            let w = w0.to_device(dev).mul_scalar(1.0).requires_grad_(true);
            let (x, y) = (x.to_device(dev), y.to_device(dev));
            let mut losses = Vec::new();
            for step in 0..2 {
                let logits = oxten::linear(&x, &w, None);
                if step == 0 {
                    assert_eq!(logits.device(), dev);
                }
                let loss = oxten::nll_loss(&logits.log_softmax(1), &y);
                loss.backward();
                losses.push(loss.to_vec::<f32>().unwrap()[0]);
                let g = w.grad().unwrap();
                oxten::autograd::no_grad(|| w.sub_(&g.mul_scalar(0.5)));
                w.set_grad(None);
            }
            (losses, w.detach().cpu())
        };
        let ((l0, w_cpu), (l1, w_gpu)) = (run(Device::Cpu), run(GPU));
        for (step, (a, b)) in l1.iter().zip(&l0).enumerate() {
            assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "loss at step {step}: {a} vs {b}");
        }
        assert_close(&w_gpu, &w_cpu, "weights after two steps");
    }

    #[test]
    fn random_streams_match_the_cpu_for_one_seed() {
        require_gpu!();
        use oxten::options::{BernoulliFloatInplaceOpts, NormalInplaceOpts, UniformInplaceOpts};
        use oxten::Generator;
        let zeros = |dtype: DType, dev: Device| {
            oxten::zeros_with(
                &[1001],
                oxten::options::ZerosOpts { dtype: Some(dtype), device: Some(dev), ..Default::default() },
            )
        };
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
            let (gc, gg) = (Generator::new(), Generator::new());
            gc.manual_seed(7);
            gg.manual_seed(7);
            let (c, g) = (zeros(dtype, Device::Cpu), zeros(dtype, GPU));
            c.uniform_with_(UniformInplaceOpts { from: -1.0, to: 3.0, generator: Some(&gc) });
            g.uniform_with_(UniformInplaceOpts { from: -1.0, to: 3.0, generator: Some(&gg) });
            assert_eq!(g.to_f64_vec().unwrap(), c.to_f64_vec().unwrap(), "uniform {dtype:?}: the CPU's bits");
            c.normal_with_(NormalInplaceOpts { mean: 1.0, std: 2.0, generator: Some(&gc) });
            g.normal_with_(NormalInplaceOpts { mean: 1.0, std: 2.0, generator: Some(&gg) });
            let (rtol, atol) = if dtype.is_floating_point() && dtype.size() == 2 { (1e-2, 1e-2) } else { (1e-4, 1e-4) };
            for (a, b) in g.to_f64_vec().unwrap().iter().zip(c.to_f64_vec().unwrap()) {
                assert!((a - b).abs() <= atol + rtol * b.abs(), "normal {dtype:?}: {a} vs {b}");
            }
            // Both generators advanced by the same number of blocks.
            assert_eq!(gc.get_state(), gg.get_state());
        }
        let (gc, gg) = (Generator::new(), Generator::new());
        let (c, g) = (zeros(DType::Bool, Device::Cpu), zeros(DType::Bool, GPU));
        c.bernoulli_float_with_(BernoulliFloatInplaceOpts { p: 0.3, generator: Some(&gc) });
        g.bernoulli_float_with_(BernoulliFloatInplaceOpts { p: 0.3, generator: Some(&gg) });
        assert_eq!(g.to_vec::<bool>().unwrap(), c.to_vec::<bool>().unwrap(), "bernoulli");
        // The device's default generator: reseeding replays it.
        let draw = || oxten::rand_with(&[64], oxten::options::RandOpts { device: Some(GPU), ..Default::default() });
        cuda::manual_seed(3);
        let a = draw().to_vec::<f32>().unwrap();
        cuda::manual_seed(3);
        assert_eq!(draw().to_vec::<f32>().unwrap(), a);
        assert!(a.iter().all(|v| (0.0..1.0).contains(v)));
        // Dropout trains on the device: kept elements scaled by 1 / (1 - p), the rest zero.
        let x = rand(&[4096], DType::F32, 36).to_device(GPU).requires_grad_(true);
        let y = oxten::dropout(&x, 0.25, true);
        y.sum().backward();
        let (xv, yv, gv) = (
            x.detach().to_vec::<f32>().unwrap(),
            y.to_vec::<f32>().unwrap(),
            x.grad().unwrap().to_vec::<f32>().unwrap(),
        );
        let kept = yv.iter().filter(|v| **v != 0.0).count() as f64 / 4096.0;
        assert!((kept - 0.75).abs() < 0.05, "kept {kept}");
        for ((x, y), g) in xv.iter().zip(&yv).zip(&gv) {
            assert!(
                *y == 0.0 && *g == 0.0 || ((y - x / 0.75).abs() < 1e-5 && (g - 1.0 / 0.75).abs() < 1e-5),
                "{x} {y} {g}"
            );
        }
    }

    #[test]
    fn caching_allocator_reuses_and_reports() {
        require_gpu!();
        cuda::synchronize(GPU).unwrap();
        let before = cuda::memory_allocated(GPU);
        {
            let t =
                oxten::zeros_with(&[1 << 20], oxten::options::ZerosOpts { device: Some(GPU), ..Default::default() });
            assert_eq!(cuda::memory_allocated(GPU), before + (4 << 20));
            assert!(cuda::memory_reserved(GPU) >= cuda::memory_allocated(GPU));
            drop(t);
        }
        assert_eq!(cuda::memory_allocated(GPU), before);
        assert!(cuda::max_memory_allocated(GPU) >= before + (4 << 20));
        let reserved = cuda::memory_reserved(GPU);
        // Same size again: served from the cache, nothing new reserved.
        let t = oxten::zeros_with(&[1 << 20], oxten::options::ZerosOpts { device: Some(GPU), ..Default::default() });
        assert_eq!(cuda::memory_reserved(GPU), reserved);
        drop(t);
        cuda::empty_cache();
        // A request far beyond the device is an out-of-memory error, not a crash.
        let huge =
            oxten::try_empty_with(&[1 << 46], oxten::options::EmptyOpts { device: Some(GPU), ..Default::default() });
        let msg = huge.unwrap_err().to_string();
        assert!(msg.contains("CUDA out of memory. Tried to allocate 262144.00 GiB"), "{msg}");
    }

    #[test]
    fn streams_and_events() {
        require_gpu!();
        let s = cuda::Stream::new(GPU).unwrap();
        let x = rand(&[1 << 16], DType::F32, 20).to_device(GPU);
        let start = cuda::Event::new(GPU).unwrap();
        let end = cuda::Event::new(GPU).unwrap();
        let y = {
            let _g = cuda::StreamGuard::new(s);
            assert_eq!(cuda::current_stream(GPU), s);
            start.record(s).unwrap();
            let y = x.exp().add(&x);
            end.record(s).unwrap();
            y
        };
        assert_ne!(cuda::current_stream(GPU), s, "the guard restores the stream");
        end.synchronize().unwrap();
        assert!(start.elapsed_time(&end).unwrap() >= 0.0);
        s.synchronize().unwrap();
        assert_close(&y, &x.cpu().exp().add(&x.cpu()), "exp + x on a side stream");
    }

    #[test]
    fn autocast_follows_the_cuda_lists() {
        require_gpu!();
        use oxten::autocast::{is_autocast_enabled, AutocastGuard};
        let (a, b) = (rand(&[64, 32], DType::F32, 26), rand(&[32, 48], DType::F32, 27));
        let (ga, gb) = (a.to_device(GPU), b.to_device(GPU).requires_grad_(true));
        let (y, s, e) = {
            let _amp = AutocastGuard::new(GPU, DType::F16);
            assert!(is_autocast_enabled(GPU) && !is_autocast_enabled(Device::Cpu));
            let y = ga.mm(&gb);
            assert_eq!(y.dtype(), DType::F16, "mm runs in f16");
            // CUDA's fp32_set_opt_dtype and fp32 lists: sum and exp of f16 give f32.
            let s = y.sum();
            let e = y.exp();
            assert_eq!((s.dtype(), e.dtype(), y.softmax(1).dtype()), (DType::F32, DType::F32, DType::F32));
            // A CPU tensor inside a CUDA region is not cast.
            assert_eq!(a.mm(&b).dtype(), DType::F32);
            (y, s, e)
        };
        let want = a.to_dtype(DType::F16).to_dtype(DType::F32).mm(&b.to_dtype(DType::F16).to_dtype(DType::F32));
        assert_close(&y, &want.to_dtype(DType::F16), "autocast mm");
        let y32 = y.cpu().to_dtype(DType::F32);
        assert_close(&e, &y32.exp(), "autocast exp");
        let (got, want) = (s.item::<f32>().unwrap(), y32.sum().item::<f32>().unwrap());
        assert!((got - want).abs() <= 1e-5 * y32.abs().sum().item::<f32>().unwrap(), "autocast sum: {got} vs {want}");
        // The f32 weight gets an f32 gradient through the cast.
        s.backward();
        let g = gb.grad().unwrap();
        assert_eq!((g.dtype(), g.device()), (DType::F32, GPU));
    }

    #[test]
    fn layer_norm_and_its_gradients_match_the_cpu() {
        require_gpu!();
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
            for (shape, norm) in
                [(&[6, 5, 40][..], &[40][..]), (&[3, 4, 700][..], &[4, 700][..]), (&[2, 1000][..], &[1000][..])]
            {
                let x = rand(shape, dtype, 28);
                let w = rand(norm, dtype, 29).add_scalar(1.0);
                let b = rand(norm, dtype, 30);
                let run = |dev: Device| {
                    let leaf = |t: &Tensor| t.to_device(dev).detach().requires_grad_(true);
                    let (x, w, b) = (leaf(&x), leaf(&w), leaf(&b));
                    let y = oxten::layer_norm(&x, norm, Some(&w), Some(&b));
                    // A weighted sum makes every gradient non-trivial.
                    let r = rand(shape, dtype, 31).to_device(dev);
                    y.mul(&r).sum().backward();
                    [y, x.grad().unwrap(), w.grad().unwrap(), b.grad().unwrap()]
                };
                let (got, want) = (run(GPU), run(Device::Cpu));
                for (k, (g, c)) in got.iter().zip(&want).enumerate() {
                    let what = format!("layer_norm {dtype:?} {shape:?} output {k}");
                    if matches!(dtype, DType::F16 | DType::BF16) && k > 0 {
                        // Gradients summed in f32 on the GPU, in f64 on the CPU, rounded once.
                        let (a, b) = (g.to_f64_vec().unwrap(), c.to_f64_vec().unwrap());
                        let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                        for (u, v) in a.iter().zip(&b) {
                            assert!((u - v).abs() <= 2e-2 * scale, "{what}: {u} vs {v}");
                        }
                    } else {
                        assert_close(g, c, &what);
                    }
                }
            }
        }
        // Statistics: f32 for half inputs on CUDA (PyTorch's accumulation type); no weight/bias.
        let x = rand(&[4, 64], DType::BF16, 32);
        let (y, mean, rstd) = oxten::native_layer_norm(&x.to_device(GPU), &[64], None, None, 1e-5);
        assert_eq!((mean.dtype(), rstd.dtype(), mean.sizes().to_vec()), (DType::F32, DType::F32, vec![4, 1]));
        assert_close(&y, &oxten::native_layer_norm(&x, &[64], None, None, 1e-5).0, "layer_norm without affine");
        // Errors come from the shared checks.
        let e = oxten::try_native_layer_norm(&x.to_device(GPU), &[32], None, None, 1e-5).unwrap_err().to_string();
        assert!(e.contains("Given normalized_shape=[32], expected input with shape [*, 32]"), "{e}");
    }

    #[test]
    fn fused_adamw_steps_match_the_cpu() {
        require_gpu!();
        use oxten::optim::{AdamOpts, AdamW, Optimizer};
        let shapes: [&[i64]; 3] = [&[64, 33], &[33], &[1000, 7]];
        for amsgrad in [false, true] {
            let init: Vec<Tensor> =
                shapes.iter().enumerate().map(|(i, s)| rand(s, DType::F32, 40 + i as u64)).collect();
            let run = |dev: Device| {
                let params: Vec<Tensor> = init.iter().map(|t| t.to_device(dev).detach().requires_grad_(true)).collect();
                let opts = AdamOpts { lr: 1e-2, weight_decay: 0.1, amsgrad, fused: true, ..AdamOpts::default() };
                let mut opt = AdamW::new(params.clone(), opts).unwrap();
                for step in 0..5 {
                    for (i, p) in params.iter().enumerate() {
                        let g = if i == 0 {
                            // A transposed (strided) gradient, as a transposed weight's.
                            rand(&[33, 64], DType::F32, 100 * step).t()
                        } else {
                            rand(&p.sizes(), DType::F32, 100 * step + i as u64)
                        };
                        p.set_grad(Some(g.to_device(dev)));
                    }
                    opt.step().unwrap();
                }
                params.iter().map(|p| p.detach().cpu()).collect::<Vec<_>>()
            };
            let (got, want) = (run(GPU), run(Device::Cpu));
            for (g, w) in got.iter().zip(&want) {
                assert_close(g, w, &format!("fused AdamW amsgrad={amsgrad}"));
            }
        }
        // grad_scale divides the gradient; a non-zero found_inf skips the step (GradScaler).
        let p = rand(&[256], DType::F32, 50);
        let g = rand(&[256], DType::F32, 51);
        let step = |p: &Tensor, g: &Tensor, scale: Option<&Tensor>, inf: Option<&Tensor>| {
            let (m, v) = (oxten::zeros_like(p), oxten::zeros_like(p));
            let opts = oxten::options::FusedAdamwInplaceOpts { grad_scale: scale, found_inf: inf };
            oxten::_fused_adamw_with_(
                &[p],
                &[g],
                &[&m],
                &[&v],
                &[] as &[Tensor],
                &[Tensor::scalar(1.0f32)],
                1e-2,
                0.9,
                0.999,
                0.0,
                1e-8,
                false,
                false,
                opts,
            );
        };
        let (gp, gg) = (p.to_device(GPU), g.to_device(GPU).mul_scalar(8.0));
        let scale = Tensor::scalar(8.0f32).to_device(GPU);
        step(&gp, &gg, Some(&scale), None);
        let cp = p.clone();
        step(&cp, &g, None, None);
        assert_close(&gp, &cp, "fused AdamW with grad_scale");
        let before = gp.cpu();
        step(&gp, &gg, Some(&scale), Some(&Tensor::scalar(1.0f32).to_device(GPU)));
        assert_close(&gp, &before, "found_inf skips the step");
    }

    #[test]
    fn triangles_ranges_gelu_and_foreach_match_the_cpu() {
        require_gpu!();
        use oxten::options::{ArangeOpts, GeluOpts, TrilInplaceOpts, TrilOpts, TriuInplaceOpts};
        for dtype in [DType::F32, DType::F64, DType::BF16, DType::I64] {
            let x = rand(&[3, 5, 4], dtype, 70);
            for diagonal in [-1, 0, 2] {
                assert_close(
                    &x.to_device(GPU).tril_with(TrilOpts { diagonal }),
                    &x.tril_with(TrilOpts { diagonal }),
                    "tril",
                );
                assert_close(
                    &x.to_device(GPU).triu_with(oxten::options::TriuOpts { diagonal }),
                    &x.triu_with(oxten::options::TriuOpts { diagonal }),
                    "triu",
                );
            }
            // In place on a transposed (non-contiguous) view.
            let (g, c) = (x.to_device(GPU).transpose(1, 2), x.transpose(1, 2));
            g.tril_with_(TrilInplaceOpts { diagonal: 1 });
            c.tril_with_(TrilInplaceOpts { diagonal: 1 });
            assert_close(&g, &c, "tril_ of a transposed view");
            let (g, c) = (x.to_device(GPU), x.clone());
            g.triu_with_(TriuInplaceOpts { diagonal: -2 });
            c.triu_with_(TriuInplaceOpts { diagonal: -2 });
            assert_close(&g, &c, "triu_");
        }
        let bools = rand(&[6, 6], DType::F32, 71).gt_scalar(0.0);
        let with_nan = Tensor::from_vec(vec![0.0f32, 1.5, f32::NAN, -0.0, 2.0, 0.0], &[2, 3]).unwrap();
        for t in [with_nan.clone(), bools.clone(), Tensor::from_vec(vec![0i64, 3, -2, 0, 7, 0], &[3, 2]).unwrap()] {
            assert_close(&t.to_device(GPU).logical_not(), &t.logical_not(), "logical_not");
        }
        assert_close(&bools.to_device(GPU).tril(), &bools.tril(), "tril of bool");
        for dtype in [DType::I64, DType::F32, DType::BF16] {
            let r = oxten::arange_with(17, ArangeOpts { dtype: Some(dtype), device: Some(GPU), ..Default::default() });
            assert_eq!(r.device(), GPU);
            assert_close(
                &r,
                &oxten::arange_with(17, ArangeOpts { dtype: Some(dtype), ..Default::default() }),
                "arange",
            );
        }
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
            let x = rand(&[7, 300], dtype, 72).mul_scalar(4.0);
            for approximate in ["none", "tanh"] {
                let (g, c) =
                    (x.to_device(GPU).gelu_with(GeluOpts { approximate }), x.gelu_with(GeluOpts { approximate }));
                assert_close(&g, &c, &format!("gelu {approximate} {dtype:?}"));
            }
        }
        let e = x_err();
        assert!(e.contains("approximate argument must be either none or tanh"), "{e}");
        // _foreach on CUDA: per-tensor kernels, the caller's stream.
        let xs: Vec<Tensor> = (0..3).map(|i| rand(&[10 + i, 3], DType::F32, 73 + i as u64)).collect();
        let gs: Vec<Tensor> = xs.iter().map(|t| t.to_device(GPU)).collect();
        oxten::_foreach_mul_scalar_(&gs, 0.5);
        oxten::_foreach_mul_scalar_(&xs, 0.5);
        let (ng, nc) = (oxten::_foreach_norm_scalar(&gs), oxten::_foreach_norm_scalar(&xs));
        for ((g, c), (a, b)) in gs.iter().zip(&xs).zip(ng.iter().zip(&nc)) {
            assert_close(g, c, "_foreach_mul_");
            assert_close(a, b, "_foreach_norm");
        }
    }

    fn x_err() -> String {
        let x = rand(&[4], DType::F32, 74).to_device(GPU);
        x.try_gelu_with(oxten::options::GeluOpts { approximate: "exact" }).unwrap_err().to_string()
    }

    /// GradScaler on CUDA: the same run as on the CPU (infs injected at steps 2 and 5), scale
    /// and found-inf flag kept on the device.
    #[test]
    fn grad_scaler_runs_the_same_on_the_gpu() {
        require_gpu!();
        use oxten::amp::{GradScaler, GradScalerOpts};
        use oxten::optim::{Optimizer, Sgd, SgdOpts};
        let (w0, x, y) = (rand(&[4], DType::F32, 80), rand(&[6, 4], DType::F32, 81), rand(&[6], DType::F32, 82));
        let run = |dev: Device| {
            let w = w0.to_device(dev).detach().requires_grad_(true);
            let (x, y) = (x.to_device(dev), y.to_device(dev));
            let mut opt = Sgd::new(vec![w.clone()], SgdOpts { lr: 0.1, ..Default::default() }).unwrap();
            let mut scaler = GradScaler::new(GradScalerOpts { growth_interval: 3, ..Default::default() }).unwrap();
            let mut scales = Vec::new();
            for step in 0..8 {
                let r = x.matmul(&w).sub(&y);
                let mut loss = r.mul(&r).mean_dim(None, false);
                if step == 2 || step == 5 {
                    loss = loss.mul_scalar(f64::INFINITY);
                }
                scaler.scale(&loss).unwrap().backward();
                assert_eq!(scaler.step(&mut opt).unwrap(), step != 2 && step != 5);
                scaler.update().unwrap();
                opt.zero_grad();
                scales.push(scaler.get_scale());
            }
            (scales, scaler.get_growth_tracker(), w.detach().cpu())
        };
        let (gpu, cpu) = (run(GPU), run(Device::Cpu));
        // Worked out by hand: halved at the two inf steps, three clean steps never complete.
        let want = [65536.0, 65536.0, 32768.0, 32768.0, 32768.0, 16384.0, 16384.0, 16384.0];
        assert_eq!(gpu.0, want);
        assert_eq!((cpu.0.as_slice(), cpu.1, gpu.1), (&want[..], 2, 2));
        assert_close(&gpu.2, &cpu.2, "weights after the GradScaler run");
        // The operators themselves on device tensors.
        let g = Tensor::from_vec(vec![2.0f32, f32::NAN], &[2]).unwrap().to_device(GPU);
        let found = Tensor::scalar(0.0f32).to_device(GPU);
        oxten::_amp_foreach_non_finite_check_and_unscale_(&[&g], &found, &Tensor::scalar(0.5f32).to_device(GPU));
        assert_eq!(found.cpu().item::<f32>().unwrap(), 1.0);
        assert_eq!(g.cpu().to_vec::<f32>().unwrap()[0], 1.0);
    }

    /// One GPT-style training step (embedding, layer norm, causal attention, tanh-GELU MLP,
    /// cross-entropy, gradient clipping, fused AdamW) from the same weights on both devices.
    #[test]
    fn a_transformer_training_step_matches_the_cpu() {
        require_gpu!();
        use oxten::optim::{AdamOpts, AdamW, Optimizer};
        use oxten::options::{GeluOpts, ScaledDotProductAttentionOpts};
        let (b, t, d, h, vocab) = (2i64, 16i64, 32i64, 4i64, 50i64);
        let tokens = Tensor::from_vec((0..b * t).map(|i| (i * 7 + 3) % vocab).collect::<Vec<i64>>(), &[b, t]).unwrap();
        let targets =
            Tensor::from_vec((0..b * t).map(|i| (i * 5 + 1) % vocab).collect::<Vec<i64>>(), &[b * t]).unwrap();
        let shapes: [&[i64]; 8] =
            [&[vocab, d], &[d], &[d], &[3 * d, d], &[d, d], &[4 * d, d], &[d, 4 * d], &[vocab, d]];
        let init: Vec<Tensor> =
            shapes.iter().enumerate().map(|(i, s)| rand(s, DType::F32, 60 + i as u64).mul_scalar(0.3)).collect();
        let run = |dev: Device| {
            let p: Vec<Tensor> = init.iter().map(|w| w.to_device(dev).detach().requires_grad_(true)).collect();
            let ln = |x: &Tensor| oxten::layer_norm(x, &[d], Some(&p[1].add_scalar(1.0)), Some(&p[2]));
            let x = oxten::embedding(&p[0], &tokens.to_device(dev));
            let qkv = oxten::linear(&ln(&x), &p[3], None).reshape(&[b, t, 3, h, d / h]).permute(&[2, 0, 3, 1, 4]);
            let (q, k, v) = (qkv.select(0, 0), qkv.select(0, 1), qkv.select(0, 2));
            let opts = ScaledDotProductAttentionOpts { is_causal: true, ..Default::default() };
            let att = oxten::scaled_dot_product_attention_with(&q, &k, &v, opts);
            let x = x.add(&oxten::linear(&att.transpose(1, 2).reshape(&[b, t, d]), &p[4], None));
            let hidden = oxten::linear(&ln(&x), &p[5], None).gelu_with(GeluOpts { approximate: "tanh" });
            let x = x.add(&oxten::linear(&hidden, &p[6], None));
            let logits = oxten::linear(&x, &p[7], None).reshape(&[b * t, vocab]);
            let loss = oxten::cross_entropy_loss(&logits, &targets.to_device(dev));
            loss.backward();
            let norm = oxten::nn::clip_grad_norm_(&p, 0.5).unwrap();
            let grads: Vec<Tensor> = p.iter().map(|w| w.grad().unwrap().cpu()).collect();
            let opts = AdamOpts { lr: 1e-2, weight_decay: 0.1, fused: true, ..AdamOpts::default() };
            AdamW::new(p.clone(), opts).unwrap().step().unwrap();
            (loss.cpu(), norm, grads, p.iter().map(|w| w.detach().cpu()).collect::<Vec<_>>())
        };
        let (gpu, cpu) = (run(GPU), run(Device::Cpu));
        assert_close(&gpu.0, &cpu.0, "transformer loss");
        assert!((gpu.1 - cpu.1).abs() <= 1e-4 * cpu.1, "gradient norm {} vs {}", gpu.1, cpu.1);
        for (i, ((g, c), (pg, pc))) in gpu.2.iter().zip(&cpu.2).zip(gpu.3.iter().zip(&cpu.3)).enumerate() {
            let scale = c.abs().amax(&[], false).item::<f32>().unwrap() as f64;
            let (gg, gc) = (g.to_f64_vec().unwrap(), c.to_f64_vec().unwrap());
            for (u, v) in gg.iter().zip(&gc) {
                assert!((u - v).abs() <= 1e-3 * scale, "gradient {i}: {u} vs {v}");
            }
            // Adam's first step moves each element by about lr · sign(g): compare where the
            // gradient is clearly non-zero (elsewhere rounding may flip its sign).
            let (vg, vc) = (pg.to_f64_vec().unwrap(), pc.to_f64_vec().unwrap());
            for (k, ((u, v), gv)) in vg.iter().zip(&vc).zip(&gc).enumerate() {
                if gv.abs() > 1e-2 * scale {
                    assert!((u - v).abs() <= 1e-5, "parameter {i}[{k}] after AdamW: {u} vs {v}");
                }
            }
        }
    }

    #[test]
    fn backward_runs_on_the_forward_stream() {
        require_gpu!();
        let side = cuda::Stream::new(GPU).unwrap();
        let x = rand(&[1 << 18], DType::F32, 24).to_device(GPU).requires_grad_(true);
        // The forward runs on a side stream; backward is called from the default stream.
        let (h, loss) = {
            let _g = cuda::StreamGuard::new(side);
            let h = x.mul(&x).exp();
            let loss = h.sum();
            (h, loss)
        };
        assert_eq!(loss.grad_fn().unwrap().base().stream(), Some(side));
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        h.register_hook(move |g| {
            seen2.lock().unwrap().push(cuda::current_stream(g.device()));
            Ok(None)
        })
        .unwrap();
        assert_eq!(cuda::current_stream(GPU), cuda::Stream::default_for(GPU));
        loss.backward();
        assert_eq!(*seen.lock().unwrap(), vec![side], "the hook ran on the forward's stream");
        assert_eq!(cuda::current_stream(GPU), cuda::Stream::default_for(GPU), "the stream is restored");
        // No synchronisation by hand: the default stream waits for the side stream's backward.
        let xc = x.detach().cpu();
        let want = xc.mul(&xc).exp().mul(&xc).mul_scalar(2.0);
        assert_close(&x.grad().unwrap().cpu(), &want, "d/dx sum(exp(x²)) from a side stream");
        // Two branches on two streams meet in one sum; the default stream reads the result.
        let (a, b) = (cuda::Stream::new(GPU).unwrap(), cuda::Stream::new(GPU).unwrap());
        let w = rand(&[512, 512], DType::F32, 25).to_device(GPU).requires_grad_(true);
        let ya = {
            let _g = cuda::StreamGuard::new(a);
            w.mm(&w).tanh()
        };
        let yb = {
            let _g = cuda::StreamGuard::new(b);
            // b reads w, made on the default stream, which is idle by now.
            w.sigmoid().mul_scalar(3.0)
        };
        a.synchronize().unwrap();
        b.synchronize().unwrap();
        // Two producers on two streams feed one consumer, with no synchronisation by hand: `w`'s
        // gradient is the sum of a matmul chain's (stream a) and a pointwise chain's (stream b).
        ya.add(&yb).sum().backward();
        // The reference in f64: the GPU's f32 products of 512 terms differ from any other order by
        // rounding only, while a missing stream order would give wrong values, not rounding.
        let wc = w.detach().cpu().to_dtype(DType::F64).requires_grad_(true);
        wc.mm(&wc).tanh().add(&wc.sigmoid().mul_scalar(3.0)).sum().backward();
        let want = wc.grad().unwrap().to_f64_vec().unwrap();
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (u, v) in w.grad().unwrap().to_f64_vec().unwrap().iter().zip(&want) {
            assert!((u - v).abs() <= 1e-5 * scale, "two streams' gradients meet: {u} vs {v}");
        }
    }
}
