//! Printing: `Display` against PyTorch's `str(tensor)` for every case of
//! tests/golden/print.txt (scripts/golden_print.py), and `Debug`'s summary.

use oxten::{tensor, DType, Device, Tensor};

fn dtype(name: &str) -> DType {
    match name {
        "float32" => DType::F32,
        "float64" => DType::F64,
        "bfloat16" => DType::BF16,
        "float16" => DType::F16,
        "int64" => DType::I64,
        "int32" => DType::I32,
        "uint8" => DType::U8,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

#[test]
fn display_prints_what_pytorch_prints() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/golden/print.txt")).unwrap();
    let mut cases = 0;
    let mut lines = text.lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(head) = lines.next() {
        let f: Vec<&str> = head.split(' ').collect();
        let (name, dt, sizes, grad) = (f[1], dtype(f[2]), f[3], f[4] == "1");
        let sizes: Vec<i64> =
            if sizes == "-" { vec![] } else { sizes.split(',').map(|s| s.parse().unwrap()).collect() };
        let values: Vec<f64> =
            lines.next().unwrap().split(' ').skip(1).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
        let mut want = Vec::new();
        while lines.peek().is_some_and(|l| l.starts_with("| ")) {
            want.push(&lines.next().unwrap()[2..]);
        }
        let t = Tensor::from_vec(values, &sizes).unwrap().to_dtype(dt);
        let t = if grad { t.requires_grad_(true) } else { t };
        assert_eq!(t.to_string(), want.join("\n"), "case {name}");
        cases += 1;
    }
    assert_eq!(cases, 28);
}

#[test]
fn results_of_recorded_operators_name_their_node_and_devices_their_device() {
    let x = tensor![1.0, 2.0].requires_grad_(true);
    assert_eq!(x.mul(&x).to_string(), "tensor([1., 4.], grad_fn=<MulBackward0>)");
    let m = Tensor::empty(&[2, 3], DType::F32, Device::Meta, oxten::MemoryFormat::Contiguous).unwrap();
    assert_eq!(m.to_string(), "tensor(..., device='meta', size=(2, 3))");
}

#[test]
fn debug_shows_what_the_tensor_is_without_its_values() {
    let t = tensor![[1, 2, 3]; f64];
    assert_eq!(format!("{t:?}"), "Tensor { shape: [1, 3], dtype: float64, device: cpu, requires_grad: false }");
    let m = Tensor::empty(&[4], DType::BF16, Device::Meta, oxten::MemoryFormat::Contiguous).unwrap();
    assert_eq!(format!("{m:?}"), "Tensor { shape: [4], dtype: bfloat16, device: meta, requires_grad: false }");
}
