//! Rough timings of the TensorIterator loops against plain Rust loops. Ignored by default; run
//! with `cargo test --release -p oxten-runtime --test iter_perf -- --ignored --nocapture`.

use half::bf16;
use oxten_runtime::iter::{
    binary_op_config, copy_, cpu_kernel_binary, cpu_kernel_binary_math, make_reduction,
    reduction_output_shape, sum_kernel, StructuredOutputs,
};
use oxten_runtime::{DType, Device, MemoryFormat, Tensor};
use std::time::Instant;

fn time(label: &str, bytes: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    let s = t.elapsed().as_secs_f64() / reps as f64;
    println!(
        "{label:<44} {:>9.3} ms  {:>7.2} GB/s",
        s * 1e3,
        bytes as f64 / s / 1e9
    );
    s
}

fn vals_f32(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 13) as f32).collect()
}

fn empty(shape: &[i64], d: DType) -> Tensor {
    Tensor::empty(shape, d, Device::Cpu, MemoryFormat::Contiguous).unwrap()
}

#[test]
#[ignore]
fn perf_report() {
    println!("rayon threads: {}", rayon::current_num_threads());
    let n = 1usize << 24;
    let a = Tensor::from_vec((0..n).map(|i| i as f32).collect(), &[n as i64]).unwrap();
    let b = Tensor::from_vec((0..n).map(|i| (i % 7) as f32).collect(), &[n as i64]).unwrap();
    let out = empty(&[n as i64], DType::F32);

    let (va, vb) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    let mut vo = vec![0f32; n];
    time(
        "baseline: serial slice loop a+b (16M f32)",
        12 * n,
        10,
        || {
            for ((o, x), y) in vo.iter_mut().zip(std::hint::black_box(&va)).zip(&vb) {
                *o = x + y;
            }
            std::hint::black_box(&vo);
        },
    );
    time("TI add out= contiguous (16M f32)", 12 * n, 10, || {
        let iter = binary_op_config()
            .add_output(&out)
            .add_input(&a)
            .add_input(&b)
            .build()
            .unwrap();
        cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x + y);
    });
    let s = Tensor::scalar(2.0f32);
    time("TI add broadcast 0-dim (16M f32)", 8 * n, 10, || {
        let iter = binary_op_config()
            .add_output(&out)
            .add_input(&a)
            .add_input(&s)
            .build()
            .unwrap();
        cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x + y);
    });
    let at = a.alias_with_layout(&[4096, 4096], &[1, 4096], 0).unwrap();
    let a2 = a.alias_with_layout(&[4096, 4096], &[4096, 1], 0).unwrap();
    let o2 = empty(&[4096, 4096], DType::F32);
    time(
        "TI add transposed+contiguous (4096^2 f32)",
        12 * n,
        5,
        || {
            let iter = binary_op_config()
                .add_output(&o2)
                .add_input(&a2)
                .add_input(&at)
                .build()
                .unwrap();
            cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x + y);
        },
    );

    let h = empty(&[n as i64], DType::BF16);
    copy_(&h, &a).unwrap();
    let ho = empty(&[n as i64], DType::BF16);
    time("TI bf16 add via f32 math (16M)", 6 * n, 10, || {
        let iter = binary_op_config()
            .add_output(&ho)
            .add_input(&h)
            .add_input(&h)
            .build()
            .unwrap();
        cpu_kernel_binary_math::<bf16>(&iter, |x, y| x + y);
    });

    time("copy_ f32 -> f32 (memcpy, 16M)", 8 * n, 10, || {
        copy_(&out, &a).unwrap()
    });
    time("copy_ f32 -> bf16 (16M)", 6 * n, 10, || {
        copy_(&h, &a).unwrap()
    });
    time("copy_ f32 transposed -> f32 (4096^2)", 8 * n, 5, || {
        copy_(&o2, &at).unwrap()
    });

    let sum_into = |x: &Tensor, dims: Option<&[i64]>| {
        let (shape, _) = reduction_output_shape(&x.sizes(), dims, false).unwrap();
        let o = empty(&shape, x.dtype());
        sum_kernel(&make_reduction(&o, x, dims, false).unwrap());
    };
    let mut acc = 0f32;
    time("baseline: naive serial f32 sum (16M)", 4 * n, 10, || {
        acc = std::hint::black_box(&va).iter().sum();
    });
    std::hint::black_box(acc);
    time("sum_kernel all (16M f32)", 4 * n, 10, || sum_into(&a, None));
    time("sum_kernel dim=1 (4096^2 f32)", 4 * n, 10, || {
        sum_into(&a2, Some(&[1]))
    });
    time(
        "sum_kernel dim=0 (4096^2 f32, column mode)",
        4 * n,
        10,
        || sum_into(&a2, Some(&[0])),
    );
    time("sum_kernel all (16M bf16)", 2 * n, 10, || {
        sum_into(&h, None)
    });

    // In-cache throughput of the inner loops (one prebuilt iterator, 16K elements, serial).
    let m = 1usize << 14;
    let (ca, cb) = (vals_f32(m), vals_f32(m));
    let mut co = vec![0f32; m];
    let reps = 20_000;
    time(
        "baseline: in-cache slice add (16K f32)",
        12 * m,
        reps,
        || {
            for ((o, x), y) in co.iter_mut().zip(std::hint::black_box(&ca)).zip(&cb) {
                *o = x + y;
            }
            std::hint::black_box(&co);
        },
    );
    let (ta, tb) = (
        Tensor::from_vec(ca.clone(), &[m as i64]).unwrap(),
        Tensor::from_vec(cb.clone(), &[m as i64]).unwrap(),
    );
    let to = empty(&[m as i64], DType::F32);
    let iter = binary_op_config()
        .add_output(&to)
        .add_input(&ta)
        .add_input(&tb)
        .build()
        .unwrap();
    time(
        "TI in-cache add, prebuilt iterator (16K f32)",
        12 * m,
        reps,
        || {
            cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x + y);
        },
    );
    let th = empty(&[m as i64], DType::BF16);
    copy_(&th, &ta).unwrap();
    let tho = empty(&[m as i64], DType::BF16);
    let iter = binary_op_config()
        .add_output(&tho)
        .add_input(&th)
        .add_input(&th)
        .build()
        .unwrap();
    time("TI in-cache bf16 add via f32 (16K)", 6 * m, reps, || {
        cpu_kernel_binary_math::<bf16>(&iter, |x, y| x + y);
    });
    let mut s = 0.0;
    time("sum in-cache (16K f32, incl. setup)", 4 * m, reps, || {
        let o = empty(&[], DType::F32);
        sum_kernel(&make_reduction(&o, &ta, None, false).unwrap());
        s += o.item::<f32>().unwrap();
    });
    std::hint::black_box(s);

    let small = Tensor::from_vec(vec![1.0f32; 16], &[4, 4]).unwrap();
    let t = Instant::now();
    for _ in 0..10_000 {
        let mut outs = StructuredOutputs::functional(1);
        let iter = binary_op_config()
            .add_input(&small)
            .add_input(&small)
            .build_structured(&mut outs)
            .unwrap();
        cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x + y);
    }
    println!(
        "small [4,4] functional add, build+run: {:.2} us",
        t.elapsed().as_secs_f64() / 10_000.0 * 1e6
    );
}
