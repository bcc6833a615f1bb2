//! A progress bar for one epoch: `epoch 3/10 [#####.....] 12/40 batches  loss 0.3123  1.2s`.
//!
//! On a terminal the line is redrawn in place (`\r`) as batches finish; when stdout is not a
//! terminal (a log file, CI), only the final line of each epoch is printed.
//!
//! ```ignore
//! let mut bar = Progress::new(format!("epoch {e}/{epochs}"), n_batches);
//! for (i, batch) in batches.enumerate() {
//!     bar.update(i + 1, running_loss);
//! }
//! bar.finish(&format!("  test accuracy {acc:.4}"));
//! ```

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Characters of the bar itself.
const WIDTH: usize = 20;
/// Redraws on a terminal at most this often (except for the last batch).
const REDRAW: Duration = Duration::from_millis(50);

pub struct Progress {
    prefix: String,
    total: usize,
    done: usize,
    loss: f64,
    start: Instant,
    tty: bool,
    last_draw: Option<Instant>,
}

impl Progress {
    /// A bar over `total` batches, labelled with `prefix` (e.g. `"epoch 3/10"`).
    pub fn new(prefix: impl Into<String>, total: usize) -> Progress {
        Progress {
            prefix: prefix.into(),
            total,
            done: 0,
            loss: f64::NAN,
            start: Instant::now(),
            tty: std::io::stdout().is_terminal(),
            last_draw: None,
        }
    }

    /// Records that `done` batches are finished, with the running loss.
    pub fn update(&mut self, done: usize, loss: f64) {
        self.done = done;
        self.loss = loss;
        let due =
            done >= self.total || self.last_draw.is_none() || self.last_draw.is_some_and(|t| t.elapsed() >= REDRAW);
        if self.tty && due {
            self.last_draw = Some(Instant::now());
            // Clear to the end of the line in case the previous line was longer.
            print!("\r{}\x1b[K", self.line());
            let _ = std::io::stdout().flush();
        }
    }

    /// Ends the epoch: the final line, followed by `extra` (e.g. the test accuracy).
    pub fn finish(self, extra: &str) {
        if self.tty {
            println!("\r{}{extra}\x1b[K", self.line());
        } else {
            println!("{}{extra}", self.line());
        }
    }

    fn line(&self) -> String {
        bar_line(&self.prefix, self.done, self.total, self.loss, self.start.elapsed())
    }
}

/// `prefix [#####.....] done/total batches  loss 0.3123  1.2s`.
pub fn bar_line(prefix: &str, done: usize, total: usize, loss: f64, elapsed: Duration) -> String {
    let filled = (done.min(total) * WIDTH).checked_div(total).unwrap_or(WIDTH);
    let bar = format!("{}{}", "#".repeat(filled), ".".repeat(WIDTH - filled));
    let sep = if prefix.is_empty() { "" } else { " " };
    format!("{prefix}{sep}[{bar}] {done}/{total} batches  loss {loss:.4}  {}", format_duration(elapsed))
}

/// `0.4s`, `12.0s`, `3m05s`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1}s")
    } else {
        let whole = s as u64;
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let d = Duration::from_millis(1234);
        assert_eq!(bar_line("", 12, 40, 0.31234, d), "[######..............] 12/40 batches  loss 0.3123  1.2s");
        assert_eq!(
            bar_line("epoch 3/10", 40, 40, 0.5, d),
            "epoch 3/10 [####################] 40/40 batches  loss 0.5000  1.2s"
        );
        assert_eq!(bar_line("", 0, 40, f64::NAN, d), "[....................] 0/40 batches  loss NaN  1.2s");
        assert_eq!(bar_line("", 0, 0, 1.0, d), "[####################] 0/0 batches  loss 1.0000  1.2s");
        assert_eq!(format_duration(Duration::from_secs(185)), "3m05s");
        assert_eq!(format_duration(Duration::from_millis(60)), "0.1s");
    }
}
