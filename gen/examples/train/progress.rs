//! The progress bar of one epoch, drawn by `indicatif` on a terminal:
//! `epoch  3/10 [#####...............] 12/40 batches  loss 0.3123  00:00:01`.
//! The final line of each epoch is printed in every case, so logs (CI, files) keep one line per
//! epoch.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    loss: f64,
}

impl Progress {
    /// A bar over `total` batches, labelled with `prefix` (e.g. `"epoch 3/10"`).
    pub fn new(prefix: impl Into<String>, total: usize) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stdout());
        let style = ProgressStyle::with_template("{prefix} [{bar:20}] {pos}/{len} batches  {msg}  {elapsed_precise}")
            .expect("a valid template")
            .progress_chars("#>.");
        bar.set_style(style);
        bar.set_prefix(prefix.into());
        Progress { bar, loss: f64::NAN }
    }

    /// Records that `done` batches are finished, with the running loss.
    pub fn update(&mut self, done: usize, loss: f64) {
        self.loss = loss;
        self.bar.set_message(format!("loss {loss:.4}"));
        self.bar.set_position(done as u64);
    }

    /// Ends the epoch: one line with the totals, followed by `extra` (e.g. the test accuracy).
    pub fn finish(self, extra: &str) {
        self.bar.finish_and_clear();
        println!(
            "{} {}/{} batches  loss {:.4}  {:.1}s{extra}",
            self.bar.prefix(),
            self.bar.position(),
            self.bar.length().unwrap_or(0),
            self.loss,
            self.bar.elapsed().as_secs_f64()
        );
    }
}
