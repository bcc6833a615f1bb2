//! `oxten::safetensors`: round trips of every dtype and layout, a file written by the reference
//! Python package (tests/golden/fixture.safetensors, from scripts/safetensors_fixture.py), and
//! corrupted or hostile files, which must give errors and never panic.

use oxten::safetensors::{self, copy_into, from_bytes, from_bytes_with_metadata, load_into, to_bytes};
use oxten::{DType, Tensor};
use std::collections::BTreeMap;
use std::path::PathBuf;

const FIXTURE: &[u8] = include_bytes!("../golden/fixture.safetensors");

/// A tensor of `dtype` with distinct values that every dtype holds exactly (bool: alternating).
fn values(dtype: DType, sizes: &[i64]) -> Tensor {
    let n: i64 = sizes.iter().product();
    let v: Vec<f64> =
        (0..n).map(|i| if dtype == DType::Bool { (i % 2) as f64 } else { (i % 100) as f64 - 50.0 }).collect();
    let v: Vec<f64> = if dtype == DType::U8 { v.into_iter().map(|x| x + 50.0).collect() } else { v };
    Tensor::from_vec(v, sizes).unwrap().to_dtype(dtype)
}

fn named(v: Vec<(&str, Tensor)>) -> Vec<(String, Tensor)> {
    v.into_iter().map(|(n, t)| (n.to_string(), t)).collect()
}

/// A unique path in the temporary directory.
fn temp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("oxten-safetensors-{}-{tag}.safetensors", std::process::id()))
}

/// A file from a header text and a data buffer, the header length written as given.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn assert_same(a: &Tensor, b: &Tensor) {
    assert_eq!(a.dtype(), b.dtype());
    assert_eq!(a.sizes(), b.sizes());
    let (va, vb) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    assert_eq!(va.len(), vb.len());
    for (x, y) in va.iter().zip(&vb) {
        assert_eq!(x.to_bits(), y.to_bits(), "{a} vs {b}");
    }
}

#[test]
fn round_trip_every_dtype_and_layout() {
    let mut tensors = Vec::new();
    for d in DType::ALL {
        let base = values(d, &[3, 4, 5]);
        tensors.push((format!("{d}.contiguous"), base.clone()));
        tensors.push((format!("{d}.transposed"), base.transpose(0, 2)));
        tensors.push((format!("{d}.strided"), base.slice(1, Some(1), None, 2).select(2, 3)));
        tensors.push((format!("{d}.expanded"), values(d, &[1, 3]).expand(&[4, 3])));
        tensors.push((format!("{d}.scalar"), values(d, &[]).add_scalar(1.0).to_dtype(d)));
        tensors.push((format!("{d}.empty"), values(d, &[0, 7])));
        tensors.push((
            format!("{d}.channels_last"),
            values(d, &[2, 3, 2, 2])
                .contiguous_with(oxten::options::ContiguousOpts { memory_format: oxten::MemoryFormat::ChannelsLast }),
        ));
    }
    let mut meta = BTreeMap::new();
    meta.insert("format".to_string(), "pt".to_string());
    meta.insert("epoch".to_string(), "7 \"quoted\" ünïcode".to_string());
    let bytes = to_bytes(&tensors, Some(&meta)).unwrap();

    // The data starts 8-byte aligned, after a header padded with spaces.
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!((8 + n) % 8, 0);

    let (back, meta_back) = from_bytes_with_metadata(&bytes).unwrap();
    assert_eq!(meta_back, meta);
    let mut expected = tensors.clone();
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(back.len(), expected.len());
    for ((n1, t1), (n2, t2)) in back.iter().zip(&expected) {
        assert_eq!(n1, n2);
        assert!(t1.is_contiguous(), "{n1}");
        assert_same(t1, t2);
    }
    // And writing what was read gives the same bytes.
    assert_eq!(to_bytes(&back, Some(&meta)).unwrap(), bytes);
}

#[test]
fn files_and_no_tensors() {
    let path = temp_path("files");
    let t = named(vec![("a", values(DType::F32, &[2, 2])), ("b", values(DType::I64, &[3]))]);
    safetensors::save(&path, &t, None).unwrap();
    let back = safetensors::load(&path).unwrap();
    assert_same(&back[0].1, &t[0].1);
    assert_same(&back[1].1, &t[1].1);
    let (_, meta) = safetensors::load_with_metadata(&path).unwrap();
    assert!(meta.is_empty());
    std::fs::remove_file(&path).unwrap();
    let e = safetensors::load(&path).unwrap_err().to_string();
    assert!(e.contains("cannot read") && e.contains("files"), "{e}");

    // &str names work too; an empty file (no tensors) round-trips.
    let empty: &[(&str, Tensor)] = &[];
    let bytes = to_bytes(empty, None).unwrap();
    assert_eq!(&bytes[8..], b"{}      ");
    assert!(from_bytes(&bytes).unwrap().is_empty());
}

#[test]
fn saving_rejects_bad_input() {
    let t = values(DType::F32, &[2]);
    let e = to_bytes(&[("a", t.clone()), ("a", t.clone())], None).unwrap_err().to_string();
    assert!(e.contains("duplicate tensor name \"a\""), "{e}");
    let e = to_bytes(&[("__metadata__", t.clone())], None).unwrap_err().to_string();
    assert!(e.contains("reserved"), "{e}");
    let meta =
        oxten::empty_with(&[2], oxten::options::EmptyOpts { device: Some(oxten::Device::Meta), ..Default::default() });
    let e = to_bytes(&[("m", meta)], None).unwrap_err().to_string();
    assert!(e.contains("only cpu tensors"), "{e}");
}

/// The layout the reference implementation writes: dtype order (widest first), then names.
#[test]
fn writes_what_the_reference_writes() {
    let t = named(vec![
        ("z", values(DType::U8, &[3])),
        ("a", values(DType::F16, &[2])),
        ("m", values(DType::F64, &[1])),
        ("e", values(DType::F32, &[0])),
        ("s", values(DType::F32, &[])),
    ]);
    let mut meta = BTreeMap::new();
    meta.insert("format".to_string(), "pt".to_string());
    let bytes = to_bytes(&t, Some(&meta)).unwrap();
    // From safetensors.torch.save of the same tensors (safetensors 0.8.0).
    let header = r#"{"__metadata__":{"format":"pt"},"m":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},"s":{"dtype":"F32","shape":[],"data_offsets":[8,12]},"a":{"dtype":"F16","shape":[2],"data_offsets":[12,16]},"z":{"dtype":"U8","shape":[3],"data_offsets":[16,19]}}    "#;
    assert_eq!(u64::from_le_bytes(bytes[..8].try_into().unwrap()), 304);
    assert_eq!(std::str::from_utf8(&bytes[8..312]).unwrap(), header);
    assert_eq!(bytes.len(), 331);
}

#[test]
fn reads_a_file_written_by_the_python_package() {
    let (t, meta) = from_bytes_with_metadata(FIXTURE).unwrap();
    assert_eq!(meta.get("format").map(String::as_str), Some("pt"));
    let get = |name: &str| t.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("{name}")).1.clone();
    let names: Vec<&str> = t.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "brain",
            "bytes.signed",
            "conv.weight",
            "counts",
            "empty",
            "fc.bias",
            "half",
            "labels",
            "mask",
            "pixels",
            "scalar",
            "shorts",
            "transposed"
        ]
    );

    let w = get("conv.weight");
    assert_eq!((w.dtype(), &w.sizes()[..]), (DType::F32, &[2, 1, 3, 3][..]));
    assert_eq!(w.to_vec::<f32>().unwrap(), (0..18).map(|i| i as f32 * 0.25 - 2.0).collect::<Vec<_>>());
    assert_eq!(get("fc.bias").to_vec::<f64>().unwrap(), [0.5, -1.25, 3.0e100]);
    let h = get("half");
    assert_eq!((h.dtype(), &h.sizes()[..]), (DType::F16, &[2, 2][..]));
    assert_eq!(h.to_f64_vec().unwrap(), [1.0, -0.5, 65504.0, 2f64.powi(-24)]);
    let b = get("brain");
    assert_eq!(b.dtype(), DType::BF16);
    assert_eq!(b.to_f64_vec().unwrap(), [1.0, -2.5, 3.140625]);
    assert_eq!(get("labels").to_vec::<i64>().unwrap(), [0, -1, 1 << 40, i64::MIN]);
    assert_eq!(get("counts").to_vec::<i32>().unwrap(), [-7, i32::MAX]);
    assert_eq!(get("shorts").to_vec::<i16>().unwrap(), [i16::MIN, 0, i16::MAX]);
    assert_eq!(get("bytes.signed").to_vec::<i8>().unwrap(), [-128, 127]);
    let p = get("pixels");
    assert_eq!((&p.sizes()[..], p.to_vec::<u8>().unwrap()), (&[2, 2][..], vec![0, 1, 128, 255]));
    assert_eq!(get("mask").to_vec::<bool>().unwrap(), [true, false, true]);
    let s = get("scalar");
    assert_eq!((s.dim(), s.item::<f32>().unwrap()), (0, 3.5));
    let e = get("empty");
    assert_eq!((&e.sizes()[..], e.numel()), (&[0, 4][..], 0));
    let tr = get("transposed");
    assert_eq!((&tr.sizes()[..], tr.to_vec::<i16>().unwrap()), (&[3, 2][..], vec![0, 3, 1, 4, 2, 5]));

    // Writing the same tensors and metadata reproduces the file byte for byte.
    assert_eq!(to_bytes(&t, Some(&meta)).unwrap(), FIXTURE);
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = to_bytes(
        &named(vec![
            ("w", values(DType::F32, &[2, 3])),
            ("b", values(DType::I8, &[3])),
            ("e", values(DType::F64, &[0])),
        ]),
        None,
    )
    .unwrap();
    assert!(from_bytes(&bytes).is_ok());
    for k in 0..bytes.len() {
        assert!(from_bytes(&bytes[..k]).is_err(), "prefix of {k} bytes was accepted");
    }
    // Nor may anything follow the data.
    let mut longer = bytes.clone();
    longer.push(0);
    let e = from_bytes(&longer).unwrap_err().to_string();
    assert!(e.contains("cover 27 bytes of data but the file holds 28"), "{e}");
}

/// The error message for a file, which must be an error.
fn error_of(bytes: &[u8]) -> String {
    match from_bytes(bytes) {
        Ok(t) => panic!("accepted a bad file, giving {} tensors", t.len()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn corrupted_headers_are_errors() {
    let f32x2 = r#""dtype":"F32","shape":[2]"#;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![1, 2, 3], "too short for the 8-byte header length"),
        (u64::MAX.to_le_bytes().to_vec(), "larger than the maximum"),
        ((safetensors::MAX_HEADER_SIZE + 1).to_le_bytes().to_vec(), "larger than the maximum"),
        (1000u64.to_le_bytes().iter().chain(b"{}").copied().collect(), "runs past the end of the file"),
        (file("{\"a\":", &[]), "not valid JSON"),
        (file("[1, 2]  ", &[]), "does not start with '{'"),
        (file(" {}", &[]), "does not start with '{'"),
        (file("{\"a\":1} x", &[]), "not valid JSON"),
        (file("{\"a\":1}", &[]), "entry of tensor \"a\" is not a JSON object"),
        (file("{\"a\":{\"shape\":[],\"data_offsets\":[0,0]}}", &[]), "tensor \"a\" has no \"dtype\""),
        (file("{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", &[0; 8]), "unknown dtype \"F33\""),
        (
            file("{\"a\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]}}", &[0; 4]),
            "dtype U16, which oxten does not support",
        ),
        (
            file("{\"a\":{\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,4]}}", &[0; 4]),
            "\"dtype\" of tensor \"a\" is not a string",
        ),
        (
            file(&format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,16]}}}}"), &[0; 8]),
            "out of range for a data buffer of 8 bytes",
        ),
        (file(&format!("{{\"a\":{{{f32x2},\"data_offsets\":[8,0]}}}}"), &[0; 8]), "out of range"),
        (
            file(&format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,8,9]}}}}"), &[0; 8]),
            "not a pair of non-negative integers",
        ),
        (file(&format!("{{\"a\":{{{f32x2},\"data_offsets\":[-1,7]}}}}"), &[0; 8]), "not a pair"),
        (file(&format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,18446744073709551616]}}}}"), &[0; 8]), "not a pair"),
        (
            file(&format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,4]}}}}"), &[0; 4]),
            "needs 8 bytes but its data_offsets [0, 4] hold 4",
        ),
        (
            file("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", &[0; 8]),
            "not a list of non-negative integers",
        ),
        (file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,8]}}", &[0; 8]), "not a list"),
        (file("{\"a\":{\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]}}", &[0; 8]), "not a list"),
        (
            file("{\"a\":{\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,8]}}", &[0; 8]),
            "not a list",
        ),
        (
            file("{\"a\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296,0],\"data_offsets\":[0,0]}}", &[]),
            "overflows",
        ),
        (file("{\"a\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,0]}}", &[]), "overflows"),
        (
            file("{\"a\":{\"dtype\":\"U8\",\"shape\":[0,4611686018427387904,4],\"data_offsets\":[0,0]}}", &[]),
            "overflows",
        ),
        (
            file(
                &format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,8]}},\"b\":{{{f32x2},\"data_offsets\":[4,12]}}}}"),
                &[0; 12],
            ),
            "the byte ranges overlap",
        ),
        (
            file(
                &format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,8]}},\"b\":{{{f32x2},\"data_offsets\":[0,8]}}}}"),
                &[0; 8],
            ),
            "overlap",
        ),
        (
            file(
                &format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,8]}},\"b\":{{{f32x2},\"data_offsets\":[12,20]}}}}"),
                &[0; 20],
            ),
            "has a gap",
        ),
        (file(&format!("{{\"a\":{{{f32x2},\"data_offsets\":[4,12]}}}}"), &[0; 12]), "end at 0: the data has a gap"),
        (
            file(
                &format!("{{\"a\":{{{f32x2},\"data_offsets\":[0,8]}},\"a\":{{{f32x2},\"data_offsets\":[8,16]}}}}"),
                &[0; 16],
            ),
            "duplicate key \"a\"",
        ),
        (file("{\"__metadata__\":{\"k\":1}}", &[]), "value of \"k\" is not a string"),
        (file("{\"__metadata__\":[]}", &[]), "__metadata__ is not a JSON object"),
        (
            file("{\"m\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]}}", &[1, 0, 2]),
            "holds the byte 2 at element 2",
        ),
        (vec![2, 0, 0, 0, 0, 0, 0, 0, b'{', 0xff], "not UTF-8"),
        (file(&format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)), &[]), "does not start with '{'"),
        (file(&format!("{{\"a\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000)), &[]), "not valid JSON"),
    ];
    for (bytes, expected) in cases {
        let e = error_of(&bytes);
        assert!(e.contains(expected), "expected {expected:?} in {e:?}");
        assert!(e.starts_with("safetensors.load: "), "{e}");
    }
    // Headers that are fine: padding spaces and the empty object.
    assert!(from_bytes(&file("{}", &[])).unwrap().is_empty());
    assert!(from_bytes(&file("{}\n\t  ", &[])).unwrap().is_empty());
    let t = from_bytes(&file(
        "{\"a\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4],\"extra\":1}}",
        &[1, 0, 255, 255],
    ))
    .unwrap();
    assert_eq!(t[0].1.to_vec::<i16>().unwrap(), [1, -1]);
}

/// splitmix64, for reproducible mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_mutations_never_panic() {
    let base = FIXTURE.to_vec();
    let header_end = 8 + u64::from_le_bytes(base[..8].try_into().unwrap()) as usize;
    let mut rng = Rng(42);
    let (mut ok, mut err) = (0, 0);
    for _ in 0..20_000 {
        let mut b = base.clone();
        for _ in 0..1 + rng.below(4) {
            match rng.below(8) {
                // Any byte anywhere.
                0 => {
                    let i = rng.below(b.len());
                    b[i] = rng.next() as u8;
                }
                // A header byte: a digit, a structural character or a random one.
                1 | 2 => {
                    let i = 8 + rng.below(header_end - 8);
                    let pool = b"0123456789[]{},:\" -.eE";
                    let c = if rng.below(4) == 0 { rng.next() as u8 } else { pool[rng.below(pool.len())] };
                    if i < b.len() {
                        b[i] = c;
                    }
                }
                // Insert or delete a byte.
                3 => {
                    let i = rng.below(b.len());
                    b.insert(i, rng.next() as u8);
                }
                4 => {
                    let i = rng.below(b.len());
                    b.remove(i);
                }
                // Another header length.
                5 => {
                    let n = match rng.below(3) {
                        0 => rng.next(),
                        1 => rng.below(2 * b.len()) as u64,
                        _ => (header_end - 8) as u64 + rng.below(16) as u64 - 8,
                    };
                    if b.len() >= 8 {
                        b[..8].copy_from_slice(&n.to_le_bytes());
                    }
                }
                // Truncate, or swap two header bytes.
                6 => b.truncate(rng.below(b.len() + 1).max(1)),
                _ => {
                    let (i, j) = (8 + rng.below(header_end - 8), 8 + rng.below(header_end - 8));
                    if i < b.len() && j < b.len() {
                        b.swap(i, j);
                    }
                }
            }
            if b.is_empty() {
                b.push(0);
            }
        }
        match from_bytes(&b) {
            Ok(t) => {
                ok += 1;
                // Whatever was accepted is a consistent set of tensors.
                for (_, t) in &t {
                    assert_eq!(t.to_f64_vec().unwrap().len() as i64, t.numel());
                }
            }
            Err(_) => err += 1,
        }
    }
    assert!(ok > 0 && err > 0, "ok {ok}, err {err}");
}

#[test]
fn load_into_copies_in_place() {
    let path = temp_path("load-into");
    let ckpt = named(vec![
        ("fc.weight", values(DType::F32, &[3, 2])),
        ("fc.bias", values(DType::F32, &[3])),
        ("steps", values(DType::I64, &[])),
    ]);
    safetensors::save(&path, &ckpt, None).unwrap();

    let w = oxten::zeros(&[2, 3]).t().requires_grad_(true); // a non-contiguous leaf
    assert!(!w.is_contiguous());
    let b = oxten::zeros(&[3]).requires_grad_(true);
    let steps = Tensor::scalar(0i64);
    let v0 = w.version();
    load_into(&path, &[("fc.weight", w.clone()), ("fc.bias", b.clone()), ("steps", steps.clone())]).unwrap();
    assert_same(&w.detach(), &ckpt[0].1);
    assert_same(&b.detach(), &ckpt[1].1);
    assert_same(&steps, &ckpt[2].1);
    assert!(w.version() > v0);
    assert!(w.requires_grad() && w.grad_fn().is_none(), "still a leaf: copied under no_grad");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn load_into_reports_every_mismatch() {
    let path = temp_path("mismatch");
    let ckpt = named(vec![
        ("fc.weight", values(DType::F32, &[10, 64])),
        ("fc.bias", values(DType::F32, &[10])),
        ("conv.weight", values(DType::F64, &[4, 1, 3, 3])),
        ("fc2.weight", values(DType::F32, &[2])),
        ("fc2.bias", values(DType::F32, &[2])),
    ]);
    safetensors::save(&path, &ckpt, None).unwrap();
    let fc_bias = oxten::ones(&[10]);
    let targets = named(vec![
        ("conv.weight", oxten::zeros(&[4, 1, 3, 3])),
        ("conv.bias", oxten::zeros(&[4])),
        ("fc.weight", oxten::zeros(&[10, 32])),
        ("fc.bias", fc_bias.clone()),
        ("fc.extra", oxten::zeros(&[1])),
    ]);
    let e = load_into(&path, &targets).unwrap_err().to_string();
    let expected = format!(
        "safetensors.load_into: {}: Error(s) in loading state_dict:\n\
         \tMissing key(s) in state_dict: \"conv.bias\", \"fc.extra\".\n\
         \tUnexpected key(s) in state_dict: \"fc2.bias\", \"fc2.weight\".\n\
         \tdtype mismatch for conv.weight: copying a param with dtype float64 from checkpoint, the dtype in current model is float32.\n\
         \tsize mismatch for fc.weight: copying a param with shape [10, 64] from checkpoint, the shape in current model is [10, 32].",
        path.display()
    );
    assert_eq!(e, expected);
    // Nothing was copied, not even the tensor that matched.
    assert_eq!(fc_bias.to_vec::<f32>().unwrap(), [1.0; 10]);

    // Duplicate target names are refused.
    let t = oxten::zeros(&[10]);
    let e = copy_into(&ckpt, &[("fc.bias", t.clone()), ("fc.bias", t)]).unwrap_err().to_string();
    assert!(e.contains("duplicate name \"fc.bias\""), "{e}");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn large_files_are_mapped_copy_on_write() {
    // Over MAP_THRESHOLD, so `load` maps the file; the reference layout aligns every tensor.
    let big = values(DType::F32, &[512, 600]);
    let tensors = named(vec![("big", big.clone()), ("i", values(DType::I64, &[7])), ("b", values(DType::Bool, &[5]))]);
    let path = temp_path("mapped");
    safetensors::save(&path, &tensors, None).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() >= safetensors::MAP_THRESHOLD);
    let loaded = safetensors::load(&path).unwrap();
    let find = |n: &str| loaded.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_same(&find("big"), &big);
    assert_same(&find("i"), &tensors[1].1);
    assert_same(&find("b"), &tensors[2].1);
    // Writes go to this process's copy of the pages, never to the file.
    let t = find("big");
    t.mul_scalar_(2.0);
    assert_eq!(t.select(0, 0).select(0, 1).item::<f32>().unwrap(), -98.0);
    let again = safetensors::load(&path).unwrap();
    assert_same(&again.iter().find(|(k, _)| k == "big").unwrap().1, &big);
    // The mapped tensors outlive everything else that held the mapping.
    drop((loaded, again));
    assert_eq!(t.sum().item::<f32>().unwrap(), 2.0 * big.sum().item::<f32>().unwrap());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn large_misaligned_files_are_copied() {
    // One byte of U8 first puts the F32 tensor at an odd offset: not viewable in place.
    let n = 300_000usize;
    let header = format!(
        "{{\"u\":{{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}},\"f\":{{\"dtype\":\"F32\",\"shape\":[{n}],\"data_offsets\":[1,{}]}}}}",
        1 + 4 * n
    );
    // The mapping starts page-aligned, so the file offset decides the alignment.
    assert_ne!((8 + header.len() + 1) % 4, 0, "the F32 data must start misaligned");
    let mut data = vec![7u8];
    for i in 0..n {
        data.extend_from_slice(&(i as f32).to_le_bytes());
    }
    let path = temp_path("misaligned");
    std::fs::write(&path, file(&header, &data)).unwrap();
    let loaded = safetensors::load(&path).unwrap();
    let f = &loaded[0].1;
    assert_eq!(f.to_vec::<f32>().unwrap()[n - 1], (n - 1) as f32);
    assert_eq!(loaded[1].1.to_vec::<u8>().unwrap(), [7]);
    let _ = std::fs::remove_file(&path);
}
