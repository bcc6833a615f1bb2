//! Property tests: type promotion through operators, cached layout flags, and strides of views.

use oxten::{can_cast, promote_types, DType, MemoryFormat, Tensor, TensorLayout};
use proptest::prelude::*;

fn dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

fn ones(d: DType, dims: usize) -> Tensor {
    let shape = vec![2; dims];
    oxten::ones_with(&shape, oxten::options::OnesOpts { dtype: Some(d), ..Default::default() })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Copying a transposed (optionally sliced) matrix into a contiguous one, the tiled path
    /// with its 8 x 8 register blocks and scalar edges, gives every element where it belongs,
    /// for 1-, 2-, 4- and 8-byte elements and sizes around the block and tile edges.
    #[test]
    fn transposed_copies_put_every_element_in_place(
        rows in 1i64..140,
        cols in 1i64..140,
        skip in 0i64..3,
        d in prop::sample::select(vec![DType::U8, DType::I16, DType::F32, DType::I32, DType::F64]),
    ) {
        // `base` is [cols, rows + skip]; its transposed, sliced view is [rows, cols] with strides
        // (1, rows + skip), so the copy reads rows contiguously and writes columns.
        let n = (cols * (rows + skip)) as usize;
        let base = Tensor::from_vec((0..n).map(|v| (v % 251) as f64).collect::<Vec<f64>>(), &[cols, rows + skip])
            .unwrap()
            .to_dtype(d);
        let view = base.narrow(1, skip, rows).t();
        let out = view.contiguous();
        prop_assert_eq!(&out.sizes()[..], &[rows, cols][..]);
        prop_assert!(out.is_contiguous());
        let got = out.to_dtype(DType::F64).to_vec::<f64>().unwrap();
        for i in 0..rows {
            for j in 0..cols {
                let want = ((j * (rows + skip) + skip + i) as usize % 251) as f64;
                prop_assert_eq!(got[(i * cols + j) as usize], want, "element ({}, {})", i, j);
            }
        }
    }

    /// Dimensioned tensors of the same rank promote with `promote_types`, symmetrically.
    #[test]
    fn maximum_promotes_like_promote_types(a in dtype(), b in dtype()) {
        let (x, y) = (ones(a, 1), ones(b, 1));
        let r = x.maximum(&y).dtype();
        prop_assert_eq!(r, promote_types(a, b));
        prop_assert_eq!(r, y.maximum(&x).dtype());
    }

    /// A 0-dim tensor only changes the result's category, never its width within a category.
    #[test]
    fn zero_dim_tensors_only_raise_the_category(a in dtype(), b in dtype()) {
        let r = ones(a, 1).maximum(&ones(b, 0)).dtype();
        if b.category() > a.category() {
            prop_assert_eq!(r, promote_types(a, b));
        } else {
            prop_assert_eq!(r, a);
        }
    }

    /// Rust scalars: a float scalar makes integral/bool tensors the default float; otherwise the
    /// tensor's dtype wins.
    #[test]
    fn scalars_have_the_lowest_priority(a in dtype(), s in prop_oneof![Just(2.5f64), Just(-1.0)]) {
        let r = ones(a, 1).mul_scalar(s).dtype();
        let want = if a.is_floating_point() { a } else { DType::F32 };
        prop_assert_eq!(r, want);
    }

    /// can_cast is the category order, and promote_types never lowers a category.
    #[test]
    fn promotion_never_lowers_a_category(a in dtype(), b in dtype()) {
        let p = promote_types(a, b);
        prop_assert!(can_cast(a, p) && can_cast(b, p));
        prop_assert_eq!(can_cast(a, b), a.category() <= b.category());
    }

    /// The cached layout flags always equal a recomputation from sizes and strides, for any
    /// permutation and slicing of a contiguous tensor.
    #[test]
    fn cached_layout_flags_match_recomputation(
        sizes in prop::collection::vec(1i64..4, 1..5),
        seed in 0u64..1000,
        step in 1i64..3,
    ) {
        let n = sizes.len();
        let t = oxten::zeros(&sizes);
        let mut perm: Vec<i64> = (0..n as i64).collect();
        // A deterministic shuffle from the seed.
        for i in (1..n).rev() {
            perm.swap(i, (seed as usize * 31 + i * 7) % (i + 1));
        }
        let v = t.permute(&perm).slice(0, None, None, step);
        let l = v.layout();
        let fresh = TensorLayout::new(l.sizes.clone(), l.strides.clone(), l.offset).unwrap();
        prop_assert_eq!(l.is_contiguous(), fresh.is_contiguous());
        prop_assert_eq!(l.is_non_overlapping_and_dense(), fresh.is_non_overlapping_and_dense());
        prop_assert_eq!(
            l.is_contiguous(),
            oxten_runtime_compute_contiguous(&l.sizes, &l.strides)
        );
        // A contiguous copy of any view holds the same values in row-major order.
        let c = v.contiguous();
        prop_assert!(c.is_contiguous());
        prop_assert_eq!(c.to_vec::<f32>().unwrap(), v.to_vec::<f32>().unwrap());
        prop_assert_eq!(v.suggest_memory_format() == MemoryFormat::ChannelsLast, n == 4 && l.suggest_memory_format() == MemoryFormat::ChannelsLast);
    }
}

/// Row-major contiguity ignoring size-1 dims, written independently of the runtime.
fn oxten_runtime_compute_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    let mut expected = 1;
    for (s, st) in sizes.iter().zip(strides).rev() {
        if *s == 1 {
            continue;
        }
        if *st != expected {
            return false;
        }
        expected *= s;
    }
    true
}
