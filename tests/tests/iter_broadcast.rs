//! TensorIterator broadcasting, element values over arbitrary layouts, coalescing, and the
//! output-stride rules, checked against naive index-based references.

use oxten::iter::{binary_op_config, cpu_kernel_binary, StructuredOutputs, TensorIterator, TensorIteratorConfig};
use oxten::{DType, Device, ErrorKind, MemoryFormat, Tensor};
use proptest::prelude::*;

/// numpy's broadcasting rule, written independently of the library.
fn numpy_broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = Vec::new();
    for i in 0..n {
        let da = if i < n - a.len() { 1 } else { a[i - (n - a.len())] };
        let db = if i < n - b.len() { 1 } else { b[i - (n - b.len())] };
        out.push(match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        });
    }
    Some(out)
}

fn row_major_strides(shape: &[i64]) -> Vec<i64> {
    let mut st = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        st[i] = st[i + 1] * shape[i + 1].max(1);
    }
    st
}

/// A tensor of logical shape `shape` whose elements are `i*3 - 7` in some storage order, laid
/// out according to `kind`: 0 contiguous, 1 all dims reversed in memory, 2 every other element
/// of the last dim, 3 size-1 dims expanded to `full` with stride 0.
fn make_input(shape: &[i64], full: &[i64], kind: u8, dtype: DType) -> Tensor {
    let base_of = |sizes: &[i64]| -> Tensor {
        let n: i64 = sizes.iter().product();
        let v: Vec<f64> = (0..n).map(|i| (i * 3 - 7) as f64).collect();
        let t = Tensor::from_vec(v, sizes).unwrap();
        let out = Tensor::empty(sizes, dtype, Device::Cpu, MemoryFormat::Contiguous).unwrap();
        oxten::iter::copy_(&out, &t).unwrap();
        out
    };
    match kind {
        1 if shape.len() > 1 => {
            let rev: Vec<i64> = shape.iter().rev().copied().collect();
            let base = base_of(&rev);
            let st: Vec<i64> = row_major_strides(&rev).into_iter().rev().collect();
            base.alias_with_layout(shape, &st, 0).unwrap()
        }
        2 if !shape.is_empty() => {
            let mut big = shape.to_vec();
            *big.last_mut().unwrap() *= 2;
            let base = base_of(&big);
            let mut st = row_major_strides(&big);
            *st.last_mut().unwrap() = 2;
            base.alias_with_layout(shape, &st, 0).unwrap()
        }
        3 => {
            let off = full.len() - shape.len();
            let base = base_of(shape);
            let mut sizes = shape.to_vec();
            let mut st = row_major_strides(shape);
            for i in 0..shape.len() {
                if shape[i] == 1 && full[off + i] != 1 {
                    sizes[i] = full[off + i];
                    st[i] = 0;
                }
            }
            base.alias_with_layout(&sizes, &st, 0).unwrap()
        }
        _ => base_of(shape),
    }
}

/// Logical element of `t` (values in row-major logical order) at the broadcast index `idx`.
fn bcast_get(vals: &[f64], shape: &[i64], idx: &[i64]) -> f64 {
    let off = idx.len() - shape.len();
    let mut flat = 0;
    for (i, &s) in shape.iter().enumerate() {
        let k = if s == 1 { 0 } else { idx[off + i] };
        flat = flat * s + k;
    }
    vals[flat as usize]
}

fn unravel(mut i: i64, shape: &[i64]) -> Vec<i64> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    idx
}

fn add_f32(iter: &TensorIterator) {
    cpu_kernel_binary::<f32, f32, f32>(iter, |a, b| a + b);
}

fn shape_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(1i64..=4, 0..=4)
}

/// An input shape broadcastable to `full`: some dims set to 1, some leading dims dropped.
fn sub_shape(full: &[i64], ones: u8, drop: usize) -> Vec<i64> {
    let drop = drop.min(full.len());
    full[drop..].iter().enumerate().map(|(i, &s)| if ones >> i & 1 == 1 { 1 } else { s }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn broadcast_shape_is_numpy_rule(a in prop::collection::vec(1i64..=3, 0..=4), b in prop::collection::vec(1i64..=3, 0..=4)) {
        let ta = Tensor::empty(&a, DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
        let tb = Tensor::empty(&b, DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
        let mut outs = StructuredOutputs::functional(1);
        let r = binary_op_config().add_input(&ta).add_input(&tb).build_structured(&mut outs);
        match numpy_broadcast(&a, &b) {
            Some(want) => {
                let iter = r.unwrap();
                prop_assert_eq!(iter.output(0).sizes().to_vec(), want.clone());
                prop_assert_eq!(iter.broadcast_shape().to_vec(), want);
            }
            None => {
                let e = r.err().expect("incompatible shapes must fail");
                prop_assert_eq!(e.kind, ErrorKind::Shape);
                prop_assert!(e.message.starts_with("The size of tensor a ("), "{}", e.message);
            }
        }
    }

    #[test]
    fn binary_add_matches_reference(
        full in shape_strategy(),
        ones_a in 0u8..16, ones_b in 0u8..16,
        drop_a in 0usize..3, drop_b in 0usize..3,
        kind_a in 0u8..4, kind_b in 0u8..4,
        int_b in any::<bool>(),
    ) {
        let sa = sub_shape(&full, ones_a, drop_a);
        let sb = sub_shape(&full, ones_b, drop_b);
        let a = make_input(&sa, &full, kind_a, DType::F32);
        let b = make_input(&sb, &full, kind_b, if int_b { DType::I32 } else { DType::F32 });
        let want_shape = numpy_broadcast(&a.sizes(), &b.sizes()).unwrap();
        let va = a.to_f64_vec().unwrap();
        let vb = b.to_f64_vec().unwrap();

        let mut outs = StructuredOutputs::functional(1);
        let iter = binary_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).unwrap();
        add_f32(&iter);
        let out = outs.output(0).clone();
        prop_assert_eq!(out.sizes().to_vec(), want_shape.clone());
        let got = out.to_f64_vec().unwrap();
        let n: i64 = want_shape.iter().product();
        for i in 0..n {
            let idx = unravel(i, &want_shape);
            let want = bcast_get(&va, &a.sizes(), &idx) + bcast_get(&vb, &b.sizes(), &idx);
            prop_assert_eq!(got[i as usize], want, "at {:?}", idx);
        }

        // Coalescing and reordering never change results: iterate in plain row-major order
        // without any dim permutation, into a given contiguous output.
        let lin = Tensor::empty(&want_shape, DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
        let iter2 = binary_op_config()
            .enforce_linear_iteration(true)
            .add_output(&lin).add_input(&a).add_input(&b).build().unwrap();
        add_f32(&iter2);
        prop_assert_eq!(lin.to_f64_vec().unwrap(), got);
        prop_assert!(iter2.shape().len() <= want_shape.len().max(1));
    }
}

fn iter_for(a: &Tensor, b: &Tensor) -> (TensorIterator, Tensor) {
    let mut outs = StructuredOutputs::functional(1);
    let iter = binary_op_config().add_input(a).add_input(b).build_structured(&mut outs).unwrap();
    add_f32(&iter);
    (iter, outs.output(0).clone())
}

fn seq(n: i64) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn contiguous_5d_coalesces_to_one_dim() {
    let a = Tensor::from_vec(seq(2 * 3 * 4 * 5 * 6), &[2, 3, 4, 5, 6]).unwrap();
    let (iter, out) = iter_for(&a, &a);
    assert_eq!(iter.shape(), [720]);
    assert!(iter.is_contiguous());
    assert_eq!(out.strides(), [360, 120, 30, 6, 1]);
    assert_eq!(out.to_vec::<f32>().unwrap(), seq(720).iter().map(|x| 2.0 * x).collect::<Vec<_>>());
}

#[test]
fn channels_last_propagates() {
    // Both channels-last: fast setup, output channels-last ([60, 1, 15, 3] for [2, 3, 4, 5]).
    let a = Tensor::empty(&[2, 3, 4, 5], DType::F32, Device::Cpu, MemoryFormat::ChannelsLast).unwrap();
    let (iter, out) = iter_for(&a, &a);
    assert_eq!(out.strides(), [60, 1, 15, 3]);
    assert_eq!(iter.shape(), [120]);

    // Channels-last + a broadcast [1, 3, 1, 1] bias: general path. a's byte strides are
    // [240, 4, 60, 12] and the bias's [0, 4, 0, 0]; the stride sort walks dims 1, 3, 2, 0,
    // so the output is channels-last too.
    let bias = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 3, 1, 1]).unwrap();
    let (_, out) = iter_for(&a, &bias);
    assert_eq!(out.strides(), [60, 1, 15, 3]);
    let (_, out) = iter_for(&bias, &a);
    assert_eq!(out.strides(), [60, 1, 15, 3]);
    let v = out.to_vec::<f32>().unwrap();
    assert_eq!(v[0], 1.0);
    assert_eq!(v[20], 2.0); // element [0, 1, 0, 0]
}

#[test]
fn transposed_and_contiguous_follow_first_input() {
    // at: logical [2, 3] with strides [1, 2] (the transpose of a contiguous [3, 2]).
    let base = Tensor::from_vec(seq(6), &[3, 2]).unwrap();
    let at = base.alias_with_layout(&[2, 3], &[1, 2], 0).unwrap();
    let b = Tensor::from_vec(seq(6), &[2, 3]).unwrap();
    // at first: byte strides at [4, 8], b [12, 4]; should_swap(dim 1, dim 0) looks at `at`
    // first: 8 > 4, so dim 0 becomes the fastest and the output gets strides [1, 2].
    let (_, out) = iter_for(&at, &b);
    assert_eq!(out.strides(), [1, 2]);
    // at logical: [[0, 2, 4], [1, 3, 5]]; b: [[0, 1, 2], [3, 4, 5]].
    assert_eq!(out.to_vec::<f32>().unwrap(), [0.0, 3.0, 6.0, 4.0, 7.0, 10.0]);
    // b first: b's strides decide (4 < 12: no swap), the output is row-major [3, 1].
    let (_, out) = iter_for(&b, &at);
    assert_eq!(out.strides(), [3, 1]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [0.0, 3.0, 6.0, 4.0, 7.0, 10.0]);
    // Both transposed with identical strides: fast setup copies the strides.
    let (iter, out) = iter_for(&at, &at);
    assert_eq!(out.strides(), [1, 2]);
    assert_eq!(iter.shape(), [6]);
}

#[test]
fn broadcast_and_full_follow_the_full_one() {
    let base = Tensor::from_vec(seq(6), &[3, 2]).unwrap();
    let full_t = base.alias_with_layout(&[2, 3], &[1, 2], 0).unwrap();
    let row = Tensor::from_vec(vec![10.0f32, 20.0, 30.0], &[3]).unwrap();
    // row's byte strides over [2, 3] are [0, 4]: a 0 defers to the next operand, the full one.
    for (x, y) in [(&row, &full_t), (&full_t, &row)] {
        let (_, out) = iter_for(x, y);
        assert_eq!(out.strides(), [1, 2]);
        assert_eq!(out.to_vec::<f32>().unwrap(), [10.0, 22.0, 34.0, 11.0, 23.0, 35.0]);
    }
    // Row-major full + broadcast: row-major output.
    let full_c = Tensor::from_vec(seq(6), &[2, 3]).unwrap();
    let (_, out) = iter_for(&row, &full_c);
    assert_eq!(out.strides(), [3, 1]);
}

#[test]
fn ambiguous_nc11_goes_contiguous() {
    // [2, 3, 1, 1] with channels-last strides is also contiguous: fast setup picks contiguous.
    let a = Tensor::empty_strided(&[2, 3, 1, 1], &[3, 1, 3, 3], DType::F32, Device::Cpu).unwrap();
    let (_, out) = iter_for(&a, &a);
    assert_eq!(out.strides(), [3, 1, 1, 1]);
}

#[test]
fn given_output_keeps_its_strides_or_is_resized() {
    let a = Tensor::from_vec(seq(6), &[2, 3]).unwrap();
    let out = Tensor::empty_strided(&[2, 3], &[1, 2], DType::F32, Device::Cpu).unwrap();
    let mut outs = StructuredOutputs::out(&[&out]);
    let iter = binary_op_config().add_input(&a).add_input(&a).build_structured(&mut outs).unwrap();
    add_f32(&iter);
    assert_eq!(out.strides(), [1, 2]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);

    // Wrong shape, write-only: resized to the broadcast shape (contiguous).
    let out = Tensor::empty(&[5], DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    let iter = TensorIteratorConfig::new().add_output(&out).add_input(&a).add_input(&a).build().unwrap();
    add_f32(&iter);
    assert_eq!(out.sizes(), [2, 3]);
    assert_eq!(out.strides(), [3, 1]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
}
