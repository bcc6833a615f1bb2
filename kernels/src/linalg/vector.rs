//! Products with vectors: `dot` (a CPU kernel of its own) and `mv` (CompositeExplicitAutograd
//! over the product engine, as PyTorch's goes through `addmv`), with their `out=` overloads.

use super::bf16_gemm::widen;
use super::engine::{self, Dims, Operand};
use super::{not_implemented, resize_output};
use crate::generated::decls::{DotCpu, DotMeta, DotOutCompositeExplicit, MvCpu, MvMeta, MvOutCpu, MvOutMeta};
use crate::iter::{
    check_out_input_keeps_sizes, copy_, get_overlap_status, has_internal_overlap, scalar_type_name, MemOverlap,
    MemOverlapStatus,
};
use crate::math::Element;
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Device, Error, MemoryFormat, Result, Scalar, Tensor};

// ---------------------------------------------------------------------------------------------
// dot
// ---------------------------------------------------------------------------------------------

/// PyTorch's `dot_check`: two 1-D tensors of one dtype and one length.
pub(super) fn dot_check(a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dim() != 1 || b.dim() != 1 {
        return Err(Error::runtime(format!("1D tensors expected, but got {}D and {}D tensors", a.dim(), b.dim())));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "dot : expected both vectors to have same dtype, but found {} and {}",
            scalar_type_name(a.dtype()),
            scalar_type_name(b.dtype())
        )));
    }
    let (n, m) = (a.numel(), b.numel());
    if n != m {
        return Err(Error::runtime(format!(
            "inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of elements, but got \
             {n} and {m} elements respectively"
        )));
    }
    Ok(())
}

/// Elements handled per block: strided or reduced-precision inputs are gathered (and widened)
/// into buffers of this many elements, then multiplied with the contiguous kernel.
const BLOCK: usize = 1024;

/// Accumulator lanes of the float kernels: independent sums the compiler keeps in vector
/// registers (a single running sum would serialize on the add latency and not vectorize).
const LANES: usize = 16;

/// `sum(x[i] * y[i])` over two equal-length slices, in `LANES` partial sums.
#[inline]
fn dot_lanes<T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(x: &[T], y: &[T]) -> T {
    let mut acc = [T::default(); LANES];
    let (xc, yc) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for l in 0..LANES {
            acc[l] = acc[l] + a[l] * b[l];
        }
    }
    let mut tail = T::default();
    for (a, b) in xr.iter().zip(yr) {
        tail = tail + *a * *b;
    }
    // Pairwise fold of the lanes.
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for l in 0..w {
            acc[l] = acc[l] + acc[l + w];
        }
    }
    acc[0] + tail
}

/// A strided vector: address of element 0, stride in elements, length.
#[derive(Clone, Copy)]
struct Vector<T> {
    ptr: *const T,
    stride: isize,
    len: usize,
}

impl<T: Copy> Vector<T> {
    fn of(t: &Tensor) -> Self {
        Vector { ptr: t.data_ptr().cast::<T>(), stride: t.strides()[0] as isize, len: t.numel() as usize }
    }

    /// The whole vector as a slice, if contiguous.
    ///
    /// # Safety
    /// The vector addresses `len` valid elements.
    unsafe fn as_slice(&self) -> Option<&[T]> {
        if self.len == 0 {
            // The data pointer of an empty tensor may be null.
            return Some(&[]);
        }
        (self.stride == 1 || self.len == 1).then(|| std::slice::from_raw_parts(self.ptr, self.len))
    }

    /// Elements `start..start + out.len()`, converted by `f`.
    ///
    /// # Safety
    /// The range is within the vector.
    unsafe fn gather<A>(&self, start: usize, out: &mut [A], f: impl Fn(T) -> A) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(*self.ptr.wrapping_offset((start + i) as isize * self.stride));
        }
    }
}

/// Dot product of two strided vectors of `T`, accumulated in `A` (`f32` for f16/bf16), gathered
/// and converted by blocks.
///
/// # Safety
/// Both vectors address `len` valid elements.
unsafe fn dot_blocks<T: Copy, A>(x: Vector<T>, y: Vector<T>, widen: impl Fn(T) -> A) -> A
where
    A: Copy + Default + std::ops::Add<Output = A> + std::ops::Mul<Output = A>,
{
    let mut total = A::default();
    let (mut xb, mut yb) = (vec![A::default(); BLOCK.min(x.len)], vec![A::default(); BLOCK.min(x.len)]);
    let mut start = 0;
    while start < x.len {
        let n = BLOCK.min(x.len - start);
        x.gather(start, &mut xb[..n], &widen);
        y.gather(start, &mut yb[..n], &widen);
        total = total + dot_lanes(&xb[..n], &yb[..n]);
        start += n;
    }
    total
}

/// Dot product of two f32 or f64 vectors: contiguous ones in place, others by blocks.
///
/// # Safety
/// Both vectors address `len` valid elements.
unsafe fn dot_same<T>(x: Vector<T>, y: Vector<T>) -> T
where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    match (x.as_slice(), y.as_slice()) {
        (Some(a), Some(b)) => dot_lanes(a, b),
        _ => dot_blocks(x, y, |v| v),
    }
}

/// Integer dot product with wrapping arithmetic.
///
/// # Safety
/// Both vectors address `len` valid elements.
unsafe fn dot_int<T: Element>(x: Vector<T>, y: Vector<T>) -> T {
    let mut acc = T::zero();
    for i in 0..x.len as isize {
        acc =
            acc.add_wrapping((*x.ptr.wrapping_offset(i * x.stride)).mul_wrapping(*y.ptr.wrapping_offset(i * y.stride)));
    }
    acc
}

/// Writes the dot product of `a` and `b` (checked) into the 0-d tensor `out`.
fn dot_into(a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    // SAFETY: `dot_check` made both 1-D of one dtype and length; `out` is a fresh 0-d tensor of
    // that dtype.
    unsafe {
        let o = out.data_ptr();
        macro_rules! same {
            ($t:ty) => {
                *o.cast::<$t>() = dot_same(Vector::<$t>::of(a), Vector::<$t>::of(b))
            };
        }
        macro_rules! reduced {
            ($t:ty, $widen:expr, $narrow:expr) => {
                *o.cast::<$t>() = $narrow(dot_blocks(Vector::<$t>::of(a), Vector::<$t>::of(b), $widen))
            };
        }
        macro_rules! int {
            ($t:ty) => {
                *o.cast::<$t>() = dot_int(Vector::<$t>::of(a), Vector::<$t>::of(b))
            };
        }
        match a.dtype() {
            DType::F32 => same!(f32),
            DType::F64 => same!(f64),
            DType::F16 => reduced!(f16, f16::to_f32, f16::from_f32),
            DType::BF16 => reduced!(bf16, widen, super::bf16_gemm::narrow),
            DType::U8 => int!(u8),
            DType::I8 => int!(i8),
            DType::I16 => int!(i16),
            DType::I32 => int!(i32),
            DType::I64 => int!(i64),
            DType::Bool => return Err(not_implemented("dot", DType::Bool)),
        }
    }
    Ok(())
}

impl DotCpu for Cpu {
    fn dot(self_: &Tensor, tensor: &Tensor) -> Result<Tensor> {
        dot_check(self_, tensor)?;
        if self_.dtype() == DType::Bool {
            return Err(not_implemented("dot", DType::Bool));
        }
        let out = Tensor::empty(&[], self_.dtype(), Device::Cpu, MemoryFormat::Contiguous)?;
        dot_into(self_, tensor, &out)?;
        Ok(out)
    }
}

impl DotMeta for Meta {
    fn dot(self_: &Tensor, tensor: &Tensor) -> Result<Tensor> {
        dot_check(self_, tensor)?;
        Tensor::empty(&[], self_.dtype(), Device::Meta, MemoryFormat::Contiguous)
    }
}

impl DotOutCompositeExplicit for Composite {
    /// As PyTorch: `out` is resized to 0-d, must have the inputs' dtype, and receives `dot`.
    fn dot_out(self_: &Tensor, tensor: &Tensor, out: &Tensor) -> Result<Tensor> {
        resize_output(out, &[])?;
        if out.dtype() != self_.dtype() {
            return Err(Error::runtime(format!(
                "result dtype {} does not match input dtype {}",
                scalar_type_name(out.dtype()),
                scalar_type_name(self_.dtype())
            )));
        }
        let r = self_.try_dot(tensor)?;
        oxten_runtime::ops::copy_::call(out, &r, false)?;
        Ok(out.clone())
    }
}

// ---------------------------------------------------------------------------------------------
// mv
// ---------------------------------------------------------------------------------------------

/// PyTorch's `addmv` checks for `mv(mat, vec)` with a result of dtype `result`, in its order:
/// ranks, sizes, dtypes (the CPU kernel then rejects bool: [`cpu_dtype_check`]).
fn mv_check(mat: &Tensor, vec: &Tensor, result: DType) -> Result<()> {
    if mat.dim() != 2 || vec.dim() != 1 {
        return Err(Error::runtime(format!("vector + matrix @ vector expected, got 1, {}, {}", mat.dim(), vec.dim())));
    }
    let (s, n) = (mat.sizes(), vec.sizes()[0]);
    if s[1] != n {
        return Err(Error::runtime(format!("size mismatch, got input ({}), mat ({}x{}), vec ({n})", s[0], s[0], s[1])));
    }
    if result != mat.dtype() || mat.dtype() != vec.dtype() {
        return Err(Error::runtime(format!(
            "addmv input tensors must have the same dtype, but got {}, {}, and {}",
            scalar_type_name(result),
            scalar_type_name(mat.dtype()),
            scalar_type_name(vec.dtype())
        )));
    }
    Ok(())
}

/// The CPU kernel's bool rejection, after the shared checks and before any output is touched.
fn cpu_dtype_check(mat: &Tensor) -> Result<()> {
    if mat.dtype() == DType::Bool {
        return Err(not_implemented("addmv_impl_cpu", DType::Bool));
    }
    Ok(())
}

/// Writes `mat @ vec` (checked) into the 1-D `out` of the right size, through the product engine
/// with `vec` as a one-column matrix; staged through a fresh vector if `out` overlaps itself or
/// an input.
fn mv_into(out: &Tensor, mat: &Tensor, vec: &Tensor) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let apart = has_internal_overlap(out) == MemOverlap::No
        && [mat, vec].iter().all(|t| get_overlap_status(out, t) == MemOverlapStatus::No);
    if !apart {
        let tmp = Tensor::empty(&out.sizes(), out.dtype(), out.device(), MemoryFormat::Contiguous)?;
        mv_into(&tmp, mat, vec)?;
        return copy_(out, &tmp);
    }
    let s = mat.sizes();
    let d = Dims { m: s[0] as usize, k: s[1] as usize, n: 1 };
    let column = |t: &Tensor, ptr: *mut u8| Operand { ptr, rs: t.strides()[0] as isize, cs: 1, bs: 0 };
    // SAFETY: a vector that is only written may skip the zero-fill of a fresh, deferred storage:
    // the engine writes each of its `m > 0` elements, and `assume_init` follows.
    let (ptr, fresh) = unsafe { out.data_ptr_for_overwrite() };
    // SAFETY: `mv_check` matched the sizes and dtypes; `out` has `m` elements and overlaps
    // neither itself nor an input.
    unsafe {
        engine::product(
            out.dtype(),
            1,
            d,
            column(out, ptr),
            Operand::of(mat),
            column(vec, vec.data_ptr()),
            Scalar::Int(1),
            None,
        )?;
        if fresh {
            out.storage().assume_init();
        }
    }
    Ok(())
}

/// `mat @ vec`'s result, checked: a contiguous `[m]` vector of `vec`'s dtype.
pub(super) fn mv_output(self_: &Tensor, vec: &Tensor, cpu: bool) -> Result<Tensor> {
    mv_check(self_, vec, vec.dtype())?;
    if cpu {
        cpu_dtype_check(self_)?;
    }
    Tensor::empty_deferred(&[self_.sizes()[0]], vec.dtype(), self_.device(), MemoryFormat::Contiguous)
}

/// `mv(out=)`'s checks, and `out` resized (an error when `out` is an input that would have to be
/// resized before the product reads it).
pub(super) fn mv_out_checked(self_: &Tensor, vec: &Tensor, out: &Tensor, cpu: bool) -> Result<()> {
    mv_check(self_, vec, out.dtype())?;
    if cpu {
        cpu_dtype_check(self_)?;
    }
    let m = self_.sizes()[0];
    if out.is_same(self_) || out.is_same(vec) {
        check_out_input_keeps_sizes(out, &[m])?;
    }
    resize_output(out, &[m])
}

impl MvCpu for Cpu {
    fn mv(self_: &Tensor, vec: &Tensor) -> Result<Tensor> {
        let out = mv_output(self_, vec, true)?;
        mv_into(&out, self_, vec)?;
        Ok(out)
    }
}

impl MvMeta for Meta {
    fn mv(self_: &Tensor, vec: &Tensor) -> Result<Tensor> {
        mv_output(self_, vec, false)
    }
}

impl MvOutCpu for Cpu {
    fn mv_out(self_: &Tensor, vec: &Tensor, out: &Tensor) -> Result<Tensor> {
        mv_out_checked(self_, vec, out, true)?;
        mv_into(out, self_, vec)?;
        Ok(out.clone())
    }
}

impl MvOutMeta for Meta {
    fn mv_out(self_: &Tensor, vec: &Tensor, out: &Tensor) -> Result<Tensor> {
        mv_out_checked(self_, vec, out, false)?;
        Ok(out.clone())
    }
}
