//! The `out=` overloads of the random factories (`rand.out`, `randn.out`, `randint.out`,
//! `randperm.out`, their `generator` forms, `normal.float_float_out`) and PyTorch's
//! `normal(mean, std)` overloads with tensor arguments and their `out=` forms: shapes, dtypes,
//! resize semantics and errors as torch 2.15 gives them (noted beside each check), and the same
//! random stream as the functional form for the same generator state.
//!
//! Values are oxten's own (Philox), so none is compared with PyTorch's.

use oxten::options::*;
use oxten::{DType, Device, Generator, MemoryFormat, Result, Tensor};
use std::sync::Mutex;

/// Tests that seed the process-wide default generator hold this lock from seeding to drawing.
static DEFAULT_GENERATOR: Mutex<()> = Mutex::new(());

fn gen(seed: u64) -> Generator {
    Generator::with_seed(seed)
}

fn empty(sizes: &[i64], dtype: DType) -> Tensor {
    oxten::empty_with(sizes, EmptyOpts { dtype: Some(dtype), ..Default::default() })
}

fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().to_string()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

fn cl(t: &Tensor) -> Tensor {
    t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast })
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

#[test]
fn factories_out_draw_the_functional_forms_stream() {
    oxten::init();
    let size = [3, 5];
    // rand / randn with a generator
    let want = oxten::rand_generator(&size, Some(&gen(1)));
    let out = empty(&[0], DType::F32);
    let got = oxten::rand_generator_out(&size, Some(&gen(1)), &out);
    assert_eq!(vals(&got), vals(&want));
    assert_eq!(vals(&out), vals(&want), "the result is `out` itself");
    let want = oxten::randn_generator(&size, Some(&gen(2)));
    let out = empty(&[0], DType::F32);
    oxten::randn_generator_out(&size, Some(&gen(2)), &out);
    assert_eq!(vals(&out), vals(&want));
    // randint (both overloads) and randperm
    let want = oxten::randint_low_generator(-4, 9, &size, Some(&gen(3)));
    let out = empty(&[0], DType::I64);
    oxten::randint_low_generator_out(-4, 9, &size, Some(&gen(3)), &out);
    assert_eq!(vals(&out), vals(&want));
    let want = oxten::randint_generator(7, &size, Some(&gen(4)));
    let out = empty(&[0], DType::I64);
    oxten::randint_generator_out(7, &size, Some(&gen(4)), &out);
    assert_eq!(vals(&out), vals(&want));
    let want = oxten::randperm_generator(50, Some(&gen(5)));
    let out = empty(&[0], DType::I64);
    oxten::randperm_generator_out(50, Some(&gen(5)), &out);
    assert_eq!(vals(&out), vals(&want));
    // normal.float_float
    let want = oxten::normal_float_float_with(
        2.0,
        3.0,
        &size,
        NormalFloatFloatOpts { generator: Some(&gen(6)), ..Default::default() },
    );
    let out = empty(&[0], DType::F32);
    oxten::normal_float_float_out_with(2.0, 3.0, &size, &out, NormalFloatFloatOutOpts { generator: Some(&gen(6)) });
    assert_eq!(vals(&out), vals(&want));
    // normal.float_float is randn scaled and shifted
    let z = oxten::randn_generator(&size, Some(&gen(6)));
    assert!(close(&vals(&want), &vals(&z.mul_scalar(3.0).add_scalar(2.0)), 1e-6));

    // The forms without a generator draw from the default one.
    let _lock = DEFAULT_GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
    let draw = |f: &dyn Fn() -> Tensor| {
        oxten::manual_seed(11);
        vals(&f())
    };
    let out = || empty(&[0], DType::F32);
    let outl = || empty(&[0], DType::I64);
    assert_eq!(draw(&|| oxten::rand(&size)), draw(&|| oxten::rand_out(&size, &out())));
    assert_eq!(draw(&|| oxten::randn(&size)), draw(&|| oxten::randn_out(&size, &out())));
    assert_eq!(draw(&|| oxten::randint(6, &size)), draw(&|| oxten::randint_out(6, &size, &outl())));
    assert_eq!(draw(&|| oxten::randint_low(-2, 6, &size)), draw(&|| oxten::randint_low_out(-2, 6, &size, &outl())));
    assert_eq!(draw(&|| oxten::randperm(9)), draw(&|| oxten::randperm_out(9, &outl())));
    assert_eq!(
        draw(&|| oxten::normal_float_float(1.0, 0.5, &size)),
        draw(&|| oxten::normal_float_float_out(1.0, 0.5, &size, &out()))
    );
    let mean = oxten::arange(15).to_dtype(DType::F32).view(&size);
    assert_eq!(
        draw(&|| oxten::normal_tensor_float(&mean)),
        draw(&|| oxten::normal_tensor_float_out(&mean, &empty(&size, DType::F32)))
    );
}

#[test]
fn factories_out_resize_semantics() {
    oxten::init();
    let g = gen(9);
    // torch.rand(2,3, out=torch.empty(0)) -> (2, 3), strides (3, 1)
    let out = empty(&[0], DType::F32);
    let r = oxten::rand_generator_out(&[2, 3], Some(&g), &out);
    assert_eq!((&r.sizes()[..], &r.strides()[..]), (&[2i64, 3][..], &[3i64, 1][..]));
    assert_eq!(r.data_ptr(), out.data_ptr());
    // an out of the right size keeps its strides: channels_last (60, 1, 15, 3), transposed (1, 2)
    let out = cl(&empty(&[2, 3, 4, 5], DType::F32));
    oxten::rand_generator_out(&[2, 3, 4, 5], Some(&g), &out);
    assert_eq!(&out.strides()[..], &[60, 1, 15, 3]);
    let out = empty(&[3, 2], DType::F32).t();
    oxten::randn_generator_out(&[2, 3], Some(&g), &out);
    assert_eq!(&out.strides()[..], &[1, 2]);
    // ... and is filled in memory order: the transposed out holds the contiguous draw transposed.
    let want = oxten::randn_generator(&[3, 2], Some(&gen(1)));
    let out = empty(&[3, 2], DType::F32).t();
    oxten::randn_generator_out(&[2, 3], Some(&gen(1)), &out);
    assert_eq!(vals(&out), vals(&want.t()));
    // a non-empty out of another size is resized contiguous: torch.randn(2,3, out=torch.empty(5))
    let out = empty(&[5], DType::F32);
    oxten::randn_generator_out(&[2, 3], Some(&g), &out);
    assert_eq!((&out.sizes()[..], &out.strides()[..]), (&[2i64, 3][..], &[3i64, 1][..]));
    // out's dtype is used
    let out = empty(&[0], DType::F64);
    oxten::rand_generator_out(&[4], Some(&g), &out);
    assert_eq!(out.dtype(), DType::F64);
    assert!(vals(&out).iter().all(|v| (0.0..1.0).contains(v)));
    let out = empty(&[0], DType::I32);
    oxten::randint_low_generator_out(-2, 5, &[2, 3], Some(&g), &out);
    assert_eq!(out.dtype(), DType::I32);
    assert!(vals(&out).iter().all(|v| (-2.0..5.0).contains(v)));
    let out = empty(&[0], DType::F32);
    oxten::randint_generator_out(5, &[2, 3], Some(&g), &out);
    assert!(vals(&out).iter().all(|v| v.fract() == 0.0 && (0.0..5.0).contains(v)));
    let out = empty(&[0], DType::BF16);
    oxten::normal_float_float_out_with(0.0, 1.0, &[8], &out, NormalFloatFloatOutOpts { generator: Some(&g) });
    assert_eq!((out.dtype(), &out.sizes()[..]), (DType::BF16, &[8i64][..]));
    // randperm: float out; a strided out of the right size keeps its stride (torch: (5,) stride (2,))
    let out = empty(&[0], DType::F32);
    oxten::randperm_generator_out(5, Some(&g), &out);
    let mut v = vals(&out);
    v.sort_by(f64::total_cmp);
    assert_eq!(v, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    let base = oxten::zeros_with(&[10], ZerosOpts { dtype: Some(DType::I64), ..Default::default() });
    let out = base.slice(0, None, None, 2);
    oxten::randperm_generator_out(5, Some(&gen(3)), &out);
    assert_eq!(&out.strides()[..], &[2]);
    assert_eq!(vals(&out), vals(&oxten::randperm_generator(5, Some(&gen(3)))));
    assert!(vals(&base).iter().skip(1).step_by(2).all(|&x| x == 0.0), "the gaps are untouched");
    let out = empty(&[7], DType::I64);
    oxten::randperm_generator_out(5, Some(&g), &out);
    assert_eq!((&out.sizes()[..], &out.strides()[..]), (&[5i64][..], &[1i64][..]));
    // empty sizes
    let out = empty(&[3], DType::F32);
    oxten::rand_generator_out(&[0, 4], Some(&g), &out);
    assert_eq!(&out.sizes()[..], &[0, 4]);
    let out = empty(&[3], DType::I64);
    oxten::randperm_generator_out(0, Some(&g), &out);
    assert_eq!(&out.sizes()[..], &[0]);
}

#[test]
fn factories_out_errors_match_pytorch() {
    oxten::init();
    let g = gen(1);
    let cases: Vec<(Result<Tensor>, &str)> = vec![
        (oxten::try_rand_out(&[2, 3], &empty(&[0], DType::I64)), "\"check_uniform_bounds\" not implemented for 'Long'"),
        (
            oxten::try_rand_out(&[2, 3], &empty(&[0], DType::Bool)),
            "\"check_uniform_bounds\" not implemented for 'Bool'",
        ),
        (oxten::try_randn_out(&[2, 3], &empty(&[0], DType::I64)), "\"normal_kernel_cpu\" not implemented for 'Long'"),
        (
            oxten::try_randint_low_out(5, 2, &[2, 3], &empty(&[0], DType::I64)),
            "random_ expects 'from' to be less than 'to', but got from=5 >= to=2",
        ),
        (oxten::try_randint_out(300, &[2, 3], &empty(&[0], DType::U8)), "to - 1 is out of bounds for unsigned char"),
        (oxten::try_randperm_out(5, &empty(&[0], DType::Bool)), "\"randperm\" not implemented for 'Bool'"),
        (oxten::try_randperm_out(-1, &empty(&[0], DType::I64)), "n must be non-negative, got-1"),
        (
            oxten::try_randperm_out(300, &empty(&[0], DType::I8)),
            "value cannot be converted to type int8_t without overflow",
        ),
        (oxten::try_randperm_out(3000, &empty(&[0], DType::F16)), "n cannot be greater than 2049 for Half type."),
        (
            oxten::try_rand_generator_out(&[2, -1], Some(&g), &empty(&[0], DType::F32)),
            "numel: integer multiplication overflow",
        ),
        (
            oxten::try_normal_float_float_out_with(
                0.0,
                -1.0,
                &[2],
                &empty(&[0], DType::F32),
                NormalFloatFloatOutOpts::default(),
            ),
            "normal expects std >= 0.0, but found std -1",
        ),
        (
            oxten::try_normal_float_float_out_with(
                0.0,
                1.0,
                &[2],
                &empty(&[0], DType::I64),
                NormalFloatFloatOutOpts::default(),
            ),
            "\"normal_kernel_cpu\" not implemented for 'Long'",
        ),
    ];
    for (i, (r, want)) in cases.into_iter().enumerate() {
        let got = msg(r);
        assert!(got.contains(want), "case {i}: `{got}` does not contain `{want}`");
    }
    // out= does not record history: PyTorch's error when an argument requires grad.
    let out = empty(&[2], DType::F32).requires_grad_(true);
    let e = msg(oxten::try_rand_out(&[2], &out));
    assert!(
        e.contains("aten::rand(): functions with out=... arguments don't support automatic differentiation"),
        "{e}"
    );
    let e = msg(oxten::try_randperm_out(2, &out));
    assert!(e.contains("aten::randperm(): functions with out=..."), "{e}");
    let e = msg(oxten::try_normal_float_float_out(0.0, 1.0, &[2], &out));
    assert!(e.contains("aten::normal(): functions with out=..."), "{e}");
    // ... and under no_grad writes into it as PyTorch does.
    oxten::autograd::no_grad(|| oxten::try_rand_out(&[2], &out)).unwrap();
}

#[test]
fn normal_with_tensor_arguments() {
    oxten::init();
    let g = gen(21);
    let mean = oxten::arange(6).to_dtype(DType::F32).view(&[2, 3]);
    let std = Tensor::from_vec(vec![0.5f64, 1.0, 2.0], &[3]).unwrap();
    // normal.Tensor_float: mean's dtype, contiguous even for a channels_last mean (torch: (60, 20, 5, 1))
    let y = oxten::normal_tensor_float_with(&mean, NormalTensorFloatOpts { std: 2.0, generator: Some(&gen(1)) });
    assert_eq!((y.dtype(), &y.sizes()[..], &y.strides()[..]), (DType::F32, &[2i64, 3][..], &[3i64, 1][..]));
    let z = oxten::randn_generator(&[2, 3], Some(&gen(1)));
    assert!(close(&vals(&y), &vals(&z.mul_scalar(2.0).add(&mean)), 1e-6), "mean + std * the randn stream");
    let m4 = cl(&oxten::zeros(&[2, 3, 4, 5]));
    let y = oxten::normal_tensor_float_with(&m4, NormalTensorFloatOpts { std: 1.0, generator: Some(&g) });
    assert_eq!(&y.strides()[..], &[60, 20, 5, 1]);
    // std 0 gives the mean
    let y = oxten::normal_tensor_float_with(&mean, NormalTensorFloatOpts { std: 0.0, generator: Some(&g) });
    assert_eq!(vals(&y), vals(&mean));
    // normal.float_Tensor: std's dtype (torch: float64 for a float64 std) and shape
    let y = oxten::normal_float_tensor_with(1.0, &std, NormalFloatTensorOpts { generator: Some(&gen(2)) });
    assert_eq!((y.dtype(), &y.sizes()[..]), (DType::F64, &[3i64][..]));
    let z = oxten::randn_generator_with(
        &[3],
        Some(&gen(2)),
        RandnGeneratorOpts { dtype: Some(DType::F64), ..Default::default() },
    );
    assert!(close(&vals(&y), &vals(&z.mul(&std).add_scalar(1.0)), 1e-12));
    // normal.Tensor_Tensor: the broadcast shape, mean's dtype (torch: [2,1] f32 with [3] f64 -> (2, 3) f32)
    let m = Tensor::from_vec(vec![10.0f32, -10.0], &[2, 1]).unwrap();
    let y = oxten::normal_tensor_tensor_with(&m, &std, NormalTensorTensorOpts { generator: Some(&gen(3)) });
    assert_eq!((y.dtype(), &y.sizes()[..], &y.strides()[..]), (DType::F32, &[2i64, 3][..], &[3i64, 1][..]));
    let z = oxten::randn_generator(&[2, 3], Some(&gen(3)));
    assert!(close(&vals(&y), &vals(&z.mul(&std.to_dtype(DType::F32)).add(&m)), 1e-6));
    let y = oxten::normal_tensor_tensor(&mean, &oxten::zeros(&[3]));
    assert_eq!(vals(&y), vals(&mean));
    // f16 / bf16 means
    let y = oxten::normal_tensor_tensor(&mean.to_dtype(DType::BF16), &oxten::ones(&[3]));
    assert_eq!(y.dtype(), DType::BF16);
    // empty
    let y = oxten::normal_tensor_float(&oxten::zeros(&[0, 3]));
    assert_eq!(&y.sizes()[..], &[0, 3]);

    // out= forms: the functional form's values for the same generator state
    let cases: Vec<(Tensor, Tensor)> = vec![
        (
            oxten::normal_tensor_float_with(&mean, NormalTensorFloatOpts { std: 0.5, generator: Some(&gen(4)) }),
            oxten::normal_tensor_float_out_with(
                &mean,
                &empty(&[2, 3], DType::F32),
                NormalTensorFloatOutOpts { std: 0.5, generator: Some(&gen(4)) },
            ),
        ),
        (
            oxten::normal_float_tensor_with(1.0, &std, NormalFloatTensorOpts { generator: Some(&gen(5)) }),
            oxten::normal_float_tensor_out_with(
                1.0,
                &std,
                &empty(&[0], DType::F64),
                NormalFloatTensorOutOpts { generator: Some(&gen(5)) },
            ),
        ),
        (
            oxten::normal_tensor_tensor_with(&m, &std, NormalTensorTensorOpts { generator: Some(&gen(6)) }),
            oxten::normal_tensor_tensor_out_with(
                &m,
                &std,
                &empty(&[0], DType::F32),
                NormalTensorTensorOutOpts { generator: Some(&gen(6)) },
            ),
        ),
    ];
    for (i, (a, b)) in cases.iter().enumerate() {
        assert_eq!((&a.sizes()[..], a.dtype()), (&b.sizes()[..], b.dtype()), "case {i}");
        assert_eq!(vals(a), vals(b), "case {i}");
    }
    // out= resize semantics. torch: normal(zeros(2,3), 1.0, out=empty(3)) -> (2, 3); out=empty(1, 3) -> (2, 3);
    // a transposed out of the right size keeps its strides (1, 2); out's dtype wins (float64).
    for out_size in [&[3][..], &[1, 3][..]] {
        let out = empty(out_size, DType::F32);
        oxten::normal_tensor_float_out(&mean, &out);
        assert_eq!(&out.sizes()[..], &[2, 3]);
    }
    let out = empty(&[3, 2], DType::F32).t();
    oxten::normal_tensor_float_out(&mean, &out);
    assert_eq!(&out.strides()[..], &[1, 2]);
    let out = empty(&[2, 3], DType::F64);
    oxten::normal_tensor_float_out(&mean, &out);
    assert_eq!(out.dtype(), DType::F64);
    let out = empty(&[0], DType::F32);
    oxten::normal_float_tensor_out(1.0, &std.to_dtype(DType::F64), &out);
    assert_eq!((out.dtype(), &out.sizes()[..]), (DType::F32, &[3i64][..]));
    let out = empty(&[5], DType::F32);
    oxten::normal_tensor_tensor_out(&m, &oxten::ones(&[2, 4]), &out);
    assert_eq!(&out.sizes()[..], &[2, 4]);

    // meta tensors: shapes only
    let meta = |s: &[i64]| oxten::empty_with(s, EmptyOpts { device: Some(Device::Meta), ..Default::default() });
    let y = oxten::normal_tensor_tensor(&meta(&[2, 1]), &meta(&[4]));
    assert!(y.is_meta());
    assert_eq!(&y.sizes()[..], &[2, 4]);
    let out = meta(&[0]);
    oxten::rand_out(&[3, 2], &out);
    assert_eq!(&out.sizes()[..], &[3, 2]);
    let out = oxten::empty_with(
        &[0],
        EmptyOpts { dtype: Some(DType::I64), device: Some(Device::Meta), ..Default::default() },
    );
    oxten::randperm_out(4, &out);
    assert_eq!(&out.sizes()[..], &[4]);
}

#[test]
fn normal_errors_match_pytorch() {
    oxten::init();
    let f = |v: Vec<f32>| {
        let n = v.len() as i64;
        Tensor::from_vec(v, &[n]).unwrap()
    };
    let long = oxten::zeros_with(&[2, 3], ZerosOpts { dtype: Some(DType::I64), ..Default::default() });
    let cases: Vec<(Result<Tensor>, &str)> = vec![
        (
            oxten::try_normal_tensor_float_with(
                &oxten::zeros(&[2, 3]),
                NormalTensorFloatOpts { std: -1.0, generator: None },
            ),
            "normal expects std >= 0.0, but found std -1",
        ),
        (
            oxten::try_normal_tensor_float_with(
                &oxten::zeros(&[2, 3]),
                NormalTensorFloatOpts { std: f64::NAN, generator: None },
            ),
            "normal expects std >= 0.0, but found std nan",
        ),
        (oxten::try_normal_tensor_float(&long), "\"normal_kernel_cpu\" not implemented for 'Long'"),
        (oxten::try_normal_float_tensor(1.0, &f(vec![1.0, -1.0])), "normal expects all elements of std >= 0.0"),
        (oxten::try_normal_float_tensor(1.0, &f(vec![f32::NAN])), "normal expects all elements of std >= 0.0"),
        (
            oxten::try_normal_tensor_tensor(&oxten::zeros(&[3]), &f(vec![1.0, -0.5, 1.0])),
            "normal expects all elements of std >= 0.0",
        ),
        (
            oxten::try_normal_tensor_tensor(&oxten::zeros(&[2, 3]), &oxten::ones(&[4])),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
        ),
        (
            oxten::try_normal_tensor_tensor(&long.slice(1, None, Some(1), 1), &oxten::ones(&[3])),
            "\"normal_kernel_cpu\" not implemented for 'Long'",
        ),
        // PyTorch broadcasts mean with out's own shape, so an empty out is an error here.
        (
            oxten::try_normal_tensor_float_out(&oxten::zeros(&[2, 3]), &empty(&[0], DType::F32)),
            "The size of tensor a (3) must match the size of tensor b (0) at non-singleton dimension 1",
        ),
        (
            oxten::try_normal_tensor_float_out(&oxten::zeros(&[2, 3]), &empty(&[5], DType::F32)),
            "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1",
        ),
        (
            oxten::try_normal_tensor_float_out(&oxten::zeros(&[2, 3]), &empty(&[2, 3], DType::I64)),
            "\"normal_kernel_cpu\" not implemented for 'Long'",
        ),
        (
            oxten::try_normal_float_tensor_out(1.0, &oxten::ones(&[2, 3]), &empty(&[2, 3], DType::I64)),
            "\"normal_kernel_cpu\" not implemented for 'Long'",
        ),
    ];
    for (i, (r, want)) in cases.into_iter().enumerate() {
        let got = msg(r);
        assert!(got.contains(want), "case {i}: `{got}` does not contain `{want}`");
    }
}

#[test]
fn normal_gradients_are_zero_as_in_pytorch() {
    oxten::init();
    // torch: normal(m, 1.0).sum().backward() -> m.grad zeros; likewise std, and the broadcast mean.
    let m = oxten::zeros(&[2, 1]).requires_grad_(true);
    let s = oxten::ones(&[3]).requires_grad_(true);
    let y = oxten::normal_tensor_tensor(&m, &s);
    assert!(y.requires_grad());
    y.sum().backward();
    assert_eq!((&m.grad().unwrap().sizes()[..], vals(&m.grad().unwrap())), (&[2i64, 1][..], vec![0.0; 2]));
    assert_eq!(vals(&s.grad().unwrap()), vec![0.0; 3]);
    let m = oxten::zeros(&[3]).requires_grad_(true);
    oxten::normal_tensor_float(&m).sum().backward();
    assert_eq!(vals(&m.grad().unwrap()), vec![0.0; 3]);
    let s = oxten::ones(&[3]).requires_grad_(true);
    oxten::normal_float_tensor(0.5, &s).sum().backward();
    assert_eq!(vals(&s.grad().unwrap()), vec![0.0; 3]);
    // out= does not record history. (PyTorch names the operator `normal()`; oxten's generated
    // check names the overload, `normal.Tensor_float_out()`.)
    let e = msg(oxten::try_normal_tensor_float_out(&m, &empty(&[3], DType::F32)));
    assert!(e.contains("(): functions with out=... arguments don't support automatic differentiation"), "{e}");
}
