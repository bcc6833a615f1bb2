//! Engine tests: with the generated kernels.

#[allow(unused_imports)]
use super::minilib::*;
#[allow(unused_imports)]
use oxten::autograd::*;
#[allow(unused_imports)]
use oxten::{ops, DType, Result, Scalar, Tensor};
#[allow(unused_imports)]
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
#[allow(unused_imports)]
use std::sync::{Arc, Mutex};

mod generated_kernels {
    use super::{close, leaf, t, vals};
    use oxten::autograd::*;
    use oxten::Tensor;

    fn sl(x: &Tensor, start: i64, end: i64) -> Tensor {
        x.slice(0, Some(start), Some(end), 1)
    }

    #[test]
    fn in_place_on_a_view_of_a_non_leaf() {
        let a = leaf(&[1.0, 2.0, 3.0, 4.0]);
        let b = a.mul_scalar(1.0);
        sl(&b, 1, 3).mul_scalar_(2.0);
        assert_eq!(b.grad_fn().unwrap().name(), "CopySlices");
        b.mul(&t(&[1.0, 10.0, 100.0, 1000.0])).sum().backward();
        assert_eq!(vals(&a.grad().unwrap()), [1.0, 20.0, 200.0, 1000.0]);
    }

    #[test]
    fn views_taken_before_an_in_place_op_on_the_base_see_it() {
        let a = leaf(&[1.0, 2.0, 3.0]);
        let b = a.mul_scalar(1.0);
        let v = sl(&b, 0, 2);
        assert_eq!(v.grad_fn().unwrap().name(), "SliceBackward0");
        b.mul_scalar_(3.0);
        assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
        v.sum().backward();
        assert_eq!(vals(&a.grad().unwrap()), [3.0, 3.0, 0.0]);
    }

    #[test]
    fn create_graph_into_grad_and_through_fan_in() {
        let x = leaf(&[2.0]);
        let y = x.mul(&x).add(&x.mul(&x).mul(&x)); // x² + x³
        y.backward_with(BackwardOpts { create_graph: true, ..Default::default() });
        let g = x.grad().unwrap();
        assert_eq!(vals(&g), [4.0 + 12.0]);
        assert!(g.grad_fn().is_some(), ".grad has history under create_graph");
        let gg = grad(&[g.sum()], &[&x]).unwrap().remove(0).unwrap();
        assert_eq!(vals(&gg), [2.0 + 12.0]);
    }

    #[test]
    fn inference_tensor_used_with_a_tensor_that_requires_grad() {
        let x = leaf(&[1.0, 2.0]);
        let y = inference_mode(|| x.mul(&x));
        assert!(y.is_inference() && !y.requires_grad());
        let e = x.try_mul(&y).unwrap_err();
        assert!(e.to_string().contains("Inference tensors cannot be saved for backward."), "{e}");
        let e = y.try_add_scalar_(1.0).unwrap_err();
        assert!(e.to_string().contains("Inplace update to inference tensor outside InferenceMode"), "{e}");
        let z = x.mul_scalar(2.0); // saves nothing that is an inference tensor
        z.sum().backward();
        assert!(close(&vals(&x.grad().unwrap()), &[2.0, 2.0]));
    }

    #[test]
    fn a_view_made_under_no_grad_cannot_be_modified_with_grad_on() {
        let a = leaf(&[1.0, 2.0]);
        let b = a.mul_scalar(1.0);
        let v = no_grad(|| sl(&b, 0, 1));
        let e = v.try_mul_(&leaf(&[2.0])).unwrap_err();
        assert!(e.to_string().contains("A view was created in no_grad mode"), "{e}");
    }

    #[test]
    fn anomaly_mode_names_a_generated_node() {
        let x = leaf(&[0.0, 1.0]);
        let e = detect_anomaly(|| x.mul(&t(&[f32::NAN, 1.0])).sum().try_backward().unwrap_err());
        assert!(e.to_string().contains("Function 'MulBackward0' returned nan values in its 0th output."), "{e}");
        let e = detect_anomaly(|| x.div(&x).sum().try_backward().unwrap_err());
        assert!(e.to_string().contains("Function 'DivBackward0' returned nan values in its 1th output."), "{e}");
    }

    #[test]
    fn long_chains_run_and_free_without_recursion() {
        let x = leaf(&[1.0]);
        let mut y = x.clone();
        for _ in 0..20_000 {
            y = y.mul_scalar(1.0).add_scalar(0.0);
        }
        y.sum().backward();
        assert_eq!(vals(&x.grad().unwrap()), [1.0]);
        drop(y);
    }
}
