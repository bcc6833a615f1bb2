//! Optimizers and schedulers against torch.optim (tests/golden/optim.txt, recorded by
//! scripts/golden_optim.py): parameter values after each step, learning rates per epoch.

use oxten::optim::{Adam, AdamOpts, AdamW, CosineAnnealingLr, LrScheduler, Optimizer, Sgd, SgdOpts, StepLr};
use oxten::Tensor;

const GOLDEN: &str = include_str!("../golden/optim.txt");

fn nums(s: &str) -> Vec<f64> {
    s.split(' ').skip(1).map(|x| x.parse().unwrap()).collect()
}

fn attrs(line: &str) -> Vec<(String, String)> {
    line.split(' ')
        .skip(2)
        .map(|a| {
            let (k, v) = a.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn get(a: &[(String, String)], k: &str) -> Option<f64> {
    a.iter().find(|(x, _)| x == k).map(|(_, v)| v.parse().unwrap())
}

fn flag(a: &[(String, String)], k: &str) -> bool {
    get(a, k) == Some(1.0)
}

fn make(kind: &str, a: &[(String, String)], p: Tensor) -> Box<dyn Optimizer> {
    match kind {
        "sgd" => Box::new(
            Sgd::new(
                vec![p],
                SgdOpts {
                    lr: get(a, "lr").unwrap(),
                    momentum: get(a, "momentum").unwrap_or(0.0),
                    dampening: get(a, "dampening").unwrap_or(0.0),
                    weight_decay: get(a, "weight_decay").unwrap_or(0.0),
                    nesterov: flag(a, "nesterov"),
                    maximize: flag(a, "maximize"),
                },
            )
            .unwrap(),
        ),
        "adam" | "adamw" => {
            let base = if kind == "adam" { AdamOpts::default() } else { AdamOpts::adamw() };
            let betas = a.iter().find(|(k, _)| k == "betas").map(|(_, v)| {
                let b: Vec<f64> = v.split(',').map(|x| x.parse().unwrap()).collect();
                (b[0], b[1])
            });
            let o = AdamOpts {
                lr: get(a, "lr").unwrap(),
                betas: betas.unwrap_or(base.betas),
                eps: get(a, "eps").unwrap_or(base.eps),
                weight_decay: get(a, "weight_decay").unwrap_or(base.weight_decay),
                amsgrad: flag(a, "amsgrad"),
                maximize: flag(a, "maximize"),
            };
            if kind == "adam" {
                Box::new(Adam::new(vec![p], o).unwrap())
            } else {
                Box::new(AdamW::new(vec![p], o).unwrap())
            }
        }
        other => panic!("unknown optimizer {other}"),
    }
}

fn close(got: &[f64], want: &[f64], what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-12 + 1e-12 * w.abs(), "{what}[{i}]: {g} vs torch {w}");
    }
}

#[test]
fn optimizers_match_torch_optim() {
    let lines: Vec<&str> = GOLDEN.lines().collect();
    let mut cases = 0;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !line.starts_with("case ") {
            i += 1;
            continue;
        }
        cases += 1;
        let kind = line.split(' ').nth(1).unwrap();
        let a = attrs(line);
        let p = Tensor::from_vec(nums(lines[i + 1]), &[6]).unwrap().requires_grad_(true);
        let mut opt = make(kind, &a, p.clone());
        i += 2;
        let mut step = 0;
        while i + 1 < lines.len() && lines[i].starts_with("grad ") {
            step += 1;
            p.set_grad(Some(Tensor::from_vec(nums(lines[i]), &[6]).unwrap()));
            opt.step().unwrap();
            close(&p.to_vec::<f64>().unwrap(), &nums(lines[i + 1]), &format!("{line}, step {step}"));
            i += 2;
        }
        assert_eq!(step, 5, "{line}");
    }
    assert_eq!(cases, 11);
}

#[test]
fn schedulers_match_torch() {
    let lines: Vec<&str> = GOLDEN.lines().collect();
    let mut n = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("sched ") else { continue };
        n += 1;
        let name = rest.split(' ').next().unwrap();
        let a = attrs(line);
        let p = Tensor::from_vec(vec![0.0f32], &[1]).unwrap().requires_grad_(true);
        let mut opt = Sgd::new(vec![p], SgdOpts { lr: 0.1, ..Default::default() }).unwrap();
        let mut s: Box<dyn LrScheduler> = match name {
            "steplr" => {
                Box::new(StepLr::new(&opt, get(&a, "step_size").unwrap() as u64, get(&a, "gamma").unwrap()).unwrap())
            }
            "cosine" => Box::new(
                CosineAnnealingLr::new(&opt, get(&a, "T_max").unwrap() as u64, get(&a, "eta_min").unwrap_or(0.0))
                    .unwrap(),
            ),
            other => panic!("unknown scheduler {other}"),
        };
        let want = nums(lines[i + 1]);
        let got: Vec<f64> = (0..want.len())
            .map(|_| {
                s.step(&mut opt);
                assert_eq!(opt.lrs()[0], s.last_lr()[0]);
                s.last_lr()[0]
            })
            .collect();
        for (e, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-15 + 1e-12 * w.abs(), "{line}: epoch {}: {g} vs torch {w}", e + 1);
        }
    }
    assert_eq!(n, 3);
}

#[test]
fn skips_parameters_without_gradient_and_zero_grad_clears() {
    let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().requires_grad_(true);
    let b = Tensor::from_vec(vec![3.0f32], &[1]).unwrap().requires_grad_(true);
    let mut opt = Adam::new(vec![a.clone(), b.clone()], AdamOpts { lr: 0.1, ..Default::default() }).unwrap();
    a.mul_scalar(3.0).sum().backward();
    opt.step().unwrap();
    // Adam's first step moves by lr·sign(g) (up to eps).
    let av = a.to_vec::<f32>().unwrap();
    assert!((av[0] - 0.9).abs() < 1e-6 && (av[1] - 1.9).abs() < 1e-6, "{av:?}");
    assert_eq!(b.to_vec::<f32>().unwrap(), [3.0]);
    assert!(opt.moments(0, 1).is_none());
    opt.zero_grad();
    assert!(a.grad().is_none());
}

#[test]
fn bad_hyperparameters_and_parameters_are_errors() {
    let p = || Tensor::from_vec(vec![1.0f32], &[1]).unwrap().requires_grad_(true);
    let e = |r: oxten::Result<Sgd>| r.err().expect("should fail").to_string();
    assert!(e(Sgd::new(vec![p()], SgdOpts { lr: -1.0, ..Default::default() })).contains("Invalid learning rate: -1"));
    assert!(e(Sgd::new(vec![p()], SgdOpts { momentum: -0.5, ..Default::default() })).contains("Invalid momentum value"));
    assert!(e(Sgd::new(vec![p()], SgdOpts { nesterov: true, ..Default::default() })).contains("Nesterov"));
    assert!(e(Sgd::new(vec![], SgdOpts::default())).contains("empty parameter list"));
    assert!(e(Sgd::new(vec![p().mul_scalar(2.0)], SgdOpts::default())).contains("non-leaf"));
    let ints = Tensor::from_vec(vec![1i64], &[1]).unwrap();
    assert!(e(Sgd::new(vec![ints], SgdOpts::default())).contains("floating-point"));
    let bad_beta = Adam::new(vec![p()], AdamOpts { betas: (1.0, 0.999), ..Default::default() });
    assert!(bad_beta.err().unwrap().to_string().contains("Invalid beta parameter at index 0: 1"));
}

#[test]
fn updates_are_seen_through_every_handle_and_record_no_graph() {
    let w = Tensor::from_vec(vec![1.0f64, -1.0], &[2]).unwrap().requires_grad_(true);
    let view_of_w = w.detach(); // shares storage
    let mut opt = Sgd::new(vec![w.clone()], SgdOpts { lr: 0.5, momentum: 0.9, ..Default::default() }).unwrap();
    w.mul(&w).sum().backward();
    opt.step().unwrap();
    assert_eq!(view_of_w.to_vec::<f64>().unwrap(), [0.0, 0.0]);
    assert!(w.is_leaf() && w.requires_grad() && w.grad_fn().is_none());
    assert_eq!(opt.momentum_buffer(0, 0).unwrap().to_vec::<f64>().unwrap(), [2.0, -2.0]);
}
