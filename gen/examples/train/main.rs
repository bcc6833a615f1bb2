//! The digits training example (issue 5). For now a demo of its pieces: it loads the data set and
//! splits it, draws a chart of made-up training curves to `target/train_plot_demo.png`, and runs
//! the progress bar over a dummy loop.
//!
//! ```sh
//! cargo run --release -p oxten --example train
//! ```

mod digits;
mod plot;
mod progress;

use digits::{Digits, SplitMix64};
use progress::Progress;
use std::path::PathBuf;
use std::time::Duration;

const SEED: u64 = 0x5eed;
const BATCH: usize = 32;

fn main() -> oxten::Result<()> {
    let data = Digits::load()?;
    let split = data.split(0.2, SEED);
    println!(
        "digits: {} images of 8x8 pixels, {} classes: {} for training, {} for testing",
        data.len(),
        digits::CLASSES,
        split.train.len(),
        split.test.len()
    );
    let (images, labels) = data.batch(&split.train[..BATCH]);
    println!(
        "one batch: images {:?} {}, labels {:?} {}",
        &images.sizes()[..],
        images.dtype(),
        &labels.sizes()[..],
        labels.dtype()
    );

    // Made-up curves, to look at the chart.
    let epochs = 15;
    let curve = |e: usize, start: f64, end: f64, rate: f64| end + (start - end) * (-rate * e as f64).exp();
    let train_loss: Vec<f64> = (0..epochs).map(|e| curve(e, 2.3, 0.05, 0.35)).collect();
    let test_loss: Vec<f64> = (0..epochs).map(|e| curve(e, 2.25, 0.12, 0.3)).collect();
    let train_acc: Vec<f64> = (0..epochs).map(|e| curve(e, 0.15, 0.995, 0.4)).collect();
    let test_acc: Vec<f64> = (0..epochs).map(|e| curve(e, 0.17, 0.975, 0.35)).collect();
    let chart = plot::loss_and_accuracy(&train_loss, &test_loss, &train_acc, &test_acc);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/train_plot_demo.png");
    plot::save_png(&path, &chart)
        .map_err(|e| oxten::Error::runtime(format!("cannot write {}: {e}", path.display())))?;
    println!("wrote {} ({}x{})", path.display(), chart.width, chart.height);

    // The progress bar over a dummy loop: shuffled batches, a fake running loss.
    let mut rng = SplitMix64::new(SEED);
    let mut order = split.train.clone();
    let n_batches = order.len().div_ceil(BATCH);
    for epoch in 1..=3 {
        rng.shuffle(&mut order);
        let mut bar = Progress::new(format!("epoch {epoch}/3"), n_batches);
        for (i, batch) in order.chunks(BATCH).enumerate() {
            let (_images, _labels) = data.batch(batch);
            let loss = train_loss[epoch - 1] * (1.0 + (n_batches - i) as f64 / n_batches as f64);
            std::thread::sleep(Duration::from_millis(15));
            bar.update(i + 1, loss);
        }
        bar.finish(&format!("  test accuracy {:.4}", test_acc[epoch - 1]));
    }
    Ok(())
}
