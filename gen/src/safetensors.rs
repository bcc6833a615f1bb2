//! Reading and writing the [safetensors](https://github.com/huggingface/safetensors) format, the
//! checkpoint format of the Hugging Face ecosystem (`safetensors.torch.save_file` /
//! `load_file`).
//!
//! A file is an 8-byte little-endian header length `n`, then `n` bytes of JSON, then the data
//! buffer. The JSON header maps each tensor name to its dtype, shape and byte range in the
//! buffer, plus an optional `"__metadata__"` object of string pairs:
//!
//! ```text
//! {"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}, …}
//! ```
//!
//! Elements are stored little-endian in row-major order. The format itself is the `safetensors`
//! crate's, the reference implementation (Python's package wraps it): files written here are
//! byte for byte what PyTorch's `save_file` writes. This module is oxten's layer on top: tensors
//! to and from the crate's views, PyTorch `state_dict` names ([`load_into`]), and the checks of a
//! file that may be untrusted, run before the crate reads it so that the error says exactly what
//! is wrong: header length against the file size, JSON syntax, duplicate names, dtype names,
//! shapes (overflow included) against their byte ranges, byte ranges tiling the buffer, boolean
//! bytes. A bad file gives an error, never a panic. Large files are memory-mapped ([`load`]).
//!
//! ```
//! use oxten::{safetensors, Tensor};
//! let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
//! let b = Tensor::from_vec(vec![7i64], &[1]).unwrap();
//! let bytes = safetensors::to_bytes(&[("fc.weight", w.t()), ("fc.bias", b)], None).unwrap();
//! let back = safetensors::from_bytes(&bytes).unwrap();
//! assert_eq!(back[1].0, "fc.weight"); // sorted by name
//! assert_eq!(back[1].1.to_vec::<f32>().unwrap(), [1.0, 3.0, 2.0, 4.0]); // logical order of w.t()
//! ```

use crate::alloc::DataPtr;
use crate::{DType, Device, Error, Result, Storage, Tensor, TensorLayout};
use safetensors::{Dtype, SafeTensorError, SafeTensors, View};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// The largest JSON header accepted, in bytes (the reference implementation's limit).
pub const MAX_HEADER_SIZE: u64 = 100_000_000;

/// Named tensors, as read from a file.
pub type NamedTensors = Vec<(String, Tensor)>;
/// The string-to-string metadata of a file.
pub type Metadata = BTreeMap<String, String>;

/// The header key of the string-to-string metadata.
pub const METADATA_KEY: &str = "__metadata__";

/// The format's dtype of an oxten dtype.
pub fn to_format_dtype(d: DType) -> Dtype {
    match d {
        DType::F64 => Dtype::F64,
        DType::F32 => Dtype::F32,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::I64 => Dtype::I64,
        DType::I32 => Dtype::I32,
        DType::I16 => Dtype::I16,
        DType::I8 => Dtype::I8,
        DType::U8 => Dtype::U8,
        DType::Bool => Dtype::BOOL,
    }
}

/// The oxten dtype of a format dtype, if oxten has one.
pub fn from_format_dtype(d: Dtype) -> Option<DType> {
    DType::ALL.into_iter().find(|&o| to_format_dtype(o) == d)
}

/// The safetensors name of a dtype (`F32`, `BF16`, `BOOL` …).
pub fn dtype_name(d: DType) -> String {
    to_format_dtype(d).to_string()
}

fn err(op: &str, msg: impl Into<String>) -> Error {
    Error::value(msg).in_op(op)
}

/// An error of the safetensors crate, in `op`.
fn format_err(op: &str, e: SafeTensorError) -> Error {
    err(op, format!("{e}"))
}

// ----------------------------------------------------------------------------------------------
// Writing

/// A tensor as the safetensors crate writes it: its elements in row-major order, little-endian.
struct TensorBytes {
    dtype: Dtype,
    shape: Vec<usize>,
    /// Keeps the contiguous elements alive while the crate reads them.
    contiguous: Tensor,
}

impl View for &TensorBytes {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        let n = self.data_len();
        if n == 0 {
            return Cow::Borrowed(&[]);
        }
        // SAFETY: `contiguous` is a contiguous CPU tensor, so its `n` bytes from `data_ptr` are
        // initialised elements inside its storage, which it keeps alive for the borrow of `self`.
        let bytes = unsafe { std::slice::from_raw_parts(self.contiguous.data_ptr() as *const u8, n) };
        if cfg!(target_endian = "big") && self.contiguous.dtype().size() > 1 {
            let mut v = bytes.to_vec();
            v.chunks_exact_mut(self.contiguous.dtype().size()).for_each(<[u8]>::reverse);
            Cow::Owned(v)
        } else {
            Cow::Borrowed(bytes)
        }
    }
    fn data_len(&self) -> usize {
        self.contiguous.numel() as usize * self.contiguous.dtype().size()
    }
}

/// Serializes named tensors (any dtype, any strides; CPU only) and optional metadata into the
/// bytes of a safetensors file. Names must be unique and not `"__metadata__"`.
pub fn to_bytes<S: AsRef<str>>(tensors: &[(S, Tensor)], metadata: Option<&Metadata>) -> Result<Vec<u8>> {
    const OP: &str = "safetensors.save";
    let mut seen = BTreeSet::new();
    let mut views = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let name = name.as_ref();
        if name == METADATA_KEY {
            return Err(err(OP, format!("{METADATA_KEY:?} is reserved for the metadata and cannot name a tensor")));
        }
        if !seen.insert(name) {
            return Err(err(OP, format!("duplicate tensor name {name:?}")));
        }
        if t.device() != Device::Cpu {
            return Err(
                Error::device(format!("tensor {name:?} is on {}; only cpu tensors can be saved", t.device())).in_op(OP)
            );
        }
        let contiguous = crate::autograd::no_grad(|| t.try_contiguous()).map_err(|e| e.in_op(OP))?;
        let shape = t.sizes().iter().map(|&s| s as usize).collect();
        views.push((name.to_string(), TensorBytes { dtype: to_format_dtype(t.dtype()), shape, contiguous }));
    }
    let bytes =
        safetensors::serialize(views.iter().map(|(n, v)| (n.as_str(), v)), None).map_err(|e| format_err(OP, e))?;
    Ok(match metadata {
        Some(m) => with_metadata(bytes, m),
        None => bytes,
    })
}

/// Puts the metadata first in the header, where the crate puts it, with its keys sorted: the
/// crate takes a `HashMap` and writes its keys in a different order on every run, and oxten's
/// files are reproducible. The data offsets count from the end of the header, so they stay.
fn with_metadata(bytes: Vec<u8>, metadata: &Metadata) -> Vec<u8> {
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("the crate writes the header length")) as usize;
    let tensors = std::str::from_utf8(&bytes[8..8 + n]).expect("the crate writes a UTF-8 header").trim_end();
    let json = serde_json::to_string(metadata).expect("a string map always serializes to JSON");
    let rest = tensors.strip_prefix('{').expect("the header is a JSON object");
    let sep = if rest == "}" { "" } else { "," };
    let mut header = format!("{{{METADATA_KEY:?}:{json}{sep}{rest}");
    // Pad with spaces so that the data starts 8-byte aligned, as the crate does.
    header.extend(std::iter::repeat_n(' ', header.len().next_multiple_of(8) - header.len()));
    let mut out = Vec::with_capacity(8 + header.len() + bytes.len() - 8 - n);
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&bytes[8 + n..]);
    out
}

/// Writes named tensors and optional metadata to a safetensors file (see [`to_bytes`]). The file
/// is written under a temporary name first and then renamed, so an existing file is never left
/// half-written.
pub fn save<S: AsRef<str>>(path: impl AsRef<Path>, tensors: &[(S, Tensor)], metadata: Option<&Metadata>) -> Result<()> {
    let path = path.as_ref();
    let bytes = to_bytes(tensors, metadata)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let io =
        |e: std::io::Error| Error::runtime(format!("cannot write {}: {e}", path.display())).in_op("safetensors.save");
    std::fs::write(&tmp, &bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

// ----------------------------------------------------------------------------------------------
// Reading

/// The top-level JSON object as a list of pairs, so that duplicate keys can be detected
/// (`serde_json::Value`, and the safetensors crate's header map, keep only the last one).
struct Pairs(Vec<(String, serde_json::Value)>);

impl<'de> serde::Deserialize<'de> for Pairs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Pairs, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Pairs;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> std::result::Result<Pairs, A::Error> {
                let mut v = Vec::new();
                while let Some(kv) = m.next_entry::<String, serde_json::Value>()? {
                    v.push(kv);
                }
                Ok(Pairs(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// One tensor of a checked header: its name and byte range in the data buffer.
struct Span {
    name: String,
    begin: usize,
    end: usize,
}

/// Checks the header of a file that may be untrusted, with messages that say exactly what is
/// wrong (the safetensors crate, which then reads the file, gives terser ones and keeps the last
/// of duplicate keys). Returns the metadata.
fn check_header(bytes: &[u8]) -> Result<Metadata> {
    const OP: &str = "safetensors.load";
    let Some(len_bytes) = bytes.get(..8) else {
        return Err(err(OP, format!("the file is {} bytes long, too short for the 8-byte header length", bytes.len())));
    };
    let n = u64::from_le_bytes(len_bytes.try_into().expect("8 bytes"));
    if n > MAX_HEADER_SIZE {
        return Err(err(OP, format!("header length {n} is larger than the maximum of {MAX_HEADER_SIZE} bytes")));
    }
    let data_start = 8 + n as usize;
    if data_start > bytes.len() {
        return Err(err(OP, format!("header length {n} runs past the end of the file ({} bytes)", bytes.len())));
    }
    let text = std::str::from_utf8(&bytes[8..data_start]).map_err(|e| err(OP, format!("header is not UTF-8: {e}")))?;
    if !text.starts_with('{') {
        return Err(err(OP, "header does not start with '{': not a safetensors file"));
    }
    let Pairs(pairs) = serde_json::from_str(text).map_err(|e| err(OP, format!("header is not valid JSON: {e}")))?;
    let data_len = bytes.len() - data_start;

    let mut seen = BTreeSet::new();
    let mut metadata = BTreeMap::new();
    let mut spans = Vec::with_capacity(pairs.len());
    for (name, value) in pairs {
        if !seen.insert(name.clone()) {
            return Err(err(OP, format!("duplicate key {name:?} in the header")));
        }
        if name == METADATA_KEY {
            let obj = value.as_object().ok_or_else(|| err(OP, format!("{METADATA_KEY} is not a JSON object")))?;
            for (k, v) in obj {
                let v = v.as_str().ok_or_else(|| err(OP, format!("{METADATA_KEY} value of {k:?} is not a string")))?;
                metadata.insert(k.clone(), v.to_string());
            }
        } else {
            spans.push(check_entry(name, &value, data_len).map_err(|m| err(OP, m))?);
        }
    }

    // The byte ranges must tile the buffer: sorted by start, each begins where the last ended.
    spans.sort_by_key(|e| (e.begin, e.end));
    let mut pos = 0usize;
    for e in &spans {
        if e.begin != pos {
            let how = if e.begin < pos { "the byte ranges overlap" } else { "the data has a gap" };
            return Err(err(
                OP,
                format!(
                    "tensor {:?} has data_offsets [{}, {}] but the tensors before it end at {pos}: {how}",
                    e.name, e.begin, e.end
                ),
            ));
        }
        pos = e.end;
    }
    if pos != data_len {
        return Err(err(OP, format!("the tensors cover {pos} bytes of data but the file holds {data_len}")));
    }
    Ok(metadata)
}

/// Checks one tensor's header entry (`data_len`: bytes in the data buffer).
fn check_entry(name: String, value: &serde_json::Value, data_len: usize) -> std::result::Result<Span, String> {
    let obj = value.as_object().ok_or_else(|| format!("entry of tensor {name:?} is not a JSON object"))?;
    let field = |k: &str| obj.get(k).ok_or_else(|| format!("tensor {name:?} has no {k:?}"));

    let dtype_value = field("dtype")?;
    let dtype = dtype_value.as_str().ok_or_else(|| format!("\"dtype\" of tensor {name:?} is not a string"))?;
    // The format's dtype names are the crate's `Dtype` variants.
    let dtype = match serde_json::from_value::<Dtype>(dtype_value.clone()).map(from_format_dtype) {
        Ok(Some(d)) => d,
        Ok(None) => return Err(format!("tensor {name:?} has dtype {dtype}, which oxten does not support")),
        Err(_) => return Err(format!("tensor {name:?} has unknown dtype {dtype:?}")),
    };

    let bad_shape = || format!("\"shape\" of tensor {name:?} is not a list of non-negative integers");
    let shape = field("shape")?.as_array().ok_or_else(bad_shape)?;
    let shape: Vec<i64> = shape
        .iter()
        .map(|s| s.as_u64().and_then(|s| i64::try_from(s).ok()).ok_or_else(bad_shape))
        .collect::<std::result::Result<_, _>>()?;

    let bad_offsets = || format!("\"data_offsets\" of tensor {name:?} is not a pair of non-negative integers");
    let offsets = field("data_offsets")?.as_array().ok_or_else(bad_offsets)?;
    let [begin, end] = offsets.as_slice() else { return Err(bad_offsets()) };
    let (begin, end) = (begin.as_u64().ok_or_else(bad_offsets)?, end.as_u64().ok_or_else(bad_offsets)?);
    if begin > end || end > data_len as u64 {
        return Err(format!(
            "data_offsets [{begin}, {end}] of tensor {name:?} are out of range for a data buffer of {data_len} bytes"
        ));
    }
    let (begin, end) = (begin as usize, end as usize);

    // The element count in bytes, and (for shapes with a zero) the strides, must not overflow.
    let nbytes = shape
        .iter()
        .try_fold(1usize, |acc, &s| acc.checked_mul(usize::try_from(s).ok()?))
        .and_then(|n| n.checked_mul(dtype.size()))
        .filter(|_| shape.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s.max(1))).is_some())
        .ok_or_else(|| format!("shape {shape:?} of tensor {name:?} overflows"))?;
    if nbytes != end - begin {
        return Err(format!(
            "tensor {name:?} of dtype {} and shape {shape:?} needs {nbytes} bytes but its data_offsets [{begin}, {end}] hold {}",
            dtype_name(dtype),
            end - begin
        ));
    }
    Ok(Span { name, begin, end })
}

/// The memory a file was mapped into, shared by the tensors that view it.
type Mapping = Arc<memmap2::MmapMut>;

/// Frees a tensor's share of a mapping ([`DataPtr`]'s deleter).
///
/// # Safety
/// `ctx` is a pointer from `Arc::into_raw` on a [`Mapping`], released once.
unsafe fn release_mapping(_ptr: *mut u8, _nbytes: usize, ctx: *mut ()) {
    // SAFETY: the caller's contract: one `into_raw` share, given back once.
    drop(unsafe { Arc::from_raw(ctx as *const memmap2::MmapMut) });
}

/// A CPU tensor of `dtype` and `shape` holding the little-endian elements `bytes`: a view into
/// `mapping` when the bytes lie in it, aligned for the dtype, on a little-endian machine (no copy);
/// a fresh copy otherwise.
fn tensor_from_le_bytes(
    name: &str,
    dtype: DType,
    shape: &[i64],
    bytes: &[u8],
    mapping: Option<&Mapping>,
) -> Result<Tensor> {
    if dtype == DType::Bool {
        if let Some(i) = bytes.iter().position(|&b| b > 1) {
            return Err(err(
                "safetensors.load",
                format!(
                    "tensor {name:?} of dtype BOOL holds the byte {} at element {i}; booleans must be 0 or 1",
                    bytes[i]
                ),
            ));
        }
    }
    let layout = TensorLayout::contiguous(shape)?;
    let aligned = (bytes.as_ptr() as usize).is_multiple_of(dtype.size());
    if let (Some(map), true, true, false) = (mapping, aligned, cfg!(target_endian = "little"), bytes.is_empty()) {
        let ctx = Arc::into_raw(Arc::clone(map)) as *mut ();
        // SAFETY: `bytes` lies inside the mapping (the caller's slice of it), which is a private
        // copy-on-write mapping: initialised from the file, writable, and writes never reach the
        // file; no other tensor views these bytes (the byte ranges were checked not to overlap).
        // The `Arc` share in `ctx` keeps it mapped until the deleter runs, once, when the storage
        // dies. The bytes are valid elements of `dtype` (any bit pattern for the numeric dtypes;
        // BOOL checked above).
        let storage = unsafe {
            let data = DataPtr::new(bytes.as_ptr() as *mut u8, bytes.len(), Device::Cpu, ctx, Some(release_mapping));
            Storage::from_data_ptr(data, Device::Cpu)?
        };
        return Tensor::from_parts(storage, dtype, layout);
    }
    let storage = Storage::new_deferred(bytes.len(), Device::Cpu)?;
    if !bytes.is_empty() {
        // SAFETY: the storage was just allocated with exactly `bytes.len()` bytes and nobody else
        // sees it; every byte is written before `assume_init`. The bytes are valid elements of
        // `dtype`: any bit pattern is for the numeric dtypes, and BOOL bytes were checked above.
        unsafe {
            let dst = storage.data_ptr_for_overwrite();
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
            if cfg!(target_endian = "big") && dtype.size() > 1 {
                std::slice::from_raw_parts_mut(dst, bytes.len())
                    .chunks_exact_mut(dtype.size())
                    .for_each(<[u8]>::reverse);
            }
            storage.assume_init();
        }
    }
    Tensor::from_parts(storage, dtype, layout)
}

/// Reads a checked file with the safetensors crate; `mapping`, when given, holds `bytes`.
fn read_tensors(bytes: &[u8], mapping: Option<&Mapping>) -> Result<(NamedTensors, Metadata)> {
    const OP: &str = "safetensors.load";
    let metadata = check_header(bytes)?;
    let file = SafeTensors::deserialize(bytes).map_err(|e| format_err(OP, e))?;
    let mut tensors = file
        .tensors()
        .into_iter()
        .map(|(name, view)| {
            let dtype = from_format_dtype(view.dtype()).expect("check_header accepts only oxten's dtypes");
            let shape: Vec<i64> = view.shape().iter().map(|&s| s as i64).collect();
            let t = tensor_from_le_bytes(&name, dtype, &shape, view.data(), mapping)?;
            Ok((name, t))
        })
        .collect::<Result<Vec<_>>>()?;
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((tensors, metadata))
}

/// Reads the tensors and the metadata of a safetensors file held in memory. Tensors come back
/// sorted by name, each a fresh contiguous CPU tensor.
pub fn from_bytes_with_metadata(bytes: &[u8]) -> Result<(NamedTensors, Metadata)> {
    read_tensors(bytes, None)
}

/// Reads the tensors of a safetensors file held in memory, sorted by name.
pub fn from_bytes(bytes: &[u8]) -> Result<NamedTensors> {
    Ok(from_bytes_with_metadata(bytes)?.0)
}

/// Files from this size on are memory-mapped by [`load`] rather than read.
pub const MAP_THRESHOLD: u64 = 1 << 20;

/// Names the file in an error about its contents.
fn with_path(e: Error, path: &Path) -> Error {
    Error { message: format!("{}: {}", path.display(), e.message), ..e }
}

/// Reads the tensors and the metadata of a safetensors file (see [`from_bytes_with_metadata`]).
///
/// Files of [`MAP_THRESHOLD`] bytes or more are memory-mapped, copy-on-write: the tensors view
/// the mapped pages (aligned ones; the reference writer aligns every tensor) instead of copies, so
/// a large checkpoint is loaded without reading it all and writes to the tensors never reach the
/// file. As with every memory-mapped file, another process must not truncate it meanwhile.
pub fn load_with_metadata(path: impl AsRef<Path>) -> Result<(NamedTensors, Metadata)> {
    let path = path.as_ref();
    let io =
        |e: std::io::Error| Error::runtime(format!("cannot read {}: {e}", path.display())).in_op("safetensors.load");
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len < MAP_THRESHOLD {
        let bytes = std::fs::read(path).map_err(io)?;
        return from_bytes_with_metadata(&bytes).map_err(|e| with_path(e, path));
    }
    // SAFETY: a private (copy-on-write) mapping of a file opened read-only: writes through it stay
    // in this process. Like every mapped file it relies on no other process truncating the file
    // while mapped (documented above).
    let mut map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }.map_err(io)?;
    let ptr = map.as_mut_ptr();
    let map = Arc::new(map);
    // SAFETY: `ptr` is the start of the `len`-byte mapping `map` owns, alive for this borrow.
    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, map.len()) };
    read_tensors(bytes, Some(&map)).map_err(|e| with_path(e, path))
}

/// Reads the tensors of a safetensors file, sorted by name.
pub fn load(path: impl AsRef<Path>) -> Result<NamedTensors> {
    Ok(load_with_metadata(path)?.0)
}

// ----------------------------------------------------------------------------------------------
// Loading into existing tensors

/// Copies `source` tensors into the `targets` of the same names (in place, under no-grad), like
/// PyTorch's `load_state_dict(strict=True)`. Every name, shape and dtype is checked before anything
/// is copied, and all problems are reported in one error:
///
/// ```text
/// Error(s) in loading state_dict:
///     Missing key(s) in state_dict: "fc.bias".
///     Unexpected key(s) in state_dict: "fc2.weight".
///     size mismatch for fc.weight: copying a param with shape [10, 64] from checkpoint, the shape in current model is [10, 32].
///     dtype mismatch for conv.weight: copying a param with dtype float64 from checkpoint, the dtype in current model is float32.
/// ```
pub fn copy_into<S: AsRef<str>, T: AsRef<str>>(source: &[(S, Tensor)], targets: &[(T, Tensor)]) -> Result<()> {
    const OP: &str = "safetensors.load_into";
    let mut src = BTreeMap::new();
    for (name, t) in source {
        if src.insert(name.as_ref(), t).is_some() {
            return Err(err(OP, format!("duplicate name {:?} in the checkpoint", name.as_ref())));
        }
    }
    let mut dst = BTreeSet::new();
    for (name, _) in targets {
        if !dst.insert(name.as_ref()) {
            return Err(err(OP, format!("duplicate name {:?} among the tensors to load into", name.as_ref())));
        }
    }
    let quote = |names: Vec<&str>| names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
    let missing: Vec<&str> = targets.iter().map(|(n, _)| n.as_ref()).filter(|n| !src.contains_key(n)).collect();
    let unexpected: Vec<&str> = source.iter().map(|(n, _)| n.as_ref()).filter(|n| !dst.contains(n)).collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("Missing key(s) in state_dict: {}.", quote(missing)));
    }
    if !unexpected.is_empty() {
        problems.push(format!("Unexpected key(s) in state_dict: {}.", quote(unexpected)));
    }
    let mut pairs = Vec::with_capacity(targets.len());
    for (name, target) in targets {
        let name = name.as_ref();
        let Some(&s) = src.get(name) else { continue };
        if s.sizes() != target.sizes() {
            problems.push(format!(
                "size mismatch for {name}: copying a param with shape {:?} from checkpoint, the shape in current model is {:?}.",
                &s.sizes()[..],
                &target.sizes()[..]
            ));
        } else if s.dtype() != target.dtype() {
            problems.push(format!(
                "dtype mismatch for {name}: copying a param with dtype {} from checkpoint, the dtype in current model is {}.",
                s.dtype(),
                target.dtype()
            ));
        } else {
            pairs.push((name, target, s));
        }
    }
    if !problems.is_empty() {
        return Err(err(OP, format!("Error(s) in loading state_dict:\n\t{}", problems.join("\n\t"))));
    }
    crate::autograd::no_grad(|| {
        for (name, target, s) in pairs {
            target.try_copy_(s).map_err(|e| err(OP, format!("copying {name}: {e}")))?;
        }
        Ok(())
    })
}

/// Loads a safetensors file into existing tensors of the same names, shapes and dtypes (see
/// [`copy_into`] for the checks and the error).
pub fn load_into<T: AsRef<str>>(path: impl AsRef<Path>, targets: &[(T, Tensor)]) -> Result<()> {
    let path = path.as_ref();
    copy_into(&load(path)?, targets).map_err(|e| with_path(e, path))
}
