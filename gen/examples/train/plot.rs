//! Line charts of training curves, written as PNG without any dependency: an RGB canvas, a 5×7
//! bitmap font, and a PNG encoder that stores the pixels uncompressed (a zlib stream of stored
//! deflate blocks; a 960×400 chart is about 1.1 MB).
//!
//! ```ignore
//! let png = plot::loss_and_accuracy(&train_loss, &test_loss, &train_acc, &test_acc);
//! plot::save_png("target/train.png", &png)?;
//! ```

use std::path::Path;

pub type Rgb = [u8; 3];
pub const WHITE: Rgb = [255, 255, 255];
pub const BLACK: Rgb = [0, 0, 0];
pub const GRID: Rgb = [225, 225, 225];
pub const BLUE: Rgb = [31, 119, 180];
pub const ORANGE: Rgb = [255, 127, 14];

/// Text is drawn at this multiple of the 5×7 font (a glyph is then 10×14 pixels, 12 apart).
const SCALE: usize = 2;
const PANEL_W: usize = 480;
const PANEL_H: usize = 400;
/// Space around a panel's plot area: left (tick labels), right, top (title), bottom (ticks, label).
const LEFT: usize = 76;
const RIGHT: usize = 20;
const TOP: usize = 44;
const BOTTOM: usize = 64;

/// An RGB image.
pub struct Canvas {
    pub width: usize,
    pub height: usize,
    pixels: Vec<Rgb>,
}

impl Canvas {
    pub fn new(width: usize, height: usize, background: Rgb) -> Canvas {
        Canvas { width, height, pixels: vec![background; width * height] }
    }

    #[cfg(test)]
    pub fn pixel(&self, x: usize, y: usize) -> Rgb {
        self.pixels[y * self.width + x]
    }

    /// Sets one pixel; points outside the canvas are ignored.
    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            self.pixels[y as usize * self.width + x as usize] = c;
        }
    }

    pub fn fill_rect(&mut self, x: i64, y: i64, w: i64, h: i64, c: Rgb) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.set(xx, yy, c);
            }
        }
    }

    /// A line `thickness` pixels wide (Bresenham, stamping a square at each step).
    pub fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), thickness: i64, c: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.fill_rect(x - thickness / 2, y - thickness / 2, thickness, thickness, c);
            if x == x1 && y == y1 {
                return;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Draws `text` with its top left corner at (x, y).
    pub fn text(&mut self, x: i64, y: i64, text: &str, c: Rgb) {
        for (i, ch) in text.chars().enumerate() {
            let rows = glyph(ch);
            let gx = x + (i * 6 * SCALE) as i64;
            let y = if DESCENDERS.contains(ch.to_ascii_lowercase()) { y + SCALE as i64 } else { y };
            for (r, row) in rows.iter().enumerate() {
                for (col, px) in row.bytes().enumerate() {
                    if px == b'#' {
                        let (px, py) = (gx + (col * SCALE) as i64, y + (r * SCALE) as i64);
                        self.fill_rect(px, py, SCALE as i64, SCALE as i64, c);
                    }
                }
            }
        }
    }
}

/// Width of `text` in pixels.
pub fn text_width(text: &str) -> usize {
    (text.chars().count() * 6).saturating_sub(1) * SCALE
}
const TEXT_H: usize = 7 * SCALE;

/// The 5×7 glyphs, `#` for ink. Upper case is drawn as lower case; anything else as a box. The
/// letters with a descender ([`DESCENDERS`]) are drawn one row lower.
#[rustfmt::skip]
const FONT: &[(char, [&str; 7])] = &[
    ('0', [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "]),
    ('1', ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "]),
    ('2', [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"]),
    ('3', ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "]),
    ('4', ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "]),
    ('5', ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "]),
    ('6', ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "]),
    ('7', ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "]),
    ('8', [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "]),
    ('9', [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "]),
    ('a', ["     ", "     ", " ### ", "    #", " ####", "#   #", " ####"]),
    ('b', ["#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#### "]),
    ('c', ["     ", "     ", " ### ", "#    ", "#    ", "#   #", " ### "]),
    ('d', ["    #", "    #", " ## #", "#  ##", "#   #", "#   #", " ####"]),
    ('e', ["     ", "     ", " ### ", "#   #", "#####", "#    ", " ### "]),
    ('f', ["  ## ", " #  #", " #   ", "###  ", " #   ", " #   ", " #   "]),
    ('g', ["     ", " ####", "#   #", "#   #", " ####", "    #", " ### "]),
    ('h', ["#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#   #"]),
    ('i', ["  #  ", "     ", " ##  ", "  #  ", "  #  ", "  #  ", " ### "]),
    ('j', ["   # ", "     ", "  ## ", "   # ", "   # ", "   # ", "###  "]),
    ('k', ["#    ", "#    ", "#  # ", "# #  ", "##   ", "# #  ", "#  # "]),
    ('l', [" ##  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "]),
    ('m', ["     ", "     ", "## # ", "# # #", "# # #", "#   #", "#   #"]),
    ('n', ["     ", "     ", "# ## ", "##  #", "#   #", "#   #", "#   #"]),
    ('o', ["     ", "     ", " ### ", "#   #", "#   #", "#   #", " ### "]),
    ('p', ["     ", "#### ", "#   #", "#   #", "#### ", "#    ", "#    "]),
    ('q', ["     ", " ####", "#   #", "#   #", " ####", "    #", "    #"]),
    ('r', ["     ", "     ", "# ## ", "##  #", "#    ", "#    ", "#    "]),
    ('s', ["     ", "     ", " ####", "#    ", " ### ", "    #", "#### "]),
    ('t', [" #   ", " #   ", "###  ", " #   ", " #   ", " #  #", "  ## "]),
    ('u', ["     ", "     ", "#   #", "#   #", "#   #", "#  ##", " ## #"]),
    ('v', ["     ", "     ", "#   #", "#   #", "#   #", " # # ", "  #  "]),
    ('w', ["     ", "     ", "#   #", "#   #", "# # #", "# # #", " # # "]),
    ('x', ["     ", "     ", "#   #", " # # ", "  #  ", " # # ", "#   #"]),
    ('y', ["     ", "#   #", "#   #", "#   #", " ####", "    #", " ### "]),
    ('z', ["     ", "     ", "#####", "   # ", "  #  ", " #   ", "#####"]),
    ('.', ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "]),
    (',', ["     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   "]),
    ('-', ["     ", "     ", "     ", "#####", "     ", "     ", "     "]),
    ('+', ["     ", "  #  ", "  #  ", "#####", "  #  ", "  #  ", "     "]),
    ('%', ["##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"]),
    (':', ["     ", " ##  ", " ##  ", "     ", " ##  ", " ##  ", "     "]),
    ('/', ["     ", "    #", "   # ", "  #  ", " #   ", "#    ", "     "]),
    ('(', ["   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "]),
    (')', [" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "]),
    (' ', ["     ", "     ", "     ", "     ", "     ", "     ", "     "]),
];

const DESCENDERS: &str = "gjpqy";

fn glyph(c: char) -> &'static [&'static str; 7] {
    const BOX: [&str; 7] = ["#####", "#   #", "#   #", "#   #", "#   #", "#   #", "#####"];
    let c = c.to_ascii_lowercase();
    FONT.iter().find(|(k, _)| *k == c).map_or(&BOX, |(_, g)| g)
}

/// One curve: a value per epoch (non-finite values leave a gap).
pub struct Series<'a> {
    pub name: &'a str,
    pub values: &'a [f64],
    pub color: Rgb,
}

/// One chart panel: curves against the epoch, with a title and a legend.
pub struct Panel<'a> {
    pub title: &'a str,
    pub series: Vec<Series<'a>>,
    /// The y-axis range; `None` fits the data.
    pub y_range: Option<(f64, f64)>,
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `n` intervals over `span`.
fn nice_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(f64::MIN_POSITIVE);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|&s| s >= raw).unwrap_or(10.0 * p)
}

/// The tick values of `[lo, hi]` for `step`, formatted with as many decimals as `step` needs.
fn ticks(lo: f64, hi: f64, step: f64) -> Vec<(f64, String)> {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).map(|v| (v, format!("{:.*}", decimals, v + 0.0))).collect()
}

/// Draws panels side by side, the epoch (1, 2, …) on every x axis.
pub fn chart(panels: &[Panel], x_label: &str) -> Canvas {
    let mut c = Canvas::new(PANEL_W * panels.len().max(1), PANEL_H, WHITE);
    for (i, p) in panels.iter().enumerate() {
        draw_panel(&mut c, (i * PANEL_W) as i64, p, x_label);
    }
    c
}

fn draw_panel(c: &mut Canvas, x0: i64, p: &Panel, x_label: &str) {
    let (left, top) = (x0 + LEFT as i64, TOP as i64);
    let (w, h) = ((PANEL_W - LEFT - RIGHT) as i64, (PANEL_H - TOP - BOTTOM) as i64);
    let (right, bottom) = (left + w, top + h);
    let epochs = p.series.iter().map(|s| s.values.len()).max().unwrap_or(0).max(1);

    // Ranges: x from epoch 1 to the last (half an epoch either side of a single one).
    let (x_lo, x_hi) = if epochs == 1 { (0.5, 1.5) } else { (1.0, epochs as f64) };
    let (mut y_lo, mut y_hi) = p.y_range.unwrap_or_else(|| {
        let finite = p.series.iter().flat_map(|s| s.values.iter().copied()).filter(|v| v.is_finite());
        let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    });
    if !(y_lo.is_finite() && y_hi.is_finite()) {
        (y_lo, y_hi) = (0.0, 1.0);
    } else if y_hi - y_lo < 1e-12 {
        (y_lo, y_hi) = (y_lo - 0.5, y_hi + 0.5);
    }
    let px = |x: f64| left + ((x - x_lo) / (x_hi - x_lo) * w as f64).round() as i64;
    let py = |y: f64| bottom - ((y - y_lo) / (y_hi - y_lo) * h as f64).round() as i64;

    // Grid, ticks and their labels.
    for (v, label) in ticks(y_lo, y_hi, nice_step(y_hi - y_lo, 5.0)) {
        let y = py(v);
        c.line((left, y), (right, y), 1, GRID);
        c.line((left - 6, y), (left - 1, y), 1, BLACK);
        c.text(left - 10 - text_width(&label) as i64, y - TEXT_H as i64 / 2, &label, BLACK);
    }
    for (v, label) in ticks(1.0, epochs as f64, nice_step(epochs as f64 - 1.0, 8.0).max(1.0)) {
        let x = px(v);
        c.line((x, top), (x, bottom), 1, GRID);
        c.line((x, bottom + 1), (x, bottom + 6), 1, BLACK);
        c.text(x - text_width(&label) as i64 / 2, bottom + 12, &label, BLACK);
    }
    // The frame, the title and the axis label.
    for (a, b) in [((left, top), (right, top)), ((right, top), (right, bottom)), ((left, bottom), (right, bottom))] {
        c.line(a, b, 1, BLACK);
    }
    c.line((left, top), (left, bottom), 1, BLACK);
    let centre = left + w / 2;
    c.text(centre - text_width(p.title) as i64 / 2, (TOP - TEXT_H) as i64 / 2, p.title, BLACK);
    c.text(centre - text_width(x_label) as i64 / 2, bottom + 12 + TEXT_H as i64 + 12, x_label, BLACK);

    // The curves, with a marker on each epoch.
    for s in &p.series {
        let mut prev = None;
        for (e, &v) in s.values.iter().enumerate() {
            if !v.is_finite() {
                prev = None;
                continue;
            }
            let pt = (px(e as f64 + 1.0), py(v.clamp(y_lo, y_hi)));
            if let Some(q) = prev {
                c.line(q, pt, 2, s.color);
            }
            c.fill_rect(pt.0 - 2, pt.1 - 2, 5, 5, s.color);
            prev = Some(pt);
        }
    }

    // The legend, in the corner of the plot area that hides the fewest points of the curves.
    let names: Vec<&str> = p.series.iter().map(|s| s.name).collect();
    let widest = names.iter().map(|n| text_width(n)).max().unwrap_or(0) as i64;
    let (lw, lh) = (widest + 44, 10 + 22 * names.len() as i64);
    let corners = [
        (right - lw - 8, top + 8),
        (right - lw - 8, bottom - lh - 8),
        (left + 8, top + 8),
        (left + 8, bottom - lh - 8),
    ];
    let hidden = |&(lx, ly): &(i64, i64)| {
        let points = p.series.iter().flat_map(|s| s.values.iter().enumerate());
        let points = points.filter(|(_, v)| v.is_finite()).map(|(e, &v)| (px(e as f64 + 1.0), py(v.clamp(y_lo, y_hi))));
        points.filter(|&(x, y)| x >= lx - 12 && x <= lx + lw + 12 && y >= ly - 12 && y <= ly + lh + 12).count()
    };
    let (lx, ly) = corners.into_iter().min_by_key(hidden).expect("four corners");
    if !names.is_empty() {
        c.fill_rect(lx, ly, lw, lh, WHITE);
        let (r, b) = (lx + lw, ly + lh);
        for (p0, p1) in [((lx, ly), (r, ly)), ((r, ly), (r, b)), ((lx, b), (r, b)), ((lx, ly), (lx, b))] {
            c.line(p0, p1, 1, GRID);
        }
        for (i, s) in p.series.iter().enumerate() {
            let y = ly + 8 + 22 * i as i64 + TEXT_H as i64 / 2;
            c.line((lx + 8, y), (lx + 28, y), 2, s.color);
            c.text(lx + 36, y - TEXT_H as i64 / 2, s.name, BLACK);
        }
    }
}

/// The usual training chart: losses on the left, accuracies (0 to 1) on the right.
pub fn loss_and_accuracy(train_loss: &[f64], test_loss: &[f64], train_acc: &[f64], test_acc: &[f64]) -> Canvas {
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
    chart(&[loss, acc], "epoch")
}

// ----------------------------------------------------------------------------------------------
// PNG

/// CRC-32 (ISO-HDLC, the one PNG and zlib use).
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (n, t) in table.iter_mut().enumerate() {
        *t = (0..8).fold(n as u32, |c, _| if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 });
    }
    !bytes.iter().fold(!0u32, |c, &b| table[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8))
}

/// Adler-32, the checksum at the end of a zlib stream.
pub fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5552) {
        // 5552 bytes is the most that cannot overflow `b` before the reduction.
        for &x in chunk {
            a += x as u32;
            b += a;
        }
        (a, b) = (a % 65521, b % 65521);
    }
    (b << 16) | a
}

/// A zlib stream holding `data` in stored (uncompressed) deflate blocks of at most 65535 bytes.
pub fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01]; // deflate, 32K window; no dictionary; (0x7801 % 31 == 0)
    let mut blocks = data.chunks(65535).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]); // one empty final block
    }
    while let Some(block) = blocks.next() {
        let len = block.len() as u16;
        out.push(blocks.peek().is_none() as u8); // BFINAL on the last block, BTYPE 00 (stored)
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// The canvas as an 8-bit RGB PNG file.
pub fn encode_png(c: &Canvas) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&(c.width as u32).to_be_bytes());
    ihdr.extend_from_slice(&(c.height as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, standard filters, no interlace
                                              // Each scanline: filter type 0 (none), then the pixels.
    let mut raw = Vec::with_capacity(c.height * (1 + 3 * c.width));
    for row in c.pixels.chunks(c.width.max(1)) {
        raw.push(0);
        raw.extend(row.iter().flatten());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

pub fn save_png(path: impl AsRef<Path>, c: &Canvas) -> std::io::Result<()> {
    std::fs::write(path, encode_png(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_known_values() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b"IEND"), 0xae42_6082); // the CRC every PNG ends with
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
        // Long enough to need the modular reductions.
        assert_eq!(adler32(&vec![0xff; 100_000]), 0x149a_302c); // Python: zlib.adler32
    }

    /// Inflates a zlib stream made only of stored blocks, checking its framing.
    fn inflate_stored(z: &[u8]) -> Vec<u8> {
        assert_eq!(((z[0] as u16) << 8 | z[1] as u16) % 31, 0, "zlib header check");
        assert_eq!(z[0] & 0x0f, 8, "deflate");
        let (mut pos, mut out) = (2, Vec::new());
        loop {
            let head = z[pos];
            assert_eq!(head & 0b110, 0, "stored block");
            let len = u16::from_le_bytes([z[pos + 1], z[pos + 2]]);
            let nlen = u16::from_le_bytes([z[pos + 3], z[pos + 4]]);
            assert_eq!(len, !nlen);
            out.extend_from_slice(&z[pos + 5..pos + 5 + len as usize]);
            pos += 5 + len as usize;
            if head & 1 == 1 {
                break;
            }
        }
        assert_eq!(z[pos..], adler32(&out).to_be_bytes());
        out
    }

    #[test]
    fn png_structure_and_pixels() {
        // Tall enough that the image data needs several stored blocks.
        let mut c = Canvas::new(130, 200, WHITE);
        c.line((0, 0), (129, 199), 3, BLUE);
        c.text(4, 150, "epoch 12", BLACK);
        let png = encode_png(&c);
        assert_eq!(png[..8], *b"\x89PNG\r\n\x1a\n");
        let (mut pos, mut chunks) = (8, Vec::new());
        while pos < png.len() {
            let len = u32::from_be_bytes(png[pos..pos + 4].try_into().unwrap()) as usize;
            let kind = &png[pos + 4..pos + 8];
            let data = &png[pos + 8..pos + 8 + len];
            let crc = u32::from_be_bytes(png[pos + 8 + len..pos + 12 + len].try_into().unwrap());
            assert_eq!(crc, crc32(&png[pos + 4..pos + 8 + len]), "CRC of {}", String::from_utf8_lossy(kind));
            chunks.push((kind.to_vec(), data.to_vec()));
            pos += 12 + len;
        }
        let kinds: Vec<&[u8]> = chunks.iter().map(|(k, _)| &k[..]).collect();
        assert_eq!(kinds, [&b"IHDR"[..], b"IDAT", b"IEND"]);
        assert_eq!(chunks[0].1, [0, 0, 0, 130, 0, 0, 0, 200, 8, 2, 0, 0, 0]);
        let raw = inflate_stored(&chunks[1].1);
        assert!(raw.len() > 65535);
        assert_eq!(raw.len(), 200 * (1 + 130 * 3));
        for (y, line) in raw.chunks(1 + 130 * 3).enumerate() {
            assert_eq!(line[0], 0, "filter type of line {y}");
            for x in 0..130 {
                assert_eq!(line[1 + 3 * x..4 + 3 * x], c.pixel(x, y), "pixel ({x}, {y})");
            }
        }
        assert_eq!(c.pixel(0, 0), BLUE);
        assert_eq!(c.pixel(129, 0), WHITE);
        assert!(inflate_stored(&zlib_stored(&[])).is_empty());
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(nice_step(1.0, 5.0), 0.2);
        assert_eq!(nice_step(2.3, 5.0), 0.5);
        assert_eq!(nice_step(37.0, 8.0), 5.0);
        let t: Vec<String> = ticks(0.05, 1.02, 0.2).into_iter().map(|t| t.1).collect();
        assert_eq!(t, ["0.2", "0.4", "0.6", "0.8", "1.0"]);
        let t: Vec<String> = ticks(-0.3, 0.3, 0.1).into_iter().map(|t| t.1).collect();
        assert_eq!(t, ["-0.3", "-0.2", "-0.1", "0.0", "0.1", "0.2", "0.3"]);
        assert_eq!(text_width("loss"), (4 * 6 - 1) * SCALE);
    }

    #[test]
    fn charts_of_odd_data_do_not_panic() {
        for data in [&[][..], &[1.0], &[f64::NAN, 2.0, f64::INFINITY], &[3.0, 3.0, 3.0]] {
            let c = chart(
                &[Panel { title: "x", series: vec![Series { name: "y", values: data, color: BLUE }], y_range: None }],
                "epoch",
            );
            assert_eq!((c.width, c.height), (PANEL_W, PANEL_H));
        }
        let c = loss_and_accuracy(&[2.0, 1.0], &[2.1, 1.2], &[0.5, 0.8], &[0.4, 0.7]);
        assert_eq!((c.width, c.height), (2 * PANEL_W, PANEL_H));
    }
}
