//! `DimVec`: sizes and strides stored inline for up to five dims, so creating a tensor of
//! ordinary rank allocates nothing for its metadata.

use std::fmt;
use std::ops::{Deref, DerefMut};

const INLINE: usize = 5;

/// A small vector of `i64` with inline storage for five elements.
#[derive(Clone)]
pub enum DimVec {
    Inline { len: u8, buf: [i64; INLINE] },
    Heap(Vec<i64>),
}

impl DimVec {
    pub const fn new() -> Self {
        DimVec::Inline { len: 0, buf: [0; INLINE] }
    }
    #[inline]
    pub fn from_slice(s: &[i64]) -> Self {
        if s.len() <= INLINE {
            // A fixed-length loop, not `copy_from_slice`: a variable-length copy becomes a call
            // to `memcpy`, a large share of the cost of creating a small tensor.
            let mut buf = [0; INLINE];
            for (i, b) in buf.iter_mut().enumerate() {
                if i < s.len() {
                    *b = s[i];
                }
            }
            DimVec::Inline { len: s.len() as u8, buf }
        } else {
            DimVec::Heap(s.to_vec())
        }
    }
    pub fn filled(n: usize, v: i64) -> Self {
        let mut d = DimVec::new();
        for _ in 0..n {
            d.push(v);
        }
        d
    }
    pub fn push(&mut self, v: i64) {
        match self {
            DimVec::Inline { len, buf } if (*len as usize) < INLINE => {
                buf[*len as usize] = v;
                *len += 1;
            }
            DimVec::Inline { len, buf } => {
                let mut h = buf[..*len as usize].to_vec();
                h.push(v);
                *self = DimVec::Heap(h);
            }
            DimVec::Heap(h) => h.push(v),
        }
    }
    pub fn insert(&mut self, at: usize, v: i64) {
        let mut tmp: Vec<i64> = self.to_vec();
        tmp.insert(at, v);
        *self = DimVec::from_slice(&tmp);
    }
    pub fn remove(&mut self, at: usize) -> i64 {
        let mut tmp: Vec<i64> = self.to_vec();
        let v = tmp.remove(at);
        *self = DimVec::from_slice(&tmp);
        v
    }
}

impl Default for DimVec {
    fn default() -> Self {
        DimVec::new()
    }
}

impl Deref for DimVec {
    type Target = [i64];
    #[inline]
    fn deref(&self) -> &[i64] {
        match self {
            DimVec::Inline { len, buf } => &buf[..*len as usize],
            DimVec::Heap(h) => h,
        }
    }
}
impl DerefMut for DimVec {
    #[inline]
    fn deref_mut(&mut self) -> &mut [i64] {
        match self {
            DimVec::Inline { len, buf } => &mut buf[..*len as usize],
            DimVec::Heap(h) => h,
        }
    }
}
/// Element by element: shapes are short, and slice equality on `i64` calls `memcmp`.
#[inline]
fn dims_eq(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}
impl PartialEq for DimVec {
    #[inline]
    fn eq(&self, o: &Self) -> bool {
        dims_eq(self, o)
    }
}
impl Eq for DimVec {}
impl PartialEq<[i64]> for DimVec {
    #[inline]
    fn eq(&self, o: &[i64]) -> bool {
        dims_eq(self, o)
    }
}
impl PartialEq<&[i64]> for DimVec {
    #[inline]
    fn eq(&self, o: &&[i64]) -> bool {
        dims_eq(self, o)
    }
}
impl<const N: usize> PartialEq<[i64; N]> for DimVec {
    #[inline]
    fn eq(&self, o: &[i64; N]) -> bool {
        dims_eq(self, o)
    }
}
impl fmt::Debug for DimVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
impl From<&[i64]> for DimVec {
    #[inline]
    fn from(s: &[i64]) -> Self {
        DimVec::from_slice(s)
    }
}
impl From<Vec<i64>> for DimVec {
    fn from(v: Vec<i64>) -> Self {
        DimVec::from_slice(&v)
    }
}
impl FromIterator<i64> for DimVec {
    fn from_iter<I: IntoIterator<Item = i64>>(it: I) -> Self {
        let mut d = DimVec::new();
        for v in it {
            d.push(v);
        }
        d
    }
}
