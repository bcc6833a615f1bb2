//! `_thnn_fused_lstm_cell` and `_thnn_fused_lstm_cell_backward_impl`: an LSTM step's gates in
//! one pass over the two projections, and their backward in one pass over the saved cell states
//! and activated gates.
//!
//! Built from pointwise operators, a step is about ten kernels (an add, four activations, three
//! multiplies, an add and a `tanh`), each allocating its result and paying the per-operator cost;
//! with autograd recording each also saves its inputs, and the backward is twice as many. The
//! fused CPU kernels read each input once and write each output once, with the element math of
//! the `sigmoid`/`tanh` operators (`crate::math`), so their results match the composite's. Rows
//! are split over the threads from 4096 cells up: the five transcendental functions per cell
//! make a step's cell about a third of its `[B, H] × [H, 4H]` matrix product's time (batch 32,
//! hidden 256). f16/bf16 cells are computed in f32 and rounded once. Other backends get
//! the composites, the same formulas written with operators.

use crate::cpu::contiguous_slice;
use crate::cpu::simd::InnerLoop;
use crate::generated::decls::{
    ThnnFusedLstmCellBackwardImplCompositeExplicit, ThnnFusedLstmCellBackwardImplCpu,
    ThnnFusedLstmCellCompositeExplicit, ThnnFusedLstmCellCpu,
};
use crate::math::{sigmoid, tanh, Float};
use crate::{Composite, Cpu};
use oxten_runtime::{ops, DType, Device, Error, MemoryFormat, Result, Scalar, Tensor};
use std::mem::MaybeUninit;

const FORWARD: &str = "_thnn_fused_lstm_cell";
const BACKWARD: &str = "_thnn_fused_lstm_cell_backward_impl";

/// Checks that `t` (the argument `name` of `op`) has shape `sizes` and `like`'s dtype and device.
fn check_like(op: &str, name: &str, t: &Tensor, sizes: &[i64], like: &Tensor) -> Result<()> {
    if t.sizes() != sizes {
        return Err(Error::shape(format!("{op}: expected {name} of shape {sizes:?}, got {:?}", &t.sizes()[..])));
    }
    if t.dtype() != like.dtype() {
        return Err(Error::dtype(format!("{op}: expected {name} of dtype {}, got {}", like.dtype(), t.dtype())));
    }
    if t.device() != like.device() {
        return Err(Error::device(format!("{op}: expected {name} on {}, got {}", like.device(), t.device())));
    }
    Ok(())
}

/// `sizes` with its last entry replaced by `last`.
fn with_last(sizes: &[i64], last: i64) -> Vec<i64> {
    let mut s = sizes.to_vec();
    if let Some(l) = s.last_mut() {
        *l = last;
    }
    s
}

/// Checks that `t`, the argument whose shape and dtype the others must match, is a 1-D or 2-D
/// floating-point tensor; returns its last dim.
fn check_leading(op: &str, name: &str, t: &Tensor) -> Result<i64> {
    let d = t.dim();
    if d != 1 && d != 2 {
        return Err(Error::shape(format!("{op}: expected {name} to be 1-D or 2-D, got {d}-D")));
    }
    if !t.dtype().is_floating_point() {
        return Err(Error::dtype(format!("{op}: expected a floating-point {name}, got {}", t.dtype())));
    }
    Ok(t.sizes()[d - 1])
}

/// The checks of `_thnn_fused_lstm_cell` (PyTorch's `checkSizes`); returns the hidden size.
fn check_forward(
    input_gates: &Tensor,
    hidden_gates: &Tensor,
    cx: &Tensor,
    input_bias: Option<&Tensor>,
    hidden_bias: Option<&Tensor>,
) -> Result<i64> {
    let gates = check_leading(FORWARD, "input_gates", input_gates)?;
    if gates % 4 != 0 {
        return Err(Error::shape(format!(
            "{FORWARD}: the gates' last dim must be 4 * hidden_size, got {gates}, not a multiple of 4"
        )));
    }
    let hidden = gates / 4;
    check_like(FORWARD, "hidden_gates", hidden_gates, &input_gates.sizes(), input_gates)?;
    check_like(FORWARD, "cx", cx, &with_last(&input_gates.sizes(), hidden), input_gates)?;
    match (input_bias, hidden_bias) {
        (None, None) => {}
        (Some(ib), Some(hb)) => {
            check_like(FORWARD, "input_bias", ib, &[gates], input_gates)?;
            check_like(FORWARD, "hidden_bias", hb, &[gates], input_gates)?;
        }
        _ => {
            return Err(Error::value(format!(
                "{FORWARD}: input_bias and hidden_bias must both be given or both be None"
            )))
        }
    }
    Ok(hidden)
}

/// The checks of `_thnn_fused_lstm_cell_backward_impl`; returns the hidden size.
fn check_backward(
    grad_hy: Option<&Tensor>,
    grad_cy: Option<&Tensor>,
    cx: &Tensor,
    cy: &Tensor,
    workspace: &Tensor,
) -> Result<i64> {
    let hidden = check_leading(BACKWARD, "cx", cx)?;
    let gates =
        hidden.checked_mul(4).ok_or_else(|| Error::shape(format!("{BACKWARD}: hidden size {hidden} overflows")))?;
    check_like(BACKWARD, "cy", cy, &cx.sizes(), cx)?;
    check_like(BACKWARD, "workspace", workspace, &with_last(&cx.sizes(), gates), cx)?;
    for (name, g) in [("grad_hy", grad_hy), ("grad_cy", grad_cy)] {
        if let Some(g) = g {
            check_like(BACKWARD, name, g, &cx.sizes(), cx)?;
        }
    }
    Ok(hidden)
}

/// `t` in f32 (the half types' cells are computed in f32).
fn widened(t: &Tensor) -> Result<Tensor> {
    ops::to_dtype::call(t, DType::F32, false, false, None)
}

/// `t` back in `dtype`.
fn narrowed_to(t: &Tensor, dtype: DType) -> Result<Tensor> {
    ops::to_dtype::call(t, dtype, false, false, None)
}

/// `t` contiguous (itself when it already is).
fn dense(t: &Tensor) -> Result<Tensor> {
    ops::contiguous::call(t, MemoryFormat::Contiguous)
}

/// A new, uninitialized contiguous CPU tensor of `sizes` and `dtype`.
fn new_output(sizes: &[i64], dtype: DType) -> Result<Tensor> {
    ops::empty::call(sizes, Some(dtype), None, Some(Device::Cpu), None, None)
}

/// Lets `fill` write the elements of `t`, then marks its storage written.
///
/// # Safety
/// `t` was just returned by [`new_output`] with element type `T`, nothing else holds it, and `fill`
/// writes every element of the slice it is given.
unsafe fn fill_new<T, R>(t: &Tensor, fill: impl FnOnce(&mut [MaybeUninit<T>]) -> R) -> R {
    let len = t.numel() as usize;
    if len == 0 {
        // An empty tensor's data pointer may be null, which no slice may hold.
        return fill(&mut []);
    }
    // SAFETY: the caller's contract: a fresh contiguous CPU tensor of `len` elements of `T` that
    // nothing else reads or writes while `fill` runs.
    let (ptr, fresh) = unsafe { t.data_ptr_for_overwrite() };
    // SAFETY: `ptr` addresses `len` elements of `T`, viewed as possibly uninitialized.
    let r = fill(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), len) });
    if fresh {
        // SAFETY: `fill` wrote every element (the caller's contract).
        unsafe { t.storage().assume_init() };
    }
    r
}

/// Cells below which one thread does the whole step (a parallel loop's start costs more).
const PARALLEL_CELLS: usize = 4096;

/// Rows per block: the rows split evenly over the threads when there are enough cells.
fn row_blocks(rows: usize, hidden: usize) -> usize {
    let threads = oxten_runtime::parallel::threads_now();
    if threads <= 1 || rows * hidden < PARALLEL_CELLS {
        return rows.max(1);
    }
    rows.div_ceil(threads).max(1)
}

/// Runs the blocks (disjoint rows) over the thread pool, each compiled for the CPU's SIMD level.
///
/// # Safety
/// As for each block's `run`.
unsafe fn run_blocks<L: InnerLoop + Send>(blocks: Vec<L>) {
    if blocks.len() <= 1 {
        for b in blocks {
            // SAFETY: forwarded from the caller.
            unsafe { crate::cpu::simd::run(b) };
        }
        return;
    }
    // Each block is taken by exactly one index.
    let slots: Vec<std::sync::Mutex<Option<L>>> = blocks.into_iter().map(|b| std::sync::Mutex::new(Some(b))).collect();
    oxten_runtime::parallel::for_each(slots.len(), |i| {
        let block = slots[i].lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(b) = block {
            // SAFETY: forwarded from the caller; the blocks write disjoint rows.
            unsafe { crate::cpu::simd::run(b) };
        }
    });
}

/// The element types the CPU kernels compute in.
trait CellFloat: Float + oxten_runtime::Element {}
impl CellFloat for f32 {}
impl CellFloat for f64 {}

/// `x`'s four gate quarters, each `h` long.
#[inline(always)]
fn quarters<T>(x: &[T], h: usize) -> [&[T]; 4] {
    let (a, rest) = x.split_at(h);
    let (b, rest) = rest.split_at(h);
    let (c, d) = rest.split_at(h);
    [a, b, c, &d[..h]]
}

/// The same for a row being written.
#[inline(always)]
fn quarters_mut<T>(x: &mut [T], h: usize) -> [&mut [T]; 4] {
    let (a, rest) = x.split_at_mut(h);
    let (b, rest) = rest.split_at_mut(h);
    let (c, d) = rest.split_at_mut(h);
    [a, b, c, &mut d[..h]]
}

/// Columns per block: a block's activated gates and intermediate values stay in L1 between
/// the short loops below, each of which reads and writes few enough streams to vectorize.
const BLOCK: usize = 64;

/// Writes `f(a[j], b[j])` into `out[j]`.
#[inline(always)]
fn map2<T: Copy>(out: &mut [MaybeUninit<T>], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        o.write(f(x, y));
    }
}

/// Writes `f(a[j], b[j], c[j])` into `out[j]`.
#[inline(always)]
fn map3<T: Copy>(out: &mut [MaybeUninit<T>], a: &[T], b: &[T], c: &[T], f: impl Fn(T, T, T) -> T) {
    for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
        o.write(f(x, y, z));
    }
}

/// The forward pass over rows of `4h` gates.
struct ForwardRows<'a, T> {
    input_gates: &'a [T],
    hidden_gates: &'a [T],
    /// `input_bias + hidden_bias`, `4h` long.
    bias: Option<&'a [T]>,
    cx: &'a [T],
    hy: &'a mut [MaybeUninit<T>],
    cy: &'a mut [MaybeUninit<T>],
    workspace: &'a mut [MaybeUninit<T>],
    hidden: usize,
}

impl<T: CellFloat> InnerLoop for ForwardRows<'_, T> {
    #[inline(always)]
    unsafe fn run(self) {
        let h = self.hidden;
        let bias = self.bias.map(|b| quarters(b, h));
        let rows = self
            .input_gates
            .chunks_exact(4 * h)
            .zip(self.hidden_gates.chunks_exact(4 * h))
            .zip(self.cx.chunks_exact(h))
            .zip(self.hy.chunks_exact_mut(h))
            .zip(self.cy.chunks_exact_mut(h))
            .zip(self.workspace.chunks_exact_mut(4 * h));
        for (((((ig, hg), cx), hy), cy), ws) in rows {
            let (ig, hg) = (quarters(ig, h), quarters(hg, h));
            let ws = quarters_mut(ws, h);
            for j0 in (0..h).step_by(BLOCK) {
                let cols = j0..h.min(j0 + BLOCK);
                let n = cols.len();
                // The gates' pre-activations, then their activations, in place.
                let mut act = [[T::zero(); BLOCK]; 4];
                for (k, a) in act.iter_mut().enumerate() {
                    let a = &mut a[..n];
                    let (x, y) = (&ig[k][cols.clone()], &hg[k][cols.clone()]);
                    match bias {
                        Some(b) => {
                            for (((o, &x), &y), &z) in a.iter_mut().zip(x).zip(y).zip(&b[k][cols.clone()]) {
                                *o = x + y + z;
                            }
                        }
                        None => {
                            for ((o, &x), &y) in a.iter_mut().zip(x).zip(y) {
                                *o = x + y;
                            }
                        }
                    }
                    if k == 2 {
                        a.iter_mut().for_each(|v| *v = tanh(*v));
                    } else {
                        a.iter_mut().for_each(|v| *v = sigmoid(*v));
                    }
                    for (w, &v) in ws[k][cols.clone()].iter_mut().zip(&*a) {
                        w.write(v);
                    }
                }
                let [i, f, g, o] = &act;
                let (i, f, g, o) = (&i[..n], &f[..n], &g[..n], &o[..n]);
                // c' = f·cx + i·g, then h' = o·tanh(c').
                let mut c = [T::zero(); BLOCK];
                for (((((c, &f), &cx), &i), &g), out) in
                    c.iter_mut().zip(f).zip(&cx[cols.clone()]).zip(i).zip(g).zip(&mut cy[cols.clone()])
                {
                    *c = f * cx + i * g;
                    out.write(*c);
                }
                map2(&mut hy[cols.clone()], o, &c[..n], |o, c| o * tanh(c));
            }
        }
    }
}

/// The backward pass over rows of `h` cells.
struct BackwardRows<'a, T> {
    grad_hy: &'a [T],
    grad_cy: &'a [T],
    cx: &'a [T],
    cy: &'a [T],
    workspace: &'a [T],
    grad_gates: &'a mut [MaybeUninit<T>],
    grad_cx: &'a mut [MaybeUninit<T>],
    hidden: usize,
}

impl<T: CellFloat> InnerLoop for BackwardRows<'_, T> {
    #[inline(always)]
    unsafe fn run(self) {
        let h = self.hidden;
        let one = T::one();
        let rows = self
            .grad_hy
            .chunks_exact(h)
            .zip(self.grad_cy.chunks_exact(h))
            .zip(self.cx.chunks_exact(h))
            .zip(self.cy.chunks_exact(h))
            .zip(self.workspace.chunks_exact(4 * h))
            .zip(self.grad_gates.chunks_exact_mut(4 * h))
            .zip(self.grad_cx.chunks_exact_mut(h));
        for ((((((ghy, gcy), cx), cy), ws), gg), gcx) in rows {
            let [i, f, g, o] = quarters(ws, h);
            let [gi, gf, ggate, go] = quarters_mut(gg, h);
            for j0 in (0..h).step_by(BLOCK) {
                let cols = j0..h.min(j0 + BLOCK);
                let n = cols.len();
                let (ghy, gcy, cx, cy) = (&ghy[cols.clone()], &gcy[cols.clone()], &cx[cols.clone()], &cy[cols.clone()]);
                let (i, f, g, o) = (&i[cols.clone()], &f[cols.clone()], &g[cols.clone()], &o[cols.clone()]);
                let mut tanh_cy = [T::zero(); BLOCK];
                for (t, &c) in tanh_cy.iter_mut().zip(cy) {
                    *t = tanh(c);
                }
                let tanh_cy = &tanh_cy[..n];
                // The gradient reaching c': its own plus h''s through tanh.
                let mut gc = [T::zero(); BLOCK];
                for ((((gc, &gcy), &ghy), &o), &t) in gc.iter_mut().zip(gcy).zip(ghy).zip(o).zip(tanh_cy) {
                    *gc = gcy + ghy * o * (one - t * t);
                }
                let gc = &gc[..n];
                map3(&mut go[cols.clone()], ghy, tanh_cy, o, |ghy, t, o| ghy * t * (o * (one - o)));
                map3(&mut gi[cols.clone()], gc, g, i, |gc, g, i| gc * g * (i * (one - i)));
                map3(&mut gf[cols.clone()], gc, cx, f, |gc, cx, f| gc * cx * (f * (one - f)));
                map3(&mut ggate[cols.clone()], gc, i, g, |gc, i, g| gc * i * (one - g * g));
                map2(&mut gcx[cols.clone()], gc, f, |gc, f| gc * f);
            }
        }
    }
}

/// The CPU forward in `T` (f32 or f64).
fn cell_forward<T: CellFloat>(
    input_gates: &Tensor,
    hidden_gates: &Tensor,
    cx: &Tensor,
    bias: Option<(&Tensor, &Tensor)>,
    hidden: i64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (ig, hg, cx) = (dense(input_gates)?, dense(hidden_gates)?, dense(cx)?);
    let bias = match bias {
        Some((ib, hb)) => Some(dense(&ops::add::call(ib, hb, Scalar::Int(1))?)?),
        None => None,
    };
    let (hy, cy, ws) =
        (new_output(&cx.sizes(), T::DTYPE)?, new_output(&cx.sizes(), T::DTYPE)?, new_output(&ig.sizes(), T::DTYPE)?);
    if hidden > 0 {
        let (ig_s, hg_s) = (contiguous_slice::<T>(FORWARD, &ig)?, contiguous_slice::<T>(FORWARD, &hg)?);
        let cx_s = contiguous_slice::<T>(FORWARD, &cx)?;
        let bias_s = bias.as_ref().map(|b| contiguous_slice::<T>(FORWARD, b)).transpose()?;
        // SAFETY: `hy`, `cy` and `ws` were just made by `new_output` in dtype `T` and are held only
        // here; `ForwardRows` writes every element of each (all rows, every column: the shapes
        // were checked to agree), and only indexes slices.
        unsafe {
            fill_new(&hy, |hy_w| {
                fill_new(&cy, |cy_w| {
                    fill_new(&ws, |ws_w| {
                        let h = hidden as usize;
                        let rows = row_blocks(cx_s.len() / h, h);
                        let blocks = ig_s
                            .chunks(rows * 4 * h)
                            .zip(hg_s.chunks(rows * 4 * h))
                            .zip(cx_s.chunks(rows * h))
                            .zip(hy_w.chunks_mut(rows * h))
                            .zip(cy_w.chunks_mut(rows * h))
                            .zip(ws_w.chunks_mut(rows * 4 * h))
                            .map(|(((((ig, hg), cx), hy), cy), ws)| ForwardRows {
                                input_gates: ig,
                                hidden_gates: hg,
                                bias: bias_s,
                                cx,
                                hy,
                                cy,
                                workspace: ws,
                                hidden: h,
                            });
                        run_blocks(blocks.collect())
                    })
                })
            })
        };
    }
    Ok((hy, cy, ws))
}

/// The CPU backward in `T` (f32 or f64): `(grad_gates, grad_cx)`.
fn cell_backward<T: CellFloat>(
    grad_hy: &Tensor,
    grad_cy: &Tensor,
    cx: &Tensor,
    cy: &Tensor,
    workspace: &Tensor,
    hidden: i64,
) -> Result<(Tensor, Tensor)> {
    let c = |t: &Tensor| dense(t);
    let (ghy, gcy, cx, cy, ws) = (c(grad_hy)?, c(grad_cy)?, c(cx)?, c(cy)?, c(workspace)?);
    let (grad_gates, grad_cx) = (new_output(&ws.sizes(), T::DTYPE)?, new_output(&cx.sizes(), T::DTYPE)?);
    if hidden > 0 {
        let ghy_s = contiguous_slice::<T>(BACKWARD, &ghy)?;
        let gcy_s = contiguous_slice::<T>(BACKWARD, &gcy)?;
        let (cx_s, cy_s) = (contiguous_slice::<T>(BACKWARD, &cx)?, contiguous_slice::<T>(BACKWARD, &cy)?);
        let ws_s = contiguous_slice::<T>(BACKWARD, &ws)?;
        // SAFETY: `grad_gates` and `grad_cx` were just made by `new_output` in dtype `T` and are held
        // only here; `BackwardRows` writes every element of both, and only indexes slices.
        unsafe {
            fill_new(&grad_gates, |gg| {
                fill_new(&grad_cx, |gcx| {
                    let h = hidden as usize;
                    let rows = row_blocks(cx_s.len() / h, h);
                    let blocks = ghy_s
                        .chunks(rows * h)
                        .zip(gcy_s.chunks(rows * h))
                        .zip(cx_s.chunks(rows * h))
                        .zip(cy_s.chunks(rows * h))
                        .zip(ws_s.chunks(rows * 4 * h))
                        .zip(gg.chunks_mut(rows * 4 * h))
                        .zip(gcx.chunks_mut(rows * h))
                        .map(|((((((ghy, gcy), cx), cy), ws), gg), gcx)| BackwardRows {
                            grad_hy: ghy,
                            grad_cy: gcy,
                            cx,
                            cy,
                            workspace: ws,
                            grad_gates: gg,
                            grad_cx: gcx,
                            hidden: h,
                        });
                    run_blocks(blocks.collect())
                })
            })
        };
    }
    Ok((grad_gates, grad_cx))
}

/// `grad_bias` of the backward: the gates' gradient summed over the batch, or an empty tensor
/// without biases (PyTorch returns an undefined tensor there).
fn grad_bias(grad_gates: &Tensor, has_bias: bool) -> Result<Tensor> {
    if !has_bias {
        return ops::new_empty::call(grad_gates, &[0], None, None, None, None);
    }
    if grad_gates.dim() == 2 {
        ops::sum_dim_intlist::call(grad_gates, Some(&[0]), false, None)
    } else {
        Ok(grad_gates.clone())
    }
}

/// A missing gradient as zeros of `like`'s shape.
fn grad_or_zeros(g: Option<&Tensor>, like: &Tensor) -> Result<Tensor> {
    match g {
        Some(g) => Ok(g.clone()),
        None => ops::zeros_like::call(like, None, None, None, None, None),
    }
}

impl ThnnFusedLstmCellCpu for Cpu {
    fn thnn_fused_lstm_cell(
        input_gates: &Tensor,
        hidden_gates: &Tensor,
        cx: &Tensor,
        input_bias: Option<&Tensor>,
        hidden_bias: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let hidden = check_forward(input_gates, hidden_gates, cx, input_bias, hidden_bias)?;
        let bias = input_bias.zip(hidden_bias);
        match input_gates.dtype() {
            DType::F32 => cell_forward::<f32>(input_gates, hidden_gates, cx, bias, hidden),
            DType::F64 => cell_forward::<f64>(input_gates, hidden_gates, cx, bias, hidden),
            dtype => {
                let bias = match bias {
                    Some((ib, hb)) => Some((widened(ib)?, widened(hb)?)),
                    None => None,
                };
                let bias = bias.as_ref().map(|(a, b)| (a, b));
                let (hy, cy, ws) =
                    cell_forward::<f32>(&widened(input_gates)?, &widened(hidden_gates)?, &widened(cx)?, bias, hidden)?;
                Ok((narrowed_to(&hy, dtype)?, narrowed_to(&cy, dtype)?, narrowed_to(&ws, dtype)?))
            }
        }
    }
}

impl ThnnFusedLstmCellBackwardImplCpu for Cpu {
    fn thnn_fused_lstm_cell_backward_impl(
        grad_hy: Option<&Tensor>,
        grad_cy: Option<&Tensor>,
        cx: &Tensor,
        cy: &Tensor,
        workspace: &Tensor,
        has_bias: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let hidden = check_backward(grad_hy, grad_cy, cx, cy, workspace)?;
        let (ghy, gcy) = (grad_or_zeros(grad_hy, cx)?, grad_or_zeros(grad_cy, cx)?);
        let (grad_gates, grad_cx) = match cx.dtype() {
            DType::F32 => cell_backward::<f32>(&ghy, &gcy, cx, cy, workspace, hidden)?,
            DType::F64 => cell_backward::<f64>(&ghy, &gcy, cx, cy, workspace, hidden)?,
            dtype => {
                let up = [&ghy, &gcy, cx, cy, workspace].map(widened);
                let [ghy, gcy, cx, cy, ws] = up;
                let (gg, gcx) = cell_backward::<f32>(&ghy?, &gcy?, &cx?, &cy?, &ws?, hidden)?;
                (narrowed_to(&gg, dtype)?, narrowed_to(&gcx, dtype)?)
            }
        };
        let gb = grad_bias(&grad_gates, has_bias)?;
        Ok((grad_gates, grad_cx, gb))
    }
}

/// `1 - t`, for the composites.
fn one_minus(t: &Tensor) -> Result<Tensor> {
    ops::rsub_scalar::call(t, Scalar::Int(1), Scalar::Int(1))
}

impl ThnnFusedLstmCellCompositeExplicit for Composite {
    fn thnn_fused_lstm_cell(
        input_gates: &Tensor,
        hidden_gates: &Tensor,
        cx: &Tensor,
        input_bias: Option<&Tensor>,
        hidden_bias: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        check_forward(input_gates, hidden_gates, cx, input_bias, hidden_bias)?;
        let mut gates = ops::add::call(input_gates, hidden_gates, Scalar::Int(1))?;
        if let (Some(ib), Some(hb)) = (input_bias, hidden_bias) {
            gates = ops::add::call(&gates, &ops::add::call(ib, hb, Scalar::Int(1))?, Scalar::Int(1))?;
        }
        let g = ops::chunk::call(&gates, 4, -1)?;
        let (i, f, c, o) = (
            ops::sigmoid::call(&g[0])?,
            ops::sigmoid::call(&g[1])?,
            ops::tanh::call(&g[2])?,
            ops::sigmoid::call(&g[3])?,
        );
        let cy = ops::add::call(&ops::mul::call(&f, cx)?, &ops::mul::call(&i, &c)?, Scalar::Int(1))?;
        let hy = ops::mul::call(&o, &ops::tanh::call(&cy)?)?;
        let ws = ops::cat::call(&[i, f, c, o], -1)?;
        Ok((hy, cy, ws))
    }
}

impl ThnnFusedLstmCellBackwardImplCompositeExplicit for Composite {
    fn thnn_fused_lstm_cell_backward_impl(
        grad_hy: Option<&Tensor>,
        grad_cy: Option<&Tensor>,
        cx: &Tensor,
        cy: &Tensor,
        workspace: &Tensor,
        has_bias: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        check_backward(grad_hy, grad_cy, cx, cy, workspace)?;
        let (ghy, gcy) = (grad_or_zeros(grad_hy, cx)?, grad_or_zeros(grad_cy, cx)?);
        let w = ops::chunk::call(workspace, 4, -1)?;
        let (i, f, g, o) = (&w[0], &w[1], &w[2], &w[3]);
        let mul = |a: &Tensor, b: &Tensor| ops::mul::call(a, b);
        let tanh_cy = ops::tanh::call(cy)?;
        let gc = ops::add::call(&gcy, &mul(&mul(&ghy, o)?, &one_minus(&mul(&tanh_cy, &tanh_cy)?)?)?, Scalar::Int(1))?;
        let go = mul(&mul(&ghy, &tanh_cy)?, &mul(o, &one_minus(o)?)?)?;
        let gi = mul(&mul(&gc, g)?, &mul(i, &one_minus(i)?)?)?;
        let gf = mul(&mul(&gc, cx)?, &mul(f, &one_minus(f)?)?)?;
        let gg = mul(&mul(&gc, i)?, &one_minus(&mul(g, g)?)?)?;
        let grad_gates = ops::cat::call(&[gi, gf, gg, go], -1)?;
        let grad_cx = mul(&gc, f)?;
        let gb = grad_bias(&grad_gates, has_bias)?;
        Ok((grad_gates, grad_cx, gb))
    }
}
