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
        ("softmax", |x| x.softmax(1)),
        ("log_softmax last", |x| x.log_softmax(-1)),
    ];

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
}
