//! Adding a pointwise operator by editing YAML alone: a scratch copy of native_functions.yaml gets
//! two new entries groups with `pointwise:` expressions, a scratch crate uses the new ops through the
//! generated API, and the values are checked. No Rust file of oxten is edited.
//!
//! This builds oxten a second time (in `target/yaml-only`), so it is the slowest test.

use std::path::{Path, PathBuf};
use std::process::Command;

const NEW_OPS: &str = r#"
- func: abs_ratio(Tensor self) -> Tensor
  structured_delegate: abs_ratio.out
  variants: function, method
- func: abs_ratio_(Tensor(a!) self) -> Tensor(a!)
  structured_delegate: abs_ratio.out
  variants: function, method
- func: abs_ratio.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIterator
  pointwise: self / (1 + abs(self))
- func: sqdiff(Tensor self, Tensor other) -> Tensor
  structured_delegate: sqdiff.out
  variants: function, method
- func: sqdiff.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIterator
  pointwise: (self - other) * (self - other)
"#;

const PROBE: &str = r#"
use oxten::{DType, Tensor};
fn main() {
    let x = Tensor::from_vec(vec![-3.0f64, 0.0, 1.0, 4.0], &[4]).unwrap();
    println!("abs_ratio {:?}", x.abs_ratio().to_vec::<f64>().unwrap());
    let h = x.to_dtype(DType::BF16);
    println!("abs_ratio_bf16 {:?}", h.abs_ratio().to_dtype(DType::F32).to_vec::<f32>().unwrap());
    let y = x.deep_clone();
    y.abs_ratio_();
    println!("inplace {:?}", y.to_vec::<f64>().unwrap());
    let out = oxten::empty(&[1]);
    oxten::abs_ratio_out(&Tensor::from_vec(vec![1.0f32, -1.0], &[2]).unwrap(), &out);
    println!("out {:?} {:?}", &out.sizes()[..], out.to_vec::<f32>().unwrap());
    // Broadcasting and promotion: int64 [2,1] with f32 [3].
    let a = Tensor::from_vec(vec![1i64, 2], &[2, 1]).unwrap();
    let b = Tensor::from_vec(vec![0.5f32, 1.0, 3.0], &[3]).unwrap();
    let d = a.sqdiff(&b);
    println!("sqdiff {:?} {} {:?}", &d.sizes()[..], d.dtype(), d.to_vec::<f32>().unwrap());
    let i = Tensor::from_vec(vec![1i32, 5], &[2]).unwrap().sqdiff(&Tensor::from_vec(vec![4i32, 2], &[2]).unwrap());
    println!("sqdiff_int {} {:?}", i.dtype(), i.to_vec::<i32>().unwrap());
}
"#;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn pointwise_op_from_yaml_alone_builds_and_computes() {
    let repo = repo().canonicalize().unwrap();
    let scratch = repo.join("target/yaml-only");
    let yaml = scratch.join("native_functions.yaml");
    let base = std::fs::read_to_string(repo.join("native_functions.yaml")).unwrap();
    write(&yaml, &format!("{base}{NEW_OPS}"));
    let probe = scratch.join("probe");
    write(
        &probe.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\noxten = {{ path = {:?} }}\n\n[workspace]\n",
            repo.join("gen").display().to_string()
        ),
    );
    write(&probe.join("src/main.rs"), PROBE);
    // Same dependency versions as the workspace, and no network.
    std::fs::copy(repo.join("Cargo.lock"), probe.join("Cargo.lock")).unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--offline", "--manifest-path"])
        .arg(probe.join("Cargo.toml"))
        .env("OXTEN_NATIVE_FUNCTIONS", &yaml)
        .env("CARGO_TARGET_DIR", scratch.join("target"))
        // A clean debug build of all of oxten: without debug info or incremental caches (neither
        // is used here) it takes a third less time.
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "probe failed:\n{}\n{}", stdout, String::from_utf8_lossy(&out.stderr));
    // abs_ratio(x) = x / (1 + |x|), computed by hand.
    let expected = [
        "abs_ratio [-0.75, 0.0, 0.5, 0.8]",
        "abs_ratio_bf16 [-0.75, 0.0, 0.5, 0.80078125]",
        "inplace [-0.75, 0.0, 0.5, 0.8]",
        "out [2] [0.5, -0.5]",
        // (a - b)^2 with a = [[1],[2]], b = [0.5, 1, 3]: int64 + f32 promotes to f32.
        "sqdiff [2, 3] float32 [0.25, 0.0, 4.0, 2.25, 1.0, 1.0]",
        "sqdiff_int int32 [9, 9]",
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, expected);
}
