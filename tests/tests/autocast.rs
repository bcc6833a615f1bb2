//! CPU autocast (`torch.autocast("cpu")`): the generated Autocast kernels, the thread-local
//! state, the cast cache, autograd through the casts, and the state reaching other threads.
//! Values and dtypes are compared with PyTorch's (tests/golden/autocast.txt, recorded by
//! scripts/golden_autocast.py).
//!
//! The cast cache is shared by all threads and cleared whenever some thread leaves its outermost
//! region, so every test here holds [`SERIAL`].

use oxten::autocast::{
    cache_len, get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled, nesting, AutocastGuard,
    AutocastOpts, AUTOCAST_OPS,
};
use oxten::autograd::{apply_function, enable_grad, Function, FunctionCtx, Node, ThreadLocalState};
use oxten::dispatch::{local_keys, DispatchKey};
use oxten::options::{AddmmOpts, Conv1dOpts, ConvTranspose2dInputOpts, ProdOpts};
use oxten::{DType, Device, Result, Scalar, Tensor};
use oxten_tests::golden::{replay, Case};
use std::sync::{Arc, Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn randn(sizes: &[i64]) -> Tensor {
    oxten::randn(sizes)
}

const CPU: Device = Device::Cpu;

// ----- dtypes under the policies -----

#[test]
fn mm_is_lower_precision_and_sum_falls_through() {
    let _s = serial();
    let (a, b) = (randn(&[3, 4]), randn(&[4, 5]));
    let _amp = AutocastGuard::new(CPU, DType::BF16);
    assert!(is_autocast_enabled(CPU) && get_autocast_dtype(CPU) == DType::BF16);
    let y = a.mm(&b);
    assert_eq!(y.dtype(), DType::BF16, "mm(f32, f32) computes in bf16");
    assert_eq!(a.sum().dtype(), DType::F32, "sum has no CPU policy: f32 stays f32");
    assert_eq!(y.sum().dtype(), DType::BF16, "sum(mm(...)) stays bf16 on CPU (unlike CUDA)");
    // f64 is never cast.
    let d = a.to_dtype(DType::F64).mm(&b.to_dtype(DType::F64));
    assert_eq!(d.dtype(), DType::F64);
    // Meta tensors carry no Autocast key: untouched.
    let m = oxten::empty_with(&[3, 4], oxten::options::EmptyOpts { device: Some(Device::Meta), ..Default::default() });
    assert_eq!(m.mm(&m.t()).dtype(), DType::F32);
}

#[test]
fn nested_disabled_region_computes_in_f32_and_state_is_restored() {
    let _s = serial();
    let (a, b) = (randn(&[2, 3]), randn(&[3, 2]));
    assert!(!is_autocast_enabled(CPU));
    assert!(local_keys().1.contains(DispatchKey::Autocast), "autocast off = its key excluded");
    {
        let _amp = AutocastGuard::new(CPU, DType::BF16);
        assert!(!local_keys().1.contains(DispatchKey::Autocast));
        let low = a.mm(&b);
        let full = oxten::autocast::disabled(CPU, || {
            assert!(!is_autocast_enabled(CPU) && nesting() == 2);
            // Low-precision tensors made outside bleed into the region: they are not cast back.
            assert_eq!(low.mm(&low).dtype(), DType::BF16);
            a.mm(&b)
        });
        assert_eq!(full.dtype(), DType::F32);
        assert!(is_autocast_enabled(CPU) && nesting() == 1);
        assert_eq!(a.mm(&b).dtype(), DType::BF16);
        // f16 in a nested region, then back to bf16.
        let h = oxten::autocast::region(CPU, DType::F16, || a.mm(&b));
        assert_eq!(h.dtype(), DType::F16);
        assert_eq!(get_autocast_dtype(CPU), DType::BF16);
    }
    assert!(!is_autocast_enabled(CPU) && nesting() == 0);
    assert!(local_keys().1.contains(DispatchKey::Autocast));
    assert_eq!(a.mm(&b).dtype(), DType::F32);
    // The closure form at the crate root is CPU autocast.
    assert_eq!(oxten::autocast(DType::BF16, || a.mm(&b)).dtype(), DType::BF16);
    // Restored after a panic inside a region, too.
    let r = std::panic::catch_unwind(|| oxten::autocast(DType::BF16, || panic!("inside")));
    assert!(r.is_err());
    assert!(!is_autocast_enabled(CPU) && nesting() == 0 && local_keys().1.contains(DispatchKey::Autocast));
}

#[test]
fn promote_cat_and_stack() {
    let _s = serial();
    let (h, f) = (randn(&[2, 3]).to_dtype(DType::BF16), randn(&[1, 3]));
    let _amp = AutocastGuard::new(CPU, DType::BF16);
    assert_eq!(oxten::cat(&[h.clone(), f.clone()], 0).dtype(), DType::F32);
    assert_eq!(oxten::cat(&[h.clone(), h.clone()], 0).dtype(), DType::BF16);
    assert_eq!(oxten::cat(&[f.to_dtype(DType::F64), f.clone()], 0).dtype(), DType::F64);
    assert_eq!(oxten::stack(&[h.clone(), h.clone()], 0).dtype(), DType::BF16);
    let half = h.to_dtype(DType::F16);
    let e = oxten::try_cat(&[half.clone(), half], 0).unwrap_err();
    assert!(e.to_string().contains("Unexpected floating ScalarType in at::autocast::prioritize"), "{e}");
    assert!(e.to_string().starts_with("cat"), "errors name the operator: {e}");
}

#[test]
fn inplace_and_out_variants_and_explicit_dtype_are_not_cast() {
    let _s = serial();
    let (c, a, b) = (randn(&[3, 5]), randn(&[3, 4]), randn(&[4, 5]));
    let _amp = AutocastGuard::new(CPU, DType::BF16);
    let expected = oxten::autocast::disabled(CPU, || c.addmm(&a, &b));
    let r = c.deep_clone().addmm_(&a, &b);
    assert_eq!(r.dtype(), DType::F32);
    assert!(r.to_vec::<f32>().unwrap() == expected.to_vec::<f32>().unwrap(), "addmm_ computed in f32");
    let out = oxten::empty(&[0]);
    oxten::mm_out(&a, &b, &out);
    assert_eq!(out.dtype(), DType::F32);
    assert_eq!(c.addmm(&a, &b).dtype(), DType::BF16, "the functional addmm is autocast");
    // prod is fp32, and an explicit dtype wins.
    let x = randn(&[4]).to_dtype(DType::BF16);
    assert_eq!(x.prod().dtype(), DType::F32);
    assert_eq!(x.prod_with(ProdOpts { dtype: Some(DType::BF16) }).dtype(), DType::BF16);
}

#[test]
fn ops_without_a_policy_fall_through_the_autocast_key() {
    let _s = serial();
    let t = randn(&[2, 2]);
    assert!(t.key_set().contains(DispatchKey::Autocast), "CPU tensors carry the Autocast key");
    assert_eq!(oxten::ops::mm::OP.dispatch_key(t.key_set()).unwrap(), DispatchKey::Autograd, "off: excluded");
    let _amp = AutocastGuard::new(CPU, DType::BF16);
    assert_eq!(oxten::ops::mm::OP.dispatch_key(t.key_set()).unwrap(), DispatchKey::Autocast);
    // No autocast kernel: the bit is masked out before the dispatcher picks a kernel.
    assert_eq!(oxten::ops::relu::OP.dispatch_key(t.key_set()).unwrap(), DispatchKey::Autograd);
    assert_eq!(oxten::ops::sigmoid::OP.dispatch_key(t.key_set()).unwrap(), DispatchKey::Autograd);
    // `sum` has a CUDA policy only: its kernel runs for CPU tensors too and casts nothing.
    assert_eq!(oxten::ops::sum::OP.dispatch_key(t.key_set()).unwrap(), DispatchKey::Autocast);
    assert_eq!(t.to_dtype(DType::BF16).sum().dtype(), DType::BF16);
}

#[test]
fn regions_validate_device_and_dtype() {
    let _s = serial();
    let e = AutocastGuard::try_new(CPU, DType::F32).err().unwrap();
    assert!(e.to_string().contains("In CPU autocast, but the target dtype is not supported"), "{e}");
    let e = AutocastGuard::try_new(Device::Meta, DType::BF16).err().unwrap();
    assert!(e.to_string().contains("unsupported autocast device_type 'meta'"), "{e}");
    // A disabled region accepts any dtype, as in PyTorch.
    let g =
        AutocastGuard::with_opts(CPU, AutocastOpts { dtype: Some(DType::F32), enabled: false, ..Default::default() });
    assert!(g.is_ok() && !is_autocast_enabled(CPU));
    drop(g);
    assert_eq!(get_autocast_dtype(CPU), DType::BF16);
}

#[test]
fn the_yaml_lists_match_pytorch_2_15_cpu() {
    // PyTorch 2.15's AutocastCPU registrations, for the operators oxten has.
    let expected = [
        ("mm", "lower_precision_fp"),
        ("bmm", "lower_precision_fp"),
        ("addmm", "lower_precision_fp"),
        ("baddbmm", "lower_precision_fp"),
        ("addbmm", "lower_precision_fp"),
        ("matmul", "lower_precision_fp"),
        ("scaled_dot_product_attention", "lower_precision_fp"),
        ("linear", "lower_precision_fp"),
        ("conv1d", "lower_precision_fp"),
        ("conv1d.padding", "lower_precision_fp"),
        ("conv2d", "lower_precision_fp"),
        ("conv2d.padding", "lower_precision_fp"),
        ("conv_transpose2d.input", "lower_precision_fp"),
        ("mse_loss", "fp32"),
        ("nll_loss", "fp32"),
        ("cross_entropy_loss", "fp32"),
        ("binary_cross_entropy_with_logits", "fp32"),
        ("prod", "fp32"),
        ("prod.dim_int", "fp32"),
        ("cat", "promote"),
        ("stack", "promote"),
    ];
    let mut got: Vec<(&str, &str)> = AUTOCAST_OPS.iter().filter_map(|e| Some((e.op, e.cpu?))).collect();
    let mut want = expected.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn the_yaml_lists_match_pytorch_2_15_cuda() {
    // PyTorch 2.15's AutocastCUDA registrations (autocast_mode.cpp), for the operators oxten has.
    let lower = [
        "mm",
        "bmm",
        "addmm",
        "baddbmm",
        "addbmm",
        "matmul",
        "mv",
        "einsum",
        "linear",
        "convolution",
        "conv1d",
        "conv1d.padding",
        "conv2d",
        "conv2d.padding",
        "conv_transpose2d.input",
        "scaled_dot_product_attention",
        "rnn_tanh_cell",
        "rnn_relu_cell",
        "lstm_cell",
        "gru_cell",
    ];
    let fp32 = [
        "erfinv",
        "exp",
        "expm1",
        "log",
        "log1p",
        "rsqrt",
        "pow.Tensor_Scalar",
        "pow.Tensor_Tensor",
        "pow.Scalar",
        "softplus",
        "layer_norm",
        "native_layer_norm",
        "group_norm",
        "cosine_similarity",
        "nll_loss",
        "mse_loss",
        "cross_entropy_loss",
        "binary_cross_entropy_with_logits",
        "logsumexp",
        "upsample_nearest1d.vec",
        "upsample_nearest2d.vec",
        "upsample_nearest3d.vec",
        "_upsample_nearest_exact1d.vec",
        "_upsample_nearest_exact2d.vec",
        "_upsample_nearest_exact3d.vec",
        "upsample_linear1d.vec",
        "upsample_bilinear2d.vec",
        "upsample_trilinear3d.vec",
        "upsample_bicubic2d.vec",
    ];
    let set_opt_dtype = [
        "prod",
        "prod.dim_int",
        "softmax.int",
        "log_softmax.int",
        "cumsum",
        "cumprod",
        "linalg_vector_norm",
        "sum",
        "sum.dim_IntList",
    ];
    let promote = ["addcdiv", "addcmul", "atan2", "cross", "dot", "index_put", "scatter_add", "cat", "stack"];
    let mut want: Vec<(&str, &str)> = Vec::new();
    for (ops, policy) in [
        (&lower[..], "lower_precision_fp"),
        (&fp32[..], "fp32"),
        (&set_opt_dtype[..], "fp32_set_opt_dtype"),
        (&promote[..], "promote"),
    ] {
        want.extend(ops.iter().map(|&op| (op, policy)));
    }
    let mut got: Vec<(&str, &str)> = AUTOCAST_OPS.iter().filter_map(|e| Some((e.op, e.cuda?))).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

// ----- autograd and the cast cache -----

/// The dtypes of the tensors `node` saved, by field name.
fn saved_dtypes(node: &Arc<dyn Node>) -> Vec<(String, DType)> {
    let mut v = Vec::new();
    node.visit_saved(&mut |name, sv| v.push((name.to_string(), sv.unpack(&**node).unwrap().dtype())));
    v
}

#[test]
fn f32_weights_get_f32_grads_and_mm_saves_low_precision() {
    let _s = serial();
    let x = randn(&[3, 4]);
    let w = randn(&[4, 5]).requires_grad_(true);
    let y = oxten::autocast(DType::BF16, || x.mm(&w));
    assert_eq!(y.dtype(), DType::BF16);
    let node = y.grad_fn().unwrap();
    assert_eq!(node.name(), "MmBackward0");
    assert_eq!(saved_dtypes(&node), [("self".into(), DType::BF16), ("mat2".into(), DType::BF16)]);
    // The cast is part of the graph.
    let cast = node.base().next_edges()[1].function.clone().unwrap();
    assert_eq!(cast.name(), "ToCopyBackward0");
    // Backward outside the region.
    y.to_dtype(DType::F32).sum().backward();
    let g = w.grad().unwrap();
    assert_eq!(g.dtype(), DType::F32);
    // d(sum(x w))/dw = xᵀ·1, computed from bf16 x.
    let want = x.to_dtype(DType::BF16).to_dtype(DType::F32).t().mm(&oxten::ones(&[3, 5]));
    for (a, b) in g.to_vec::<f32>().unwrap().iter().zip(want.to_vec::<f32>().unwrap()) {
        assert!((a - b).abs() <= 2e-2 * b.abs().max(1.0), "{a} vs {b}");
    }
}

#[test]
fn a_weight_reused_in_a_region_is_cast_once_and_the_cache_empties_on_exit() {
    let _s = serial();
    let (x1, x2) = (randn(&[2, 4]), randn(&[3, 4]));
    let w = randn(&[4, 5]).requires_grad_(true);
    let (y1, y2) = {
        let _outer = AutocastGuard::new(CPU, DType::BF16);
        let y1 = x1.mm(&w);
        assert_eq!(cache_len(), 1, "the weight's cast is cached");
        let y2 = {
            let _inner = AutocastGuard::new(CPU, DType::BF16);
            x2.mm(&w)
        };
        assert_eq!(cache_len(), 1, "an inner region's exit keeps the cache");
        (y1, y2)
    };
    assert_eq!(cache_len(), 0, "the outermost exit clears it");
    let c1 = y1.grad_fn().unwrap().base().next_edges()[1].function.clone().unwrap();
    let c2 = y2.grad_fn().unwrap().base().next_edges()[1].function.clone().unwrap();
    assert!(Arc::ptr_eq(&c1, &c2), "both products use the same cast of the weight");
    // Both uses contribute to the gradient.
    y1.to_dtype(DType::F32).sum().add(&y2.to_dtype(DType::F32).sum()).backward();
    let g = w.grad().unwrap();
    let want = x1
        .to_dtype(DType::BF16)
        .to_dtype(DType::F32)
        .sum_dim_intlist(Some(&[0]), false)
        .add(&x2.to_dtype(DType::BF16).to_dtype(DType::F32).sum_dim_intlist(Some(&[0]), false));
    let (g, want) = (g.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    for k in 0..4 {
        assert!((g[k * 5] - want[k]).abs() <= 2e-2 * want[k].abs().max(1.0), "{} vs {}", g[k * 5], want[k]);
    }
}

#[test]
fn only_f32_requires_grad_leaves_that_are_not_views_are_cached() {
    let _s = serial();
    let x = randn(&[2, 4]);
    let w = randn(&[4, 5]).requires_grad_(true);
    let _amp = AutocastGuard::new(CPU, DType::BF16);
    // A view of a weight (a non-leaf here) and a leaf view: never cached.
    let _ = x.mm(&w.t().t());
    let leaf_view = w.detach().view(&[4, 5]).requires_grad_(true);
    assert!(leaf_view.is_view() && leaf_view.is_leaf() && leaf_view.requires_grad());
    let _ = x.mm(&leaf_view);
    // Inputs that do not require grad, and bf16 weights (nothing to cast): not cached.
    let _ = x.mm(&randn(&[4, 5]));
    let _ = x.mm(&randn(&[4, 5]).to_dtype(DType::BF16).requires_grad_(true));
    assert_eq!(cache_len(), 0);
    // cache_enabled=False regions do not cache either.
    let _off = AutocastGuard::with_opts(CPU, AutocastOpts { cache_enabled: Some(false), ..Default::default() });
    assert!(!is_autocast_cache_enabled());
    let _ = x.mm(&w);
    assert_eq!(cache_len(), 0);
    drop(_off);
    assert!(is_autocast_cache_enabled());
    let _ = x.mm(&w);
    assert_eq!(cache_len(), 1);
}

// ----- threads -----

/// Backward of level `n` runs a backward pass through level `n - 1`; the deepest level records
/// the autocast state it sees and the thread it runs on.
struct Nested {
    depth: usize,
    deepest: Arc<Mutex<Option<(bool, DType, String)>>>,
}
impl Function for Nested {
    fn name(&self) -> String {
        "Nested".into()
    }
    fn forward(&self, _: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![x[0].try_mul_scalar(Scalar::Float(1.0))?])
    }
    fn backward(&self, _: &FunctionCtx, g: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        if self.depth == 0 {
            let name = std::thread::current().name().unwrap_or("").to_string();
            *self.deepest.lock().unwrap() = Some((is_autocast_enabled(CPU), get_autocast_dtype(CPU), name));
        } else {
            let inner = randn(&[1]).requires_grad_(true);
            let f = Nested { depth: self.depth - 1, deepest: self.deepest.clone() };
            enable_grad(|| apply_function(f, std::slice::from_ref(&inner)))?.remove(0).try_backward()?;
        }
        Ok(vec![g[0].clone()])
    }
}

#[test]
fn backward_threads_see_the_callers_autocast_state() {
    let _s = serial();
    let deepest = Arc::new(Mutex::new(None));
    let depth = oxten::autograd::MAX_REENTRANT_INLINE_DEPTH + 5;
    let x = randn(&[1]).requires_grad_(true);
    let y = apply_function(Nested { depth, deepest: deepest.clone() }, &[x]).unwrap().remove(0);
    // backward() inside a region (PyTorch recommends outside, but it is allowed): the engine's
    // continuation thread runs the deepest backward with the caller's autocast state.
    oxten::autocast::region(CPU, DType::F16, || y.backward());
    let (enabled, dtype, thread) = deepest.lock().unwrap().clone().unwrap();
    assert_eq!(thread, "oxten-reentrant-backward");
    assert!(enabled);
    assert_eq!(dtype, DType::F16);
}

#[test]
fn thread_local_state_carries_autocast_to_rayon_workers_and_threads() {
    let _s = serial();
    let (a, b) = (randn(&[2, 3]), randn(&[3, 2]));
    let _amp = AutocastGuard::new(CPU, DType::F16);
    // A new thread (or a rayon worker) starts with autocast off, like PyTorch's threads and
    // `at::parallel_for` workers ...
    let (on, dt) = std::thread::spawn(|| (is_autocast_enabled(CPU), get_autocast_dtype(CPU))).join().unwrap();
    assert!(!on && dt == DType::BF16);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert!(!pool.install(|| is_autocast_enabled(CPU)));
    // ... and the captured ThreadLocalState brings the caller's autocast state (like
    // `at::ThreadLocalStateGuard` in `at::launch` and the autograd engine).
    let state = ThreadLocalState::capture();
    let (on, dt, out) =
        pool.install(|| state.enter(|| (is_autocast_enabled(CPU), get_autocast_dtype(CPU), a.mm(&b).dtype())));
    assert!(on && dt == DType::F16 && out == DType::F16);
    let after = std::thread::spawn(move || {
        state.enter(|| ());
        (is_autocast_enabled(CPU), local_keys().1.contains(DispatchKey::Autocast))
    });
    assert_eq!(after.join().unwrap(), (false, true), "the thread's own state is restored");
}

// ----- values against PyTorch -----

const GOLDEN: &str = include_str!("../golden/autocast.txt");

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let _amp = match c.attr("region") {
        Some("f16") => AutocastGuard::new(CPU, DType::F16),
        _ => AutocastGuard::new(CPU, DType::BF16),
    };
    let _off = (c.attr("region") == Some("off")).then(|| AutocastGuard::disabled(CPU));
    let t = |i: usize| c.t(i);
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    match c.op.as_str() {
        "mm" => one(t(0).try_mm(t(1))),
        "mm_sum" => one(t(0).try_mm(t(1))?.try_sum()),
        "bmm" => one(t(0).try_bmm(t(1))),
        "addmm" => one(t(0).try_addmm_with(
            t(1),
            t(2),
            AddmmOpts {
                beta: c.float("beta").map_or(Scalar::Int(1), Scalar::Float),
                alpha: c.float("alpha").map_or(Scalar::Int(1), Scalar::Float),
            },
        )),
        "matmul" => one(t(0).try_matmul(t(1))),
        "linear" => {
            let bias = c.args.get(2).map(|_| t(2));
            one(oxten::try_linear(t(0), t(1), bias))
        }
        "conv2d" => one(oxten::try_conv2d(t(0), t(1), Some(t(2)), &[1, 1], &[1, 1])),
        "conv2d_same" => one(oxten::try_conv2d_padding(t(0), t(1), None, &[1, 1], "same")),
        "conv1d" => one(oxten::try_conv1d_with(t(0), t(1), Conv1dOpts { stride: &[2], ..Default::default() })),
        "conv_transpose2d" => one(oxten::try_conv_transpose2d_input_with(
            t(0),
            t(1),
            ConvTranspose2dInputOpts { bias: Some(t(2)), stride: &[2, 2], ..Default::default() },
        )),
        "cross_entropy" => one(oxten::try_cross_entropy_loss(t(0), t(1))),
        "mse_loss" => one(oxten::try_mse_loss(t(0), t(1))),
        "nll_loss" => one(oxten::try_nll_loss(t(0), t(1))),
        "bce_with_logits" => one(oxten::try_binary_cross_entropy_with_logits(t(0), t(1))),
        "prod" => one(t(0).try_prod()),
        "prod_dim" => one(t(0).try_prod_dim_int(1)),
        "prod_dtype" => one(t(0).try_prod_with(ProdOpts { dtype: Some(DType::BF16) })),
        "cat" => {
            let dim = c.int("dim").unwrap_or(0);
            one(oxten::try_cat(&[t(0).clone(), t(1).clone()], dim))
        }
        "stack" => one(oxten::try_stack(&[t(0).clone(), t(1).clone()], 0)),
        "sum" => one(t(0).try_sum()),
        "relu" => one(t(0).try_relu()),
        "softmax" => one(t(0).try_softmax(1)),
        "addmm_" => one(t(0).try_deep_clone()?.try_addmm_(t(1), t(2))),
        "mm_out" => {
            let out = oxten::empty(&[0]);
            oxten::try_mm_out(t(0), t(1), &out)?;
            Ok(vec![out])
        }
        "net" => {
            let h = oxten::try_conv2d(t(0), t(1), Some(t(2)), &[1, 1], &[1, 1])?;
            let (rm, rv) = (oxten::zeros(&[4]), oxten::ones(&[4]));
            let h = oxten::try_batch_norm(&h, Some(t(3)), Some(t(4)), Some(&rm), Some(&rv), true, 0.1, 1e-5, false)?;
            let h = oxten::try_max_pool2d(&h.try_relu()?, &[2, 2])?.try_flatten(1)?;
            let logits = oxten::try_linear(&h, t(5), Some(t(6)))?;
            let loss = oxten::try_cross_entropy_loss(&logits, t(7))?;
            Ok(vec![logits, loss])
        }
        other => panic!("no runner for {other}"),
    }
}

#[test]
fn outputs_match_pytorch_under_autocast() {
    let _s = serial();
    replay(GOLDEN, 46, run);
}
