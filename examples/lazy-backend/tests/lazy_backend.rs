//! The lazy backend against the CPU: recorded graphs give the CPU's values, an MLP trains to the
//! CPU's parameters, chains of elementwise operators run fused, in-place writes through views
//! land where they should, unlisted operators and the crate's own operator run through the
//! fallback, and mistakes are errors naming the operator.

use oxten::nn::{Linear, Module};
use oxten::optim::{Optimizer, Sgd, SgdOpts};
use oxten::options::ZerosOpts;
use oxten::{DType, Device, Tensor};
use oxten_lazy::lazyops::TensorExt as _;
use oxten_lazy::{graph, init, set_fusion, stats, sync, LAZY};

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

fn cpu(sizes: &[i64], seed: u32) -> Tensor {
    Tensor::from_vec(values(sizes.iter().product::<i64>() as usize, seed), sizes).unwrap()
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_device(Device::Cpu).to_vec::<f32>().unwrap()
}

#[test]
fn recorded_operators_build_a_graph_that_runs_when_read() {
    init().unwrap();
    let (a, b) = (cpu(&[4, 3], 1), cpu(&[3, 2], 2));
    let (la, lb) = (a.to_device(LAZY), b.to_device(LAZY));
    let y = la.mm(&lb).relu().add(&la.sum_dim_intlist(Some(&[1]), true).mul_scalar(0.5));
    assert_eq!((y.device(), y.sizes().to_vec(), y.dtype()), (LAZY, vec![4, 2], DType::F32));
    let text = graph(&y).unwrap();
    assert_eq!(
        text,
        "%0 = data f32[4, 3]\n%1 = data f32[3, 2]\n%2 = mm(%0, %1) f32[4, 2]\n%3 = relu(%2) f32[4, 2]\n\
         %4 = sum.dim_IntList(%0, dim=Some([1]), keepdim=true, dtype=None) f32[4, 1]\n\
         %5 = mul.Scalar(%4, other=Float(0.5)) f32[4, 1]\n%6 = add.Tensor(%3, %5, alpha=Int(1)) f32[4, 2]\nreturn %6\n",
        "{text}"
    );
    let want = a.mm(&b).relu().add(&a.sum_dim_intlist(Some(&[1]), true).mul_scalar(0.5));
    assert_eq!(f32s(&y), f32s(&want));
    // Once read, the graph is data.
    assert_eq!(graph(&y).unwrap(), "%0 = data f32[4, 2]\nreturn %0\n");
    // Printing and `item` read too.
    assert_eq!(y.to_string(), format!("{}, device='lazy:0')", want.to_string().strip_suffix(')').unwrap()));
    let s = la.sum_dim_intlist(None, false);
    assert!((s.item::<f32>().unwrap() - a.sum_dim_intlist(None, false).item::<f32>().unwrap()).abs() < 1e-6);
}

#[test]
fn five_elementwise_operators_run_as_one_fused_region() {
    init().unwrap();
    let x = cpu(&[1000, 100], 3);
    let chain = |x: &Tensor| x.mul_scalar(1.5).add_scalar(0.25).relu().sub_scalar(0.5).sigmoid();
    let want = f32s(&chain(&x));
    let lx = x.to_device(LAZY);
    let before = stats();
    let y = chain(&lx);
    sync(&[&y]).unwrap();
    let after = stats();
    // One region of five nodes; nothing else ran on its own but the read of `x`'s data.
    assert_eq!((after.regions - before.regions, after.nodes_fused - before.nodes_fused), (1, 5));
    assert_eq!(after.nodes_run, before.nodes_run);
    assert_eq!(f32s(&y), want);
    // Without the fusion pass: five operators, the same values.
    set_fusion(false);
    let y = chain(&lx);
    sync(&[&y]).unwrap();
    set_fusion(true);
    assert_eq!(stats().nodes_run - after.nodes_run, 5);
    assert_eq!(f32s(&y), want);
    // A broadcast operand stops the region where it is read: `z` is run on its own.
    let b = cpu(&[100], 4);
    let lz = chain(&lx).mul(&b.to_device(LAZY)).exp();
    let before = stats();
    assert_eq!(f32s(&lz), f32s(&chain(&x).mul(&b).exp()));
    let after = stats();
    assert_eq!(after.regions - before.regions, 1, "the five-operator chain is one region");
    assert_eq!(after.nodes_run - before.nodes_run, 2, "mul with a broadcast operand, then exp");
}

#[test]
fn writes_through_views_and_in_place_operators_land_where_they_should() {
    init().unwrap();
    let a = cpu(&[4, 5], 5);
    let (c, l) = (a.deep_clone(), a.to_device(LAZY));
    for t in [&c, &l] {
        // In place on a strided view, a copy into a row, then in place on the whole.
        t.narrow(1, 1, 3).t().mul_scalar_(2.0);
        t.select(0, 2).copy_(&Tensor::from_vec(vec![9.0f32; 5], &[5]).unwrap());
        t.add_(&t.narrow(0, 0, 1).deep_clone());
    }
    assert_eq!(f32s(&l), f32s(&c));
    // Reading what is being written is refused as on the CPU: the meta copies share a storage
    // where the arguments do.
    let cpu_e = c.try_add_(&c.narrow(0, 0, 1)).unwrap_err();
    assert_eq!(l.try_add_(&l.narrow(0, 0, 1)).unwrap_err().message, cpu_e.message);
    // A view read after its base changed sees the change.
    let v = l.narrow(0, 1, 2);
    l.mul_scalar_(0.5);
    assert_eq!(f32s(&v), f32s(&c.mul_scalar(0.5).narrow(0, 1, 2)));
    // Converting copies: f64 CPU data into an f32 lazy tensor, broadcast over rows.
    let z = oxten::zeros_with(&[3, 2], ZerosOpts { device: Some(LAZY), ..Default::default() });
    z.copy_(&Tensor::from_vec(vec![1.5f64, -2.0], &[2]).unwrap());
    assert_eq!(f32s(&z), [1.5, -2.0, 1.5, -2.0, 1.5, -2.0]);
}

#[test]
fn an_mlp_trains_for_20_steps_to_the_cpu_parameters() {
    init().unwrap();
    let x = cpu(&[32, 16], 6);
    let target = cpu(&[32, 4], 7);
    let (w1, b1, w2, b2) =
        (cpu(&[24, 16], 8).mul_scalar(0.25), cpu(&[24], 9), cpu(&[4, 24], 10).mul_scalar(0.2), cpu(&[4], 11));
    let train = |dev: Device| {
        // A copy: the CPU run updates its parameters in place.
        let param = |t: &Tensor| t.deep_clone().to_device(dev).requires_grad_(true);
        let l1 = Linear { weight: param(&w1), bias: Some(param(&b1)) };
        let l2 = Linear { weight: param(&w2), bias: Some(param(&b2)) };
        let params = vec![l1.weight.clone(), l1.bias.clone().unwrap(), l2.weight.clone(), l2.bias.clone().unwrap()];
        let mut opt = Sgd::new(params.clone(), SgdOpts { lr: 0.05, momentum: 0.9, ..Default::default() }).unwrap();
        let (xd, td) = (x.to_device(dev), target.to_device(dev));
        let mut losses = Vec::new();
        for _ in 0..20 {
            opt.zero_grad();
            let h = l1.forward(&xd).unwrap().relu();
            let y = l2.forward(&h).unwrap();
            let loss = oxten::mse_loss(&y, &td);
            loss.backward();
            opt.step().unwrap();
            if dev == LAZY && losses.len() == 3 {
                // The step is a graph: the backward, the momentum buffers and the update.
                let g = graph(&params[0]).unwrap();
                for op in ["mse_loss_backward(", "threshold_backward(", "addmm(", "mul.Scalar(", "alpha=Float(-0.05)"] {
                    assert!(g.contains(op), "{op} in\n{g}");
                }
            }
            losses.push(loss.item::<f32>().unwrap());
        }
        (losses, params.iter().map(|p| f32s(&p.detach())).collect::<Vec<_>>())
    };
    let (cpu_losses, cpu_params) = train(Device::Cpu);
    let before = stats();
    let (lazy_losses, lazy_params) = train(LAZY);
    let after = stats();
    assert!(after.regions > before.regions, "the backward and SGD steps had fused regions");
    assert!(cpu_losses[19] < cpu_losses[0] * 0.7, "the MLP learns: {cpu_losses:?}");
    for (a, b) in lazy_losses.iter().zip(&cpu_losses) {
        assert!((a - b).abs() <= 1e-6, "losses {lazy_losses:?} vs {cpu_losses:?}");
    }
    for (lp, cp) in lazy_params.iter().zip(&cpu_params) {
        for (a, b) in lp.iter().zip(cp) {
            assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
        }
    }
}

#[test]
fn other_operators_and_the_crates_own_operator_run_through_the_fallback() {
    init().unwrap();
    let a = cpu(&[3, 4], 12);
    let l = a.to_device(LAZY).requires_grad_(true);
    // `softmax` and `cumsum` are not in `full_codegen:`: the CPU computes them, on the graph's
    // values, and the results are lazy tensors again.
    let s = l.mul_scalar(2.0).softmax(1).cumsum(1);
    assert_eq!(s.device(), LAZY);
    assert_eq!(f32s(&s), f32s(&a.mul_scalar(2.0).softmax(1).cumsum(1)));
    // The crate's own operator, with its derivative from ops/derivatives.yaml.
    let y = l.scaled_tanh_with(oxten_lazy::lazyops::options::ScaledTanhOpts { scale: 3.0.into() });
    let want = a.tanh().mul_scalar(3.0);
    assert_eq!(f32s(&y), f32s(&want));
    y.sum_dim_intlist(None, false).backward();
    let g = f32s(&l.grad().unwrap());
    let t = a.tanh().to_vec::<f32>().unwrap();
    for (gi, ti) in g.iter().zip(&t) {
        assert!((gi - 3.0 * (1.0 - ti * ti)).abs() < 1e-5, "{gi} vs {ti}");
    }
}

#[test]
fn mistakes_are_errors_naming_the_operator_before_anything_is_recorded() {
    init().unwrap();
    let l = cpu(&[2, 3], 13).to_device(LAZY);
    let e = l.try_add(&cpu(&[2, 3], 14)).unwrap_err();
    assert!(e.to_string().contains("add.Tensor") && e.to_string().contains("cpu"), "{e}");
    // The meta function's shape check, as on the CPU.
    let e = l.try_mm(&cpu(&[2, 3], 15).to_device(LAZY)).unwrap_err();
    let cpu_e = cpu(&[2, 3], 13).try_mm(&cpu(&[2, 3], 15)).unwrap_err();
    assert_eq!(e.message, cpu_e.message);
    // In place: the result must fit `self`.
    let i = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap().to_device(LAZY);
    let e = i.try_mul_scalar_(0.5).unwrap_err();
    assert!(e.to_string().contains("can't be cast"), "{e}");
}
