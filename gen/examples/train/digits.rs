//! The handwritten digits data set: 1797 images of 8×8 pixels (values 0..=16) with their digit,
//! compiled into the example from `gen/data/digits.csv` (provenance and licence in
//! `gen/data/README.md`).
//!
//! ```ignore
//! let data = Digits::load()?;
//! let split = data.split(0.2, SEED);                 // 1438 train, 359 test, shuffled
//! let (images, labels) = data.batch(&split.train[..32]); // [32, 1, 8, 8] f32, [32] i64
//! ```

use oxten::{Error, Result, Tensor};

/// Pixels per image (8 × 8).
pub const PIXELS: usize = 64;
/// Number of classes (the digits 0 to 9).
pub const CLASSES: usize = 10;
/// The largest pixel value: each pixel counts the black pixels of a 4×4 block of the scan.
pub const MAX_PIXEL: u8 = 16;

/// The data set, in file order.
pub struct Digits {
    /// The images, pixels row by row from the top left, each in `0..=MAX_PIXEL`.
    pub images: Vec<[u8; PIXELS]>,
    /// The digit each image shows, `0..CLASSES`.
    pub labels: Vec<u8>,
}

/// Indices of the training and the test images.
pub struct Split {
    pub train: Vec<usize>,
    pub test: Vec<usize>,
}

impl Digits {
    /// The data set compiled into the example.
    pub fn load() -> Result<Digits> {
        Digits::parse(include_str!("../../data/digits.csv"))
    }

    /// Parses the CSV format of `digits.csv`: per line, 64 pixels then the label. Errors name
    /// the line and the field.
    pub fn parse(text: &str) -> Result<Digits> {
        let mut images = Vec::new();
        let mut labels = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.len() != PIXELS + 1 {
                return Err(Error::value(format!(
                    "digits.csv line {line_no}: expected {} comma-separated values (64 pixels and the label), found {}",
                    PIXELS + 1,
                    fields.len()
                )));
            }
            let value = |f: usize, max: u8| -> Result<u8> {
                match fields[f].parse::<u8>() {
                    Ok(v) if v <= max => Ok(v),
                    _ => Err(Error::value(format!(
                        "digits.csv line {line_no}, field {}: {:?} is not an integer in 0..={max}",
                        f + 1,
                        fields[f]
                    ))),
                }
            };
            let mut image = [0u8; PIXELS];
            for (p, px) in image.iter_mut().enumerate() {
                *px = value(p, MAX_PIXEL)?;
            }
            images.push(image);
            labels.push(value(PIXELS, CLASSES as u8 - 1)?);
        }
        Ok(Digits { images, labels })
    }

    /// The number of images.
    pub fn len(&self) -> usize {
        self.images.len()
    }

    /// A shuffled split: `test_fraction` of the images (rounded) for testing, the rest for
    /// training. The same seed always gives the same split.
    pub fn split(&self, test_fraction: f64, seed: u64) -> Split {
        let mut idx: Vec<usize> = (0..self.len()).collect();
        SplitMix64::new(seed).shuffle(&mut idx);
        let n_test = ((self.len() as f64 * test_fraction.clamp(0.0, 1.0)).round() as usize).min(self.len());
        let train = idx.split_off(n_test);
        Split { train, test: idx }
    }

    /// The images at `indices` as a `[B, 1, 8, 8]` f32 tensor scaled to `[0, 1]`, and their
    /// labels as a `[B]` int64 tensor. Panics if an index is out of range.
    pub fn batch(&self, indices: &[usize]) -> (Tensor, Tensor) {
        let scale = 1.0 / MAX_PIXEL as f32;
        let pixels: Vec<f32> =
            indices.iter().flat_map(|&i| self.images[i].iter().map(move |&p| p as f32 * scale)).collect();
        let labels: Vec<i64> = indices.iter().map(|&i| self.labels[i] as i64).collect();
        let b = indices.len() as i64;
        let images = Tensor::from_vec(pixels, &[b, 1, 8, 8]).expect("B * 64 pixels fill [B, 1, 8, 8]");
        let labels = Tensor::from_vec(labels, &[b]).expect("B labels fill [B]");
        (images, labels)
    }
}

/// The splitmix64 generator (Steele, Lea and Flood, 2014): tiny, fast and good enough to shuffle.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift (bias below 2^-32 for the sizes used here).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Shuffles `v` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_the_whole_set() {
        let d = Digits::load().unwrap();
        assert_eq!((d.len(), d.labels.len()), (1797, 1797));
        let mut counts = [0; CLASSES];
        d.labels.iter().for_each(|&l| counts[l as usize] += 1);
        assert_eq!(counts, [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]);
        // The first image of the file is a 0.
        assert_eq!(d.labels[0], 0);
        assert_eq!(d.images[0][..8], [0, 0, 5, 13, 9, 1, 0, 0]);
        assert!(d.images.iter().flatten().all(|&p| p <= MAX_PIXEL));
    }

    #[test]
    fn parse_errors_name_the_line() {
        let good = format!("{}1\n", "0,".repeat(64));
        let d = Digits::parse(&format!("{good}\n{good}")).unwrap();
        assert_eq!(d.len(), 2);
        let e = Digits::parse(&format!("{good}{good}1,2,3\n")).err().unwrap().to_string();
        assert_eq!(e, "digits.csv line 3: expected 65 comma-separated values (64 pixels and the label), found 3");
        let e = Digits::parse(&format!("{good}{}x,1\n", "0,".repeat(63))).err().unwrap().to_string();
        assert_eq!(e, "digits.csv line 2, field 64: \"x\" is not an integer in 0..=16");
        let e = Digits::parse(&format!("{}17,1\n", "0,".repeat(63))).err().unwrap().to_string();
        assert!(e.contains("line 1, field 64: \"17\""), "{e}");
        let e = Digits::parse(&format!("{}10\n", "0,".repeat(64))).err().unwrap().to_string();
        assert_eq!(e, "digits.csv line 1, field 65: \"10\" is not an integer in 0..=9");
    }

    #[test]
    fn split_is_a_deterministic_partition() {
        let d = Digits::load().unwrap();
        let s = d.split(0.2, 7);
        assert_eq!((s.train.len(), s.test.len()), (1438, 359));
        let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..1797).collect::<Vec<_>>());
        let again = d.split(0.2, 7);
        assert_eq!((&s.train, &s.test), (&again.train, &again.test));
        assert_ne!(d.split(0.2, 8).test, again.test);
        assert_eq!(d.split(0.0, 1).test.len(), 0);
        assert_eq!(d.split(1.0, 1).train.len(), 0);
    }

    #[test]
    fn batches_are_scaled_images_and_int64_labels() {
        let d = Digits::load().unwrap();
        let (x, y) = d.batch(&[0, 5, 1796]);
        assert_eq!((&x.sizes()[..], x.dtype()), (&[3, 1, 8, 8][..], oxten::DType::F32));
        assert_eq!((&y.sizes()[..], y.dtype()), (&[3][..], oxten::DType::I64));
        let v = x.to_vec::<f32>().unwrap();
        assert_eq!(v[2], 5.0 / 16.0);
        assert_eq!(v[64..128], d.images[5].map(|p| p as f32 / 16.0));
        assert!(v.iter().all(|&p| (0.0..=1.0).contains(&p)));
        assert_eq!(y.to_vec::<i64>().unwrap(), [0, d.labels[5] as i64, d.labels[1796] as i64]);
        let (x, y) = d.batch(&[]);
        assert_eq!((&x.sizes()[..], &y.sizes()[..]), (&[0, 1, 8, 8][..], &[0][..]));
    }

    #[test]
    fn splitmix64_reference_values() {
        // The first outputs for seed 0 of the reference implementation.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let mut v: Vec<u32> = (0..50).collect();
        SplitMix64::new(3).shuffle(&mut v);
        assert_ne!(v, (0..50).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..50).collect::<Vec<_>>());
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
