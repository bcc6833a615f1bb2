//! `copy_`: every dtype pair, strided/transposed destinations, broadcasting, overlap, meta.

use half::{bf16, f16};
use oxten::iter::{copy_, set_simd_level, simd_level, to_dtype, SimdLevel};
use oxten::{DType, Device, ErrorKind, MemoryFormat, Tensor};

fn empty(shape: &[i64], d: DType) -> Tensor {
    Tensor::empty(shape, d, Device::Cpu, MemoryFormat::Contiguous).unwrap()
}

/// Source values for a dtype: all exactly representable in it.
fn source_values(d: DType) -> Vec<f64> {
    match d {
        DType::Bool => vec![0.0, 1.0],
        DType::U8 => vec![0.0, 1.0, 2.0, 100.0, 255.0],
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => vec![0.0, 1.0, -3.0, 100.0, -128.0],
        // f16/bf16 round these on construction; the test reads the stored values back.
        _ => vec![0.0, 1.0, 2.7, -2.7, 100.5, -0.4],
    }
}

/// What C / PyTorch gives for `(dst) v`, skipping the cases C leaves undefined.
fn expected(v: f64, dst: DType) -> Option<f64> {
    let trunc = v.trunc();
    match dst {
        DType::Bool => Some(if v != 0.0 { 1.0 } else { 0.0 }),
        DType::U8 => (0.0..=255.0).contains(&trunc).then_some(trunc),
        DType::I8 => (-128.0..=127.0).contains(&trunc).then_some(trunc),
        DType::I16 | DType::I32 | DType::I64 => Some(trunc),
        DType::F16 => Some(f16::from_f64(v).to_f64()),
        DType::BF16 => Some(bf16::from_f64(v).to_f64()),
        DType::F32 => Some(v as f32 as f64),
        DType::F64 => Some(v),
    }
}

fn tensor_of(vals: &[f64], d: DType) -> Tensor {
    // Build through f64 and the library's own conversion would be circular; construct each
    // dtype directly instead.
    let n = vals.len() as i64;
    match d {
        DType::Bool => Tensor::from_vec(vals.iter().map(|&v| v != 0.0).collect(), &[n]),
        DType::U8 => Tensor::from_vec(vals.iter().map(|&v| v as u8).collect(), &[n]),
        DType::I8 => Tensor::from_vec(vals.iter().map(|&v| v as i8).collect(), &[n]),
        DType::I16 => Tensor::from_vec(vals.iter().map(|&v| v as i16).collect(), &[n]),
        DType::I32 => Tensor::from_vec(vals.iter().map(|&v| v as i32).collect(), &[n]),
        DType::I64 => Tensor::from_vec(vals.iter().map(|&v| v as i64).collect(), &[n]),
        DType::F16 => Tensor::from_vec(vals.iter().map(|&v| f16::from_f64(v)).collect(), &[n]),
        DType::BF16 => Tensor::from_vec(vals.iter().map(|&v| bf16::from_f64(v)).collect(), &[n]),
        DType::F32 => Tensor::from_vec(vals.iter().map(|&v| v as f32).collect(), &[n]),
        DType::F64 => Tensor::from_vec(vals.to_vec(), &[n]),
    }
    .unwrap()
}

#[test]
fn every_dtype_pair() {
    for src_d in DType::ALL {
        let src = tensor_of(&source_values(src_d), src_d);
        let stored = src.to_f64_vec().unwrap();
        for dst_d in DType::ALL {
            let dst = empty(&[stored.len() as i64], dst_d);
            copy_(&dst, &src).unwrap();
            let got = dst.to_f64_vec().unwrap();
            for (i, &v) in stored.iter().enumerate() {
                if let Some(want) = expected(v, dst_d) {
                    assert_eq!(got[i], want, "{src_d} {v} -> {dst_d}");
                }
            }
        }
    }
}

/// 0-dim tensors (the wrapped numbers of `x + 2.5`) are converted without a copy's iterator;
/// the rules are the same, also for a scalar that is one element of a larger storage.
#[test]
fn scalars_convert_for_every_dtype_pair() {
    for src_d in DType::ALL {
        let src = tensor_of(&source_values(src_d), src_d);
        let stored = src.to_f64_vec().unwrap();
        for dst_d in DType::ALL {
            for (i, &v) in stored.iter().enumerate() {
                let scalar = src.alias_with_layout(&[], &[], i as i64).unwrap();
                let got = to_dtype(&scalar, dst_d).unwrap();
                assert_eq!((got.dim(), got.dtype()), (0, dst_d));
                if let Some(want) = expected(v, dst_d) {
                    assert_eq!(got.to_f64_vec().unwrap(), [want], "{src_d} {v} -> {dst_d}");
                }
            }
        }
    }
}

#[test]
fn float_to_int_truncates() {
    let src = Tensor::from_vec(vec![2.7f32, -2.7, 0.9, -0.9], &[4]).unwrap();
    let dst = empty(&[4], DType::I32);
    copy_(&dst, &src).unwrap();
    assert_eq!(dst.to_vec::<i32>().unwrap(), [2, -2, 0, 0]);
    // int -> narrower int wraps, like C.
    let src = Tensor::from_vec(vec![300i64, -129], &[2]).unwrap();
    let dst = empty(&[2], DType::I8);
    copy_(&dst, &src).unwrap();
    assert_eq!(dst.to_vec::<i8>().unwrap(), [44, 127]);
}

#[test]
fn bf16_rounds_to_nearest_even() {
    // 1 + 2^-8 lies halfway between bf16 1.0 and 1.0078125: ties go to the even mantissa (1.0).
    // 1 + 3·2^-8 lies halfway between 1.0078125 (odd) and 1.015625 (even).
    // The third value is just above the first halfway point, so it rounds up.
    let src =
        Tensor::from_vec(vec![1.0f32 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, 1.0 + 1.0 / 256.0 + 1.0 / 1_048_576.0], &[3])
            .unwrap();
    let dst = empty(&[3], DType::BF16);
    copy_(&dst, &src).unwrap();
    let got: Vec<f32> = dst.to_vec::<bf16>().unwrap().into_iter().map(f32::from).collect();
    assert_eq!(got, [1.0, 1.015625, 1.0078125]);
    let dst = empty(&[3], DType::F16);
    copy_(&dst, &Tensor::from_vec(vec![65504.0f32, 1e6, 1.0 + 1.0 / 2048.0], &[3]).unwrap()).unwrap();
    let got: Vec<f32> = dst.to_vec::<f16>().unwrap().into_iter().map(f32::from).collect();
    assert_eq!(got, [65504.0, f32::INFINITY, 1.0]);
}

#[test]
fn transposed_destination_and_broadcast_source() {
    // dst: logical [2, 3] stored column-major.
    let dst = Tensor::empty_strided(&[2, 3], &[1, 2], DType::F64, Device::Cpu).unwrap();
    let src = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    copy_(&dst, &src).unwrap();
    assert_eq!(dst.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // Raw storage order is column-major.
    let raw = dst.alias_with_layout(&[6], &[1], 0).unwrap();
    assert_eq!(raw.to_vec::<f64>().unwrap(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);

    let row = Tensor::from_vec(vec![7.5f32, 8.5, 9.5], &[3]).unwrap();
    copy_(&dst, &row).unwrap();
    assert_eq!(dst.to_vec::<f64>().unwrap(), [7.5, 8.5, 9.5, 7.5, 8.5, 9.5]);
    copy_(&dst, &Tensor::scalar(true)).unwrap();
    assert_eq!(dst.to_vec::<f64>().unwrap(), [1.0; 6]);

    // Strided source with step 2.
    let base = Tensor::from_vec((0..12).map(|i| i as f32).collect(), &[12]).unwrap();
    let every_other = base.alias_with_layout(&[2, 3], &[6, 2], 0).unwrap();
    copy_(&dst, &every_other).unwrap();
    assert_eq!(dst.to_vec::<f64>().unwrap(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
}

#[test]
fn shape_errors() {
    let dst = empty(&[3], DType::F32);
    let e = copy_(&dst, &empty(&[4], DType::F32)).unwrap_err();
    assert_eq!(e.message, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0");
    let e = copy_(&dst, &empty(&[2, 3], DType::F32)).unwrap_err();
    assert_eq!(e.message, "output with shape [3] doesn't match the broadcast shape [2, 3]");
    let expanded = empty(&[1], DType::F32).alias_with_layout(&[3], &[0], 0).unwrap();
    let e = copy_(&expanded, &dst).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overlap);
}

#[test]
fn overlapping_source_goes_through_a_temporary() {
    let x = Tensor::from_vec((0..10).map(|i| i as f32).collect(), &[10]).unwrap();
    let dst = x.alias_with_layout(&[9], &[1], 1).unwrap();
    let src = x.alias_with_layout(&[9], &[1], 0).unwrap();
    copy_(&dst, &src).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    // Transposing in place through an overlapping view.
    let m = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let mt = m.alias_with_layout(&[2, 2], &[1, 2], 0).unwrap();
    copy_(&m, &mt).unwrap();
    assert_eq!(m.to_vec::<f32>().unwrap(), [1.0, 3.0, 2.0, 4.0]);
}

#[test]
fn large_copies_are_correct() {
    // Above the parallel grain (smaller under Miri, still above it).
    let side: i64 = if cfg!(miri) { 192 } else { 1024 };
    let src = Tensor::from_vec((0..side * side).map(|i| i as f32).collect(), &[side, side]).unwrap();
    // memcpy path.
    let dst = empty(&[side, side], DType::F32);
    copy_(&dst, &src).unwrap();
    assert_eq!(dst.to_vec::<f32>().unwrap(), src.to_vec::<f32>().unwrap());
    // Cast into a transposed destination (strided, parallel).
    let dst = Tensor::empty_strided(&[side, side], &[1, side], DType::F64, Device::Cpu).unwrap();
    copy_(&dst, &src).unwrap();
    let got = dst.to_vec::<f64>().unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as f64));
}

#[test]
fn meta_copies_only_check() {
    // Through the dispatcher's `copy_` (its Meta kernel): the CPU loop never sees a meta tensor.
    let m = Tensor::empty(&[2, 3], DType::F32, Device::Meta, MemoryFormat::Contiguous).unwrap();
    m.try_copy_(&Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap()).unwrap();
    let m2 = Tensor::empty(&[3], DType::F16, Device::Meta, MemoryFormat::Contiguous).unwrap();
    m.try_copy_(&m2).unwrap();
    let bad = Tensor::empty(&[4], DType::F16, Device::Meta, MemoryFormat::Contiguous).unwrap();
    assert_eq!(m.try_copy_(&bad).unwrap_err().kind, ErrorKind::Shape);
    let e = empty(&[3], DType::F32).try_copy_(&m2).unwrap_err();
    assert!(e.message.contains("Cannot copy out of meta tensor; no data!"), "{e}");
    // The CPU loop itself refuses meta tensors rather than reading through null pointers.
    assert_eq!(copy_(&m, &m2).unwrap_err().kind, ErrorKind::Device);
    let c = to_dtype(&m, DType::I64).unwrap();
    assert!(c.is_meta());
    assert_eq!(c.dtype(), DType::I64);
}

#[test]
fn to_dtype_keeps_dense_layouts() {
    let t = Tensor::empty(&[2, 3, 4, 5], DType::F32, Device::Cpu, MemoryFormat::ChannelsLast).unwrap();
    let c = to_dtype(&t, DType::F16).unwrap();
    assert_eq!(c.strides(), [60, 1, 15, 3]);
    assert!(to_dtype(&t, DType::F32).unwrap().is_same(&t));
    let expanded = Tensor::scalar(2i32).alias_with_layout(&[2, 2], &[0, 0], 0).unwrap();
    let c = to_dtype(&expanded, DType::F64).unwrap();
    assert_eq!((c.strides().to_vec(), c.to_vec::<f64>().unwrap()), (vec![2, 1], vec![2.0; 4]));
}

#[test]
fn transposes_of_every_width() {
    // Same-dtype transposes take the tiled path; odd sizes cover partial tiles. 4-byte
    // elements use AVX blocks from the AVX2 level on and SSE2 ones below it.
    let before = simd_level();
    for level in [SimdLevel::Default, SimdLevel::Avx2, SimdLevel::Avx512] {
        set_simd_level(level);
        transposes_at_this_level();
    }
    set_simd_level(before);
}

fn transposes_at_this_level() {
    let sizes: &[(i64, i64)] =
        if cfg!(miri) { &[(130, 67), (1, 300)] } else { &[(130, 67), (1, 300), (700, 701), (64, 256)] };
    for &(rows, cols) in sizes {
        let n = rows * cols;
        let src64 = Tensor::from_vec((0..n).map(|i| i as f64).collect(), &[cols, rows]).unwrap();
        for d in [DType::U8, DType::I16, DType::F32, DType::F64] {
            let src_c = empty(&[cols, rows], d);
            copy_(&src_c, &src64).unwrap();
            let src_t = src_c.alias_with_layout(&[rows, cols], &[1, rows], 0).unwrap();
            let dst = empty(&[rows, cols], d);
            copy_(&dst, &src_t).unwrap();
            let want: Vec<f64> = src_t.to_f64_vec().unwrap();
            assert_eq!(dst.to_f64_vec().unwrap(), want, "{d} {rows}x{cols} at {:?}", simd_level());
        }
    }
}
