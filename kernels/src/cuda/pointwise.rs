//! The CUDA loops of `pointwise:` operators (PyTorch's `gpu_kernel`): the generated impl of
//! each op hands its expression here with the built TensorIterator; this module instantiates
//! the expression for the call's dtypes and layout, compiles it once (NVRTC, cached) and
//! launches it on the current stream.
//!
//! Two loop shapes:
//! - **vectorized**: every tensor operand is contiguous and 16-byte aligned; each thread loads
//!   and stores 16 bytes per operand, the tail element by element;
//! - **strided**: any broadcast or strided layout; each thread turns its linear index into an
//!   offset per operand by dividing through the iterator's coalesced sizes (the offset
//!   calculator), in 32-bit arithmetic when every offset fits, else 64-bit.
//!
//! Operands keep their own dtypes (the iterator does not convert them on devices): each is
//! loaded as its storage type and converted to the compute type, and the result converted to the
//! output's storage type; f16/bf16 compute in f32 and round once. CPU scalars (wrapped numbers
//! and 0-dim CPU tensors) are passed by value.

use super::launch::{
    blocks_for, compute_type, dtype_code, instance, launch, not_implemented, scalar_arg, storage_type, InstanceKey,
};
use oxten_runtime::iter::TensorIterator;
use oxten_runtime::{DType, Device, Result, Scalar, Tensor};
use std::ffi::c_void;
use std::fmt::Write;

/// Dims the strided loop handles (PyTorch's `MAX_DIMS`).
pub const MAX_DIMS: usize = 25;
const THREADS: u32 = 256;

/// What the generator knows about one pointwise op (see `oxten-codegen`'s `emit_pointwise_cuda`).
#[derive(Debug)]
pub struct PointwiseKernel {
    /// The out= operator's schema name, for errors.
    pub op: &'static str,
    /// The expression in CUDA C over `a1..a3` (loop operands) and `c0`, `c1` … (per-call
    /// constants such as `alpha`), type `T`.
    pub expr: &'static str,
    /// Loop operands (inputs of the iterator).
    pub arity: usize,
    /// The expression needs a floating compute type.
    pub float_only: bool,
    /// The expression needs an integer (or bool) compute type: bit operations.
    pub int_only: bool,
    /// The expression has a meaning for bools.
    pub bool_ok: bool,
}

/// How one input reaches the kernel.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Input {
    /// A device tensor of this dtype.
    Tensor(DType),
    /// A CPU scalar, passed by value in the compute type.
    Scalar,
}

/// Runs `k` over `iter` (the generated CUDA impls call this). `consts` are the per-call
/// constants (`alpha`, `value`, a clamp bound), already checked by the caller and converted to
/// the compute type here.
pub fn launch_pointwise(iter: &TensorIterator, k: &'static PointwiseKernel, consts: &[Scalar]) -> Result<()> {
    launch_pointwise_in(iter, k, consts, iter.common_dtype())
}

/// [`launch_pointwise`] computing in `common` instead of the iterator's common dtype (copies
/// compute in the source's dtype, so that `0.5` copied to bool is true).
pub fn launch_pointwise_in(
    iter: &TensorIterator,
    k: &'static PointwiseKernel,
    consts: &[Scalar],
    common: DType,
) -> Result<()> {
    let name = k.op.split('.').next().unwrap_or(k.op);
    if (k.float_only && !common.is_floating_point())
        || (k.int_only && common.is_floating_point())
        || (common == DType::Bool && !k.bool_ok)
    {
        return Err(not_implemented(name, common));
    }
    if iter.noutputs() != 1 || iter.ninputs() != k.arity {
        return Err(oxten_runtime::Error::runtime(format!(
            "{}: the CUDA kernel takes 1 output and {} inputs, the iterator has {} and {}",
            k.op,
            k.arity,
            iter.noutputs(),
            iter.ninputs()
        )));
    }
    let n = iter.numel();
    if n == 0 {
        return Ok(());
    }
    let device = iter.device();
    let Device::Cuda(dev) = device else {
        return Err(oxten_runtime::Error::device(format!("{}: a CUDA kernel was called on {device}", k.op)));
    };
    let nt = iter.ntensors();
    let out_dtype = iter.operand(0).dtype();
    let inputs: Vec<Input> = (1..nt)
        .map(|a| {
            let t = iter.operand(a);
            if t.device() == Device::Cpu {
                Input::Scalar
            } else {
                Input::Tensor(t.dtype())
            }
        })
        .collect();
    // A CPU operand is passed by value: only one-element ones can be.
    if let Some(a) = (1..nt).find(|&a| iter.operand(a).device() == Device::Cpu && iter.operand(a).numel() != 1) {
        return Err(oxten_runtime::Error::device(format!(
            "{}: input {} is a CPU tensor of {} elements; only 0-dim CPU tensors can accompany CUDA tensors",
            k.op,
            a - 1,
            iter.operand(a).numel()
        )));
    }
    // SAFETY: the kernel below writes every element of the output.
    let ptrs = unsafe { iter.device_ptrs_for_overwrite() };
    // Layout: vectorized when every tensor operand is contiguous and aligned.
    let shape = iter.shape();
    let sizes_of = |a: usize| iter.operand(a).dtype().size();
    let widest = (0..nt).filter(|&a| a == 0 || inputs[a - 1] != Input::Scalar).map(sizes_of).max().unwrap_or(1);
    let vec = (16 / widest).max(1);
    let contiguous = shape.len() <= 1
        && (0..nt).filter(|&a| a == 0 || inputs[a - 1] != Input::Scalar).all(|a| {
            (n == 1 || iter.strides(a)[0] == sizes_of(a) as i64) && (ptrs[a] as usize).is_multiple_of(vec * sizes_of(a))
        });
    let extent = (0..nt)
        .map(|a| shape.iter().zip(iter.strides(a)).map(|(s, st)| (s - 1).max(0) * st.abs()).sum::<i64>())
        .max()
        .unwrap_or(0);
    let idx64 = n > i32::MAX as i64 || extent > i32::MAX as i64;
    if !contiguous && shape.len() > MAX_DIMS {
        return Err(oxten_runtime::Error::shape(format!("{}: CUDA kernels support at most {MAX_DIMS} dims", k.op)));
    }
    // The instance: compute dtype, output and input dtypes, layout.
    let mut variant = dtype_code(common) | dtype_code(out_dtype) << 4;
    for (i, inp) in inputs.iter().enumerate() {
        let code = match inp {
            Input::Tensor(d) => dtype_code(*d),
            Input::Scalar => 15,
        };
        variant |= code << (8 + 4 * i);
    }
    variant |= (contiguous as u64) << 40 | (idx64 as u64) << 41 | (vec as u64) << 42;
    let key = InstanceKey { family: k as *const PointwiseKernel as usize, variant, device: dev };
    let f = instance(key, k.op, || source(k, common, out_dtype, &inputs, consts.len(), contiguous, vec, idx64))?;
    // Arguments: [geometry], n, p0, inputs (pointer or value), constants.
    let mut geom_i32: Vec<i32> = Vec::new();
    let mut geom_i64: Vec<i64> = Vec::new();
    if !contiguous {
        let mut g = vec![0i64; 1 + MAX_DIMS + nt * MAX_DIMS];
        g[0] = shape.len() as i64;
        for (d, s) in shape.iter().enumerate() {
            g[1 + d] = *s;
        }
        for a in 0..nt {
            for (d, st) in iter.strides(a).iter().enumerate() {
                g[1 + MAX_DIMS + a * MAX_DIMS + d] = *st;
            }
        }
        if idx64 {
            geom_i64 = g;
        } else {
            geom_i32 = g.into_iter().map(|v| v as i32).collect();
        }
    }
    let mut n_arg = n;
    let mut ptr_args: Vec<u64> = ptrs.iter().map(|p| *p as u64).collect();
    let mut values: Vec<[u8; 8]> = inputs
        .iter()
        .enumerate()
        .map(|(i, inp)| match inp {
            Input::Scalar => cpu_scalar_arg(iter.operand(i + 1), common),
            Input::Tensor(_) => [0; 8],
        })
        .collect();
    let mut const_args: Vec<[u8; 8]> = consts.iter().map(|c| scalar_arg(common, c.to_f64(), c.to_i64())).collect();
    let mut args: Vec<*mut c_void> = Vec::with_capacity(nt + 3);
    if !contiguous {
        args.push(if idx64 { geom_i64.as_mut_ptr() as *mut c_void } else { geom_i32.as_mut_ptr() as *mut c_void });
    }
    args.push(&mut n_arg as *mut i64 as *mut c_void);
    args.push(&mut ptr_args[0] as *mut u64 as *mut c_void);
    for (i, inp) in inputs.iter().enumerate() {
        match inp {
            Input::Tensor(_) => args.push(&mut ptr_args[i + 1] as *mut u64 as *mut c_void),
            Input::Scalar => args.push(values[i].as_mut_ptr() as *mut c_void),
        }
    }
    for c in const_args.iter_mut() {
        args.push(c.as_mut_ptr() as *mut c_void);
    }
    let work = if contiguous { (n as u64).div_ceil(vec as u64) } else { n as u64 };
    // SAFETY: the arguments follow the parameter list `source` wrote for this instance; the
    // pointers are the operands' device addresses and the geometry bounds every offset inside
    // the operands' layouts, which were checked against their storages.
    unsafe { launch(device, f, blocks_for(work, THREADS), THREADS, 0, &mut args) }
}

/// A CPU scalar operand's value as a kernel argument of the compute type.
fn cpu_scalar_arg(t: &Tensor, common: DType) -> [u8; 8] {
    let (f, i) = if t.dtype().is_floating_point() {
        let v = t.to_f64_vec().ok().and_then(|v| v.first().copied()).unwrap_or(0.0);
        (v, v as i64)
    } else {
        let v = match t.dtype() {
            DType::I64 => t.to_vec::<i64>().ok().and_then(|v| v.first().copied()).unwrap_or(0),
            _ => t.to_f64_vec().ok().and_then(|v| v.first().copied()).unwrap_or(0.0) as i64,
        };
        (v as f64, v)
    };
    scalar_arg(common, f, i)
}

/// The CUDA C of one instance.
#[allow(clippy::too_many_arguments)]
fn source(
    k: &PointwiseKernel,
    common: DType,
    out: DType,
    inputs: &[Input],
    nconst: usize,
    contiguous: bool,
    vec: usize,
    idx64: bool,
) -> String {
    // Bools compute as 0/1 ints: the prelude then spells `bitnot` as logical not.
    let mut s = String::from(if common == DType::Bool { "#define OX_BOOL_COMPUTE 1\n" } else { "" });
    s.push_str(super::PRELUDE);
    let _ = writeln!(s, "// {} ({}), generated instance", k.op, k.expr);
    let _ = writeln!(s, "typedef {} T;", compute_type(common));
    let _ = writeln!(s, "typedef {} IDX;", if idx64 { "long long" } else { "int" });
    let _ = writeln!(s, "typedef {} S0;", storage_type(out));
    for (i, inp) in inputs.iter().enumerate() {
        if let Input::Tensor(d) = inp {
            let _ = writeln!(s, "typedef {} S{};", storage_type(*d), i + 1);
        }
    }
    let mut params: Vec<String> = (1..=inputs.len()).map(|i| format!("T a{i}")).collect();
    params.extend((0..nconst).map(|j| format!("T c{j}")));
    let _ = writeln!(s, "__device__ __forceinline__ auto ox_op({}) {{ return {}; }}", params.join(", "), k.expr);
    let call_args: Vec<String> =
        (1..=inputs.len()).map(|i| format!("a{i}")).chain((0..nconst).map(|j| format!("c{j}"))).collect();
    let call = format!("ox_op({})", call_args.join(", "));
    // Kernel parameters.
    let mut kp: Vec<String> = Vec::new();
    let nt = inputs.len() + 1;
    if !contiguous {
        let _ = writeln!(s, "struct Geom {{ IDX ndim; IDX sizes[{MAX_DIMS}]; IDX strides[{nt}][{MAX_DIMS}]; }};");
        kp.push("const Geom g".into());
    }
    kp.push("long long n".into());
    kp.push("char* __restrict__ p0".into());
    for (i, inp) in inputs.iter().enumerate() {
        match inp {
            Input::Tensor(_) => kp.push(format!("const char* __restrict__ p{}", i + 1)),
            Input::Scalar => kp.push(format!("T v{}", i + 1)),
        }
    }
    kp.extend((0..nconst).map(|j| format!("T c{j}")));
    let _ = writeln!(s, "extern \"C\" __global__ void ox_kernel({}) {{", kp.join(", "));
    s.push_str("  long long stride = (long long)gridDim.x * blockDim.x;\n  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n");
    // Scalar element `i` at byte offsets o0.. (contiguous: i * size).
    let element = |s: &mut String, offsets: &dyn Fn(usize) -> String| {
        for (i, inp) in inputs.iter().enumerate() {
            let a = i + 1;
            match inp {
                Input::Tensor(_) => {
                    let _ = writeln!(s, "    T a{a} = ox_load<T>(*(const S{a}*)(p{a} + {}));", offsets(a));
                }
                Input::Scalar => {
                    let _ = writeln!(s, "    T a{a} = v{a};");
                }
            }
        }
        let _ = writeln!(s, "    *(S0*)(p0 + {}) = ox_store<S0>({call});", offsets(0));
    };
    if contiguous {
        let _ = writeln!(s, "  const int V = {vec};");
        s.push_str("  long long nv = n / V;\n  for (long long j = first; j < nv; j += stride) {\n");
        for (i, inp) in inputs.iter().enumerate() {
            if let Input::Tensor(_) = inp {
                let a = i + 1;
                let _ = writeln!(s, "    struct alignas(sizeof(S{a}) * V) W{a} {{ S{a} v[V]; }};");
                let _ = writeln!(s, "    W{a} x{a} = ((const W{a}*)p{a})[j];");
            }
        }
        s.push_str("    struct alignas(sizeof(S0) * V) W0 { S0 v[V]; };\n    W0 y;\n#pragma unroll\n    for (int u = 0; u < V; ++u) {\n");
        for (i, inp) in inputs.iter().enumerate() {
            let a = i + 1;
            match inp {
                Input::Tensor(_) => {
                    let _ = writeln!(s, "      T a{a} = ox_load<T>(x{a}.v[u]);");
                }
                Input::Scalar => {
                    let _ = writeln!(s, "      T a{a} = v{a};");
                }
            }
        }
        let _ = writeln!(s, "      y.v[u] = ox_store<S0>({call});\n    }}\n    ((W0*)p0)[j] = y;\n  }}");
        s.push_str("  for (long long i = nv * V + first; i < n; i += stride) {\n");
        element(&mut s, &|a| format!("i * (long long)sizeof(S{a})"));
        s.push_str("  }\n}\n");
    } else {
        s.push_str("  for (long long i = first; i < n; i += stride) {\n    IDX r = (IDX)i;\n");
        for a in 0..nt {
            let _ = writeln!(s, "    IDX o{a} = 0;");
        }
        s.push_str("    for (int d = 0; d < g.ndim; ++d) {\n      IDX sz = g.sizes[d];\n      IDX q = r / sz;\n      IDX c = r - q * sz;\n      r = q;\n");
        for a in 0..nt {
            let _ = writeln!(s, "      o{a} += c * g.strides[{a}][d];");
        }
        s.push_str("    }\n");
        element(&mut s, &|a| format!("o{a}"));
        s.push_str("  }\n}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    static ADD: PointwiseKernel = PointwiseKernel {
        op: "add.out",
        expr: "T(a1 + T(c0 * a2))",
        arity: 2,
        float_only: false,
        int_only: false,
        bool_ok: true,
    };

    #[test]
    fn instances_read_like_the_op() {
        let v = source(&ADD, DType::F32, DType::F32, &[Input::Tensor(DType::F32), Input::Scalar], 1, true, 4, false);
        assert!(v.contains("typedef float T;"), "{v}");
        assert!(
            v.contains("__device__ __forceinline__ auto ox_op(T a1, T a2, T c0) { return T(a1 + T(c0 * a2)); }"),
            "{v}"
        );
        assert!(v.contains("extern \"C\" __global__ void ox_kernel(long long n, char* __restrict__ p0, const char* __restrict__ p1, T v2, T c0)"), "{v}");
        let g = source(
            &ADD,
            DType::F32,
            DType::BF16,
            &[Input::Tensor(DType::F16), Input::Tensor(DType::F32)],
            1,
            false,
            4,
            true,
        );
        assert!(
            g.contains("typedef long long IDX;")
                && g.contains("typedef ox_bf16 S0;")
                && g.contains("typedef ox_half S1;"),
            "{g}"
        );
        assert!(g.contains("IDX strides[3][25]"), "{g}");
    }
}
