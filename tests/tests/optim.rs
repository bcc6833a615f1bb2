//! Optimizers and schedulers against torch.optim (tests/golden/optim.txt, recorded by
//! scripts/golden_optim.py): parameter values after each step, learning rates per epoch.

use oxten::optim::{
    Adagrad, AdagradOpts, Adam, AdamOpts, AdamW, Anneal, CosineAnnealingLr, LinearLr, LrScheduler, OneCycleLr,
    OneCycleOpts, Optimizer, PlateauMode, PlateauOpts, ReduceLrOnPlateau, Rmsprop, RmspropOpts, SequentialLr, Sgd,
    SgdOpts, StepLr,
};
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

/// The optimizer of a golden case; `variant` selects Adam's implementation (0 the single-tensor
/// formula, 1 the fused kernel, 2 the `_foreach_*` path).
fn make(kind: &str, a: &[(String, String)], p: Tensor, variant: u8) -> Box<dyn Optimizer> {
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
                fused: variant == 1,
                foreach: variant == 2,
            };
            if kind == "adam" {
                Box::new(Adam::new(vec![p], o).unwrap())
            } else {
                Box::new(AdamW::new(vec![p], o).unwrap())
            }
        }
        "rmsprop" => {
            let d = RmspropOpts::default();
            let o = RmspropOpts {
                lr: get(a, "lr").unwrap(),
                alpha: get(a, "alpha").unwrap_or(d.alpha),
                eps: get(a, "eps").unwrap_or(d.eps),
                weight_decay: get(a, "weight_decay").unwrap_or(0.0),
                momentum: get(a, "momentum").unwrap_or(0.0),
                centered: flag(a, "centered"),
                maximize: flag(a, "maximize"),
            };
            Box::new(Rmsprop::new(vec![p], o).unwrap())
        }
        "adagrad" => {
            let d = AdagradOpts::default();
            let o = AdagradOpts {
                lr: get(a, "lr").unwrap(),
                lr_decay: get(a, "lr_decay").unwrap_or(0.0),
                weight_decay: get(a, "weight_decay").unwrap_or(0.0),
                initial_accumulator_value: get(a, "initial_accumulator_value").unwrap_or(0.0),
                eps: get(a, "eps").unwrap_or(d.eps),
                maximize: flag(a, "maximize"),
            };
            Box::new(Adagrad::new(vec![p], o).unwrap())
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
        let first_grad = i + 2;
        // Adam and AdamW run three times: the single-tensor formula, the fused kernel and the
        // `_foreach_*` path.
        let variants: &[u8] = if kind.starts_with("adam") { &[0, 1, 2] } else { &[0] };
        for &variant in variants {
            let p = Tensor::from_vec(nums(lines[i + 1]), &[6]).unwrap().requires_grad_(true);
            let mut opt = make(kind, &a, p.clone(), variant);
            let (mut j, mut step) = (first_grad, 0);
            while j + 1 < lines.len() && lines[j].starts_with("grad ") {
                step += 1;
                p.set_grad(Some(Tensor::from_vec(nums(lines[j]), &[6]).unwrap()));
                opt.step().unwrap();
                close(
                    &p.to_vec::<f64>().unwrap(),
                    &nums(lines[j + 1]),
                    &format!("{line} (variant {variant}), step {step}"),
                );
                j += 2;
            }
            assert_eq!(step, 5, "{line}");
        }
        i = first_grad + 10;
    }
    assert_eq!(cases, 17);
}

/// `plateau` golden cases step with this metric sequence (the same as the script's).
const PLATEAU_METRICS: [f64; 12] = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.81, 0.82, 0.83, 0.84, 0.7, 0.71];

/// A scheduler under test: the closed-form ones behind the trait, plus `ReduceLROnPlateau`,
/// `SequentialLR` (their own `step`s).
enum Sched {
    Plain(Box<dyn LrScheduler>),
    Sequential(SequentialLr),
    Plateau(ReduceLrOnPlateau),
}

fn text(a: &[(String, String)], k: &str) -> Option<String> {
    a.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone())
}

fn make_scheduler(name: &str, a: &[(String, String)], opt: &mut Sgd) -> Sched {
    let g = |k: &str| get(a, k).unwrap();
    match name {
        "steplr" => Sched::Plain(Box::new(StepLr::new(opt, g("step_size") as u64, g("gamma")).unwrap())),
        "cosine" => Sched::Plain(Box::new(
            CosineAnnealingLr::new(opt, g("T_max") as u64, get(a, "eta_min").unwrap_or(0.0)).unwrap(),
        )),
        "linear" => Sched::Plain(Box::new(
            LinearLr::new(opt, g("start_factor"), g("end_factor"), g("total_iters") as u64).unwrap(),
        )),
        "onecycle" => {
            let opts = OneCycleOpts {
                pct_start: get(a, "pct_start").unwrap_or(0.3),
                anneal_strategy: if text(a, "anneal_strategy").as_deref() == Some("linear") {
                    Anneal::Linear
                } else {
                    Anneal::Cos
                },
                three_phase: text(a, "three_phase").as_deref() == Some("True"),
                ..Default::default()
            };
            Sched::Plain(Box::new(OneCycleLr::new(opt, g("max_lr"), g("total_steps") as u64, opts).unwrap()))
        }
        "sequential" => {
            let (warmup, total) = (g("warmup") as u64, g("total") as u64);
            let lin = LinearLr::new(opt, 0.1, 1.0, warmup).unwrap();
            let cos = CosineAnnealingLr::new(opt, total - warmup, 0.001).unwrap();
            Sched::Sequential(SequentialLr::new(opt, vec![Box::new(lin), Box::new(cos)], &[warmup]).unwrap())
        }
        "plateau" => {
            let opts = PlateauOpts {
                mode: if text(a, "mode").as_deref() == Some("max") { PlateauMode::Max } else { PlateauMode::Min },
                factor: get(a, "factor").unwrap_or(0.1),
                patience: g("patience") as u64,
                threshold: get(a, "threshold").unwrap_or(1e-4),
                relative_threshold: text(a, "threshold_mode").as_deref() != Some("abs"),
                cooldown: get(a, "cooldown").unwrap_or(0.0) as u64,
                min_lr: get(a, "min_lr").unwrap_or(0.0),
                ..Default::default()
            };
            Sched::Plateau(ReduceLrOnPlateau::new(opt, opts).unwrap())
        }
        other => panic!("unknown scheduler {other}"),
    }
}

#[test]
fn schedulers_match_torch() {
    let lines: Vec<&str> = GOLDEN.lines().collect();
    let mut n = 0;
    let close = |g: f64, w: f64| (g - w).abs() <= 1e-15 + 1e-12 * w.abs();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("sched ") else { continue };
        n += 1;
        let name = rest.split(' ').next().unwrap();
        let a = attrs(line);
        let p = Tensor::from_vec(vec![0.0f32], &[1]).unwrap().requires_grad_(true);
        let mut opt = Sgd::new(vec![p], SgdOpts { lr: 0.1, momentum: 0.9, ..Default::default() }).unwrap();
        let mut s = make_scheduler(name, &a, &mut opt);
        let lr0 = nums(lines[i + 1])[0];
        assert!(close(opt.lrs()[0], lr0), "{line}: initial lr {} vs torch {lr0}", opt.lrs()[0]);
        let want = nums(lines[i + 2]);
        let want_moms = lines.get(i + 4).filter(|l| l.starts_with("moms ")).map(|l| nums(l));
        for (e, w) in want.iter().enumerate() {
            let got = match &mut s {
                Sched::Plain(s) => {
                    s.step(&mut opt).unwrap();
                    s.last_lr()[0]
                }
                Sched::Sequential(s) => {
                    s.step(&mut opt).unwrap();
                    s.last_lr()[0]
                }
                Sched::Plateau(s) => {
                    s.step(&mut opt, PLATEAU_METRICS[e]);
                    s.last_lr()[0]
                }
            };
            assert_eq!(opt.lrs()[0], got, "{line}: the optimizer has the scheduler's rate");
            assert!(close(got, *w), "{line}: epoch {}: {got} vs torch {w}", e + 1);
            if let Some(m) = &want_moms {
                let mom = opt.momentum(0).unwrap();
                assert!(close(mom, m[e]), "{line}: epoch {}: momentum {mom} vs torch {}", e + 1, m[e]);
            }
        }
    }
    assert_eq!(n, 11);
}

/// OneCycleLR stops after `total_steps`, as PyTorch does; it needs a momentum to cycle.
#[test]
fn one_cycle_checks_its_steps_and_the_optimizer() {
    let p = || Tensor::from_vec(vec![0.0f32], &[1]).unwrap().requires_grad_(true);
    let mut opt = Sgd::new(vec![p()], SgdOpts { lr: 0.1, momentum: 0.9, ..Default::default() }).unwrap();
    let mut s = OneCycleLr::new(&mut opt, 1.0, 3, OneCycleOpts::default()).unwrap();
    s.step(&mut opt).unwrap();
    s.step(&mut opt).unwrap();
    let e = s.step(&mut opt).unwrap_err().to_string();
    assert!(e.contains("Tried to step 4 times. The specified number of total steps is 3"), "{e}");
    let mut ada = Adagrad::new(vec![p()], AdagradOpts::default()).unwrap();
    let e = OneCycleLr::new(&mut ada, 1.0, 3, OneCycleOpts::default()).err().unwrap().to_string();
    assert!(e.contains("optimizer must support momentum or beta1"), "{e}");
    let plain = OneCycleOpts { cycle_momentum: false, ..Default::default() };
    assert!(OneCycleLr::new(&mut ada, 1.0, 3, plain).is_ok());
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

/// The `_foreach_*` Adam path gives the single-tensor path's parameters bit for bit over a list
/// of differently shaped parameters, one of which has no gradient on some steps.
#[test]
fn foreach_adam_matches_the_single_tensor_path() {
    for (decoupled, amsgrad, maximize, weight_decay) in
        [(false, false, false, 0.0), (false, true, true, 0.1), (true, false, false, 0.05), (true, true, false, 0.0)]
    {
        let run = |foreach: bool| -> Vec<Vec<f64>> {
            let params: Vec<Tensor> = [&[3usize, 4][..], &[5], &[2, 1, 3]]
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let n: usize = s.iter().product();
                    let v: Vec<f64> = (0..n).map(|i| ((i * 7 + k * 3) % 11) as f64 / 5.0 - 1.0).collect();
                    let dims: Vec<i64> = s.iter().map(|&d| d as i64).collect();
                    Tensor::from_vec(v, &dims).unwrap().requires_grad_(true)
                })
                .collect();
            let o = AdamOpts { lr: 0.05, weight_decay, amsgrad, maximize, foreach, ..AdamOpts::default() };
            let mut opt: Box<dyn Optimizer> = if decoupled {
                Box::new(AdamW::new(params.clone(), o).unwrap())
            } else {
                Box::new(Adam::new(params.clone(), o).unwrap())
            };
            for step in 0..4 {
                opt.zero_grad();
                let loss = params
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !(step % 2 == 1 && *k == 1))
                    .map(|(_, p)| p.try_pow_tensor_scalar(3).unwrap().sum())
                    .reduce(|a, b| a.add(&b))
                    .unwrap();
                loss.backward();
                opt.step().unwrap();
            }
            params.iter().map(|p| p.to_vec::<f64>().unwrap()).collect()
        };
        assert_eq!(run(true), run(false), "decoupled {decoupled} amsgrad {amsgrad} maximize {maximize}");
    }
}
