//! Kernel instances and launches: each kernel family builds the CUDA C of one instance (an
//! operator for some dtypes and layout) on a cache miss; the loaded entry point is kept per
//! device under a small key, so a warm launch is one hash-map lookup and `cuLaunchKernel` on the
//! current stream.

use super::nvrtc::{self, Function};
use cudarc::driver::result as drv;
use oxten_runtime::cuda::{current_stream, driver_error};
use oxten_runtime::{DType, Device, Error, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

/// Identifies one kernel instance: the family (an operator's static description), a variant
/// word (dtypes, layout, index width packed by the family) and the device.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct InstanceKey {
    pub family: usize,
    pub variant: u64,
    pub device: u8,
}

static INSTANCES: Mutex<Option<HashMap<InstanceKey, Function>>> = Mutex::new(None);

/// The entry point `ox_kernel` of the instance `key`, building its source with `source` and
/// compiling it (or loading it from the disk cache) on first use.
pub fn instance(key: InstanceKey, what: &str, source: impl FnOnce() -> String) -> Result<Function> {
    if let Some(f) = INSTANCES.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&key)) {
        return Ok(*f);
    }
    let f = nvrtc::load(Device::Cuda(key.device), &source(), "ox_kernel", what)?;
    INSTANCES.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).insert(key, f);
    Ok(f)
}

/// Launches `f` on the current stream of `device` with `args` (pointers to each argument's
/// value, in the kernel's parameter order).
///
/// # Safety
/// `args` match the kernel's parameters in number, order and types, and every device address
/// they carry is valid for what the kernel does with it.
pub unsafe fn launch(
    device: Device,
    f: Function,
    grid: u32,
    block: u32,
    shared: u32,
    args: &mut [*mut c_void],
) -> Result<()> {
    let stream = current_stream(device);
    // SAFETY: forwarded from the caller; the context is current (the caller allocated on it).
    unsafe { drv::launch_kernel(f.0, (grid.max(1), 1, 1), (block, 1, 1), shared, stream.raw(), args) }
        .map_err(|e| driver_error("cuLaunchKernel", e))
}

/// The C type a kernel stores elements of `dtype` in.
pub fn storage_type(dtype: DType) -> &'static str {
    match dtype {
        DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short",
        DType::I32 => "int",
        DType::I64 => "long long",
        DType::F16 => "ox_half",
        DType::BF16 => "ox_bf16",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::Bool => "ox_bool",
    }
}

/// The C type computations on `dtype` run in: f32 for the half types, int for bool.
pub fn compute_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 | DType::BF16 | DType::F32 => "float",
        DType::Bool => "int",
        other => storage_type(other),
    }
}

/// A small code per dtype for packing into variant words.
pub fn dtype_code(dtype: DType) -> u64 {
    dtype as u64
}

/// The bytes of `value` as an argument of the compute type of `dtype` (at most 8 bytes).
pub fn scalar_arg(dtype: DType, float: f64, int: i64) -> [u8; 8] {
    let mut b = [0u8; 8];
    match compute_type(dtype) {
        "float" => b[..4].copy_from_slice(&(float as f32).to_ne_bytes()),
        "double" => b.copy_from_slice(&float.to_ne_bytes()),
        "unsigned char" => b[0] = int as u8,
        "signed char" => b[0] = int as i8 as u8,
        "short" => b[..2].copy_from_slice(&(int as i16).to_ne_bytes()),
        "int" => b[..4].copy_from_slice(&(int as i32).to_ne_bytes()),
        _ => b.copy_from_slice(&int.to_ne_bytes()),
    }
    b
}

/// The error for a dtype a CUDA kernel does not implement (PyTorch's message).
pub fn not_implemented(what: &str, dtype: DType) -> Error {
    Error::dtype(format!("\"{what}_cuda\" not implemented for '{}'", oxten_runtime::iter::scalar_type_name(dtype)))
}

/// Blocks of `threads` covering `work` items (at least one).
pub fn blocks_for(work: u64, threads: u32) -> u32 {
    work.div_ceil(threads as u64).clamp(1, i32::MAX as u64) as u32
}
