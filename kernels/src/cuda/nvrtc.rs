//! Run-time compilation of CUDA C with NVRTC, straight to CUBIN for the device's architecture
//! (loading PTX would make the driver JIT it again), cached in memory per device and on disk
//! keyed by the source's hash, the architecture and the NVRTC version: a kernel compiles once
//! per machine, not once per run.

use cudarc::driver::{result as drv, sys};
use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};
use oxten_runtime::cuda::{context, driver_error};
use oxten_runtime::{Device, Error, Result};
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// A loaded kernel entry point.
#[derive(Clone, Copy, Debug)]
pub struct Function(pub(crate) sys::CUfunction);
// SAFETY: a CUfunction is an opaque handle of a module that is never unloaded; the driver
// allows launching it from any thread.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

static COMPILES: AtomicU64 = AtomicU64::new(0);
static DISK_HITS: AtomicU64 = AtomicU64::new(0);
static COMPILE_NANOS: AtomicU64 = AtomicU64::new(0);

/// What the compiler cache did in this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Programs compiled by NVRTC.
    pub compiles: u64,
    /// Programs loaded from the disk cache instead.
    pub disk_hits: u64,
    /// Time spent in NVRTC, in milliseconds.
    pub compile_ms: u64,
}

/// The compiler cache's counters.
pub fn compile_stats() -> CompileStats {
    CompileStats {
        compiles: COMPILES.load(Ordering::Relaxed),
        disk_hits: DISK_HITS.load(Ordering::Relaxed),
        compile_ms: COMPILE_NANOS.load(Ordering::Relaxed) / 1_000_000,
    }
}

/// 64-bit FNV-1a: a hash that is the same in every build (the disk cache's key).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn nvrtc_version() -> Result<(i32, i32)> {
    static V: OnceLock<std::result::Result<(i32, i32), String>> = OnceLock::new();
    V.get_or_init(|| {
        // SAFETY: only asks whether the dynamic loader finds the library.
        if !unsafe { nvrtc_sys::is_culib_present() } {
            return Err("the NVRTC library (libnvrtc.so) was not found by the dynamic loader; add the CUDA \
                        toolkit's lib64 folder (or the nvidia-cuda-nvrtc Python package's lib folder) to \
                        LD_LIBRARY_PATH"
                .into());
        }
        let (mut a, mut b) = (0, 0);
        // SAFETY: writes two ints.
        let r = unsafe { nvrtc_sys::nvrtcVersion(&mut a, &mut b) };
        r.result().map(|_| (a, b)).map_err(|e| format!("nvrtcVersion failed: {e:?}"))
    })
    .clone()
    .map_err(Error::runtime)
}

/// Where compiled kernels are kept: `$OXTEN_CUDA_CACHE`, else `$XDG_CACHE_HOME/oxten/cuda`, else
/// `~/.cache/oxten/cuda`; `None` when none can be named (or `OXTEN_CUDA_CACHE=off`).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("OXTEN_CUDA_CACHE") {
        return (d != "off").then(|| PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("oxten/cuda"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/oxten/cuda"))
}

/// Compiles `source` (or finds it in the disk cache) for `device` and returns its entry point
/// `entry`. `what` names the operator in errors; a compile error shows the offending lines.
pub fn load(device: Device, source: &str, entry: &str, what: &str) -> Result<Function> {
    let ctx = context(device)?;
    let (major, minor) = ctx.compute_capability().map_err(|e| driver_error("cuDeviceGetAttribute", e))?;
    let arch = format!("sm_{major}{minor}");
    let (vmaj, vmin) = nvrtc_version()?;
    let key = format!("{:016x}-{arch}-nvrtc{vmaj}.{vmin}", fnv1a(source.as_bytes()));
    let path = cache_dir().map(|d| d.join(format!("{key}.cubin")));
    let cached = path.as_ref().and_then(|p| std::fs::read(p).ok());
    let cubin = match cached {
        Some(c) => {
            DISK_HITS.fetch_add(1, Ordering::Relaxed);
            c
        }
        None => {
            let t = std::time::Instant::now();
            let c = compile(source, &arch, what)?;
            COMPILE_NANOS.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            COMPILES.fetch_add(1, Ordering::Relaxed);
            if let Some(p) = &path {
                // Best effort: a cache that cannot be written only costs a compile next time.
                if let Some(dir) = p.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let tmp = p.with_extension(format!("tmp{}", std::process::id()));
                if std::fs::write(&tmp, &c).is_ok() {
                    let _ = std::fs::rename(&tmp, p);
                }
            }
            c
        }
    };
    // SAFETY: `cubin` is a complete CUBIN image for this device's architecture; the module is
    // kept loaded for the life of the process (its functions are cached).
    let module = unsafe { drv::module::load_data(cubin.as_ptr() as *const std::ffi::c_void) }
        .map_err(|e| driver_error(&format!("cuModuleLoadData ({what})"), e))?;
    let name = CString::new(entry).map_err(|_| Error::runtime("kernel entry names have no NUL"))?;
    // SAFETY: a live module and a NUL-terminated name.
    let f = unsafe { drv::module::get_function(module, name) }
        .map_err(|e| driver_error(&format!("cuModuleGetFunction ({what})"), e))?;
    Ok(Function(f))
}

fn compile(source: &str, arch: &str, what: &str) -> Result<Vec<u8>> {
    let src = CString::new(source).map_err(|_| Error::runtime("CUDA sources have no NUL"))?;
    let prog = nvrtc::create_program(&src, Some(c"oxten_kernel.cu"))
        .map_err(|e| Error::runtime(format!("nvrtcCreateProgram ({what}): {e:?}")))?;
    let opts = [format!("--gpu-architecture={arch}"), "--std=c++17".to_string(), "-DNDEBUG".to_string()];
    // SAFETY: `prog` is a live program; it is destroyed once on every path below.
    let compiled = unsafe { nvrtc::compile_program(prog, &opts) };
    let result = match compiled {
        Err(e) => {
            // SAFETY: the program is live.
            let log = unsafe { nvrtc::get_program_log(prog) }.unwrap_or_default();
            let log: String = log.iter().map(|&c| c as u8 as char).filter(|c| *c != '\0').collect();
            Err(Error::runtime(format!(
                "NVRTC could not compile the CUDA kernel of {what} ({e:?}):\n{}",
                annotate(&log, source)
            )))
        }
        Ok(()) => {
            let mut n = 0usize;
            // SAFETY: the program compiled; the buffer has the size NVRTC reported.
            unsafe {
                nvrtc_sys::nvrtcGetCUBINSize(prog, &mut n)
                    .result()
                    .map_err(|e| Error::runtime(format!("nvrtcGetCUBINSize ({what}): {e:?}")))?;
                let mut buf = vec![0u8; n];
                nvrtc_sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut std::ffi::c_char)
                    .result()
                    .map_err(|e| Error::runtime(format!("nvrtcGetCUBIN ({what}): {e:?}")))?;
                Ok(buf)
            }
        }
    };
    // SAFETY: destroyed once.
    let _ = unsafe { nvrtc::destroy_program(prog) };
    result
}

/// The compiler log with the source line each message points at (`oxten_kernel.cu(LINE): …`).
pub fn annotate(log: &str, source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    for l in log.lines() {
        out.push_str(l);
        out.push('\n');
        let line_no = l
            .strip_prefix("oxten_kernel.cu(")
            .and_then(|r| r.split_once(')'))
            .and_then(|(n, _)| n.parse::<usize>().ok());
        if let Some(src) = line_no.and_then(|n| lines.get(n.wrapping_sub(1))) {
            out.push_str(&format!("    | {src}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_errors_show_the_offending_source_line() {
        let source = "// line 1\ntypedef float T;\n__device__ T f(T x) { return x +; }\n";
        let log = "oxten_kernel.cu(3): error: expected an expression\n\n1 error detected in the compilation.";
        let shown = annotate(log, source);
        assert_eq!(
            shown,
            "oxten_kernel.cu(3): error: expected an expression\n    | __device__ T f(T x) { return x +; }\n\n1 error detected in the compilation.\n"
        );
    }

    #[test]
    fn the_cache_key_hash_is_stable() {
        // FNV-1a test vectors: the disk cache must find a kernel again in the next build.
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x85944171f73967e8);
    }
}
