//! The training chart (losses on the left, accuracies on the right), drawn with plotters' bitmap
//! backend and written as a compressed PNG. Text uses a subset of DejaVu Sans shipped next to
//! this file (printable ASCII, 14 KB; `fonts/LICENSE-DejaVu.txt`), so the chart looks the same on
//! every machine and needs no system fonts.
//!
//! ```ignore
//! plot::save_training_chart("target/training.png", &train_loss, &test_loss, &train_acc, &test_acc)?;
//! ```

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;
use std::sync::Once;

const PANEL_W: u32 = 480;
const PANEL_H: u32 = 400;
pub const BLUE: RGBColor = RGBColor(31, 119, 180);
pub const ORANGE: RGBColor = RGBColor(255, 127, 14);
const FONT: &[u8] = include_bytes!("fonts/DejaVuSans-ascii.ttf");

/// One curve: its legend name and one value per epoch (non-finite values leave a gap).
pub struct Series<'a> {
    pub name: &'a str,
    pub values: &'a [f64],
    pub color: RGBColor,
}

/// One panel: a title, its curves, and a fixed y range (or `None` to fit the data).
pub struct Panel<'a> {
    pub title: &'a str,
    pub series: Vec<Series<'a>>,
    pub y_range: Option<(f64, f64)>,
}

type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

fn register_sans() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a valid TrueType file compiled into the binary; registration fails only for
        // bytes ab_glyph cannot parse.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// The y range of a panel: the given one, or the data's with 5% padding; a flat or empty series
/// still gets a non-empty range.
fn y_range(p: &Panel) -> (f64, f64) {
    let (lo, hi) = p.y_range.unwrap_or_else(|| {
        let finite = p.series.iter().flat_map(|s| s.values.iter().copied()).filter(|v| v.is_finite());
        let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    });
    if !(lo.is_finite() && hi.is_finite()) {
        (0.0, 1.0)
    } else if hi - lo < 1e-12 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
    x_label: &str,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let epochs = p.series.iter().map(|s| s.values.len()).max().unwrap_or(0).max(1);
    // x from epoch 1 to the last (half an epoch either side of a single one).
    let (x_lo, x_hi) = if epochs == 1 { (0.5, 1.5) } else { (1.0, epochs as f64) };
    let (y_lo, y_hi) = y_range(p);
    let mut chart = ChartBuilder::on(area)
        .caption(p.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .x_labels(epochs.min(10))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .label_style(("sans-serif", 14))
        .light_line_style(WHITE)
        .draw()?;
    for s in &p.series {
        let color = s.color;
        // Split at non-finite values so a NaN epoch leaves a gap instead of a wild line.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (e, &v) in s.values.iter().enumerate() {
            if v.is_finite() {
                runs.last_mut().expect("one run at least").push((e as f64 + 1.0, v.clamp(y_lo, y_hi)));
            } else if !runs.last().expect("one run at least").is_empty() {
                runs.push(Vec::new());
            }
        }
        for (i, run) in runs.into_iter().enumerate() {
            let series = chart.draw_series(LineSeries::new(run.iter().copied(), color.stroke_width(2)))?;
            if i == 0 {
                series
                    .label(s.name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            }
            chart.draw_series(run.iter().map(|&pt| Circle::new(pt, 3, color.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::MiddleRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 14))
        .draw()?;
    Ok(())
}

/// Draws `panels` side by side into a PNG at `path` (PANEL_W × PANEL_H pixels each).
pub fn save_chart(path: impl AsRef<Path>, panels: &[Panel], x_label: &str) -> DrawResult<()> {
    register_sans();
    let width = PANEL_W * panels.len().max(1) as u32;
    let root = BitMapBackend::new(path.as_ref(), (width, PANEL_H)).into_drawing_area();
    root.fill(&WHITE)?;
    for (area, p) in root.split_evenly((1, panels.len().max(1))).iter().zip(panels) {
        draw_panel(area, p, x_label)?;
    }
    root.present()?;
    Ok(())
}

/// The usual training chart: losses on the left, accuracies (0 to 1) on the right.
pub fn save_training_chart(
    path: impl AsRef<Path>,
    train_loss: &[f64],
    test_loss: &[f64],
    train_acc: &[f64],
    test_acc: &[f64],
) -> DrawResult<()> {
    let loss = Panel {
        title: "loss",
        series: vec![
            Series { name: "train loss", values: train_loss, color: BLUE },
            Series { name: "test loss", values: test_loss, color: ORANGE },
        ],
        y_range: None,
    };
    let acc = Panel {
        title: "accuracy",
        series: vec![
            Series { name: "train accuracy", values: train_acc, color: BLUE },
            Series { name: "test accuracy", values: test_acc, color: ORANGE },
        ],
        y_range: Some((0.0, 1.0)),
    };
    save_chart(path, &[loss, acc], "epoch")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("oxten-plot-{}-{name}.png", std::process::id()))
    }

    /// The PNG's size from its IHDR chunk.
    fn png_size(bytes: &[u8]) -> (u32, u32) {
        assert_eq!(bytes[..8], *b"\x89PNG\r\n\x1a\n");
        assert_eq!(&bytes[12..16], b"IHDR");
        let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
        (be(16), be(20))
    }

    #[test]
    fn training_chart_is_a_small_compressed_png() {
        let path = temp("training");
        let loss: Vec<f64> = (0..12).map(|e| 2.0 / (e as f64 + 1.0)).collect();
        let acc: Vec<f64> = (0..12).map(|e| 1.0 - 0.5 / (e as f64 + 1.0)).collect();
        save_training_chart(&path, &loss, &loss, &acc, &acc).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(png_size(&bytes), (2 * PANEL_W, PANEL_H));
        // Raw RGB would be 1.15 MB; the compressed file is a few tens of KB.
        assert!(bytes.len() < 100_000, "{} bytes", bytes.len());
    }

    #[test]
    fn charts_of_odd_data_are_drawn() {
        for (i, data) in [&[][..], &[1.0], &[f64::NAN, 2.0, f64::INFINITY], &[3.0, 3.0, 3.0]].into_iter().enumerate() {
            let path = temp(&format!("odd{i}"));
            let p = Panel { title: "x", series: vec![Series { name: "y", values: data, color: BLUE }], y_range: None };
            save_chart(&path, &[p], "epoch").unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let _ = std::fs::remove_file(&path);
            assert_eq!(png_size(&bytes), (PANEL_W, PANEL_H));
        }
    }

    #[test]
    fn y_ranges_are_never_empty() {
        let flat =
            Panel { title: "", series: vec![Series { name: "", values: &[3.0, 3.0], color: BLUE }], y_range: None };
        assert_eq!(y_range(&flat), (2.5, 3.5));
        let none = Panel { title: "", series: vec![], y_range: None };
        assert_eq!(y_range(&none), (0.0, 1.0));
        let fixed = Panel { title: "", series: vec![], y_range: Some((0.0, 1.0)) };
        assert_eq!(y_range(&fixed), (0.0, 1.0));
    }
}
