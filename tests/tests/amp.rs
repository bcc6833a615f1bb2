//! `oxten::amp::GradScaler` and its two operators: the update rule against sequences worked
//! out by hand, whole training runs against PyTorch's GradScaler on the CPU
//! (tests/golden/amp.txt, recorded by scripts/golden_amp.py), and the misuse errors.

use oxten::amp::{GradScaler, GradScalerOpts};
use oxten::optim::{Adam, AdamOpts, Optimizer, Sgd, SgdOpts};
use oxten::{DType, Tensor};
use oxten_tests::golden::{replay, Case};

fn t(v: &[f32]) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap()
}

#[test]
fn unscale_finds_infs_and_nans_and_divides() {
    let grads = [t(&[2.0, 4.0]), t(&[8.0, f32::INFINITY]), t(&[]), t(&[f32::NAN])];
    let found = Tensor::scalar(0.0f32);
    let inv = Tensor::scalar(0.5f32);
    oxten::_amp_foreach_non_finite_check_and_unscale_(&grads[..1], &found, &inv);
    assert_eq!(found.item::<f32>().unwrap(), 0.0);
    assert_eq!(grads[0].to_vec::<f32>().unwrap(), [1.0, 2.0]);
    oxten::_amp_foreach_non_finite_check_and_unscale_(&grads[1..3], &found, &inv);
    assert_eq!(found.item::<f32>().unwrap(), 1.0, "an inf is found");
    assert_eq!(grads[1].to_vec::<f32>().unwrap()[0], 4.0, "every gradient is divided");
    let found = Tensor::scalar(0.0f32);
    oxten::_amp_foreach_non_finite_check_and_unscale_(&grads[3..], &found, &inv);
    assert_eq!(found.item::<f32>().unwrap(), 1.0, "a NaN is found");
    // f16 gradients are checked and divided in their dtype.
    let h = t(&[1.0, 65504.0]).to_dtype(DType::F16);
    let found = Tensor::scalar(0.0f32);
    oxten::_amp_foreach_non_finite_check_and_unscale_(&[&h], &found, &Tensor::scalar(0.25f32));
    assert_eq!((found.item::<f32>().unwrap(), h.dtype()), (0.0, DType::F16));
    assert_eq!(h.to_dtype(DType::F32).to_vec::<f32>().unwrap(), [0.25, 16376.0]);
    // PyTorch's checks.
    let e = oxten::try__amp_foreach_non_finite_check_and_unscale_(&grads[..1], &t(&[0.0, 0.0]), &inv).unwrap_err();
    assert!(e.to_string().contains("found_inf must be a 1-element tensor."), "{e}");
    let e = oxten::try__amp_foreach_non_finite_check_and_unscale_(&grads[..1], &found, &Tensor::scalar(1.0f64))
        .unwrap_err();
    assert!(e.to_string().contains("inv_scale must be a float tensor."), "{e}");
}

#[test]
fn update_scale_follows_the_rule() {
    // growth_interval 3, growth 2, backoff 0.5: worked out by hand.
    let scale = Tensor::scalar(1024.0f32);
    let tracker = Tensor::scalar(0i32);
    let steps = [(false, 1024.0, 1), (false, 1024.0, 2), (false, 2048.0, 0), (true, 1024.0, 0), (false, 1024.0, 1)];
    for (inf, want_scale, want_count) in steps {
        let found = Tensor::scalar(if inf { 1.0f32 } else { 0.0 });
        let r = oxten::_amp_update_scale_(&scale, &tracker, &found, 2.0, 0.5, 3);
        assert!(r.is_same(&scale));
        assert_eq!((scale.item::<f32>().unwrap(), tracker.item::<i32>().unwrap()), (want_scale, want_count));
    }
    // A growth that would overflow keeps the scale and still restarts the count.
    let scale = Tensor::scalar(f32::MAX);
    let tracker = Tensor::scalar(0i32);
    oxten::_amp_update_scale_(&scale, &tracker, &Tensor::scalar(0.0f32), 2.0, 0.5, 1);
    assert_eq!((scale.item::<f32>().unwrap(), tracker.item::<i32>().unwrap()), (f32::MAX, 0));
    let e =
        oxten::try__amp_update_scale_(&scale, &Tensor::scalar(0i64), &Tensor::scalar(0.0f32), 2.0, 0.5, 1).unwrap_err();
    assert!(e.to_string().contains("growth_tracker must be an int tensor."), "{e}");
}

/// The runs of scripts/golden_amp.py: least squares, infs injected into the loss at given steps.
fn grad_scaler_case(c: &Case) -> oxten::Result<Vec<Tensor>> {
    let (w0, x, y) = (c.t(0), c.t(1), c.t(2));
    let steps = c.int("steps").expect("steps") as usize;
    let inf_steps: Vec<i64> =
        if c.attr("inf_steps") == Some("-") { Vec::new() } else { c.ints("inf_steps").expect("inf_steps") };
    let w = w0.detach().requires_grad_(true);
    let mut opt: Box<dyn Optimizer> = if c.attr("optimizer") == Some("sgd") {
        Box::new(Sgd::new(vec![w.clone()], SgdOpts { lr: 0.1, ..Default::default() })?)
    } else {
        Box::new(Adam::new(vec![w.clone()], AdamOpts { lr: 0.05, ..Default::default() })?)
    };
    let opts =
        GradScalerOpts { growth_interval: c.int("growth_interval").expect("growth_interval"), ..Default::default() };
    let mut scaler = GradScaler::new(opts)?;
    let mut scales = Vec::new();
    for step in 0..steps as i64 {
        let r = x.try_matmul(&w)?.try_sub(y)?;
        let mut loss = r.try_mul(&r)?.try_mean_dim(None, false)?;
        if inf_steps.contains(&step) {
            loss = loss.try_mul_scalar(f64::INFINITY)?;
        }
        scaler.scale(&loss)?.backward();
        let stepped = scaler.step(&mut *opt)?;
        assert_eq!(stepped, !inf_steps.contains(&step), "step {step} is skipped exactly when it has infs");
        scaler.update()?;
        opt.zero_grad();
        scales.push(scaler.get_scale());
    }
    let tracker = Tensor::from_vec(vec![scaler.get_growth_tracker()], &[1])?;
    Ok(vec![Tensor::from_vec(scales, &[steps as i64])?, tracker, w.detach()])
}

#[test]
fn grad_scaler_runs_match_pytorch() {
    replay(include_str!("../golden/amp.txt"), 3, |c: &Case| match c.op.as_str() {
        "grad_scaler" => grad_scaler_case(c),
        other => panic!("unknown op {other}"),
    });
}

#[test]
fn grad_scaler_misuse_is_an_error() {
    let w = t(&[1.0, 2.0]).requires_grad_(true);
    let mut opt = Sgd::new(vec![w.clone()], SgdOpts { lr: 0.1, ..Default::default() }).unwrap();
    let mut scaler = GradScaler::new(GradScalerOpts::default()).unwrap();
    assert_eq!(scaler.get_scale(), 65536.0);
    scaler.scale(&w.sum()).unwrap().backward();
    assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), [65536.0, 65536.0]);
    scaler.unscale_(&mut opt).unwrap();
    assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), [1.0, 1.0], "unscaled in place, e.g. to clip");
    let e = scaler.unscale_(&mut opt).unwrap_err().to_string();
    assert!(e.contains("unscale_() has already been called on this optimizer since the last update()."), "{e}");
    assert!(scaler.step(&mut opt).unwrap(), "the unscaled gradients are stepped once, not unscaled again");
    assert_eq!(w.to_vec::<f32>().unwrap(), [0.9, 1.9]);
    let e = scaler.step(&mut opt).unwrap_err().to_string();
    assert!(e.contains("step() has already been called since the last update()."), "{e}");
    let e = scaler.unscale_(&mut opt).unwrap_err().to_string();
    assert!(e.contains("unscale_() is being called after step()."), "{e}");
    scaler.update().unwrap();
    let e = scaler.update().unwrap_err().to_string();
    assert!(e.contains("No inf checks were recorded prior to update."), "{e}");
    // state_dict round trip; a disabled scaler passes everything through.
    let sd = scaler.state_dict();
    let mut other = GradScaler::new(GradScalerOpts { growth_interval: 7, ..Default::default() }).unwrap();
    other.load_state_dict(&sd).unwrap();
    assert_eq!(other.state_dict(), sd);
    let mut off = GradScaler::new(GradScalerOpts { enabled: false, ..Default::default() }).unwrap();
    let loss = w.sum();
    assert!(off.scale(&loss).unwrap().is_same(&loss));
    assert_eq!(off.get_scale(), 1.0);
    assert!(off.state_dict().is_empty());
    let e = GradScaler::new(GradScalerOpts { growth_factor: 0.5, ..Default::default() }).err().unwrap();
    assert!(e.to_string().contains("growth factor must be > 1.0"), "{e}");
}
