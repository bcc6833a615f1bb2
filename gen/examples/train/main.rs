//! The main job: trains a small CNN on the UCI handwritten digits (1,797 8×8 images, embedded in
//! `gen/data/`) with `oxten::nn` and `oxten::optim`, shows a progress bar, evaluates on a held-out
//! 20% after each epoch, saves the model as safetensors (PyTorch's `state_dict` names) and plots
//! loss and accuracy per epoch to a PNG. `scripts/train_digits_pytorch.py` is the same run in
//! PyTorch, for the baseline time.
//!
//! `--bf16` is mixed-precision training as PyTorch users write it: the forward pass and the loss
//! run in a CPU autocast region (convolutions and linear layers in bfloat16, the loss in f32),
//! backward runs outside it, and the parameters and their gradients stay f32 ("master weights").
//! `--f16` does the same in float16, whose narrow range needs loss scaling: the loss goes through
//! an `oxten::amp::GradScaler` (scaled before backward, gradients unscaled and checked for
//! inf/NaN before the step, which is skipped when they are not finite).
//!
//! ```sh
//! cargo run --release -p oxten --example train -- --help
//! ```

mod digits;
mod plot;
mod progress;

use clap::Parser;
use digits::{Digits, SplitMix64};
use oxten::amp::{GradScaler, GradScalerOpts};
use oxten::autocast::AutocastGuard;
use oxten::nn::{BatchNorm2d, Conv2d, Dropout, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential};
use oxten::optim::{AdamOpts, AdamW, CosineAnnealingLr, LrScheduler, Optimizer};
use oxten::options::ContiguousOpts;
use oxten::{DType, Device, MemoryFormat, Result, Tensor};
use progress::Progress;
use std::path::PathBuf;
use std::time::Instant;

const SEED: u64 = 0x5eed;

/// Trains a CNN on the UCI handwritten digits with oxten.
#[derive(Parser)]
struct Args {
    /// Epochs.
    #[arg(long, default_value_t = 15, value_parser = positive)]
    epochs: usize,
    /// Batch size.
    #[arg(long = "batch-size", default_value_t = 64, value_parser = positive)]
    batch: usize,
    /// AdamW learning rate, annealed by a cosine schedule.
    #[arg(long, default_value_t = 3e-3)]
    lr: f64,
    /// Seed of the initialisation, dropout and shuffling.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Run the convolutions on channels_last (NHWC) activations.
    #[arg(long)]
    channels_last: bool,
    /// Mixed precision: forward and loss under CPU autocast (bfloat16), f32 weights.
    #[arg(long, conflicts_with = "f16")]
    bf16: bool,
    /// Mixed precision in float16: CPU autocast to float16 and a GradScaler.
    #[arg(long)]
    f16: bool,
    /// Where the model and the plot go [default: target/train].
    #[arg(long)]
    out: Option<PathBuf>,
}

fn positive(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a positive whole number, got `{s}`")),
    }
}

/// Two 3×3 convolutions with batch norm, a 2×2 max pool, and a two-layer classifier.
fn model() -> Sequential {
    Sequential::new()
        .add(Conv2d::new(1, 32, 3).padding(1))
        .add(BatchNorm2d::new(32))
        .add(ReLU)
        .add(Conv2d::new(32, 64, 3).padding(1))
        .add(BatchNorm2d::new(64))
        .add(ReLU)
        .add(MaxPool2d::new(2))
        .add(Flatten::default())
        .add(Linear::new(64 * 4 * 4, 128))
        .add(ReLU)
        .add(Dropout::new(0.25))
        .add(Linear::new(128, 10))
}

/// A CPU autocast region computing in `dtype` when one is given (`torch.autocast("cpu",
/// dtype=…)`), else nothing.
fn amp(dtype: Option<DType>) -> Option<AutocastGuard> {
    dtype.map(|d| AutocastGuard::new(Device::Cpu, d))
}

/// Mean loss and accuracy of `net` on `indices` (evaluation mode, no graph; under autocast to
/// `low` when given).
fn evaluate(
    net: &Sequential,
    data: &Digits,
    indices: &[usize],
    prep: &dyn Fn(Tensor) -> Tensor,
    low: Option<DType>,
) -> Result<(f64, f64)> {
    oxten::autograd::no_grad(|| {
        let _amp = amp(low);
        let (x, y) = data.batch(indices);
        let logits = net.forward(&prep(x))?;
        let loss = oxten::try_cross_entropy_loss(&logits, &y)?.item::<f32>()? as f64;
        let pred = logits.try_argmax(Some(1), false)?;
        let correct = pred.try_eq(&y)?.try_sum()?.item::<i64>()?;
        Ok((loss, correct as f64 / indices.len() as f64))
    })
}

fn main() -> Result<()> {
    let args = Args::parse();
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/train"));
    oxten::manual_seed(args.seed);
    let data = Digits::load()?;
    let split = data.split(0.2, SEED);
    println!(
        "UCI digits: {} training and {} test images of 8x8; {}",
        split.train.len(),
        split.test.len(),
        if args.channels_last { "channels_last" } else { "NCHW" }
    );
    let low = if args.bf16 {
        println!("mixed precision: forward and loss under CPU autocast (bfloat16), f32 weights");
        Some(DType::BF16)
    } else if args.f16 {
        println!("mixed precision: forward and loss under CPU autocast (float16), f32 weights, GradScaler");
        Some(DType::F16)
    } else {
        None
    };
    // A no-op unless --f16 (bf16 has f32's range and needs no scaling).
    let mut scaler = GradScaler::new(GradScalerOpts { enabled: args.f16, ..Default::default() })?;
    let channels_last = args.channels_last;
    let prep = move |x: Tensor| {
        if channels_last {
            x.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast })
        } else {
            x
        }
    };
    let mut net = model();
    println!("model: {} parameters", net.num_parameters());
    let mut opt = AdamW::new(net.parameters(), AdamOpts { lr: args.lr, weight_decay: 1e-4, ..AdamOpts::adamw() })?;
    let mut sched = CosineAnnealingLr::new(&mut opt, args.epochs as u64, 0.0)?;
    let mut rng = SplitMix64::new(args.seed ^ SEED);
    let mut order = split.train.clone();
    let (mut train_loss, mut test_loss, mut train_acc, mut test_acc, mut times) =
        (vec![], vec![], vec![], vec![], vec![]);
    let start = Instant::now();
    for epoch in 1..=args.epochs {
        let t0 = Instant::now();
        net.train();
        rng.shuffle(&mut order);
        let n_batches = order.len().div_ceil(args.batch);
        let mut bar = Progress::new(format!("epoch {epoch:2}/{}", args.epochs), n_batches);
        let (mut sum_loss, mut correct) = (0.0, 0i64);
        for (i, batch) in order.chunks(args.batch).enumerate() {
            let (x, y) = data.batch(batch);
            let (logits, loss) = {
                // Forward and loss in the autocast region; backward outside it.
                let _amp = amp(low);
                let logits = net.forward(&prep(x))?;
                let loss = oxten::try_cross_entropy_loss(&logits, &y)?;
                (logits, loss)
            };
            opt.zero_grad();
            scaler.scale(&loss)?.try_backward()?;
            scaler.step(&mut opt)?;
            scaler.update()?;
            let l = loss.item::<f32>()? as f64;
            sum_loss += l * batch.len() as f64;
            let pred = logits.detach().try_argmax(Some(1), false)?;
            correct += pred.try_eq(&y)?.try_sum()?.item::<i64>()?;
            bar.update(i + 1, sum_loss / order[..(i * args.batch + batch.len())].len() as f64);
        }
        sched.step(&mut opt)?;
        net.eval();
        let (tl, ta) = evaluate(&net, &data, &split.test, &prep, low)?;
        let dt = t0.elapsed();
        times.push(dt.as_secs_f64());
        train_loss.push(sum_loss / order.len() as f64);
        train_acc.push(correct as f64 / order.len() as f64);
        test_loss.push(tl);
        test_acc.push(ta);
        bar.finish(&format!("  test loss {tl:.4}  test accuracy {:.2}%", 100.0 * ta));
    }
    let total = start.elapsed().as_secs_f64();
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "trained {} epochs in {total:.1} s (median epoch {:.0} ms); final test accuracy {:.2}%",
        args.epochs,
        1000.0 * sorted[sorted.len() / 2],
        100.0 * test_acc.last().unwrap()
    );
    std::fs::create_dir_all(&out).map_err(|e| oxten::Error::runtime(format!("{}: {e}", out.display())))?;
    let model_path = out.join("digits_cnn.safetensors");
    oxten::safetensors::save(&model_path, &net.state_dict(), None)?;
    let plot_path = out.join("training.png");
    plot::save_training_chart(&plot_path, &train_loss, &test_loss, &train_acc, &test_acc)
        .map_err(|e| oxten::Error::runtime(format!("{}: {e}", plot_path.display())))?;
    println!("saved the model to {} and the plot to {}", model_path.display(), plot_path.display());
    Ok(())
}
