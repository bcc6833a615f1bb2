//! The corpus: oxten's own source files and docs, read from the repository at run time (so it
//! grows with the project), as bytes of printable ASCII plus tab and newline.
//!
//! Files are taken in sorted path order; every tenth file (by position) is validation text and
//! the rest training text, so the split is fixed for a checkout and both halves see every kind of
//! file. Other bytes (UTF-8 beyond ASCII) are dropped.

use std::path::{Path, PathBuf};

/// The file kinds read.
const EXTENSIONS: [&str; 6] = ["rs", "md", "yaml", "py", "toml", "sh"];

/// The characters of the vocabulary: tab, newline, then space to `~`.
pub fn vocab() -> Vec<u8> {
    let mut v = vec![b'\t', b'\n'];
    v.extend(b' '..=b'~');
    v
}

/// The token of a byte (bytes outside the vocabulary have none).
pub fn token(b: u8) -> Option<i64> {
    match b {
        b'\t' => Some(0),
        b'\n' => Some(1),
        b' '..=b'~' => Some(2 + (b - b' ') as i64),
        _ => None,
    }
}

/// The byte of a token.
pub fn byte(t: i64) -> u8 {
    vocab()[t as usize]
}

/// Training and validation tokens.
pub struct Corpus {
    pub train: Vec<i64>,
    pub val: Vec<i64>,
    pub files: usize,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "golden" {
            continue;
        }
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().and_then(|x| x.to_str()).is_some_and(|x| EXTENSIONS.contains(&x)) {
            out.push(p);
        }
    }
}

impl Corpus {
    /// Reads the repository at `root`.
    pub fn load(root: &Path) -> std::io::Result<Corpus> {
        let mut paths = Vec::new();
        collect(root, &mut paths);
        paths.sort();
        if paths.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no source files under {}", root.display()),
            ));
        }
        let (mut train, mut val) = (Vec::new(), Vec::new());
        for (i, p) in paths.iter().enumerate() {
            let bytes = std::fs::read(p)?;
            let dst = if i % 10 == 9 { &mut val } else { &mut train };
            dst.extend(bytes.iter().filter_map(|&b| token(b)));
        }
        Ok(Corpus { train, val, files: paths.len() })
    }
}

/// SplitMix64: the batch offsets and the sampling, reproducible from a seed.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.uniform() * n as f64) as usize % n.max(1)
    }
}

/// A batch of `batch` windows of `context + 1` tokens at random offsets: inputs and targets
/// (shifted by one), each `batch × context`.
pub fn batch(tokens: &[i64], batch: usize, context: usize, rng: &mut SplitMix64) -> (Vec<i64>, Vec<i64>) {
    let (mut x, mut y) = (Vec::with_capacity(batch * context), Vec::with_capacity(batch * context));
    for _ in 0..batch {
        let start = rng.below(tokens.len() - context - 1);
        x.extend_from_slice(&tokens[start..start + context]);
        y.extend_from_slice(&tokens[start + 1..start + context + 1]);
    }
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_the_split_is_fixed() {
        for b in vocab() {
            assert_eq!(byte(token(b).unwrap()), b);
        }
        assert_eq!(token(0xc3), None);
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let (a, b) = (Corpus::load(&root).unwrap(), Corpus::load(&root).unwrap());
        assert!(a.files > 50 && a.train.len() > 500_000 && a.val.len() > 50_000);
        assert_eq!((a.train.len(), a.val.len()), (b.train.len(), b.val.len()));
        let mut rng = SplitMix64(1);
        let (x, y) = batch(&a.train, 3, 16, &mut rng);
        assert_eq!((x.len(), y.len()), (48, 48));
        assert_eq!(x[1..16], y[..15]);
    }
}
