//! Shape and indexing operators: replays tests/golden/index.txt (PyTorch's outputs and error
//! messages, recorded by scripts/golden_index.py) through oxten, then checks what golden values
//! cannot show: views share storage, meta tensors, out= aliasing, large (parallel) inputs.

use oxten::options::*;
use oxten::{DType, Device, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::golden::{replay, Arg, Case};

const GOLDEN: &str = include_str!("../golden/index.txt");

/// The tensor inputs of a case, in order.
fn tensors(c: &Case) -> Vec<Tensor> {
    c.args
        .iter()
        .filter_map(|a| match a {
            Arg::T(t) => Some(t.clone()),
            Arg::S(_) => None,
        })
        .collect()
}

/// The scalar input of a case (its last argument).
fn scalar(c: &Case) -> Scalar {
    c.s(c.args.len() - 1)
}

/// `pattern` (`i` = next tensor, `n` = None) applied to `ts`.
fn pattern(c: &Case, ts: &[Tensor]) -> Vec<Option<Tensor>> {
    let mut it = ts.iter();
    c.attr("pattern").unwrap().chars().map(|p| if p == 'i' { it.next().cloned() } else { None }).collect()
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let ts = tensors(c);
    let t = |i: usize| &ts[i];
    let int = |k: &str| c.int(k).unwrap();
    let ints = |k: &str| c.ints(k).unwrap();
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    match c.op.as_str() {
        "cat" => one(oxten::try_cat(&ts, int("dim"))),
        "cat_out" => {
            let (ins, out) = ts.split_at(ts.len() - 1);
            one(oxten::try_cat_out_with(ins, &out[0], CatOutOpts { dim: int("dim") }))
        }
        "stack" => one(oxten::try_stack(&ts, int("dim"))),
        "stack_out" => {
            let (ins, out) = ts.split_at(ts.len() - 1);
            one(oxten::try_stack_out_with(ins, &out[0], StackOutOpts { dim: int("dim") }))
        }
        "split" => t(0).try_split(int("split_size"), int("dim")),
        "split_with_sizes" => t(0).try_split_with_sizes(&ints("sizes"), int("dim")),
        "chunk" => t(0).try_chunk(int("chunks"), int("dim")),
        "flatten" => one(t(0).try_flatten_with(int("start"), FlattenOpts { end_dim: int("end") })),
        "unflatten" => one(t(0).try_unflatten(int("dim"), &ints("sizes"))),
        "index_select" => one(t(0).try_index_select(int("dim"), t(1))),
        "index_select_out" => one(oxten::try_index_select_out(t(0), int("dim"), t(1), t(2))),
        "gather" => one(t(0).try_gather(int("dim"), t(1))),
        "gather_out" => one(oxten::try_gather_out(t(0), int("dim"), t(1), t(2))),
        "scatter_src_out" => one(oxten::try_scatter_src_out(t(0), int("dim"), t(1), t(2), t(3))),
        "scatter_add_out" => one(oxten::try_scatter_add_out(t(0), int("dim"), t(1), t(2), t(3))),
        "scatter_src" => one(t(0).try_scatter_src(int("dim"), t(1), t(2))),
        "scatter_src_" => one(t(0).try_scatter_src_(int("dim"), t(1), t(2))),
        "scatter_value" => one(t(0).try_scatter_value(int("dim"), t(1), scalar(c))),
        "scatter_value_" => one(t(0).try_scatter_value_(int("dim"), t(1), scalar(c))),
        "scatter_add" => one(t(0).try_scatter_add(int("dim"), t(1), t(2))),
        "scatter_add_" => one(t(0).try_scatter_add_(int("dim"), t(1), t(2))),
        "masked_fill_scalar" => one(t(0).try_masked_fill_scalar(t(1), scalar(c))),
        "masked_fill_scalar_" => one(t(0).try_masked_fill_scalar_(t(1), scalar(c))),
        "masked_fill" => one(t(0).try_masked_fill(t(1), t(2))),
        "masked_fill_" => one(t(0).try_masked_fill_(t(1), t(2))),
        "embedding" => one(oxten::try_embedding_with(
            t(0),
            t(1),
            EmbeddingOpts { padding_idx: int("padding_idx"), ..Default::default() },
        )),
        "embedding_dense_backward" => {
            one(oxten::try_embedding_dense_backward(t(0), t(1), int("num_weights"), int("padding_idx"), c.flag("freq")))
        }
        "repeat" => one(t(0).try_repeat(&ints("repeats"))),
        "roll" => one(t(0).try_roll(&ints("shifts"), &ints("dims"))),
        "flip" => one(t(0).try_flip(&ints("dims"))),
        "tril" => one(t(0).try_tril_with(TrilOpts { diagonal: int("diagonal") })),
        "triu" => one(t(0).try_triu_with(TriuOpts { diagonal: int("diagonal") })),
        "tril_" => one(t(0).try_tril_with_(TrilInplaceOpts { diagonal: int("diagonal") })),
        "triu_" => one(t(0).try_triu_with_(TriuInplaceOpts { diagonal: int("diagonal") })),
        "tril_out" => one(oxten::try_tril_out_with(t(0), t(1), TrilOutOpts { diagonal: int("diagonal") })),
        "triu_out" => one(oxten::try_triu_out_with(t(0), t(1), TriuOutOpts { diagonal: int("diagonal") })),
        "index" => one(t(0).try_index(&pattern(c, &ts[1..]))),
        "index_out" => one(oxten::try_index_tensor_out(t(0), &pattern(c, &ts[1..2]), t(2))),
        "index_put" | "index_put_" => {
            let (ind, vals) = ts[1..].split_at(ts.len() - 2);
            let indices = pattern(c, ind);
            let accumulate = c.flag("accumulate");
            if c.op == "index_put" {
                one(t(0).try_index_put_with(&indices, &vals[0], IndexPutOpts { accumulate }))
            } else {
                one(t(0).try_index_put_with_(&indices, &vals[0], IndexPutInplaceOpts { accumulate }))
            }
        }
        other => panic!("case at line {}: no runner for op {other}", c.line),
    }
}

#[test]
fn index_ops_match_pytorch() {
    replay(GOLDEN, 450, run);
}

fn arange(n: i64, shape: &[i64]) -> Tensor {
    Tensor::from_vec((0..n).map(|v| v as f32).collect::<Vec<_>>(), shape).unwrap()
}

fn long(v: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap()
}

#[test]
fn split_chunk_flatten_unflatten_return_views() {
    let x = arange(12, &[4, 3]);
    let parts = x.split(3, 0);
    assert_eq!(parts.len(), 2);
    let parts2 = x.split_with_sizes(&[1, 3], 0);
    let chunks = x.chunk(2, 0);
    let flat = x.flatten(0);
    let unflat = x.unflatten(0, &[2, 2]);
    for v in parts.iter().chain(&parts2).chain(&chunks).chain([&flat, &unflat]) {
        assert!(v.storage().is_alias_of(x.storage()), "not a view");
    }
    // Writing through a view is seen by the base.
    parts[1].fill_scalar_(-1.0);
    assert_eq!(x.to_vec::<f32>().unwrap()[9..], [-1.0, -1.0, -1.0]);
    // flatten of a non-contiguous tensor has to copy, as in PyTorch.
    let t = x.t();
    assert!(!t.flatten(0).storage().is_alias_of(x.storage()));
    // flatten of a single dim is the tensor itself.
    assert!(x.flatten_with(1, FlattenOpts { end_dim: 1 }).is_same(&x));
}

#[test]
fn meta_tensors_get_shapes_without_data() {
    let m = |s: &[i64]| oxten::empty_with(s, EmptyOpts { device: Some(Device::Meta), ..Default::default() });
    let a = m(&[2, 3]);
    let b = m(&[4, 3]);
    assert_eq!(oxten::cat(&[a.clone(), b.clone()], 0).sizes(), [6, 3]);
    assert_eq!(oxten::stack(&[a.clone(), a.clone()], 0).sizes(), [2, 2, 3]);
    let idx = oxten::empty_with(
        &[4],
        EmptyOpts { dtype: Some(DType::I64), device: Some(Device::Meta), ..Default::default() },
    );
    assert_eq!(b.index_select(1, &idx).sizes(), [4, 4]);
    assert_eq!(a.tril().sizes(), [2, 3]);
    assert_eq!(a.flip(&[0]).sizes(), [2, 3]);
    assert_eq!(a.roll(&[1], &[1]).sizes(), [2, 3]);
    assert_eq!(a.repeat(&[2, 2]).sizes(), [4, 6]);
    assert_eq!(a.index(&[Some(idx.clone())]).sizes(), [4, 3]);
    let gi = oxten::zeros_with(
        &[2, 2],
        ZerosOpts { dtype: Some(DType::I64), device: Some(Device::Meta), ..Default::default() },
    );
    assert_eq!(a.gather(1, &gi).sizes(), [2, 2]);
    assert_eq!(a.scatter_value(1, &gi, 1.0).sizes(), [2, 3]);
    for t in [oxten::cat(&[a.clone(), b], 0), a.tril(), a.repeat(&[2, 1])] {
        assert!(t.is_meta());
    }
    // index_put_ through the element loop and through masked_fill_: shapes checked, no data.
    let v = m(&[4, 3]);
    assert!(a.repeat(&[2, 1]).index_put_(&[Some(idx.clone())], &v).is_meta());
    let e = a.try_index_put_(&[Some(idx.clone())], &m(&[5, 3])).unwrap_err();
    assert!(e.message.contains("shape mismatch: value tensor of shape [5, 3] cannot be broadcast"), "{e}");
    let mask = oxten::empty_with(
        &[2, 3],
        EmptyOpts { dtype: Some(DType::Bool), device: Some(Device::Meta), ..Default::default() },
    );
    assert!(a.index_put_(&[Some(mask)], &m(&[])).is_meta());
    let bad_mask = oxten::empty_with(
        &[3],
        EmptyOpts { dtype: Some(DType::Bool), device: Some(Device::Meta), ..Default::default() },
    );
    let e = a.try_index_put_(&[Some(bad_mask)], &m(&[])).unwrap_err();
    assert!(e.message.contains("The shape of the mask [3] at index 0 does not match"), "{e}");
    // index(out=) resizes a meta out.
    let out = m(&[0]);
    oxten::try_index_tensor_out(&a, &[Some(idx.clone())], &out).unwrap();
    assert_eq!(out.sizes(), [4, 3]);
    // copy_ into meta checks broadcasting only; out of meta into real memory is an error.
    a.copy_(&Tensor::from_vec(vec![1.0f32; 3], &[3]).unwrap());
    let e = a.try_copy_(&m(&[4, 3])).unwrap_err();
    assert!(e.message.contains("The size of tensor a (2) must match the size of tensor b (4)"), "{e}");
    let e = Tensor::from_vec(vec![0.0f32; 6], &[2, 3]).unwrap().try_copy_(&a).unwrap_err();
    assert!(e.message.contains("Cannot copy out of meta tensor; no data!"), "{e}");
}

#[test]
fn out_variants_reject_aliasing_and_bad_dtypes() {
    let a = arange(6, &[2, 3]);
    let b = arange(6, &[2, 3]);
    let e = oxten::try_cat_out(&[a.clone(), b.clone()], &a).unwrap_err();
    assert!(e.message.contains("some elements of the input tensor and the written-to tensor"), "{e}");
    let out = Tensor::from_vec(vec![0i64; 0], &[0]).unwrap();
    let e = oxten::try_cat_out(&[a.clone(), b], &out).unwrap_err();
    assert!(e.message.contains("can't be cast to the desired output type Long"), "{e}");
    let c = arange(4, &[2, 2]);
    let idx = Tensor::from_vec(vec![0i64, 1, 1, 0], &[2, 2]).unwrap();
    let e = oxten::try_gather_out(&c, 1, &idx, &c).unwrap_err();
    assert!(e.message.contains("some elements of the input tensor and the written-to tensor"), "{e}");
    let e = oxten::try_index_select_out(&c, 0, &long(&[1]), &c).unwrap_err();
    assert!(e.message.contains("written-to tensor"), "{e}");
}

#[test]
fn large_inputs_take_the_parallel_paths() {
    // Big enough for the rayon paths of cat, index_select, gather, scatter_add, flip, tril and
    // index; checked against simple formulas.
    let n = 300i64;
    let x = arange(n * n, &[n, n]);
    let y = oxten::cat(&[x.clone(), x.clone()], 0);
    assert_eq!(y.sizes(), [2 * n, n]);
    let v = y.to_vec::<f32>().unwrap();
    assert_eq!(v[(n * n + 5) as usize], 5.0);
    let rev: Vec<i64> = (0..n).rev().collect();
    let sel = x.index_select(0, &long(&rev));
    assert_eq!(
        sel.to_vec::<f32>().unwrap()[..3],
        [((n - 1) * n) as f32, ((n - 1) * n + 1) as f32, ((n - 1) * n + 2) as f32]
    );
    let flipped = x.flip(&[0]);
    assert_eq!(flipped.to_vec::<f32>().unwrap(), sel.to_vec::<f32>().unwrap());
    let idx = long(&rev).unsqueeze(1).expand(&[n, n]).contiguous();
    let g = x.gather(0, &idx);
    assert_eq!(g.to_vec::<f32>().unwrap(), sel.to_vec::<f32>().unwrap());
    let zeros = oxten::zeros(&[n, n]);
    let back = zeros.scatter_add(0, &idx, &g);
    assert_eq!(back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    let low = x.tril();
    let lv = low.to_vec::<f32>().unwrap();
    assert_eq!(lv[1], 0.0);
    assert_eq!(lv[(n + 1) as usize], (n + 1) as f32);
    let picked = x.index(&[Some(long(&rev))]);
    assert_eq!(picked.to_vec::<f32>().unwrap(), sel.to_vec::<f32>().unwrap());
    let t = x.t().contiguous_with(ContiguousOpts { memory_format: MemoryFormat::Contiguous });
    assert_eq!(
        oxten::cat(&[x.t(), x.t()], 0).to_vec::<f32>().unwrap()[..(n * n) as usize],
        t.to_vec::<f32>().unwrap()[..]
    );
}

#[test]
fn embedding_gradient_skips_padding_and_scales_by_frequency() {
    // torch.embedding(w, i, padding_idx, scale_grad_by_freq), backward of (out * arange).sum().
    let expected: [(i64, bool, [f64; 15]); 3] = [
        (3, false, [0.0, 1.0, 2.0, 9.0, 10.0, 11.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0, 13.0, 14.0]),
        (-1, true, [0.0, 1.0, 2.0, 9.0, 10.0, 11.0, 0.0, 0.0, 0.0, 8.0, 9.0, 10.0, 12.0, 13.0, 14.0]),
        (3, true, [0.0, 1.0, 2.0, 9.0, 10.0, 11.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0, 13.0, 14.0]),
    ];
    let i = Tensor::from_vec(vec![0i64, 3, 3, 1, 4, 3], &[2, 3]).unwrap();
    let weights = Tensor::from_vec((0..18).map(|v| v as f64).collect::<Vec<_>>(), &[2, 3, 3]).unwrap();
    for (padding_idx, freq, want) in expected {
        let w = Tensor::from_vec((0..15).map(|v| v as f64).collect::<Vec<_>>(), &[5, 3]).unwrap().requires_grad_(true);
        let o = oxten::embedding_with(&w, &i, EmbeddingOpts { padding_idx, scale_grad_by_freq: freq, sparse: false });
        o.mul(&weights).sum().backward();
        assert_eq!(w.grad().unwrap().to_vec::<f64>().unwrap(), want, "padding_idx {padding_idx}, freq {freq}");
    }
}

#[test]
fn gradients_flow_through_split_views_and_mixed_dtype_cat() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0], &[5]).unwrap().requires_grad_(true);
    let parts = x.split(2, 0);
    parts[0].mul_scalar(2.0).sum().add(&parts[2].mul_scalar(3.0).sum()).backward();
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), [2.0, 2.0, 0.0, 0.0, 3.0]);

    // An in-place write through a chunk of a non-leaf rebases the history of its base.
    let w = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4]).unwrap().requires_grad_(true);
    let y = w.mul_scalar(1.0);
    y.chunk(2, 0)[1].mul_scalar_(10.0);
    y.sum().backward();
    assert_eq!(w.grad().unwrap().to_vec::<f64>().unwrap(), [1.0, 1.0, 10.0, 10.0]);

    // cat promotes to f64; each input's gradient comes back in its own dtype.
    let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().requires_grad_(true);
    let b = Tensor::from_vec(vec![3.0f64], &[1]).unwrap().requires_grad_(true);
    let o = oxten::cat(&[a.clone(), b.clone()], 0);
    assert_eq!(o.dtype(), DType::F64);
    o.mul(&Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap()).sum().backward();
    assert_eq!(a.grad().unwrap().dtype(), DType::F32);
    assert_eq!(a.grad().unwrap().to_vec::<f32>().unwrap(), [1.0, 2.0]);
    assert_eq!(b.grad().unwrap().to_vec::<f64>().unwrap(), [3.0]);
}

/// `index_put_` with one Long index into dim 0 of a contiguous tensor writes whole rows;
/// it must agree with the element-wise path (taken for a non-contiguous `self`) on
/// repeated and negative indices, and check every index before writing any row.
#[test]
fn index_put_of_whole_rows_matches_the_elementwise_path() {
    let values = arange(12, &[4, 3]);
    let index = Some(long(&[1, -1, 1, 0]));
    for accumulate in [true, false] {
        let rows = oxten::zeros(&[4, 3]);
        oxten::ops::index_put_::call(&rows, std::slice::from_ref(&index), &values, accumulate).unwrap();
        // The same data through a transposed (column-major) tensor: the iterator path.
        let strided = oxten::zeros(&[3, 4]).t();
        oxten::ops::index_put_::call(&strided, std::slice::from_ref(&index), &values, accumulate).unwrap();
        let expect: &[f32] = if accumulate {
            &[9., 10., 11., 6., 8., 10., 0., 0., 0., 3., 4., 5.]
        } else {
            &[9., 10., 11., 6., 7., 8., 0., 0., 0., 3., 4., 5.]
        };
        assert_eq!(rows.to_vec::<f32>().unwrap(), expect, "accumulate={accumulate}");
        assert_eq!(strided.contiguous().to_vec::<f32>().unwrap(), expect, "accumulate={accumulate}");
    }
    let rows = oxten::zeros(&[4, 3]);
    let err = oxten::ops::index_put_::call(&rows, &[Some(long(&[0, 4]))], &arange(6, &[2, 3]), true).unwrap_err();
    assert!(err.to_string().contains("index 4 is out of bounds for dimension 0 with size 4"), "{err}");
    assert_eq!(rows.sum().item::<f32>().unwrap(), 0.0, "a bad index leaves self unchanged");
}

/// `narrow.Tensor`, `split.sizes` and `nonzero_numpy` (`nonzero(as_tuple=True)`): the overloads
/// PyTorch's Python calls reach, beyond the OpInfo samples: views, a 0-dim input, bad starts.
#[test]
fn narrow_tensor_split_sizes_and_nonzero_numpy() -> Result<()> {
    let x = arange(12, &[3, 4]);
    let start = Tensor::scalar(-3i64);
    let n = x.try_narrow_tensor(1, &start, 2)?;
    assert_eq!(n.to_vec::<f32>()?, [1.0, 2.0, 5.0, 6.0, 9.0, 10.0]);
    assert!(n.storage().is_alias_of(x.storage()), "narrow.Tensor is a view");
    let err = x.try_narrow_tensor(1, &Tensor::scalar(1.0f32), 2).unwrap_err().to_string();
    assert!(err.contains("start must be a 0-dim integral Tensor"), "{err}");
    let err = x.try_narrow_tensor(1, &long(&[1]), 2).unwrap_err().to_string();
    assert!(err.contains("got a 1-D int64 tensor"), "{err}");

    let parts = x.try_split_sizes(&[1, 3], 1)?;
    assert_eq!(parts[1].sizes(), [3, 3]);
    assert_eq!(parts[1].to_vec::<f32>()?, [1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 9.0, 10.0, 11.0]);
    assert!(x.try_split_sizes(&[1, 2], 1).is_err(), "sizes must add up to the dim");

    let nz = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 3.0], &[2, 2])?.try_nonzero_numpy()?;
    assert_eq!((nz[0].to_vec::<i64>()?, nz[1].to_vec::<i64>()?), (vec![0, 1], vec![1, 1]));
    let scalar = Tensor::scalar(5.0f32).try_nonzero_numpy()?;
    assert_eq!(scalar.len(), 1);
    assert_eq!(scalar[0].to_vec::<i64>()?, [0]);
    assert_eq!(Tensor::scalar(0.0f32).try_nonzero_numpy()?[0].numel(), 0);
    Ok(())
}

/// `embedding_dense_backward` split over weight rows (big enough for the threads) against
/// `index_add` of the same rows, with repeated indices, a padding index, `scale_grad_by_freq`,
/// and an index out of range as an error, as PyTorch's `index_add_` gives.
#[test]
fn embedding_dense_backward_matches_index_add() -> Result<()> {
    let (n, rows, d) = (6000i64, 97i64, 33i64);
    let idx: Vec<i64> = (0..n).map(|i| (i * 7919 + i * i) % rows).collect();
    let grad = oxten::randn(&[n, d]);
    let index = long(&idx);
    let want = oxten::zeros(&[rows, d]).try_index_add(0, &index, &grad)?;
    let got = oxten::ops::embedding_dense_backward::call(&grad, &index, rows, -1, false)?;
    let close = |a: &Tensor, b: &Tensor| {
        a.to_vec::<f32>()
            .unwrap()
            .iter()
            .zip(b.to_vec::<f32>().unwrap())
            .all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + y.abs()))
    };
    assert!(close(&got, &want));
    // The padding row gets nothing; the others are as before.
    let padded = oxten::ops::embedding_dense_backward::call(&grad, &index, rows, 5, false)?;
    assert!(padded.try_select(0, 5)?.to_vec::<f32>()?.iter().all(|&v| v == 0.0));
    assert!(close(&padded.try_select(0, 6)?, &want.try_select(0, 6)?));
    // Each row's sum divided by how often its index appears.
    let scaled = oxten::ops::embedding_dense_backward::call(&grad, &index, rows, -1, true)?;
    let count = idx.iter().filter(|&&k| k == 6).count() as f64;
    assert!(close(&scaled.try_select(0, 6)?, &want.try_select(0, 6)?.try_div_scalar(count)?));
    let err = oxten::ops::embedding_dense_backward::call(&grad.try_narrow(0, 0, 2)?, &long(&[1, 97]), rows, -1, false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("index 97 is out of range for 97 rows"), "{err}");
    Ok(())
}

/// `scatter(..., reduce="add" | "multiply")` (PyTorch's older reducing overloads): repeated
/// indices accumulate in order, in every variant; other reductions are refused with the
/// operator named, and backward through it fails as in PyTorch (no derivative is defined).
/// Expected values worked out by hand (and equal to PyTorch 2.15's).
#[test]
fn scatter_with_reduce_accumulates_repeated_indices() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let idx = Tensor::from_vec(vec![1i64, 0, 1, 1, 0, 0], &[2, 3])?;
    let src = Tensor::from_vec(vec![10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0], &[2, 3])?;
    let add = x.try_scatter_reduce(0, &idx, &src, "add")?;
    assert_eq!(add.to_vec::<f32>()?, [1.0, 72.0, 63.0, 54.0, 5.0, 36.0]);
    let mul = x.try_scatter_reduce(0, &idx, &src, "multiply")?;
    assert_eq!(mul.to_vec::<f32>()?, [1.0, 2000.0, 180.0, 1600.0, 5.0, 180.0]);
    let vmul = x.try_scatter_value_reduce(0, &idx, 2.0, "multiply")?;
    assert_eq!(vmul.to_vec::<f32>()?, [1.0, 8.0, 6.0, 16.0, 5.0, 12.0]);
    let out = Tensor::from_vec(vec![0.0f32; 1], &[1])?;
    oxten::try_scatter_value_reduce_out(&x, 0, &idx, 2.0, "add", &out)?;
    assert_eq!(out.sizes(), [2, 3]);
    assert_eq!(out.to_vec::<f32>()?, [1.0, 6.0, 5.0, 8.0, 5.0, 8.0]);
    let y = x.try_deep_clone()?;
    y.try_scatter_reduce_(0, &idx, &src, "add")?;
    assert_eq!(y.to_vec::<f32>()?, add.to_vec::<f32>()?);

    let e = x.try_scatter_reduce(0, &idx, &src, "sum").unwrap_err();
    assert!(e.to_string().contains("scatter.reduce") && e.to_string().contains("add or multiply"), "{e}");
    let e = x.try_scatter_reduce(0, &idx, &idx, "add").unwrap_err();
    assert!(e.to_string().contains("Expected self.dtype to be equal to src.dtype"), "{e}");
    let g = x.to_dtype(DType::F64).requires_grad_(true);
    let r = g.try_scatter_reduce(0, &idx, &src.to_dtype(DType::F64), "add")?;
    let e = r.try_sum()?.try_backward().unwrap_err();
    assert!(e.to_string().contains("scatter"), "{e}");
    Ok(())
}

/// `embedding_renorm_` against PyTorch 2.15's outputs (printed by `torch.embedding_renorm_` on
/// the same tables): each distinct row named (a negative index from the end) whose norm exceeds
/// `max_norm` becomes `row * max_norm / (norm + 1e-7)`, the scale rounded to the dtype. Then
/// `nn::Embedding::with_max_norm` renormalizes the looked-up rows of its weight before the
/// lookup, and the gradient still reaches the weight.
#[test]
fn embedding_renorm_rescales_named_rows_to_max_norm() -> Result<()> {
    let close = |got: Vec<f32>, want: &[f32]| {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{got:?} vs {want:?}");
        }
    };
    let w = arange(15, &[5, 3]);
    let idx = Tensor::from_vec(vec![1i64, 3, 1, -1], &[2, 2])?;
    oxten::ops::embedding_renorm_::call(&w, &idx, 5.0, 2.0)?;
    close(
        w.to_vec::<f32>()?,
        &[
            0.0, 1.0, 2.0, 2.1213202, 2.828427, 3.535534, 6.0, 7.0, 8.0, 2.589459, 2.8771768, 3.1648943, 2.6594534,
            2.8810744, 3.1026955,
        ],
    );
    let w = arange(15, &[5, 3]);
    oxten::ops::embedding_renorm_::call(&w, &long(&[0, 2]), 2.0, 1.0)?;
    close(
        w.to_vec::<f32>()?,
        &[0.0, 0.6666666, 1.3333333, 3.0, 4.0, 5.0, 0.5714286, 0.6666667, 0.7619048, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0],
    );
    let h = arange(15, &[5, 3]).to_dtype(DType::F16);
    oxten::ops::embedding_renorm_::call(&h, &long(&[4]), 5.0, 2.0)?;
    assert_eq!(h.to_dtype(DType::F64).to_vec::<f64>()?[12..], [2.658203125, 2.880859375, 3.1015625]);
    let b = arange(15, &[5, 3]).to_dtype(DType::BF16);
    oxten::ops::embedding_renorm_::call(&b, &long(&[4, 3]), 5.0, 2.0)?;
    assert_eq!(b.to_dtype(DType::F32).to_vec::<f32>()?[9..], [2.578125, 2.875, 3.15625, 2.671875, 2.890625, 3.125]);

    let e = oxten::ops::embedding_renorm_::call(&arange(5, &[5]), &long(&[1]), 1.0, 2.0).unwrap_err();
    assert!(e.to_string().contains("Expected 2-dimensional tensor, but got 1-dimensional tensor"), "{e}");
    let e = oxten::ops::embedding_renorm_::call(&arange(10, &[5, 2]), &long(&[5]), 1.0, 2.0).unwrap_err();
    assert!(e.to_string().contains("index 5 out of range for tensor of size [5, 2]"), "{e}");
    let e = oxten::ops::embedding_renorm_::call(&arange(10, &[5, 2]), &arange(1, &[1]), 1.0, 2.0).unwrap_err();
    assert!(e.to_string().contains("'indices' to have one of the following scalar types: Long, Int"), "{e}");

    use oxten::nn::{Embedding, Module};
    let mut emb = Embedding::new(5, 3).with_max_norm(5.0, 2.0);
    emb.weight = arange(15, &[5, 3]).requires_grad_(true);
    let y = emb.forward(&long(&[1, 3]))?;
    close(y.to_vec::<f32>()?, &[2.1213202, 2.828427, 3.535534, 2.589459, 2.8771768, 3.1648943]);
    y.try_sum()?.try_backward()?;
    let g = emb.weight.grad().unwrap().to_vec::<f32>()?;
    assert_eq!(g, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    close(emb.weight.to_vec::<f32>()?[3..6].to_vec(), &[2.1213202, 2.828427, 3.535534]);
    Ok(())
}

#[test]
fn nonzero_static_truncates_or_pads() -> Result<()> {
    let x = Tensor::from_vec(vec![0i64, 1, 1, 0, 1], &[5])?;
    assert_eq!(oxten::ops::nonzero_static::call(&x, 2, -1)?.to_vec::<i64>()?, vec![1, 2]);
    let m = Tensor::from_vec(vec![0i64, 1, 1, 0], &[2, 2])?;
    let padded = oxten::ops::nonzero_static::call(&m, 4, -7)?;
    assert_eq!(padded.sizes().to_vec(), vec![4, 2]);
    assert_eq!(padded.to_vec::<i64>()?, vec![0, 1, 1, 0, -7, -7, -7, -7]);
    let e = oxten::ops::nonzero_static::call(&x, -1, -1).expect_err("negative size").to_string();
    assert!(e.ends_with("nonzero_static: 'size' must be an non-negative integer"), "{e}");
    Ok(())
}

#[test]
fn unsafe_masked_index_reads_and_writes_only_where_the_mask_allows() -> Result<()> {
    // PyTorch 2.15's values: out-of-range indices where the mask is false are clamped, not read.
    let x = Tensor::from_vec((0..12).map(|v| v as f32).collect::<Vec<_>>(), &[3, 4])?;
    let mask = Tensor::from_vec(vec![true, false, true], &[3, 1])?;
    let idx = Tensor::from_vec(vec![2i64, 7, -1], &[3])?;
    let got = oxten::ops::_unsafe_masked_index::call(&x, &mask, &[Some(idx.clone())], Scalar::Float(-5.0))?;
    assert_eq!(got.to_vec::<f32>()?, vec![8., 9., 10., 11., -5., -5., -5., -5., 8., 9., 10., 11.]);
    let flat = Tensor::from_vec(vec![true, false, true], &[3])?;
    let cols = Tensor::from_vec(vec![0i64, 9, 3], &[3])?;
    let got = oxten::ops::_unsafe_masked_index::call(&x, &flat, &[Some(idx), Some(cols)], Scalar::Float(-5.0))?;
    assert_eq!(got.to_vec::<f32>()?, vec![8., -5., 11.]);
    let values = Tensor::from_vec([1.0f32, 2.0, 3.0].iter().flat_map(|&v| [v; 4]).collect::<Vec<_>>(), &[3, 4])?;
    let rows = Tensor::from_vec(vec![0i64, 9, 0], &[3])?;
    let put = oxten::ops::_unsafe_masked_index_put_accumulate::call(&x, &mask, &[Some(rows)], &values)?;
    assert_eq!(put.to_vec::<f32>()?, vec![4., 5., 6., 7., 4., 5., 6., 7., 8., 9., 10., 11.]);
    let bad = Tensor::from_vec(vec![0.0f32], &[1])?;
    let e = oxten::ops::_unsafe_masked_index::call(&x, &flat, &[Some(bad)], Scalar::Int(0)).expect_err("float index");
    assert!(e.to_string().ends_with("_unsafe_masked_index found unexpected index type Float"), "{e}");
    Ok(())
}
