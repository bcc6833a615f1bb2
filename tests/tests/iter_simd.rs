//! The run-time dispatched loops: every instruction-set level computes the same bits, bf16 and
//! f16 conversions match `half` exactly (all 65536 inputs, and f32 → bf16 rounding), the tiled
//! path for transposed inputs, and outputs that are written without being zero-filled first.
//!
//! The level is process-wide; tests that change it only ever compare results that must be equal
//! at every level, so running them concurrently is fine.

use half::{bf16, f16};
use oxten::iter::{
    binary_op_config, cpu_kernel_binary, cpu_kernel_binary_math, cpu_kernel_unary_math, detected_simd_level,
    set_simd_level, simd_level, to_dtype, unary_op_config, SimdLevel, StructuredOutputs,
};
use oxten::{DType, Tensor};

const LEVELS: [SimdLevel; 3] = [SimdLevel::Default, SimdLevel::Avx2, SimdLevel::Avx512];

/// Runs `f` at every level the CPU has, restoring the level afterwards.
fn at_each_level(mut f: impl FnMut(SimdLevel)) {
    let before = simd_level();
    for l in LEVELS {
        if l <= detected_simd_level() {
            set_simd_level(l);
            f(l);
        }
    }
    set_simd_level(before);
}

fn all_bf16() -> Tensor {
    let v: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    Tensor::from_vec(v, &[65536]).unwrap()
}

fn unary_bf16(x: &Tensor, f: impl Fn(f32) -> f32 + Sync) -> Vec<u16> {
    let mut outs = StructuredOutputs::functional(1);
    let iter = unary_op_config().add_input(x).build_structured(&mut outs).unwrap();
    cpu_kernel_unary_math::<bf16>(&iter, f);
    outs.output(0).to_vec::<bf16>().unwrap().into_iter().map(bf16::to_bits).collect()
}

#[test]
fn bf16_round_trips_match_half_for_every_input_at_every_level() {
    let x = all_bf16();
    // Identity: bf16 → f32 → bf16 (NaNs come back quiet, as in `half`).
    let want: Vec<u16> = (0..=u16::MAX).map(|i| bf16::from_f32(bf16::from_bits(i).to_f32()).to_bits()).collect();
    // Products that land exactly on, just below and just above rounding ties, overflow to inf,
    // and go subnormal.
    let factors = [1.0 + 1.0 / 256.0, 1.0 + 3.0 / 512.0, 1.0 - 1.0 / 1024.0, 3.0e38, 1.0e-30, -0.999_996_2];
    at_each_level(|level| {
        let got = unary_bf16(&x, |v| v);
        for i in 0..65536 {
            assert_eq!(got[i], want[i], "identity of {i:#06x} at {level:?}");
        }
        for c in factors {
            let got = unary_bf16(&x, move |v| v * c);
            for (i, &g) in got.iter().enumerate() {
                let w = bf16::from_f32(bf16::from_bits(i as u16).to_f32() * c).to_bits();
                assert_eq!(g, w, "{i:#06x} * {c} at {level:?}");
            }
        }
    });
}

#[test]
fn f32_to_bf16_and_f16_conversions_match_half() {
    // A spread of f32 bit patterns (every exponent, mantissas all over, NaNs and infinities).
    let bits: Vec<u32> =
        (0..=u32::MAX / 4099).map(|i| i * 4099).chain([0x7f80_0000, 0xff80_0000, 0x7fc0_0001]).collect();
    let v: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
    let n = v.len() as i64;
    let t = Tensor::from_vec(v.clone(), &[n]).unwrap();
    at_each_level(|level| {
        let b = to_dtype(&t, DType::BF16).unwrap().to_vec::<bf16>().unwrap();
        let h = to_dtype(&t, DType::F16).unwrap().to_vec::<f16>().unwrap();
        for (k, &x) in v.iter().enumerate() {
            assert_eq!(b[k].to_bits(), bf16::from_f32(x).to_bits(), "bf16 of {:#010x} at {level:?}", bits[k]);
            assert_eq!(h[k].to_bits(), f16::from_f32(x).to_bits(), "f16 of {:#010x} at {level:?}", bits[k]);
        }
    });
}

#[test]
fn every_level_computes_the_same_bits() {
    let n = 10_007; // not a multiple of any vector width or chunk
    let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.731).sin() * 30.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.377).cos() + 1.5).collect();
    let (ta, tb) = (Tensor::from_vec(a, &[n]).unwrap(), Tensor::from_vec(b, &[n]).unwrap());
    let mut results: Vec<Vec<u32>> = Vec::new();
    at_each_level(|_| {
        let mut outs = StructuredOutputs::functional(1);
        let iter = binary_op_config().add_input(&ta).add_input(&tb).build_structured(&mut outs).unwrap();
        cpu_kernel_binary_math::<f32>(&iter, |x, y| (x * y + x) / (y + 0.25) - (x - y) * 0.5);
        results.push(outs.output(0).to_vec::<f32>().unwrap().into_iter().map(f32::to_bits).collect());
    });
    for r in &results[1..] {
        assert_eq!(r, &results[0]);
    }
}

#[test]
fn transposed_inputs_are_tiled_correctly() {
    // Shapes around the tile size, with one or both inputs transposed, and a broadcast row.
    for (rows, cols) in [(300, 257), (64, 64), (65, 129), (1000, 70)] {
        let n = rows * cols;
        let base: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let m = Tensor::from_vec(base.clone(), &[rows, cols]).unwrap();
        let mt_src = Tensor::from_vec(base.iter().map(|v| v * 0.5).collect(), &[cols, rows]).unwrap();
        let mt = mt_src.alias_with_layout(&[rows, cols], &[1, rows], 0).unwrap();
        let row = Tensor::from_vec((0..cols).map(|j| j as f32 * 1000.0).collect(), &[cols]).unwrap();
        for (a, b) in [(&mt, &m), (&m, &mt), (&mt, &row)] {
            let mut outs = StructuredOutputs::functional(1);
            let iter = binary_op_config().add_input(a).add_input(b).build_structured(&mut outs).unwrap();
            cpu_kernel_binary::<f32, f32, f32>(&iter, |x, y| x * 3.0 + y);
            let got = outs.output(0).to_vec::<f32>().unwrap();
            let (va, vb) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
            for i in 0..rows as usize {
                for j in 0..cols as usize {
                    let k = i * cols as usize + j;
                    let y = if b.dim() == 1 { vb[j] } else { vb[k] };
                    assert_eq!(got[k], va[k] * 3.0 + y, "({i}, {j}) of {rows}x{cols}");
                }
            }
        }
    }
}

#[test]
fn outputs_are_written_once_and_read_back_correctly() {
    // Sizes from tiny (inline storage) to large (cached, huge-page buffers), functional outputs
    // allocated by the iterator: every element must hold the kernel's value, never stale bytes.
    for n in [1i64, 7, 1000, 300_000, 1 << 21] {
        let a = Tensor::from_vec((0..n).map(|i| i as f32).collect(), &[n]).unwrap();
        for round in 0..3 {
            let mut outs = StructuredOutputs::functional(1);
            let iter = unary_op_config().add_input(&a).build_structured(&mut outs).unwrap();
            cpu_kernel_unary_math::<f32>(&iter, move |x| x + round as f32);
            let got = outs.output(0).to_vec::<f32>().unwrap();
            assert!(got.iter().enumerate().all(|(i, &v)| v == i as f32 + round as f32), "n = {n}");
        }
    }
    // An output that nobody writes (an empty kernel call never happens, but a deferred storage
    // read before any kernel) reads as zeros.
    let t = Tensor::empty_deferred(&[1 << 20], DType::F32, oxten::Device::Cpu, Default::default()).unwrap();
    assert!(t.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
}
