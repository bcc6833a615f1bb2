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
//! Elements are stored little-endian in row-major order. Files written here are byte for byte
//! what the reference implementation writes: tensors ordered by dtype (widest first, so every
//! tensor is aligned to its element size) then by name, the header padded with spaces so that
//! the data starts at a multiple of 8.
//!
//! Reading validates everything, as a file may be untrusted: header length against the file
//! size, JSON syntax, duplicate names, dtype names, shapes (overflow included) against their byte
//! ranges, and that the byte ranges tile the buffer exactly. A bad file gives an error, never a
//! panic.
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

use crate::{DType, Device, Error, Result, Storage, Tensor, TensorLayout};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// The largest JSON header accepted, in bytes (the reference implementation's limit).
pub const MAX_HEADER_SIZE: u64 = 100_000_000;

/// Named tensors, as read from a file.
pub type NamedTensors = Vec<(String, Tensor)>;
/// The string-to-string metadata of a file.
pub type Metadata = BTreeMap<String, String>;

/// The header key of the string-to-string metadata.
pub const METADATA_KEY: &str = "__metadata__";

/// The safetensors name of a dtype (`F32`, `BF16`, `BOOL` …).
pub fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F64 => "F64",
        DType::F32 => "F32",
        DType::F16 => "F16",
        DType::BF16 => "BF16",
        DType::I64 => "I64",
        DType::I32 => "I32",
        DType::I16 => "I16",
        DType::I8 => "I8",
        DType::U8 => "U8",
        DType::Bool => "BOOL",
    }
}

/// The dtype of a safetensors dtype name, if oxten has it.
pub fn dtype_from_name(s: &str) -> Option<DType> {
    DType::ALL.into_iter().find(|&d| dtype_name(d) == s)
}

/// Dtypes of the format that oxten has no tensor type for (rejected with a clear message).
const UNSUPPORTED_DTYPES: [&str; 10] =
    ["U16", "U32", "U64", "C64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4"];

/// The writing order of the reference implementation: its `Dtype` enum order, descending
/// (widest dtypes first, then `F` before `I` at equal width as its enum has them).
fn write_rank(d: DType) -> u8 {
    match d {
        DType::I64 => 9,
        DType::F64 => 8,
        DType::F32 => 7,
        DType::I32 => 6,
        DType::BF16 => 5,
        DType::F16 => 4,
        DType::I16 => 3,
        DType::I8 => 2,
        DType::U8 => 1,
        DType::Bool => 0,
    }
}

fn err(op: &str, msg: impl Into<String>) -> Error {
    Error::value(msg).in_op(op)
}

// ----------------------------------------------------------------------------------------------
// Writing

/// Serializes named tensors (any dtype, any strides; CPU only) and optional metadata into the
/// bytes of a safetensors file. Names must be unique and not `"__metadata__"`.
pub fn to_bytes<S: AsRef<str>>(tensors: &[(S, Tensor)], metadata: Option<&Metadata>) -> Result<Vec<u8>> {
    const OP: &str = "safetensors.save";
    let mut seen = BTreeSet::new();
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
    }
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by(|&a, &b| {
        let (ta, tb) = (&tensors[a], &tensors[b]);
        write_rank(tb.1.dtype()).cmp(&write_rank(ta.1.dtype())).then_with(|| ta.0.as_ref().cmp(tb.0.as_ref()))
    });

    let json = |s: &str| serde_json::to_string(s).expect("a string always serializes to JSON");
    let mut header = String::from("{");
    if let Some(m) = metadata {
        header.push_str(&json(METADATA_KEY));
        header.push(':');
        header.push_str(&serde_json::to_string(m).expect("a string map always serializes to JSON"));
    }
    let mut offset = 0usize;
    for &i in &order {
        let (name, t) = (&tensors[i].0, &tensors[i].1);
        let nbytes = t.numel() as usize * t.dtype().size();
        if header.len() > 1 {
            header.push(',');
        }
        let shape: Vec<String> = t.sizes().iter().map(|s| s.to_string()).collect();
        header.push_str(&format!(
            "{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            json(name.as_ref()),
            dtype_name(t.dtype()),
            shape.join(","),
            offset,
            offset + nbytes
        ));
        offset += nbytes;
    }
    header.push('}');
    // Pad with spaces so that the data starts 8-byte aligned (the header length field is 8).
    while header.len() % 8 != 0 {
        header.push(' ');
    }

    let mut out = Vec::with_capacity(8 + header.len() + offset);
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for &i in &order {
        append_elements(&tensors[i].1, &mut out).map_err(|e| e.in_op(OP))?;
    }
    debug_assert_eq!(out.len(), 8 + header.len() + offset);
    Ok(out)
}

/// Appends the elements of `t` in logical (row-major) order, little-endian.
fn append_elements(t: &Tensor, out: &mut Vec<u8>) -> Result<()> {
    let c = crate::autograd::no_grad(|| t.try_contiguous())?;
    let size = c.dtype().size();
    let n = c.numel() as usize * size;
    if n == 0 {
        return Ok(());
    }
    // SAFETY: `c` is a contiguous CPU tensor, so its `n` bytes from `data_ptr` are initialised
    // elements inside its storage (checked by `Tensor::from_parts`), and `c` keeps the storage
    // alive while the slice is used.
    let bytes = unsafe { std::slice::from_raw_parts(c.data_ptr() as *const u8, n) };
    let start = out.len();
    out.extend_from_slice(bytes);
    swap_to_or_from_le(&mut out[start..], size);
    Ok(())
}

/// Converts elements of `size` bytes between native and little-endian order (a no-op on
/// little-endian machines).
fn swap_to_or_from_le(bytes: &mut [u8], size: usize) {
    if cfg!(target_endian = "big") && size > 1 {
        bytes.chunks_exact_mut(size).for_each(<[u8]>::reverse);
    }
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

/// One tensor of a parsed header.
struct Entry {
    name: String,
    dtype: DType,
    shape: Vec<i64>,
    begin: usize,
    end: usize,
}

/// The top-level JSON object as a list of pairs, so that duplicate keys can be detected
/// (`serde_json::Value` keeps only the last one).
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

/// Parses and validates the header; returns the entries sorted by offset, the metadata and where
/// the data buffer starts.
fn parse_header(bytes: &[u8]) -> Result<(Vec<Entry>, Metadata, usize)> {
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
    let mut entries = Vec::with_capacity(pairs.len());
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
            entries.push(parse_entry(name, &value, data_len).map_err(|m| err(OP, m))?);
        }
    }

    // The byte ranges must tile the buffer: sorted by start, each begins where the last ended.
    entries.sort_by_key(|e| (e.begin, e.end));
    let mut pos = 0usize;
    for e in &entries {
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
    Ok((entries, metadata, data_start))
}

/// Validates one tensor's header entry (`data_len`: bytes in the data buffer).
fn parse_entry(name: String, value: &serde_json::Value, data_len: usize) -> std::result::Result<Entry, String> {
    let obj = value.as_object().ok_or_else(|| format!("entry of tensor {name:?} is not a JSON object"))?;
    let field = |k: &str| obj.get(k).ok_or_else(|| format!("tensor {name:?} has no {k:?}"));

    let dtype = field("dtype")?.as_str().ok_or_else(|| format!("\"dtype\" of tensor {name:?} is not a string"))?;
    let dtype = match dtype_from_name(dtype) {
        Some(d) => d,
        None if UNSUPPORTED_DTYPES.contains(&dtype) => {
            return Err(format!("tensor {name:?} has dtype {dtype}, which oxten does not support"))
        }
        None => return Err(format!("tensor {name:?} has unknown dtype {dtype:?}")),
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
    Ok(Entry { name, dtype, shape, begin, end })
}

/// A fresh contiguous CPU tensor holding the little-endian elements in `bytes`.
fn tensor_from_le_bytes(e: &Entry, bytes: &[u8]) -> Result<Tensor> {
    if e.dtype == DType::Bool {
        if let Some(i) = bytes.iter().position(|&b| b > 1) {
            return Err(err(
                "safetensors.load",
                format!(
                    "tensor {:?} of dtype BOOL holds the byte {} at element {i}; booleans must be 0 or 1",
                    e.name, bytes[i]
                ),
            ));
        }
    }
    let storage = Storage::new_deferred(bytes.len(), Device::Cpu)?;
    if !bytes.is_empty() {
        // SAFETY: the storage was just allocated with exactly `bytes.len()` bytes and nobody else
        // sees it; every byte is written before `assume_init`. The bytes are valid elements of
        // `e.dtype`: any bit pattern is for the numeric dtypes, and BOOL bytes were checked to be
        // 0 or 1 above.
        unsafe {
            let dst = storage.data_ptr_for_overwrite();
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
            swap_to_or_from_le(std::slice::from_raw_parts_mut(dst, bytes.len()), e.dtype.size());
            storage.assume_init();
        }
    }
    Tensor::from_parts(storage, e.dtype, TensorLayout::contiguous(&e.shape)?)
}

/// Reads the tensors and the metadata of a safetensors file held in memory. Tensors come back
/// sorted by name, each a fresh contiguous CPU tensor.
pub fn from_bytes_with_metadata(bytes: &[u8]) -> Result<(NamedTensors, Metadata)> {
    let (mut entries, metadata, data_start) = parse_header(bytes)?;
    let data = &bytes[data_start..];
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let tensors = entries
        .into_iter()
        .map(|e| {
            let t = tensor_from_le_bytes(&e, &data[e.begin..e.end])?;
            Ok((e.name, t))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((tensors, metadata))
}

/// Reads the tensors of a safetensors file held in memory, sorted by name.
pub fn from_bytes(bytes: &[u8]) -> Result<NamedTensors> {
    Ok(from_bytes_with_metadata(bytes)?.0)
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| Error::runtime(format!("cannot read {}: {e}", path.display())).in_op("safetensors.load"))
}

/// Names the file in an error about its contents.
fn with_path(e: Error, path: &Path) -> Error {
    Error { message: format!("{}: {}", path.display(), e.message), ..e }
}

/// Reads the tensors and the metadata of a safetensors file (see [`from_bytes_with_metadata`]).
pub fn load_with_metadata(path: impl AsRef<Path>) -> Result<(NamedTensors, Metadata)> {
    let path = path.as_ref();
    from_bytes_with_metadata(&read_file(path)?).map_err(|e| with_path(e, path))
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
