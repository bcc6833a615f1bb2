//! Deterministic test matrices for the linear-algebra tests.

use oxten::Tensor;

/// A seeded f64 tensor of `shape` with entries in [-1, 1) (SplitMix64): the same values on
/// every run and host, with no dependence on oxten's own generator.
pub fn seeded(shape: &[i64], seed: u64) -> Tensor {
    let n: i64 = shape.iter().product();
    let mut s = seed;
    let v: Vec<f64> = (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    Tensor::from_vec(v, shape).expect("a shape with as many elements as values")
}
