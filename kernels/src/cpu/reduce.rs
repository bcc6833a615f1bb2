//! The generic CPU reduction kernel over a reduction iterator (`make_reduction`).

use super::opmath::OpMath;
use super::reduce_plan::{drive, ReducePlan};
use oxten_runtime::iter::TensorIterator;
use oxten_runtime::Element;

/// A generic reduction into output 0 (dtype `Out`) of input 0 (dtype `T`): each output element
/// is `project(fold(… fold(init, x0) …, xn))`, where the reduced elements arrive as `T::Math`.
/// Long reductions of few outputs are split across threads and the partial accumulators merged
/// with `combine` (so `init` must be an identity of `combine`). Empty reductions write
/// `project(init)`; check `oxten_runtime::iter::check_reduction_nonempty` first for ops without identity.
///
/// ```
/// # use oxten_runtime::iter::make_reduction;
/// # use oxten_kernels::cpu::reduce_kernel;
/// # use oxten_runtime::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, f32::NAN, 3.0], &[3]).unwrap();
/// let out = Tensor::scalar(0.0f32);
/// let iter = make_reduction(&out, &x, None, false).unwrap();
/// // amax: NaN propagates.
/// let nan_max = |a: f32, b: f32| if a.is_nan() || b.is_nan() { f32::NAN } else { a.max(b) };
/// reduce_kernel::<f32, f32, f32>(&iter, f32::NEG_INFINITY, nan_max, nan_max, |a| a);
/// assert!(out.item::<f32>().unwrap().is_nan());
/// ```
pub fn reduce_kernel<T: OpMath, Acc: Copy + Send + Sync, Out: Element>(
    iter: &TensorIterator,
    init: Acc,
    fold: impl Fn(Acc, T::Math) -> Acc + Sync,
    combine: impl Fn(Acc, Acc) -> Acc + Sync,
    project: impl Fn(Acc) -> Out + Sync,
) {
    assert!(iter.noutputs() == 1 && iter.ninputs() == 1, "reduce_kernel: needs one output and one input");
    assert!(
        iter.dtype(0) == Out::DTYPE && iter.dtype(1) == T::DTYPE,
        "reduce_kernel: operands are {} <- {} but the kernel was instantiated for {} <- {}",
        iter.dtype(0),
        iter.dtype(1),
        Out::DTYPE,
        T::DTYPE
    );
    if iter.is_meta() {
        return;
    }
    let plan = ReducePlan::new(iter);
    let partial = |u: usize, range: std::ops::Range<usize>| {
        let mut outs = [std::ptr::null_mut(); 1];
        let base = plan.locate(u, &mut outs);
        let mut acc = init;
        plan.walk(base, range, &mut |p, st, len, _| {
            for i in 0..len {
                // SAFETY: the plan's addresses and strides come from the iterator and address
                // valid input elements of dtype T (checked above).
                let x = unsafe { *(p.offset(i as isize * st) as *const T) };
                acc = fold(acc, x.to_math());
            }
        });
        acc
    };
    let finish = |u: usize, acc: Acc| {
        let mut outs = [std::ptr::null_mut(); 1];
        plan.locate(u, &mut outs);
        // SAFETY: `outs[0]` addresses output element `u` (dtype Out, checked above); each unit
        // is finished by exactly one thread.
        unsafe { *(outs[0] as *mut Out) = project(acc) };
    };
    drive(plan.nout, plan.nred, &partial, &combine, &finish);
}
