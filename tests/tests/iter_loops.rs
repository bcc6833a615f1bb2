//! The typed CPU loops: every path (contiguous, hoisted broadcast, strided), reduced-precision
//! math, parallel execution, and the raw drivers.
//!
//! Also run under Miri (README, "Reliability checks"), with smaller sizes that still reach every
//! path (tiled and parallel ones included).

use half::{bf16, f16};
use oxten::iter::{
    binary_op_config, cpu_kernel_binary, cpu_kernel_binary_math, cpu_kernel_nullary, cpu_kernel_ternary,
    cpu_kernel_unary, cpu_kernel_unary_math, nullary_op_config, ternary_op_config, unary_op_config, StructuredOutputs,
    TensorIteratorConfig,
};
use oxten::{DType, Device, MemoryFormat, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};

fn vals(n: i64) -> Vec<f32> {
    (0..n).map(|i| ((i * 37) % 101) as f32 * 0.25 - 12.0).collect()
}

/// The layouts each test runs through: contiguous, transposed, and every-other-column.
fn layouts(rows: i64, cols: i64) -> Vec<Tensor> {
    let n = rows * cols;
    let c = Tensor::from_vec(vals(n), &[rows, cols]).unwrap();
    let t = Tensor::from_vec(vals(n), &[cols, rows]).unwrap().alias_with_layout(&[rows, cols], &[1, rows], 0).unwrap();
    let wide = Tensor::from_vec(vals(2 * n), &[rows, 2 * cols]).unwrap();
    let s = wide.alias_with_layout(&[rows, cols], &[2 * cols, 2], 1).unwrap();
    vec![c, t, s]
}

fn binary_out(a: &Tensor, b: &Tensor, f: impl Fn(f32, f32) -> f32 + Sync) -> Vec<f32> {
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_op_config().add_input(a).add_input(b).build_structured(&mut outs).unwrap();
    cpu_kernel_binary::<f32, f32, f32>(&iter, f);
    outs.output(0).to_vec::<f32>().unwrap()
}

fn reference(a: &Tensor, b: &Tensor, f: impl Fn(f32, f32) -> f32) -> Vec<f32> {
    // Both broadcast to [rows, cols]; expand by hand through logical values.
    let (sa, sb) = (a.sizes().to_vec(), b.sizes().to_vec());
    let (va, vb) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    let rows = sa[0].max(sb[0]);
    let cols = sa[1].max(sb[1]);
    let get = |v: &[f32], s: &[i64], i: i64, j: i64| {
        v[((if s[0] == 1 { 0 } else { i }) * s[1] + if s[1] == 1 { 0 } else { j }) as usize]
    };
    let mut out = Vec::new();
    for i in 0..rows {
        for j in 0..cols {
            out.push(f(get(&va, &sa, i, j), get(&vb, &sb, i, j)));
        }
    }
    out
}

#[test]
fn binary_paths() {
    let f = |a: f32, b: f32| a * 2.0 - b;
    let sizes: &[(i64, i64)] = if cfg!(miri) { &[(3, 5), (9, 17)] } else { &[(3, 5), (40, 300), (300, 250)] };
    for &(rows, cols) in sizes {
        let ls = layouts(rows, cols);
        let col = Tensor::from_vec(vals(rows), &[rows, 1]).unwrap();
        let row = Tensor::from_vec(vals(cols), &[1, cols]).unwrap();
        for a in &ls {
            for b in ls.iter().chain([&col, &row]) {
                assert_eq!(binary_out(a, b, f), reference(a, b, f));
                assert_eq!(binary_out(b, a, f), reference(b, a, f));
            }
        }
    }
}

#[test]
fn unary_nullary_ternary() {
    for a in layouts(30, 70) {
        let mut outs = StructuredOutputs::functional(1);
        let iter = unary_op_config().add_input(&a).build_structured(&mut outs).unwrap();
        cpu_kernel_unary::<f32, f32>(&iter, |x| x * x);
        let want: Vec<f32> = a.to_vec::<f32>().unwrap().iter().map(|x| x * x).collect();
        assert_eq!(outs.output(0).to_vec::<f32>().unwrap(), want);

        // Comparison-like unary into bool, written into a given transposed bool output.
        let out = Tensor::empty_strided(&[30, 70], &[1, 30], DType::Bool, Device::Cpu).unwrap();
        let iter =
            TensorIteratorConfig::new().check_all_same_dtype(false).add_output(&out).add_input(&a).build().unwrap();
        cpu_kernel_unary::<f32, bool>(&iter, |x| x > 0.0);
        let want: Vec<bool> = a.to_vec::<f32>().unwrap().iter().map(|&x| x > 0.0).collect();
        assert_eq!(out.to_vec::<bool>().unwrap(), want);

        // Fill a strided tensor (nullary), then a ternary with one 0-dim operand.
        let target = Tensor::empty_strided(&[30, 70], &[1, 30], DType::I64, Device::Cpu).unwrap();
        let iter = nullary_op_config().add_output(&target).build().unwrap();
        cpu_kernel_nullary::<i64>(&iter, || 7);
        assert_eq!(target.to_vec::<i64>().unwrap(), vec![7; 2100]);

        let c = Tensor::scalar(0.5f32);
        let mut outs = StructuredOutputs::functional(1);
        let iter = ternary_op_config().add_input(&a).add_input(&c).add_input(&a).build_structured(&mut outs).unwrap();
        cpu_kernel_ternary::<f32, f32, f32, f32>(&iter, |x, y, z| x + y * z);
        let want: Vec<f32> = a.to_vec::<f32>().unwrap().iter().map(|&x| x + 0.5 * x).collect();
        assert_eq!(outs.output(0).to_vec::<f32>().unwrap(), want);
    }
    // Unary from a broadcast input: computed once per run.
    let one = Tensor::scalar(3i64).alias_with_layout(&[4, 5], &[0, 0], 0).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter = unary_op_config().add_input(&one).build_structured(&mut outs).unwrap();
    cpu_kernel_unary::<i64, i64>(&iter, |x| x + 1);
    assert_eq!(outs.output(0).to_vec::<i64>().unwrap(), vec![4; 20]);
}

/// f16/bf16 math: computed in f32, rounded once, for blocks longer than the stack buffers,
/// hoisted scalars, and strided runs.
#[test]
fn reduced_precision_math() {
    fn check<T: oxten::Element + oxten::iter::OpMath<Math = f32>>(from: fn(f32) -> T, to: fn(T) -> f32) {
        for (rows, cols) in [(2, 1000), (33, 7)] {
            let n = rows * cols;
            let raw: Vec<T> = vals(n).into_iter().map(from).collect();
            let a = Tensor::from_vec(raw.clone(), &[rows, cols]).unwrap();
            let at =
                Tensor::from_vec(raw, &[cols, rows]).unwrap().alias_with_layout(&[rows, cols], &[1, rows], 0).unwrap();
            let s = Tensor::from_vec(vec![from(0.3)], &[1]).unwrap();
            for x in [&a, &at] {
                for y in [&a, &at, &s] {
                    let mut outs = StructuredOutputs::functional(1);
                    let iter = binary_op_config().add_input(x).add_input(y).build_structured(&mut outs).unwrap();
                    cpu_kernel_binary_math::<T>(&iter, |p, q| p * q + 1.0);
                    let got = outs.output(0).to_vec::<T>().unwrap();
                    let (vx, vy) = (x.to_vec::<T>().unwrap(), y.to_vec::<T>().unwrap());
                    for i in 0..got.len() {
                        let q = if vy.len() == 1 { vy[0] } else { vy[i] };
                        assert_eq!(got[i], from(to(vx[i]) * to(q) + 1.0));
                    }
                }
                let mut outs = StructuredOutputs::functional(1);
                let iter = unary_op_config().add_input(x).build_structured(&mut outs).unwrap();
                cpu_kernel_unary_math::<T>(&iter, |p| p.exp() * 0.5);
                let want: Vec<T> = x.to_vec::<T>().unwrap().into_iter().map(|v| from(to(v).exp() * 0.5)).collect();
                assert_eq!(outs.output(0).to_vec::<T>().unwrap(), want);
            }
        }
    }
    check::<f16>(f16::from_f32, f32::from);
    check::<bf16>(bf16::from_f32, f32::from);
}

#[test]
fn in_place_math_on_halves() {
    let a = Tensor::from_vec((0..600).map(|i| f16::from_f32(i as f32 * 0.5)).collect(), &[600]).unwrap();
    let mut outs = StructuredOutputs::inplace(&a);
    let iter = binary_op_config().add_input(&a).add_input(&a).build_structured(&mut outs).unwrap();
    cpu_kernel_binary_math::<f16>(&iter, |x, y| x + y);
    let want: Vec<f16> = (0..600).map(|i| f16::from_f32(i as f32)).collect();
    assert_eq!(a.to_vec::<f16>().unwrap(), want);
}

#[test]
fn big_parallel_binary() {
    // Above the parallel grain and the tiling threshold (an input transposed to the output).
    let side: usize = if cfg!(miri) { 192 } else { 1024 };
    let a = Tensor::from_vec((0..side * side).map(|i| i as f64).collect(), &[side as i64, side as i64]).unwrap();
    let at = a.alias_with_layout(&[side as i64, side as i64], &[1, side as i64], 0).unwrap();
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_op_config().add_input(&a).add_input(&at).build_structured(&mut outs).unwrap();
    cpu_kernel_binary::<f64, f64, f64>(&iter, |x, y| x - y);
    let got = outs.output(0).to_vec::<f64>().unwrap();
    for i in (0..side).step_by(31) {
        for j in (0..side).step_by(17) {
            assert_eq!(got[i * side + j], (i * side + j) as f64 - (j * side + i) as f64);
        }
    }
}

#[test]
fn drivers_cover_each_element_once() {
    let a = Tensor::empty(&[7, 9, 11], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let at = a.alias_with_layout(&[11, 9, 7], &[1, 11, 99], 0).unwrap();
    let out = Tensor::empty(&[11, 9, 7], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let iter = unary_op_config().add_output(&out).add_input(&at).build().unwrap();
    let count = AtomicUsize::new(0);
    iter.for_each(
        |_, _, n0, n1| {
            count.fetch_add(n0 * n1, Ordering::Relaxed);
        },
        1,
    );
    assert_eq!(count.load(Ordering::Relaxed), 693);
    // Partial ranges.
    let mut seen = 0;
    iter.serial_for_each(
        |ptrs, strides, n0, n1| {
            assert_eq!(ptrs.len(), 2);
            assert_eq!(strides.len(), 4);
            seen += n0 * n1;
        },
        100..400,
    );
    assert_eq!(seen, 300);
}
