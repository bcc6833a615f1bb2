//! The side-by-side table at the top of FROM_PYTORCH.md: every oxten snippet there is compiled
//! and run here, the table must show exactly these snippets, and each stays within 1.3× the
//! length of its PyTorch counterpart (characters other than whitespace; PyTorch written with
//! `import torch.nn.functional as F`, oxten with `use oxten::{tensor, DType, Tensor}`).

use oxten::nn::Linear;
use oxten::{tensor, DType, Tensor};

/// `(PyTorch, oxten)` pairs: each oxten expression is evaluated (so it must compile and run)
/// and its source text kept for the comparison with the document.
macro_rules! snippets {
    ($($py:literal => $rs:expr;)*) => {{
        let mut v: Vec<(&str, String)> = Vec::new();
        $(
            let _ = $rs;
            v.push(($py, stringify!($rs).to_string()));
        )*
        v
    }};
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn from_pytorch_table_runs_matches_the_document_and_stays_short() {
    let (a, b) = (oxten::randn(&[2, 3]), oxten::randn(&[2, 4]));
    let x = oxten::randn(&[4, 6]);
    let images = oxten::randn(&[8, 1, 4, 4]);
    let (mu, sigma) = (x.mean_dim(Some(&[0]), true), oxten::ones(&[6]));
    let pairs = snippets! {
        "torch.tensor([[1., 2.], [3., 4.]])" => tensor![[1., 2.], [3., 4.]];
        "torch.zeros(2, 3)" => oxten::zeros(&[2, 3]);
        "torch.cat([a, b], 1)" => oxten::cat(&[&a, &b], 1);
        "x.mean(1, keepdim=True)" => x.mean_dim(Some(&[1]), true);
        "x.max(1, keepdim=True)" => x.max_dim(1, true);
        "(x - mu) / sigma" => (&x - &mu) / &sigma;
        "x.view(2, -1).t()" => x.view(&[2, -1]).t();
        "F.softmax(x, dim=-1)" => x.softmax(-1);
        "images.flatten(1)" => images.flatten(1);
        "x.to(torch.bfloat16)" => x.to_dtype(DType::BF16);
        "nn.Linear(784, 10)" => Linear::new(784, 10);
        "x.topk(3)" => x.topk(3);
        "torch.einsum(\"ij,ik->jk\", a, b)" => oxten::einsum("ij,ik->jk", &[a, b]);
    };
    let _: &Tensor = &x;
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../FROM_PYTORCH.md")).unwrap();
    let rows: Vec<(String, String)> = doc
        .lines()
        .skip_while(|l| !l.starts_with("## Side by side"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let strip = |c: &str| c.trim_matches(|ch| ch == '|' || ch == ' ' || ch == '`').to_string();
            (strip(cells[0]), strip(cells[1]))
        })
        .collect();
    assert_eq!(rows.len(), pairs.len(), "FROM_PYTORCH.md's table and this test list different snippets");
    for ((py, rs), (doc_py, doc_rs)) in pairs.iter().zip(&rows) {
        assert_eq!(*py, doc_py, "PyTorch snippet");
        assert_eq!(squash(rs), squash(doc_rs), "oxten snippet for `{py}`");
        let ratio = squash(rs).len() as f64 / squash(py).len() as f64;
        assert!(ratio <= 1.3, "`{doc_rs}` is {ratio:.2}× the length of `{py}`");
    }
}
