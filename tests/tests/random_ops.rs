//! Random operators: the `Generator` (seeding, state, sharing), determinism and independence of
//! how the work is split, statistics of every distribution (fixed seeds, generous bounds),
//! dtypes, layouts, meta tensors, PyTorch's argument errors (messages checked against torch
//! 2.15), and dropout (scaling, masks, edge cases, gradients).
//!
//! Values are oxten's own (Philox4x32-10), so no test compares them with PyTorch's.

use oxten::options::*;
use oxten::{DType, Device, Generator, MemoryFormat, Result, Tensor};
use std::sync::Mutex;

/// Tests that seed the process-wide default generator hold this lock from seeding to drawing.
static DEFAULT_GENERATOR: Mutex<()> = Mutex::new(());

fn lock_default() -> std::sync::MutexGuard<'static, ()> {
    DEFAULT_GENERATOR.lock().unwrap_or_else(|e| e.into_inner())
}

fn gen(seed: u64) -> Generator {
    Generator::with_seed(seed)
}

fn rand_f32(g: &Generator, sizes: &[i64]) -> Vec<f32> {
    oxten::rand_generator(sizes, Some(g)).to_vec::<f32>().unwrap()
}

/// The error as displayed: `<innermost operator>: <message>`.
fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().to_string()
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n)
}

fn with_dtype(dtype: DType) -> RandGeneratorOpts {
    RandGeneratorOpts { dtype: Some(dtype), ..Default::default() }
}

// ------------------------------------------------------------------------------- Generator

#[test]
fn same_seed_same_values_different_seeds_differ() {
    oxten::init();
    let a = rand_f32(&gen(7), &[1000]);
    let b = rand_f32(&gen(7), &[1000]);
    let c = rand_f32(&gen(8), &[1000]);
    assert_eq!(a, b);
    assert_ne!(a, c);
    // Consecutive draws continue the stream rather than repeat it.
    let g = gen(7);
    assert_eq!(rand_f32(&g, &[1000]), a);
    assert_ne!(rand_f32(&g, &[1000]), a);
    // manual_seed restarts it.
    g.manual_seed(7);
    assert_eq!(rand_f32(&g, &[1000]), a);
}

#[test]
fn generator_seeds_and_defaults() {
    oxten::init();
    let g = Generator::new();
    assert_eq!(g.initial_seed(), 67_280_421_310_721);
    assert_eq!(g.manual_seed(3).initial_seed(), 3);
    let s = g.seed();
    assert_eq!(g.initial_seed(), s);
    assert_ne!(g.seed(), s);
    assert_eq!(g.device(), Device::Cpu);
    // A clone is a handle on the same stream.
    let h = g.clone();
    h.manual_seed(11);
    assert_eq!(g.initial_seed(), 11);
    assert!(h.same_as(&g));
    let x = rand_f32(&h, &[8]);
    assert_ne!(rand_f32(&g, &[8]), x);
    assert!(format!("{g:?}").contains("seed: 11"));
}

#[test]
fn get_state_set_state_replays() {
    oxten::init();
    let g = gen(42);
    rand_f32(&g, &[13]);
    let state = g.get_state();
    let a = oxten::randn_generator(&[100], Some(&g)).to_vec::<f32>().unwrap();
    let b = oxten::randint_generator(10, &[50], Some(&g)).to_vec::<i64>().unwrap();
    g.set_state(&state).unwrap();
    assert_eq!(oxten::randn_generator(&[100], Some(&g)).to_vec::<f32>().unwrap(), a);
    assert_eq!(oxten::randint_generator(10, &[50], Some(&g)).to_vec::<i64>().unwrap(), b);
    // Into another generator, too.
    let h = Generator::new();
    h.set_state(&state).unwrap();
    assert_eq!(oxten::randn_generator(&[100], Some(&h)).to_vec::<f32>().unwrap(), a);
    // Malformed states are errors, and leave the generator as it was.
    let before = h.get_state();
    assert!(msg(h.set_state(&state[..7])).contains("but got 7 bytes"));
    assert!(msg(h.set_state(&[])).contains("expected a 20-byte state"));
    let mut wrong = state.clone();
    wrong[1] ^= 0xff;
    assert!(h.set_state(&wrong).is_err());
    assert_eq!(h.get_state(), before);
}

#[test]
fn default_generator_is_seeded_by_manual_seed() {
    oxten::init();
    let _l = lock_default();
    let g = oxten::manual_seed(5);
    assert_eq!(oxten::initial_seed(), 5);
    let a = oxten::rand(&[64]).to_vec::<f32>().unwrap();
    let b = oxten::randn(&[64]).to_vec::<f32>().unwrap();
    oxten::manual_seed(5);
    assert_eq!(oxten::rand(&[64]).to_vec::<f32>().unwrap(), a);
    let state = oxten::get_rng_state();
    assert_eq!(oxten::randn(&[64]).to_vec::<f32>().unwrap(), b);
    oxten::set_rng_state(&state).unwrap();
    assert_eq!(oxten::randn(&[64]).to_vec::<f32>().unwrap(), b);
    // The default generator and an explicit one with the same seed give the same values.
    assert!(g.same_as(&oxten::default_generator()));
    assert_eq!(rand_f32(&gen(5), &[64]), a);
    let s = oxten::seed();
    assert_eq!(oxten::initial_seed(), s);
}

/// Values depend only on the seed and the element's position: one large (parallel) draw equals
/// many small (serial) draws of the same stream, for every sampler.
#[test]
fn values_do_not_depend_on_how_the_work_is_split() {
    oxten::init();
    let n = 1 << 20;
    let whole = rand_f32(&gen(9), &[n]);
    let g = gen(9);
    let mut parts = Vec::new();
    // Pieces that are multiples of 4 elements (one Philox block = 4 f32 elements).
    for len in [4, 1000, 4096, 100_000, (n as usize - 105_100) as i64] {
        parts.extend(rand_f32(&g, &[len]));
    }
    assert_eq!(parts, whole);
    // f64 normals (2 per block), randint, bernoulli: the same property.
    let opts = |d| RandnGeneratorOpts { dtype: Some(d), ..Default::default() };
    let whole = oxten::randn_generator_with(&[n], Some(&gen(3)), opts(DType::F64)).to_vec::<f64>().unwrap();
    let g = gen(3);
    let mut parts = oxten::randn_generator_with(&[2000], Some(&g), opts(DType::F64)).to_vec::<f64>().unwrap();
    parts.extend(oxten::randn_generator_with(&[n - 2000], Some(&g), opts(DType::F64)).to_vec::<f64>().unwrap());
    assert_eq!(parts, whole);
    let whole = oxten::randint_low_generator(-5, 5, &[n], Some(&gen(4))).to_vec::<i64>().unwrap();
    let g = gen(4);
    let mut parts = oxten::randint_low_generator(-5, 5, &[400], Some(&g)).to_vec::<i64>().unwrap();
    parts.extend(oxten::randint_low_generator(-5, 5, &[n - 400], Some(&g)).to_vec::<i64>().unwrap());
    assert_eq!(parts, whole);
}

// ------------------------------------------------------------------------------- statistics

#[test]
fn uniform_statistics() {
    oxten::init();
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let v = oxten::rand_generator_with(&[1_000_000], Some(&gen(1)), with_dtype(dtype)).to_f64_vec().unwrap();
        let (m, var) = mean_var(&v);
        assert!((m - 0.5).abs() < 0.003, "{dtype:?}: mean {m}");
        assert!((var - 1.0 / 12.0).abs() < 0.002, "{dtype:?}: var {var}");
        assert!(v.iter().all(|&x| (0.0..1.0).contains(&x)), "{dtype:?}: outside [0, 1)");
        // Every tenth of the interval gets about a tenth of the samples.
        let mut bins = [0usize; 10];
        for x in &v {
            bins[(x * 10.0) as usize] += 1;
        }
        if dtype != DType::BF16 {
            assert!(bins.iter().all(|&b| (b as f64 - 1e5).abs() < 3e3), "{dtype:?}: {bins:?}");
        }
    }
    // uniform_(from, to) in place.
    let t = oxten::empty(&[200_000]);
    t.uniform_with_(UniformInplaceOpts { from: -3.0, to: 5.0, generator: Some(&gen(2)) });
    let v = t.to_f64_vec().unwrap();
    let (m, var) = mean_var(&v);
    assert!((m - 1.0).abs() < 0.03 && (var - 64.0 / 12.0).abs() < 0.1, "{m} {var}");
    assert!(v.iter().all(|&x| (-3.0..5.0).contains(&x)));
    // from == to gives that value.
    t.uniform_with_(UniformInplaceOpts { from: 2.0, to: 2.0, generator: None });
    assert!(t.to_f64_vec().unwrap().iter().all(|&x| x == 2.0));
}

#[test]
fn normal_statistics() {
    oxten::init();
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let opts = RandnGeneratorOpts { dtype: Some(dtype), ..Default::default() };
        let v = oxten::randn_generator_with(&[1_000_000], Some(&gen(10)), opts).to_f64_vec().unwrap();
        let (m, var) = mean_var(&v);
        assert!(m.abs() < 0.005, "{dtype:?}: mean {m}");
        assert!((var - 1.0).abs() < 0.01, "{dtype:?}: var {var}");
        let within1 = v.iter().filter(|x| x.abs() < 1.0).count() as f64 / v.len() as f64;
        let within2 = v.iter().filter(|x| x.abs() < 2.0).count() as f64 / v.len() as f64;
        assert!((within1 - 0.6827).abs() < 0.004, "{dtype:?}: {within1}");
        assert!((within2 - 0.9545).abs() < 0.003, "{dtype:?}: {within2}");
        // Skewness and kurtosis of a normal: 0 and 3.
        let m3 = v.iter().map(|x| (x - m).powi(3)).sum::<f64>() / v.len() as f64 / var.powf(1.5);
        let m4 = v.iter().map(|x| (x - m).powi(4)).sum::<f64>() / v.len() as f64 / (var * var);
        assert!(m3.abs() < 0.02 && (m4 - 3.0).abs() < 0.05, "{dtype:?}: skew {m3} kurtosis {m4}");
        assert!(v.iter().all(|x| x.is_finite()));
    }
    let t = Tensor::from_vec(vec![0f64; 300_000], &[300_000]).unwrap();
    t.normal_with_(NormalInplaceOpts { mean: -2.0, std: 3.0, generator: Some(&gen(11)) });
    let (m, var) = mean_var(&t.to_f64_vec().unwrap());
    assert!((m + 2.0).abs() < 0.03 && (var - 9.0).abs() < 0.1, "{m} {var}");
    // std = 0 gives the mean.
    t.normal_with_(NormalInplaceOpts { mean: 1.5, std: 0.0, generator: None });
    assert!(t.to_f64_vec().unwrap().iter().all(|&x| x == 1.5));
}

#[test]
fn bernoulli_statistics() {
    oxten::init();
    for (p, dtype) in [(0.3, DType::F32), (0.5, DType::Bool), (0.9, DType::I64), (0.05, DType::F16)] {
        let t = oxten::empty_with(&[1_000_000], EmptyOpts { dtype: Some(dtype), ..Default::default() });
        t.bernoulli_float_with_(BernoulliFloatInplaceOpts { p, generator: Some(&gen(20)) });
        let v = t.to_f64_vec().unwrap();
        assert!(v.iter().all(|&x| x == 0.0 || x == 1.0));
        let freq = v.iter().sum::<f64>() / v.len() as f64;
        assert!((freq - p).abs() < 0.003, "{dtype:?} p={p}: {freq}");
    }
    // p = 0 and p = 1 are exact.
    let t = oxten::empty(&[10_000]);
    t.bernoulli_float_with_(BernoulliFloatInplaceOpts { p: 0.0, generator: None });
    assert!(t.to_vec::<f32>().unwrap().iter().all(|&x| x == 0.0));
    t.bernoulli_float_with_(BernoulliFloatInplaceOpts { p: 1.0, generator: None });
    assert!(t.to_vec::<f32>().unwrap().iter().all(|&x| x == 1.0));
    // Per-element probabilities (broadcast), and the functional form.
    let p = Tensor::from_vec(vec![0.0f64, 0.25, 1.0], &[3]).unwrap();
    let t = oxten::empty(&[200_000, 3]);
    t.bernoulli_with_(&p, BernoulliInplaceOpts { generator: Some(&gen(21)) });
    let col = |t: &Tensor, j: i64| t.select(1, j).to_f64_vec().unwrap().iter().sum::<f64>() / 200_000.0;
    assert_eq!((col(&t, 0), col(&t, 2)), (0.0, 1.0));
    assert!((col(&t, 1) - 0.25).abs() < 0.004);
    let probs = p.expand(&[200_000, 3]).to_dtype(DType::F32);
    let b = probs.bernoulli_with(BernoulliOpts { generator: Some(&gen(22)) });
    assert_eq!(b.dtype(), DType::F32);
    assert!((col(&b, 1) - 0.25).abs() < 0.004 && col(&b, 2) == 1.0);
    let b = oxten::ones(&[100_000]).bernoulli_p_with(0.7, BernoulliPOpts { generator: Some(&gen(23)) });
    let freq = b.to_f64_vec().unwrap().iter().sum::<f64>() / 1e5;
    assert!((freq - 0.7).abs() < 0.006, "{freq}");
    // Scalar and tensor probabilities draw the same way: the same state gives the same mask.
    let a =
        oxten::empty(&[1000]).bernoulli_float_with_(BernoulliFloatInplaceOpts { p: 0.4, generator: Some(&gen(24)) });
    let pt = oxten::full(&[1000], 0.4);
    let b = oxten::empty(&[1000]).bernoulli_with_(&pt, BernoulliInplaceOpts { generator: Some(&gen(24)) });
    assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
}

#[test]
fn randint_ranges_and_dtypes() {
    oxten::init();
    let v = oxten::randint_low_generator(-3, 4, &[70_000], Some(&gen(30))).to_vec::<i64>().unwrap();
    let mut counts = [0usize; 7];
    for x in &v {
        assert!((-3..4).contains(x));
        counts[(x + 3) as usize] += 1;
    }
    assert!(counts.iter().all(|&c| (c as f64 - 1e4).abs() < 500.0), "{counts:?}");
    let t = oxten::randint(10, &[2, 3]);
    assert_eq!((t.dtype(), t.sizes().to_vec()), (DType::I64, vec![2, 3]));
    for dtype in [DType::U8, DType::I8, DType::I16, DType::I32, DType::F32, DType::F64, DType::F16, DType::BF16] {
        let opts = RandintLowGeneratorOpts { dtype: Some(dtype), ..Default::default() };
        let t = oxten::randint_low_generator_with(2, 100, &[5000], Some(&gen(31)), opts);
        assert_eq!(t.dtype(), dtype);
        let v = t.to_f64_vec().unwrap();
        assert!(v.iter().all(|&x| x.fract() == 0.0 && (2.0..100.0).contains(&x)), "{dtype:?}");
        assert!(v.contains(&2.0) && v.contains(&99.0), "{dtype:?}");
    }
    let b = oxten::randint_low_with(0, 2, &[1000], RandintLowOpts { dtype: Some(DType::Bool), ..Default::default() });
    let ones = b.to_vec::<bool>().unwrap().iter().filter(|&&x| x).count();
    assert!((400..600).contains(&ones));
    // Ranges beyond 2^32 (two words per element) and the full int64 range.
    let v = oxten::randint_low_generator(-(1 << 40), 1 << 40, &[10_000], Some(&gen(32))).to_vec::<i64>().unwrap();
    assert!(v.iter().all(|x| (-(1 << 40)..(1 << 40)).contains(x)));
    assert!(v.iter().any(|&x| x > 1 << 39) && v.iter().any(|&x| x < -(1 << 39)));
    let t = Tensor::from_vec(vec![0i64; 1000], &[1000]).unwrap();
    t.random_from_(i64::MIN, None);
    let v = t.to_vec::<i64>().unwrap();
    assert!(v.iter().any(|&x| x < i64::MIN / 2) && v.iter().any(|&x| x > i64::MAX / 2));
    // random_.to and random_.from without an upper bound.
    let t = oxten::zeros_with(&[1000], ZerosOpts { dtype: Some(DType::U8), ..Default::default() });
    t.random_to_(3);
    assert!(t.to_vec::<u8>().unwrap().iter().all(|&x| x < 3));
    t.random_from_(250, None);
    assert!(t.to_vec::<u8>().unwrap().iter().all(|&x| x >= 250));
}

#[test]
fn randperm_is_a_permutation() {
    oxten::init();
    for n in [0i64, 1, 2, 10, 1000, 100_003] {
        let p = oxten::randperm_generator(n, Some(&gen(40))).to_vec::<i64>().unwrap();
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, (0..n).collect::<Vec<_>>(), "n={n}");
        if n >= 10 {
            assert_ne!(p, (0..n).collect::<Vec<_>>());
            assert_ne!(p, oxten::randperm_generator(n, Some(&gen(41))).to_vec::<i64>().unwrap());
        }
    }
    // Position 0 holds each value about equally often.
    let g = gen(42);
    let mut first = [0usize; 5];
    for _ in 0..5000 {
        first[oxten::randperm_generator(5, Some(&g)).to_vec::<i64>().unwrap()[0] as usize] += 1;
    }
    assert!(first.iter().all(|&c| (c as f64 - 1000.0).abs() < 130.0), "{first:?}");
    for dtype in [DType::I32, DType::I8, DType::U8, DType::F32, DType::F16, DType::BF16, DType::F64] {
        let opts = RandpermGeneratorOpts { dtype: Some(dtype), ..Default::default() };
        let p = oxten::randperm_generator_with(100, Some(&gen(43)), opts);
        assert_eq!(p.dtype(), dtype);
        let mut v = p.to_f64_vec().unwrap();
        v.sort_by(f64::total_cmp);
        assert_eq!(v, (0..100).map(|i| i as f64).collect::<Vec<_>>(), "{dtype:?}");
    }
}

// ------------------------------------------------------------------------------- layouts

#[test]
fn dtypes_shapes_and_like_factories() {
    oxten::init();
    assert_eq!(oxten::rand(&[2, 3]).dtype(), DType::F32);
    for dtype in [DType::F64, DType::F16, DType::BF16] {
        let t = oxten::rand_with(&[4], RandOpts { dtype: Some(dtype), ..Default::default() });
        assert_eq!((t.dtype(), t.sizes().to_vec()), (dtype, vec![4]));
        assert_eq!(oxten::randn_with(&[4], RandnOpts { dtype: Some(dtype), ..Default::default() }).dtype(), dtype);
    }
    assert_eq!(oxten::rand(&[0, 3]).numel(), 0);
    assert_eq!(oxten::rand(&[]).dim(), 0);
    // *_like keep the layout of a dense input unless told otherwise.
    let x = oxten::ones(&[4, 3]).t();
    let r = oxten::rand_like(&x);
    assert_eq!((r.sizes().to_vec(), r.strides().to_vec()), (vec![3, 4], vec![1, 3]));
    let r = oxten::randn_like_with(
        &x,
        RandnLikeOpts { memory_format: Some(MemoryFormat::Contiguous), ..Default::default() },
    );
    assert_eq!(r.strides().to_vec(), vec![4, 1]);
    let g = gen(50);
    let a = oxten::rand_like_generator(&x, Some(&g)).deep_clone().to_vec::<f32>().unwrap();
    let b = oxten::rand_like_generator(&x, Some(&gen(50))).deep_clone().to_vec::<f32>().unwrap();
    assert_eq!(a, b);
    let r = oxten::randn_like_generator_with(
        &x,
        Some(&g),
        RandnLikeGeneratorOpts { dtype: Some(DType::F64), ..Default::default() },
    );
    assert_eq!(r.dtype(), DType::F64);
    // The *_like factories are not differentiable.
    let w = oxten::ones(&[3]).requires_grad_(true);
    assert!(!oxten::rand_like(&w).requires_grad() && !oxten::randn_like(&w).requires_grad());
}

#[test]
fn in_place_sampling_of_non_dense_views_touches_only_the_view() {
    oxten::init();
    let base = oxten::zeros(&[4, 6]);
    let view = base.slice(1, Some(1), Some(6), 2);
    view.uniform_with_(UniformInplaceOpts { from: 1.0, to: 2.0, generator: Some(&gen(60)) });
    let v = base.to_vec::<f32>().unwrap();
    for (i, x) in v.iter().enumerate() {
        if i % 2 == 1 {
            assert!((1.0..2.0).contains(x), "{i}: {x}");
        } else {
            assert_eq!(*x, 0.0, "{i}");
        }
    }
    let before = view.version();
    view.normal_();
    assert!(view.version() > before);
    assert!(base.to_vec::<f32>().unwrap().iter().step_by(2).all(|&x| x == 0.0));
    // A transposed (dense) tensor is sampled in place.
    let t = oxten::zeros(&[3, 5]).t();
    t.bernoulli_float_with_(BernoulliFloatInplaceOpts { p: 1.0, generator: None });
    assert!(t.to_vec::<f32>().unwrap().iter().all(|&x| x == 1.0));
}

#[test]
fn meta_tensors_check_and_shape() {
    oxten::init();
    let meta = Some(Device::Meta);
    let t = oxten::rand_with(&[2, 5], RandOpts { device: meta, ..Default::default() });
    assert!(t.is_meta() && t.sizes().to_vec() == vec![2, 5]);
    assert!(oxten::randn_with(&[3], RandnOpts { device: meta, ..Default::default() }).is_meta());
    assert!(oxten::randperm_with(7, RandpermOpts { device: meta, ..Default::default() }).is_meta());
    let r = oxten::randint_low_with(0, 3, &[4], RandintLowOpts { device: meta, ..Default::default() });
    assert!(r.is_meta() && r.dtype() == DType::I64);
    let m = oxten::empty_with(&[3], EmptyOpts { device: meta, ..Default::default() });
    assert_eq!(
        msg(m.try_normal_with_(NormalInplaceOpts { mean: 0.0, std: -1.0, generator: None })),
        "normal_: normal expects std >= 0.0, but found std -1"
    );
    assert!(msg(m.try_random_from_(3, Some(3))).contains("random_ expects 'from' to be less than 'to'"));
    let (o, mask) = oxten::native_dropout(&m, 0.5, Some(true));
    assert!(o.is_meta() && mask.is_meta() && mask.dtype() == DType::Bool);
    assert!(oxten::dropout(&m, 0.5, true).is_meta());
}

// ------------------------------------------------------------------------------- errors

/// PyTorch 2.15's messages (checked with torch), prefixed with the name of the operator called
/// and of each operator it called on the way to the one that raised the error.
#[test]
fn argument_errors_match_pytorch() {
    oxten::init();
    let f = |d| RandOpts { dtype: Some(d), ..Default::default() };
    assert_eq!(
        msg(oxten::try_rand_with(&[2], f(DType::I64))),
        "rand: uniform_: \"check_uniform_bounds\" not implemented for 'Long'"
    );
    assert_eq!(
        msg(oxten::try_randn_with(&[2], RandnOpts { dtype: Some(DType::I32), ..Default::default() })),
        "randn: normal_: \"normal_kernel_cpu\" not implemented for 'Int'"
    );
    assert!(msg(oxten::try_rand(&[-1])).contains("Trying to create tensor with negative dimension -1: [-1]"));
    let ri =
        |lo, hi, d| oxten::try_randint_low_with(lo, hi, &[3], RandintLowOpts { dtype: Some(d), ..Default::default() });
    assert_eq!(
        msg(oxten::try_randint(0, &[3])),
        "randint: random_.from: random_ expects 'from' to be less than 'to', but got from=0 >= to=0"
    );
    assert!(msg(ri(5, 3, DType::I64)).ends_with("random_ expects 'from' to be less than 'to', but got from=5 >= to=3"));
    assert!(msg(ri(-5, 5, DType::U8)).ends_with("from is out of bounds for unsigned char"));
    assert!(msg(ri(0, 300, DType::U8)).ends_with("to - 1 is out of bounds for unsigned char"));
    assert!(msg(ri(0, 5, DType::Bool)).ends_with("to - 1 is out of bounds for bool"));
    assert!(msg(ri(0, 3000, DType::I8)).ends_with("to - 1 is out of bounds for signed char"));
    assert!(msg(ri(-200, 3, DType::I8)).ends_with("from is out of bounds for signed char"));
    assert!(msg(ri(0, 70000, DType::F16)).ends_with("to - 1 is out of bounds for c10::Half"));
    let full = oxten::zeros_with(&[3], ZerosOpts { dtype: Some(DType::I32), ..Default::default() });
    assert!(msg(full.try_random_from_(i64::MIN, None))
        .ends_with("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16"));

    let x = oxten::ones(&[3]);
    let u = |t: &Tensor, from, to| t.try_uniform_with_(UniformInplaceOpts { from, to, generator: None });
    assert_eq!(
        msg(u(&x, 1.0, 0.0)),
        "uniform_: uniform_ expects to return a [from, to) range, but found from=1 > to=0"
    );
    assert!(msg(u(&x, 0.0, f64::INFINITY)).ends_with("to is out of bounds for float"));
    assert!(msg(u(&x, -1e39, 0.0)).ends_with("from is out of bounds for float"));
    let h = oxten::ones_with(&[3], OnesOpts { dtype: Some(DType::F16), ..Default::default() });
    assert!(msg(u(&h, 0.0, 1e6)).ends_with("to is out of bounds for c10::Half"));
    assert!(msg(u(&x, -3e38, 3e38)).ends_with(
        "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and from=-3e+38 which \
         result in to-from to exceed the limit"
    ));
    let d = oxten::ones_with(&[3], OnesOpts { dtype: Some(DType::F64), ..Default::default() });
    assert!(msg(u(&d, f64::NAN, 1.0)).ends_with("from is out of bounds for double"));
    let i = oxten::ones_with(&[3], OnesOpts { dtype: Some(DType::I64), ..Default::default() });
    assert!(msg(u(&i, 0.0, 1.0)).ends_with("\"check_uniform_bounds\" not implemented for 'Long'"));
    // An empty tensor returns before any check, as in PyTorch.
    assert!(u(&oxten::ones(&[0]), 1.0, 0.0).is_ok());

    let n = |t: &Tensor, std| t.try_normal_with_(NormalInplaceOpts { mean: 0.0, std, generator: None });
    assert_eq!(msg(n(&x, -1.0)), "normal_: normal expects std >= 0.0, but found std -1");
    assert!(msg(n(&x, f64::NAN)).ends_with("normal expects std >= 0.0, but found std nan"));
    assert!(msg(n(&i, 1.0)).ends_with("\"normal_kernel_cpu\" not implemented for 'Long'"));

    let b = |p| x.try_bernoulli_float_with_(BernoulliFloatInplaceOpts { p, generator: None });
    assert_eq!(msg(b(1.5)), "bernoulli_.float: bernoulli_ expects p to be in [0, 1], but got p=1.5");
    assert!(msg(b(-0.1)).ends_with("but got p=-0.1"));
    assert!(msg(b(f64::NAN)).ends_with("but got p=nan"));
    let p_msg = "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  \
                 If so, please report an enhancement request to PyTorch.)";
    assert!(msg(oxten::full(&[3], 1.5).try_bernoulli()).ends_with(p_msg));
    assert!(msg(x.try_bernoulli_(&oxten::full(&[3], -0.5))).ends_with(p_msg));
    assert!(msg(i.try_bernoulli()).ends_with("\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"));
    assert!(msg(x.try_bernoulli_(&oxten::full(&[2], 0.5))).contains("The expanded size of the tensor (3) must match"));
    // An integer or bool self is fine with a float p.
    assert_eq!(i.bernoulli_(&oxten::full(&[3], 1.0)).to_vec::<i64>().unwrap(), [1, 1, 1]);

    let overlap = "unsupported operation: more than one element of the written-to tensor refers to a single memory \
                   location. Please clone() the tensor before performing the operation.";
    let e = oxten::ones(&[3]).expand(&[2, 3]);
    assert!(msg(e.try_uniform_()).ends_with(overlap));
    assert!(msg(e.try_bernoulli_float_()).ends_with(overlap));

    let rp = |n, d| oxten::try_randperm_with(n, RandpermOpts { dtype: Some(d), ..Default::default() });
    assert!(msg(oxten::try_randperm(-1)).contains("Trying to create tensor with negative dimension -1: [-1]"));
    assert!(msg(rp(300, DType::U8)).ends_with("value cannot be converted to type uint8_t without overflow"));
    assert!(msg(rp(129, DType::I8)).ends_with("value cannot be converted to type int8_t without overflow"));
    assert!(msg(rp(5, DType::Bool)).ends_with("\"randperm\" not implemented for 'Bool'"));
    assert!(msg(rp(3000, DType::F16)).ends_with("n cannot be greater than 2049 for Half type."));
    assert!(msg(rp((1 << 24) + 2, DType::F32)).ends_with("n cannot be greater than 2^24+1 for Float type."));
    assert_eq!(rp(2049, DType::F16).unwrap().numel(), 2049);
    assert_eq!(rp(257, DType::BF16).unwrap().numel(), 257);
}

// ------------------------------------------------------------------------------- dropout

#[test]
fn native_dropout_scales_and_masks() {
    oxten::init();
    let _l = lock_default();
    oxten::manual_seed(70);
    let x = oxten::arange(1000).to_dtype(DType::F32).add_scalar(1.0);
    for p in [0.0, 0.2, 0.5, 0.9] {
        let (out, mask) = oxten::native_dropout(&x, p, Some(true));
        assert_eq!(mask.dtype(), DType::Bool);
        let (xv, ov, mv) = (x.to_vec::<f32>().unwrap(), out.to_vec::<f32>().unwrap(), mask.to_vec::<bool>().unwrap());
        let scale = (1.0 / (1.0 - p)) as f32;
        for k in 0..1000 {
            assert_eq!(ov[k], if mv[k] { xv[k] * scale } else { 0.0 });
        }
        let kept = mv.iter().filter(|&&m| m).count() as f64 / 1000.0;
        assert!((kept - (1.0 - p)).abs() < 0.06, "p={p}: kept {kept}");
    }
    // p = 1 drops everything (scale 0, NaN stays NaN as x * 0); train = None trains.
    let (out, mask) = oxten::native_dropout(&x, 1.0, Some(true));
    assert!(out.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
    assert!(mask.to_vec::<bool>().unwrap().iter().all(|&m| !m));
    let (out, _) = oxten::native_dropout(&Tensor::from_vec(vec![f32::NAN; 4], &[4]).unwrap(), 1.0, Some(true));
    assert!(out.to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
    let (out, mask) = oxten::native_dropout(&x, 0.5, None);
    assert!(mask.to_vec::<bool>().unwrap().iter().any(|&m| !m));
    assert!(out.to_vec::<f32>().unwrap().contains(&0.0));
    // Eval: a copy and an all-true mask.
    let (out, mask) = oxten::native_dropout(&x, 0.5, Some(false));
    assert_eq!(out.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    assert!(!out.storage().is_alias_of(x.storage()));
    assert!(mask.to_vec::<bool>().unwrap().iter().all(|&m| m));
    // Empty input: the mask has the input's dtype (PyTorch's quirk).
    let (out, mask) = oxten::native_dropout(&oxten::ones(&[0]), 0.5, Some(true));
    assert_eq!((out.numel(), mask.dtype()), (0, DType::F32));
    // Layout: output and mask keep a dense input's strides; the same draws either way.
    let xt = oxten::ones(&[4, 3]).t();
    let (out, mask) = oxten::native_dropout(&xt, 0.5, Some(true));
    assert_eq!((out.strides().to_vec(), mask.strides().to_vec()), (vec![1, 3], vec![1, 3]));
    // A non-dense input takes the composite path: the same mask rule.
    let s = oxten::ones(&[6, 4]).slice(0, Some(0), Some(6), 2);
    let (out, mask) = oxten::native_dropout(&s, 0.25, Some(true));
    let (ov, mv) = (out.to_vec::<f32>().unwrap(), mask.to_vec::<bool>().unwrap());
    assert!(ov.iter().zip(&mv).all(|(&o, &m)| o == if m { 1.0 / 0.75 } else { 0.0 }));
    // Reduced floats and f64.
    for dtype in [DType::F16, DType::BF16, DType::F64] {
        let (out, mask) = oxten::native_dropout(&x.to_dtype(dtype), 0.5, Some(true));
        assert_eq!(out.dtype(), dtype);
        let (ov, mv) = (out.to_f64_vec().unwrap(), mask.to_vec::<bool>().unwrap());
        let xv = x.to_f64_vec().unwrap();
        for k in 0..1000 {
            let want = if mv[k] { xv[k] * 2.0 } else { 0.0 };
            assert!((ov[k] - want).abs() <= want * 4e-3, "{dtype:?}: {} vs {want}", ov[k]);
        }
    }
    // The same default-generator state gives the same mask.
    oxten::manual_seed(71);
    let a = oxten::native_dropout(&x, 0.5, Some(true)).1.to_vec::<bool>().unwrap();
    oxten::manual_seed(71);
    assert_eq!(oxten::native_dropout(&x, 0.5, Some(true)).1.to_vec::<bool>().unwrap(), a);
}

#[test]
fn native_dropout_errors() {
    oxten::init();
    let x = oxten::ones(&[3]);
    // The check is `bernoulli_(1 - p)`'s, as in PyTorch.
    assert_eq!(
        msg(oxten::try_native_dropout(&x, 1.5, Some(true))),
        "native_dropout: bernoulli_.float: bernoulli_ expects p to be in [0, 1], but got p=-0.5"
    );
    assert!(msg(oxten::try_native_dropout(&x, -0.5, Some(true))).ends_with("but got p=1.5"));
    // Not training: no check, as in PyTorch.
    assert!(oxten::try_native_dropout(&x, 2.0, Some(false)).is_ok());
    let i = oxten::ones_with(&[3], OnesOpts { dtype: Some(DType::I64), ..Default::default() });
    assert!(msg(oxten::try_native_dropout(&i, 0.5, Some(true)))
        .ends_with("result type Float can't be cast to the desired output type Long"));
}

#[test]
fn native_dropout_gradient_is_mask_times_scale() {
    oxten::init();
    let _l = lock_default();
    oxten::manual_seed(72);
    let x = oxten::rand(&[50, 4]).add_scalar(0.5).requires_grad_(true);
    for (p, train) in [(0.3, Some(true)), (0.6, None), (0.3, Some(false)), (1.0, Some(true))] {
        let (out, mask) = oxten::native_dropout(&x, p, train);
        assert!(out.requires_grad() && !mask.requires_grad());
        let g = oxten::autograd::grad(&[out.sum()], &[&x]).unwrap();
        let g = g[0].as_ref().unwrap().to_vec::<f32>().unwrap();
        let scale = if train == Some(false) {
            1.0
        } else if p == 1.0 {
            0.0
        } else {
            (1.0 / (1.0 - p)) as f32
        };
        let mv = mask.to_vec::<bool>().unwrap();
        for (gk, &m) in g.iter().zip(&mv) {
            assert_eq!(*gk, if m { scale } else { 0.0 });
        }
    }
    // native_dropout_backward is grad * mask * scale, for bool and float masks.
    let grad = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let m = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    assert_eq!(oxten::native_dropout_backward(&grad, &m, 2.0).to_vec::<f32>().unwrap(), [2.0, 0.0, 6.0]);
    let m = Tensor::from_vec(vec![0.0f32, 1.0, 1.0], &[3]).unwrap();
    assert_eq!(oxten::native_dropout_backward(&grad, &m, 0.5).to_vec::<f32>().unwrap(), [0.0, 1.0, 1.5]);
}

#[test]
fn dropout_composite() {
    oxten::init();
    let _l = lock_default();
    oxten::manual_seed(80);
    let x = oxten::rand(&[100, 10]).add_scalar(1.0).requires_grad_(true);
    let y = oxten::dropout(&x, 0.4, true);
    let (xv, yv) = (x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    let mut kept = 0;
    for (a, b) in xv.iter().zip(&yv) {
        if *b != 0.0 {
            kept += 1;
            assert!((b - a / 0.6).abs() <= 1e-6 * b.abs());
        }
    }
    assert!((kept as f64 / 1000.0 - 0.6).abs() < 0.06);
    // The gradient is the mask over 1 - p.
    y.sum().backward();
    let g = x.grad().unwrap().to_vec::<f32>().unwrap();
    for (gk, yk) in g.iter().zip(&yv) {
        assert!((gk - if *yk != 0.0 { 1.0 / 0.6 } else { 0.0 }).abs() < 1e-6);
    }
    // p = 0 and train = false return the input itself; p = 1 gives zeros.
    assert!(oxten::dropout(&x, 0.0, true).is_same(&x));
    assert!(oxten::dropout(&x, 0.7, false).is_same(&x));
    let z = oxten::dropout(&x, 1.0, true);
    assert!(z.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0) && z.requires_grad());
    // In place.
    let t = oxten::ones(&[1000]);
    oxten::dropout_(&t, 0.5, true);
    let v = t.to_vec::<f32>().unwrap();
    assert!(v.iter().all(|&a| a == 0.0 || a == 2.0) && v.contains(&0.0) && v.contains(&2.0));
    // Feature dropout: one draw per (sample, channel).
    let t = oxten::ones(&[8, 16, 5, 3]);
    let y = oxten::feature_dropout(&t, 0.5, true);
    let v = y.to_vec::<f32>().unwrap();
    for plane in v.chunks(15) {
        assert!(plane.iter().all(|&a| a == plane[0]) && (plane[0] == 0.0 || plane[0] == 2.0));
    }
    assert!(v.contains(&0.0) && v.contains(&2.0));
    let t2 = oxten::ones(&[4, 6]);
    oxten::feature_dropout_(&t2, 0.5, true);
    assert!(t2.to_vec::<f32>().unwrap().iter().all(|&a| a == 0.0 || a == 2.0));
    // Errors, in PyTorch's order: p first (even when not training), then the rank.
    let x1 = oxten::ones(&[3]);
    for p in [1.5, -0.1] {
        assert_eq!(
            msg(oxten::try_dropout(&x1, p, true)),
            format!("dropout: dropout probability has to be between 0 and 1, but got {p}")
        );
    }
    assert!(msg(oxten::try_dropout(&x1, 1.5, false)).ends_with("but got 1.5"));
    assert!(msg(oxten::try_dropout(&x1, f64::NAN, true)).ends_with("but got nan"));
    assert!(msg(oxten::try_feature_dropout(&x1, 0.5, true))
        .ends_with("Feature dropout requires at least 2 dimensions in the input"));
    assert!(oxten::try_feature_dropout(&x1, 0.5, false).is_ok());
    assert!(oxten::try_feature_dropout(&x1, 1.0, true).is_ok());
    let i = oxten::ones_with(&[3], OnesOpts { dtype: Some(DType::I64), ..Default::default() });
    assert!(msg(oxten::try_dropout(&i, 0.5, true))
        .ends_with("result type Float can't be cast to the desired output type Long"));
}

#[test]
fn in_place_random_ops_have_zero_gradients() {
    oxten::init();
    let x = oxten::ones(&[4]).requires_grad_(true);
    let y = x.mul_scalar(2.0);
    y.uniform_with_(UniformInplaceOpts { from: 0.0, to: 1.0, generator: Some(&gen(90)) });
    y.mul(&x).sum().backward();
    // d/dx sum(u * x) = u: the overwritten `2x` contributes nothing.
    assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    // A leaf that requires grad cannot be sampled in place.
    assert!(msg(x.try_normal_()).contains("leaf Variable that requires grad"));
    let b = oxten::full(&[3], 0.5).requires_grad_(true).bernoulli();
    assert!(b.requires_grad());
}

// ------------------------------------------------------------------------------- multinomial

/// Draw frequencies follow the probabilities (with replacement), zero-probability categories are
/// never drawn, draws without replacement are distinct and favour likely categories, a seeded
/// generator repeats itself, and PyTorch's argument errors are reproduced.
#[test]
fn multinomial_draws_by_probability() -> Result<()> {
    let g = gen(21);
    let p = Tensor::from_vec(vec![1.0f32, 0.0, 3.0, 4.0], &[4])?;
    let draws = oxten::try_multinomial_with(&p, 40_000, MultinomialOpts { replacement: true, generator: Some(&g) })?;
    assert_eq!(&draws.sizes()[..], &[40_000]);
    let counts = draws.bincount().to_vec::<i64>()?;
    assert_eq!(counts[1], 0, "a zero-probability category is never drawn");
    for (k, want) in [(0, 0.125), (2, 0.375), (3, 0.5)] {
        let freq = counts[k] as f64 / 40_000.0;
        assert!((freq - want).abs() < 0.01, "category {k}: {freq} vs {want}");
    }
    // Rows are independent distributions; without replacement each row's draws are distinct.
    let rows = Tensor::from_vec(vec![5.0f64, 1.0, 1.0, 1.0, 0.0, 0.0, 2.0, 9.0], &[2, 4])?;
    let mut first_pick = [0usize; 4];
    for seed in 0..400 {
        let d =
            oxten::try_multinomial_with(&rows, 2, MultinomialOpts { replacement: false, generator: Some(&gen(seed)) })?;
        let v: Vec<Vec<i64>> = Vec::try_from(&d)?;
        assert_ne!(v[0][0], v[0][1]);
        assert!(v[1].iter().all(|&c| c == 2 || c == 3), "row 1 has two possible categories: {v:?}");
        first_pick[v[0][0] as usize] += 1;
    }
    assert!(first_pick[0] > 200 && first_pick[0] < 300, "the likeliest first: {first_pick:?}");
    let again = |seed| {
        oxten::try_multinomial_with(&rows, 3, MultinomialOpts { replacement: true, generator: Some(&gen(seed)) })
    };
    assert_eq!(again(5)?.to_vec::<i64>()?, again(5)?.to_vec::<i64>()?);
    let e = |p: Tensor, n: i64, r: bool| {
        msg(oxten::try_multinomial_with(&p, n, MultinomialOpts { replacement: r, generator: None }))
    };
    let t = |v: Vec<f32>| Tensor::from_vec(v, &[2]).unwrap();
    assert!(e(t(vec![-1.0, 1.0]), 1, true).contains("probability tensor contains either `inf`, `nan` or element < 0"));
    assert!(e(t(vec![0.0, 0.0]), 1, true).contains("invalid multinomial distribution (sum of probabilities <= 0)"));
    assert!(e(t(vec![1.0, 1.0]), 3, false)
        .contains("cannot sample n_sample > prob_dist.size(-1) samples without replacement"));
    assert!(e(t(vec![1.0, 1.0]), 0, true).contains("cannot sample n_sample <= 0 samples"));
    assert!(e(Tensor::from_vec(vec![1i64, 1], &[2])?, 1, true)
        .contains("multinomial only supports floating-point dtypes for input, got: Long"));
    Ok(())
}

/// `randint_like`: `self`'s shape and dtype (float included, as PyTorch), values in `[low,
/// high)`, a seeded generator repeats itself, and PyTorch's errors for an empty range and a
/// non-scalar bound.
#[test]
fn randint_like_draws_in_range_with_self_options() -> Result<()> {
    use oxten::ops;
    let x = Tensor::from_vec(vec![0.0f32; 3000], &[30, 100])?;
    let r = ops::randint_like::call(&x, 7, None, None, None, None, None)?;
    assert_eq!((r.dtype(), r.sizes().to_vec()), (DType::F32, vec![30, 100]));
    let v = r.to_f64_vec()?;
    assert!(v.iter().all(|&k| (0.0..7.0).contains(&k) && k.fract() == 0.0));
    assert!((0..7).all(|k| v.contains(&f64::from(k))), "every value of [0, 7) appears in 3000 draws");
    let r = ops::randint_like_low_dtype::call(&x, -3, 2, Some(DType::I64), None, None, None, None)?;
    assert_eq!(r.dtype(), DType::I64);
    assert!(r.to_f64_vec()?.iter().all(|&k| (-3.0..2.0).contains(&k)));
    let high = Tensor::from_vec(vec![5i64], &[])?;
    assert!(ops::randint_like_tensor::call(&x, &high, None, None, None, None, None)?
        .to_f64_vec()?
        .iter()
        .all(|&k| k < 5.0));
    let draw = |seed| -> Result<Vec<f64>> {
        let g = Generator::with_seed(seed);
        ops::randint_like_low_generator_dtype::call(&x, 0, 1000, Some(&g), None, None, None, None, None)?.to_f64_vec()
    };
    assert_eq!(draw(3)?, draw(3)?);
    assert_ne!(draw(3)?, draw(4)?);
    let e = ops::randint_like_low_dtype::call(&x, 3, 3, None, None, None, None, None).unwrap_err().to_string();
    assert!(e.contains("random_ expects 'from' to be less than 'to', but got from=3 >= to=3"), "{e}");
    let not_scalar = Tensor::from_vec(vec![5i64], &[1])?;
    let e = ops::randint_like_tensor::call(&x, &not_scalar, None, None, None, None, None).unwrap_err().to_string();
    assert!(e.contains("high must be a scalar tensor and on CPU"), "{e}");
    Ok(())
}
