//! Trains a small character-level GPT on oxten's own source files and docs (read from the
//! repository at run time), on the CPU:
//!
//! ```text
//! cargo run --release -p oxten --example gpt -- --help
//! ```
//!
//! Every `--eval-every` steps it prints the validation loss and a sample (temperature and top-k
//! sampling); at the end it saves the model as safetensors (PyTorch `state_dict` names) and plots
//! the loss curves. `scripts/gpt_pytorch.py` trains the same model on the same batches in
//! PyTorch: `--save-init` writes the initial weights and `--losses` the per-step losses that
//! script compares with.

mod data;
mod model;
// The training example's chart module (this example draws one panel, not its two-panel chart).
#[allow(dead_code)]
#[path = "../train/plot.rs"]
mod plot;

use clap::Parser;
use data::{Corpus, SplitMix64};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use model::{Config, Gpt};
use oxten::autocast::AutocastGuard;
use oxten::nn::Module;
use oxten::optim::{AdamOpts, AdamW, Optimizer};
use oxten::{DType, Device, Error, Result, Tensor};
use std::path::PathBuf;
use std::time::Instant;

/// A character-level GPT trained on oxten's repository.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Optimizer steps.
    #[arg(long, default_value_t = 1500)]
    steps: usize,
    /// Sequences per step.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// Context length (characters).
    #[arg(long, default_value_t = 128)]
    context: i64,
    /// Transformer blocks.
    #[arg(long, default_value_t = 4)]
    layers: i64,
    /// Attention heads.
    #[arg(long, default_value_t = 4)]
    heads: i64,
    /// Model width.
    #[arg(long, default_value_t = 128)]
    width: i64,
    /// Peak learning rate (linear warm-up, then cosine decay to a tenth of it).
    #[arg(long, default_value_t = 4e-3)]
    lr: f64,
    /// Validation loss and a sample every this many steps.
    #[arg(long, default_value_t = 300)]
    eval_every: usize,
    /// Seed of the initialisation, the batches and the sampling.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where the model runs: `cpu` (the only device this example supports so far).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Mixed precision: forward and loss under CPU autocast (bfloat16), f32 weights.
    #[arg(long)]
    bf16: bool,
    /// Writes the initial weights here (safetensors) before training.
    #[arg(long)]
    save_init: Option<PathBuf>,
    /// Starts from these weights (safetensors, PyTorch's names) instead of a fresh initialisation.
    #[arg(long)]
    init: Option<PathBuf>,
    /// Writes each step's training loss here, one per line.
    #[arg(long)]
    losses: Option<PathBuf>,
    /// Where the model and the plot go [default: target/gpt].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The learning rate at `step`: linear warm-up over the first 5% of the steps, then cosine decay
/// to a tenth of the peak.
fn lr_at(step: usize, steps: usize, peak: f64) -> f64 {
    let warm = (steps / 20).max(1);
    if step < warm {
        return peak * (step + 1) as f64 / warm as f64;
    }
    let t = (step - warm) as f64 / (steps - warm).max(1) as f64;
    peak * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * t).cos()))
}

fn tensor(v: Vec<i64>, b: usize, t: i64) -> Result<Tensor> {
    Tensor::from_vec(v, &[b as i64, t])
}

/// The mean loss over `batches` fixed batches of validation text.
fn val_loss(model: &Gpt, corpus: &Corpus, args: &Args, batches: usize) -> Result<f64> {
    oxten::autograd::no_grad(|| {
        let _amp = args.bf16.then(|| AutocastGuard::new(Device::Cpu, DType::BF16));
        let mut rng = SplitMix64(0xe7a1);
        let mut total = 0.0;
        for _ in 0..batches {
            let (x, y) = data::batch(&corpus.val, args.batch, args.context as usize, &mut rng);
            let (x, y) = (tensor(x, args.batch, args.context)?, tensor(y, args.batch, args.context)?);
            total += model.loss(&x, &y)?.item::<f32>()? as f64;
        }
        Ok(total / batches as f64)
    })
}

/// `n` characters continuing `prompt`, sampled at `temperature` from the `top_k` likeliest.
fn sample(model: &Gpt, prompt: &str, n: usize, temperature: f64, top_k: usize, rng: &mut SplitMix64) -> Result<String> {
    oxten::autograd::no_grad(|| {
        let mut tokens: Vec<i64> = prompt.bytes().filter_map(data::token).collect();
        for _ in 0..n {
            let start = tokens.len().saturating_sub(model.config.context as usize);
            let window = &tokens[start..];
            let idx = tensor(window.to_vec(), 1, window.len() as i64)?;
            let logits = model.logits(&idx)?.try_select(1, window.len() as i64 - 1)?.try_select(0, 0)?;
            let logits = logits.try_to_dtype(DType::F64)?.to_vec::<f64>()?;
            // Top-k, then softmax at the temperature, then one draw.
            let mut order: Vec<usize> = (0..logits.len()).collect();
            order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
            order.truncate(top_k.max(1));
            let top = logits[order[0]];
            let weights: Vec<f64> = order.iter().map(|&i| ((logits[i] - top) / temperature).exp()).collect();
            let mut u = rng.uniform() * weights.iter().sum::<f64>();
            let mut pick = order[order.len() - 1];
            for (&i, w) in order.iter().zip(&weights) {
                if u < *w {
                    pick = i;
                    break;
                }
                u -= w;
            }
            tokens.push(pick as i64);
        }
        Ok(tokens.iter().map(|&t| data::byte(t) as char).collect())
    })
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.device != "cpu" {
        return Err(Error::value(format!(
            "--device {}: this example runs on the cpu only so far (the CUDA backend lacks the fused attention kernel)",
            args.device
        )));
    }
    if args.width % args.heads != 0 {
        return Err(Error::value(format!("--width {} is not a multiple of --heads {}", args.width, args.heads)));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = args.out.clone().unwrap_or_else(|| root.join("target/gpt"));
    let corpus = Corpus::load(&root).map_err(|e| Error::runtime(format!("reading the corpus: {e}")))?;
    println!(
        "corpus: {} files of oxten's repository, {} training and {} validation characters",
        corpus.files,
        corpus.train.len(),
        corpus.val.len()
    );
    oxten::manual_seed(args.seed);
    let config = Config {
        vocab: data::vocab().len() as i64,
        context: args.context,
        width: args.width,
        heads: args.heads,
        layers: args.layers,
    };
    let model = Gpt::new(config);
    if let Some(p) = &args.init {
        oxten::safetensors::load_into(p, &model.state_dict())?;
    }
    if let Some(p) = &args.save_init {
        oxten::safetensors::save(p, &model.state_dict(), None)?;
    }
    println!(
        "model: {} layers, {} heads, width {}, context {}: {} parameters{}",
        config.layers,
        config.heads,
        config.width,
        config.context,
        model.num_parameters(),
        if args.bf16 { "; forward under CPU autocast (bfloat16)" } else { "" }
    );
    let mut opt =
        AdamW::new(model.parameters(), AdamOpts { lr: args.lr, weight_decay: 0.1, fused: true, ..AdamOpts::adamw() })?;
    let mut rng = SplitMix64(args.seed ^ 0x5eed);
    let mut sample_rng = SplitMix64(args.seed ^ 0x5a3b1e);
    let bar = ProgressBar::with_draw_target(Some(args.steps as u64), ProgressDrawTarget::stdout());
    bar.set_style(
        ProgressStyle::with_template("step {pos}/{len} [{bar:20}] {msg} {elapsed_precise}")
            .expect("a valid template")
            .progress_chars("#>."),
    );
    let (mut train_curve, mut val_curve) = (Vec::new(), Vec::new());
    let mut losses = Vec::with_capacity(args.steps);
    let tokens_per_step = args.batch as f64 * args.context as f64;
    let start = Instant::now();
    let mut timed = (0.0f64, 0usize);
    for step in 0..args.steps {
        let t0 = Instant::now();
        let (x, y) = data::batch(&corpus.train, args.batch, args.context as usize, &mut rng);
        let (x, y) = (tensor(x, args.batch, args.context)?, tensor(y, args.batch, args.context)?);
        opt.set_lr(0, lr_at(step, args.steps, args.lr));
        let loss = {
            let _amp = args.bf16.then(|| AutocastGuard::new(Device::Cpu, DType::BF16));
            model.loss(&x, &y)?
        };
        opt.zero_grad();
        loss.try_backward()?;
        oxten::nn::clip_grad_norm_(&model.parameters(), 1.0)?;
        opt.step()?;
        let l = loss.item::<f32>()? as f64;
        losses.push(l);
        let dt = t0.elapsed().as_secs_f64();
        if step > 0 {
            timed = (timed.0 + dt, timed.1 + 1);
        }
        let rate = if timed.1 > 0 { tokens_per_step * timed.1 as f64 / timed.0 } else { tokens_per_step / dt };
        bar.set_message(format!("loss {l:.3}  {rate:.0} tok/s"));
        bar.set_position(step as u64 + 1);
        if (step + 1) % args.eval_every == 0 || step + 1 == args.steps {
            let recent = &losses[losses.len().saturating_sub(args.eval_every)..];
            let train = recent.iter().sum::<f64>() / recent.len() as f64;
            let val = val_loss(&model, &corpus, &args, 8)?;
            train_curve.push(train);
            val_curve.push(val);
            let text = sample(&model, "fn ", 160, 0.8, 20, &mut sample_rng)?;
            bar.suspend(|| {
                println!(
                    "step {:>5}  train loss {train:.3}  val loss {val:.3}  {rate:.0} tok/s  {:.0} s",
                    step + 1,
                    start.elapsed().as_secs_f64()
                );
                println!("---\n{text}\n---");
            });
        }
    }
    bar.finish_and_clear();
    let total = start.elapsed().as_secs_f64();
    println!(
        "trained {} steps in {total:.1} s ({:.0} tokens/s); final validation loss {:.3} nats/char",
        args.steps,
        tokens_per_step * timed.1 as f64 / timed.0.max(1e-9),
        val_curve.last().copied().unwrap_or(f64::NAN)
    );
    std::fs::create_dir_all(&out).map_err(|e| Error::runtime(format!("{}: {e}", out.display())))?;
    let model_path = out.join("gpt.safetensors");
    oxten::safetensors::save(&model_path, &model.state_dict(), None)?;
    let plot_path = out.join("gpt_loss.png");
    let panel = plot::Panel {
        title: "loss (nats/char)",
        series: vec![
            plot::Series { name: "train", values: &train_curve, color: plot::BLUE },
            plot::Series { name: "validation", values: &val_curve, color: plot::ORANGE },
        ],
        y_range: None,
    };
    plot::save_chart(&plot_path, &[panel], &format!("x{} steps", args.eval_every))
        .map_err(|e| Error::runtime(format!("{}: {e}", plot_path.display())))?;
    if let Some(p) = &args.losses {
        let text: String = losses.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(p, text).map_err(|e| Error::runtime(format!("{}: {e}", p.display())))?;
    }
    println!("saved the model to {} and the loss curves to {}", model_path.display(), plot_path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_then_cosine() {
        assert!((lr_at(0, 100, 1.0) - 0.2).abs() < 1e-12);
        assert!((lr_at(4, 100, 1.0) - 1.0).abs() < 1e-12);
        assert!((lr_at(99, 100, 1.0) - 0.1).abs() < 1e-3);
    }

    #[test]
    fn a_tiny_model_learns_and_samples() {
        oxten::manual_seed(3);
        let config = Config { vocab: data::vocab().len() as i64, context: 16, width: 32, heads: 2, layers: 1 };
        let model = Gpt::new(config);
        let text: Vec<i64> = "fn main() { }\n".repeat(40).bytes().filter_map(data::token).collect();
        let mut rng = SplitMix64(1);
        let mut opt = AdamW::new(model.parameters(), AdamOpts { lr: 1e-2, ..AdamOpts::adamw() }).unwrap();
        let mut first = None;
        let mut last = 0.0;
        for _ in 0..60 {
            let (x, y) = data::batch(&text, 8, 16, &mut rng);
            let loss = model.loss(&tensor(x, 8, 16).unwrap(), &tensor(y, 8, 16).unwrap()).unwrap();
            opt.zero_grad();
            loss.backward();
            opt.step().unwrap();
            last = loss.item::<f32>().unwrap() as f64;
            first.get_or_insert(last);
        }
        assert!(last < 0.3 * first.unwrap(), "loss {} -> {last}", first.unwrap());
        let s = sample(&model, "fn ", 20, 0.5, 5, &mut SplitMix64(2)).unwrap();
        assert_eq!(s.len(), 23);
        assert_eq!(model.state_dict().len(), 2 + 12 + 2);
    }
}
