//! Rust's arithmetic operators on tensors: the same values, promotion, broadcasting and errors
//! as the named operators.

use oxten::{DType, Tensor};

fn t(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

fn vals(x: &Tensor) -> Vec<f64> {
    x.to_f64_vec().unwrap()
}

#[test]
fn binary_operators_match_the_named_operators() {
    let a = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let b = t(&[10.0, 20.0], &[2]);
    assert_eq!(vals(&(&a + &b)), [11.0, 22.0, 13.0, 24.0]);
    assert_eq!(vals(&(&a - &b)), vals(&a.sub(&b)));
    assert_eq!(vals(&(&a * &b)), vals(&a.mul(&b)));
    assert_eq!(vals(&(&a / &b)), vals(&a.div(&b)));
    // Owned operands, in any combination.
    assert_eq!(vals(&(a.clone() + b.clone())), vals(&(&a + &b)));
    assert_eq!(vals(&(a.clone() * &b)), vals(&(&a * b.clone())));
    // Numbers on either side, as wrapped scalars.
    assert_eq!(vals(&(&a * 2.0)), [2.0, 4.0, 6.0, 8.0]);
    assert_eq!(vals(&(2.0 * &a)), [2.0, 4.0, 6.0, 8.0]);
    assert_eq!(vals(&(1.0 - &a)), [0.0, -1.0, -2.0, -3.0]);
    assert_eq!(vals(&(&a - 1)), [0.0, 1.0, 2.0, 3.0]);
    assert_eq!(vals(&(&a / 2)), [0.5, 1.0, 1.5, 2.0]);
    assert_eq!(vals(&-&a), [-1.0, -2.0, -3.0, -4.0]);
    // A chain reads like the formula.
    let y = (&a * &a + 2.0 * &a - 1.0) / 4.0;
    assert_eq!(vals(&y), [0.5, 1.75, 3.5, 5.75]);
}

#[test]
fn promotion_follows_the_named_operators() {
    let i = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
    assert_eq!((&i + 1).dtype(), DType::I64);
    assert_eq!((&i * 2.5).dtype(), DType::F32);
    assert_eq!((&i / 2).dtype(), DType::F32);
    let h = t(&[1.0, 2.0, 3.0], &[3]).to_dtype(DType::BF16);
    assert_eq!((&h + 1.5f64).dtype(), DType::BF16);
    assert_eq!((&h + &i).dtype(), DType::BF16);
}

#[test]
fn assigning_operators_write_in_place() {
    let mut a = t(&[1.0, 2.0], &[2]);
    let alias = a.clone();
    a += &t(&[1.0, 1.0], &[2]);
    a *= 3.0;
    a -= 1;
    a /= t(&[2.0, 4.0], &[2]);
    assert_eq!(vals(&a), [2.5, 2.0]);
    // Every handle sees the writes, as with PyTorch's `+=`.
    assert_eq!(vals(&alias), [2.5, 2.0]);
}

#[test]
fn operators_panic_with_the_operators_message() {
    let a = t(&[1.0, 2.0, 3.0], &[3]);
    let b = t(&[1.0, 2.0], &[2]);
    let msg = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| &a + &b)).unwrap_err();
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("add.Tensor: The size of tensor a (3) must match the size of tensor b (2)"), "{msg}");
    // The in-place form refuses to change the shape of its left side.
    let mut c = t(&[1.0], &[1]);
    let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c += &a)).unwrap_err();
    let e = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(e.contains("add_"), "{e}");
}
