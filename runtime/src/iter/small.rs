//! `Small`: a vector of `Copy` values stored inline up to `N` elements, for the per-call
//! scratch arrays of the iteration drivers (pointers, strides, indices), so that running a
//! kernel on a small tensor allocates nothing.

use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

#[derive(Clone)]
pub(crate) struct Small<T: Copy, const N: usize> {
    len: usize,
    inline: [T; N],
    heap: Vec<T>,
}

impl<T: Copy, const N: usize> Small<T, N> {
    /// `len` copies of `v`.
    #[inline]
    pub fn filled(len: usize, v: T) -> Self {
        if len <= N {
            Small { len, inline: [v; N], heap: Vec::new() }
        } else {
            Small { len, inline: [v; N], heap: vec![v; len] }
        }
    }
}

impl<T: Copy, const N: usize> Deref for Small<T, N> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        if self.len <= N {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

impl<T: Copy, const N: usize> DerefMut for Small<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        if self.len <= N {
            &mut self.inline[..self.len]
        } else {
            &mut self.heap
        }
    }
}

/// A vector stored inline up to `N` elements (any element type), for the operand lists of the
/// iterator and of `StructuredOutputs`, so that building an iteration over a handful of
/// operands allocates nothing for the lists themselves.
pub(crate) struct SmallVec<T, const N: usize> {
    len: usize,
    inline: [MaybeUninit<T>; N],
    /// Holds every element once there are more than `N` (then `inline` holds none).
    heap: Vec<T>,
}

impl<T, const N: usize> SmallVec<T, N> {
    pub const fn new() -> Self {
        SmallVec { len: 0, inline: [const { MaybeUninit::uninit() }; N], heap: Vec::new() }
    }

    #[inline(always)]
    pub fn push(&mut self, v: T) {
        if self.len < N {
            // Written in place: a hot path builds small operand lists element by element.
            self.inline[self.len].write(v);
            self.len += 1;
        } else {
            self.push_to_heap(v);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_to_heap(&mut self, v: T) {
        if self.len == N {
            self.heap.reserve(2 * N + 1);
            for slot in &self.inline {
                // SAFETY: the `N` inline slots are initialised (len == N); they are moved out
                // here and `len` stops counting them as inline below.
                self.heap.push(unsafe { slot.assume_init_read() });
            }
        }
        self.heap.push(v);
        self.len += 1;
    }
}

impl<T, const N: usize> Default for SmallVec<T, N> {
    fn default() -> Self {
        SmallVec::new()
    }
}

impl<T, const N: usize> Deref for SmallVec<T, N> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        if self.len <= N {
            // SAFETY: the first `len` inline slots are initialised.
            unsafe { std::slice::from_raw_parts(self.inline.as_ptr() as *const T, self.len) }
        } else {
            &self.heap
        }
    }
}

impl<T, const N: usize> DerefMut for SmallVec<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        if self.len <= N {
            // SAFETY: the first `len` inline slots are initialised.
            unsafe { std::slice::from_raw_parts_mut(self.inline.as_mut_ptr() as *mut T, self.len) }
        } else {
            &mut self.heap
        }
    }
}

impl<T, const N: usize> Drop for SmallVec<T, N> {
    fn drop(&mut self) {
        if self.len <= N {
            let n = self.len;
            self.len = 0;
            for slot in &mut self.inline[..n] {
                // SAFETY: the first `n` inline slots are initialised and dropped once (`len` is
                // reset first, so a panicking destructor cannot cause a second drop).
                unsafe { slot.assume_init_drop() };
            }
        }
    }
}

impl<T: Clone, const N: usize> Clone for SmallVec<T, N> {
    fn clone(&self) -> Self {
        self.iter().cloned().collect()
    }
}

impl<T, const N: usize> FromIterator<T> for SmallVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        let mut v = SmallVec::new();
        for x in it {
            v.push(x);
        }
        v
    }
}

impl<T, const N: usize> IntoIterator for SmallVec<T, N> {
    type Item = T;
    type IntoIter = SmallVecIntoIter<T, N>;
    fn into_iter(mut self) -> SmallVecIntoIter<T, N> {
        let len = std::mem::take(&mut self.len);
        let heap = std::mem::take(&mut self.heap).into_iter();
        // `self` now has len 0, so its Drop drops nothing inline; the inline elements move into
        // the iterator.
        let inline = std::mem::replace(&mut self.inline, [const { MaybeUninit::uninit() }; N]);
        SmallVecIntoIter { inline, next: 0, end: if len <= N { len } else { 0 }, heap }
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a SmallVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a mut SmallVec<T, N> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

pub(crate) struct SmallVecIntoIter<T, const N: usize> {
    inline: [MaybeUninit<T>; N],
    next: usize,
    end: usize,
    heap: std::vec::IntoIter<T>,
}

impl<T, const N: usize> Iterator for SmallVecIntoIter<T, N> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        if self.next < self.end {
            let i = self.next;
            self.next += 1;
            // SAFETY: slots `next..end` are initialised and each is read once.
            Some(unsafe { self.inline[i].assume_init_read() })
        } else {
            self.heap.next()
        }
    }
}

impl<T, const N: usize> Drop for SmallVecIntoIter<T, N> {
    fn drop(&mut self) {
        let (i, end) = (self.next, self.end);
        self.next = end;
        for slot in &mut self.inline[i..end] {
            // SAFETY: the slots not yet yielded are initialised; dropped once.
            unsafe { slot.assume_init_drop() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Small;

    #[test]
    fn inline_and_heap() {
        let mut a = Small::<i64, 4>::filled(3, 7);
        a[1] = 2;
        assert_eq!(&a[..], [7, 2, 7]);
        let mut b = Small::<i64, 4>::filled(6, 1);
        b[5] = 9;
        assert_eq!(&b[..], [1, 1, 1, 1, 1, 9]);
    }

    #[test]
    fn small_vec_inline_spill_clone_into_iter() {
        use super::SmallVec;
        use std::rc::Rc;
        let counter = Rc::new(());
        for n in 0..7 {
            let mut v = SmallVec::<Rc<()>, 3>::new();
            for _ in 0..n {
                v.push(counter.clone());
            }
            assert_eq!(v.len(), n);
            let w = v.clone();
            assert_eq!(Rc::strong_count(&counter), 1 + 2 * n);
            let mut it = w.into_iter();
            let first = it.next();
            assert_eq!(first.is_some(), n > 0);
            drop(it);
            drop(first);
            assert_eq!(Rc::strong_count(&counter), 1 + n);
            let s: SmallVec<usize, 3> = (0..n).collect();
            assert_eq!(&s[..], &(0..n).collect::<Vec<_>>()[..]);
            drop(v);
            assert_eq!(Rc::strong_count(&counter), 1);
        }
    }
}
