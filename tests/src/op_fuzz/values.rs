//! Random argument values for one operator call, drawn from the schema type of each argument.
//!
//! The draws lean towards calls that can succeed (tensors of one shape and dtype, dims in range)
//! so that kernels run, and mix in what users get wrong: 0-size and 0-dim tensors, transposed,
//! expanded, overlapping and offset views, every dtype, out-of-range and absurd integers
//! (negative, 2^40, 2^44, 2^62, i64::MAX), NaN and infinite floats, and `out=` tensors of the wrong
//! shape or dtype.

use oxten::dispatch::{ArgInfo, IValue};
use oxten::{DType, Device, Generator, Layout, MemoryFormat, Scalar, Tensor};

/// SplitMix64: small, fast and reproducible from one seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
    /// In `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

const DTYPES: [DType; 10] = [
    DType::F32,
    DType::F64,
    DType::I64,
    DType::I32,
    DType::Bool,
    DType::F16,
    DType::BF16,
    DType::U8,
    DType::I8,
    DType::I16,
];

/// Integers that overflow sizes, strides and offsets, or ask for absurd amounts of memory
/// (large enough that the allocation is refused rather than made).
pub const HUGE_INTS: [i64; 6] = [1 << 44, 1 << 40, 1 << 62, i64::MAX, i64::MIN, -(1 << 40)];

/// The shared shape and dtype most tensors of one call use.
pub struct CallPlan {
    pub shape: Vec<i64>,
    pub dtype: DType,
    /// Draw absurd integers this often.
    pub huge: f64,
}

impl CallPlan {
    pub fn draw(rng: &mut Rng) -> CallPlan {
        let rank = rng.pick(&[0usize, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5]);
        let shape = (0..rank).map(|_| rng.pick(&[0i64, 1, 1, 2, 2, 3, 3, 4, 5])).collect();
        let dtype = if rng.chance(0.6) { DType::F32 } else { rng.pick(&DTYPES) };
        let huge = if rng.chance(0.2) { 0.3 } else { 0.0 };
        CallPlan { shape, dtype, huge }
    }
}

/// Draws one value for `arg`. `Device::Cpu` is used for devices; the caller may swap in Meta.
pub fn draw(rng: &mut Rng, plan: &CallPlan, arg: &ArgInfo) -> IValue {
    let ty = arg.ty;
    if let Some(inner) = ty.strip_suffix('?') {
        if rng.chance(0.35) {
            return IValue::None;
        }
        let inner_arg = ArgInfo { ty: inner, ..*arg };
        return draw(rng, plan, &inner_arg);
    }
    let name = arg.name;
    match ty {
        "Tensor" => IValue::Tensor(tensor_arg(rng, plan, arg)),
        "Tensor[]" => {
            let n = rng.pick(&[0usize, 1, 2, 2, 3]);
            IValue::TensorList((0..n).map(|_| tensor_arg(rng, plan, arg)).collect())
        }
        "Tensor?[]" => {
            let n = rng.pick(&[0usize, 1, 1, 2, 3]);
            let list = (0..n)
                .map(|_| {
                    if rng.chance(0.25) {
                        None
                    } else {
                        let dtype = rng.pick(&[DType::I64, DType::I64, DType::Bool, DType::I32, DType::F32]);
                        let shape = small_shape(rng, plan);
                        Some(make_tensor(rng, &shape, dtype))
                    }
                })
                .collect();
            IValue::OptionalTensorList(list)
        }
        "int" | "SymInt" => IValue::Int(int_arg(rng, plan, name)),
        "float" => IValue::Float(float_value(rng)),
        "bool" => IValue::Bool(rng.chance(0.5)),
        "str" => IValue::Str(rng.pick(&STRINGS).to_string()),
        "Scalar" => IValue::Scalar(scalar_value(rng, plan)),
        "ScalarType" => IValue::DType(rng.pick(&DTYPES)),
        "Device" => IValue::Device(Device::Cpu),
        "Layout" => IValue::Layout(Layout::Strided),
        "MemoryFormat" => IValue::MemoryFormat(rng.pick(&[
            MemoryFormat::Contiguous,
            MemoryFormat::Preserve,
            MemoryFormat::ChannelsLast,
            MemoryFormat::ChannelsLast3d,
        ])),
        "Generator" => IValue::Generator(Generator::with_seed(rng.next_u64())),
        _ if ty.starts_with("int[") || ty.starts_with("SymInt[") => IValue::IntList(int_list(rng, plan, name, ty)),
        _ if ty.starts_with("float[") => {
            let n = list_len(rng, ty);
            IValue::FloatList((0..n).map(|_| float_value(rng)).collect())
        }
        _ if ty.starts_with("Scalar[") => {
            let n = list_len(rng, ty);
            IValue::ScalarList((0..n).map(|_| scalar_value(rng, plan)).collect())
        }
        _ if ty.starts_with("bool[") => {
            let n = list_len(rng, ty);
            IValue::BoolList((0..n).map(|_| rng.chance(0.5)).collect())
        }
        // A type the fuzzer does not know yet: the call reports the wrong argument type, which
        // the runner counts as a skipped call.
        _ => IValue::None,
    }
}

const STRINGS: [&str; 12] =
    ["mean", "sum", "none", "tanh", "floor", "trunc", "same", "valid", "reflect", "constant", "", "bogus"];

fn float_value(rng: &mut Rng) -> f64 {
    rng.pick(&[0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, 0.1, -2.5, 3.0, f64::NAN, f64::INFINITY, -f64::INFINITY, 1e300])
}

fn scalar_value(rng: &mut Rng, plan: &CallPlan) -> Scalar {
    match rng.below(10) {
        0..=4 => Scalar::from(float_value(rng)),
        5..=7 => Scalar::from(int_arg(rng, plan, "")),
        _ => Scalar::from(rng.chance(0.5)),
    }
}

fn list_len(rng: &mut Rng, ty: &str) -> usize {
    // `int[2]` declares a length; calls often pass it, sometimes 1 (broadcast) or a wrong one.
    let declared: Option<usize> = ty.split(['[', ']']).nth(1).and_then(|n| n.parse().ok());
    match declared {
        Some(n) if rng.chance(0.8) => n,
        _ => rng.pick(&[0usize, 1, 1, 2, 2, 3, 4]),
    }
}

fn int_arg(rng: &mut Rng, plan: &CallPlan, name: &str) -> i64 {
    if rng.chance(plan.huge) {
        return rng.pick(&HUGE_INTS);
    }
    let rank = plan.shape.len() as i64;
    if name.contains("dim") && !name.contains("dims") {
        // Mostly in range (negative dims included), sometimes one past either end.
        return rng.range(-rank - 1, rank.max(1));
    }
    rng.pick(&[-2, -1, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5])
}

fn int_list(rng: &mut Rng, plan: &CallPlan, name: &str, ty: &str) -> Vec<i64> {
    let rank = plan.shape.len() as i64;
    if (name == "size" || name == "shape") && rng.chance(0.5) {
        // A view/reshape target or factory size: the plan's shape, permuted sizes or -1.
        let mut s = plan.shape.clone();
        if rng.chance(0.3) && !s.is_empty() {
            let i = rng.below(s.len() as u64) as usize;
            s[i] = -1;
        }
        if rng.chance(plan.huge) {
            s.push(rng.pick(&HUGE_INTS));
        }
        return s;
    }
    if name.contains("dim") && rng.chance(0.7) {
        let n = rng.below(rank as u64 + 1) as usize;
        return (0..n).map(|_| rng.range(-rank, (rank - 1).max(0))).collect();
    }
    let n = list_len(rng, ty);
    (0..n).map(|_| int_arg(rng, plan, "")).collect()
}

fn small_shape(rng: &mut Rng, plan: &CallPlan) -> Vec<i64> {
    if rng.chance(0.5) {
        return plan.shape.clone();
    }
    let rank = rng.pick(&[0usize, 1, 1, 2, 2, 3]);
    (0..rank).map(|_| rng.pick(&[0i64, 1, 2, 3])).collect()
}

fn tensor_arg(rng: &mut Rng, plan: &CallPlan, arg: &ArgInfo) -> Tensor {
    let shape = match rng.below(10) {
        // Empty, but with huge other dims: element counts of products of sizes overflow.
        _ if rng.chance(plan.huge * 0.1) => {
            let mut s: Vec<i64> = (0..rng.range(2, 4)).map(|_| rng.pick(&[1 << 40, 1 << 40, 3])).collect();
            let i = rng.below(s.len() as u64) as usize;
            s[i] = 0;
            s
        }
        // Same shape as the rest of the call.
        0..=6 => plan.shape.clone(),
        // Broadcastable: trailing dims, or a 1 somewhere.
        7 => {
            let mut s = plan.shape.clone();
            if !s.is_empty() {
                if rng.chance(0.5) {
                    s.remove(0);
                } else {
                    let i = rng.below(s.len() as u64) as usize;
                    s[i] = 1;
                }
            }
            s
        }
        _ => small_shape(rng, plan),
    };
    let dtype = if arg.name.contains("ind") || arg.name == "target" {
        rng.pick(&[DType::I64, DType::I64, DType::I32, plan.dtype])
    } else if arg.name.contains("mask") || arg.name == "condition" {
        rng.pick(&[DType::Bool, DType::Bool, plan.dtype])
    } else if rng.chance(0.8) {
        plan.dtype
    } else {
        rng.pick(&DTYPES)
    };
    let out_shape = if arg.out && rng.chance(0.4) { vec![rng.pick(&[0i64, 1, 7])] } else { shape };
    let t = make_tensor(rng, &out_shape, dtype);
    if dtype.is_floating_point() && !arg.write && rng.chance(0.15) {
        return t.requires_grad_(true);
    }
    t
}

/// A tensor of `shape` and `dtype` with random values, in a random layout: contiguous,
/// permuted, expanded, overlapping, or offset into a larger storage.
pub fn make_tensor(rng: &mut Rng, shape: &[i64], dtype: DType) -> Tensor {
    let rank = shape.len();
    let mut strides = vec![0i64; rank];
    if shape.contains(&0) && shape.iter().any(|&n| n > 1 << 20) {
        // A huge empty tensor: its contiguous strides would overflow; any strides do.
        return Tensor::empty_strided(shape, &vec![1; rank], dtype, oxten::Device::Cpu).expect("an empty tensor");
    }
    match rng.below(10) {
        // Permuted dims (transposes).
        6 | 7 if rank >= 2 => {
            let mut order: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut acc = 1;
            for &d in order.iter().rev() {
                strides[d] = acc;
                acc *= shape[d].max(1);
            }
        }
        // Expanded (stride 0) or overlapping (small strides) or with gaps.
        8 => {
            for s in strides.iter_mut() {
                *s = rng.pick(&[0, 1, 2, 3]);
            }
        }
        _ => {
            let mut acc = 1;
            for d in (0..rank).rev() {
                strides[d] = acc;
                acc *= shape[d].max(1);
            }
        }
    }
    let offset = if rng.chance(0.15) { rng.range(1, 3) } else { 0 };
    let span: i64 =
        if shape.contains(&0) { 0 } else { 1 + shape.iter().zip(&strides).map(|(&n, &s)| (n - 1) * s).sum::<i64>() };
    let len = (offset + span).max(1) as usize;
    let palette: &[f64] = if dtype.is_floating_point() {
        &[0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 0.25, 10.0, 1.5, -0.75, f64::NAN, f64::INFINITY]
    } else {
        &[0.0, 1.0, 2.0, -1.0, 3.0, 0.0, 1.0, 4.0, -2.0, 5.0]
    };
    let vals: Vec<f64> =
        (0..len).map(|_| if rng.chance(0.9) { palette[rng.below(8) as usize] } else { rng.pick(palette) }).collect();
    let base = Tensor::from_vec(vals, &[len as i64]).expect("a small 1-d tensor").to_dtype(dtype);
    base.as_strided_with(shape, &strides, oxten::options::AsStridedOpts { storage_offset: Some(offset) })
}
