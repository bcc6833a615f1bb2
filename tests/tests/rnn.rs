//! `nn::RNN`, `LSTM`, `GRU` and the cells against PyTorch (golden file from
//! `scripts/rnn_fixture.py`): outputs, final states, and the gradients of a weighted sum of them
//! with respect to the input and every parameter; plus the argument checks.

use oxten::nn::{GRUCell, LSTMCell, Module, Nonlinearity, RNNCell, RnnOptions, GRU, LSTM, RNN};
use oxten::{Result, Tensor};

struct Golden(Vec<(String, Tensor)>);

impl Golden {
    fn load() -> Golden {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/rnn_layers.safetensors");
        Golden(oxten::safetensors::load(path).unwrap())
    }

    fn get(&self, name: &str) -> Tensor {
        self.0.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("{name} not in the golden file")).1.clone()
    }

    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }

    /// Copies `{prefix}.{param}` into the module's parameters (names must match PyTorch's).
    fn load_into(&self, m: &dyn Module, prefix: &str) {
        let named = m.state_dict();
        let want: Vec<&str> = self.0.iter().filter_map(|(k, _)| k.strip_prefix(&format!("{prefix}."))).collect();
        let mut have: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
        let mut sorted_want = want.clone();
        sorted_want.sort();
        have.sort();
        assert_eq!(have, sorted_want, "{prefix}: parameter names differ from PyTorch's");
        let src: Vec<(String, Tensor)> =
            named.iter().map(|(n, _)| (n.clone(), self.get(&format!("{prefix}.{n}")))).collect();
        oxten::safetensors::copy_into(&src, &named).unwrap();
    }

    /// Checks outputs, then backpropagates `Σ out_i · w_i` and checks the gradients.
    fn check(&self, name: &str, m: &dyn Module, x: &Tensor, outs: Vec<Tensor>) -> Result<()> {
        let mut loss: Option<Tensor> = None;
        for (i, o) in outs.iter().enumerate() {
            close(&format!("{name} output {i}"), o, &self.get(&format!("__{name}_out{i}")));
            let term = o.try_mul(&self.get(&format!("__{name}_w{i}")))?.try_sum()?;
            loss = Some(match loss {
                Some(l) => l.try_add(&term)?,
                None => term,
            });
        }
        let params = m.named_parameters();
        let mut inputs = vec![x.clone()];
        inputs.extend(params.iter().map(|(_, p)| p.clone()));
        let grads = oxten::autograd::grad(&[loss.unwrap()], &inputs)?;
        close(&format!("{name} grad input"), grads[0].as_ref().unwrap(), &self.get(&format!("__{name}_grad_x")));
        for ((n, _), g) in params.iter().zip(&grads[1..]) {
            close(&format!("{name} grad {n}"), g.as_ref().unwrap(), &self.get(&format!("__{name}_grad_{n}")));
        }
        Ok(())
    }
}

fn close(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.sizes(), want.sizes(), "{what}: shape");
    for (i, (g, w)) in got.to_vec::<f32>().unwrap().iter().zip(want.to_vec::<f32>().unwrap()).enumerate() {
        assert!((g - w).abs() <= 2e-5 + 2e-5 * w.abs(), "{what}[{i}]: {g} vs PyTorch {w}");
    }
}

fn input(g: &Golden, name: &str) -> Tensor {
    g.get(&format!("__{name}_x")).requires_grad_(true)
}

#[test]
fn lstm_two_layers_bidirectional() -> Result<()> {
    let g = Golden::load();
    let opts = RnnOptions { num_layers: 2, bidirectional: true, ..Default::default() };
    let lstm = LSTM::with_options(3, 4, opts)?;
    g.load_into(&lstm, "lstm");
    let x = input(&g, "lstm");
    let (out, (h, c)) = lstm.forward_with(&x, Some((&g.get("__lstm_s0"), &g.get("__lstm_s1"))))?;
    assert_eq!(&out.sizes()[..], &[5, 2, 8]);
    g.check("lstm", &lstm, &x, vec![out, h, c])
}

#[test]
fn gru_batch_first_without_bias() -> Result<()> {
    let g = Golden::load();
    let gru = GRU::with_options(3, 4, RnnOptions { batch_first: true, bias: false, ..Default::default() })?;
    g.load_into(&gru, "gru");
    assert!(!g.has("gru.bias_ih_l0") && gru.named_parameters().len() == 2);
    let x = input(&g, "gru");
    let (out, h) = gru.forward_with(&x, None)?;
    g.check("gru", &gru, &x, vec![out, h])
}

#[test]
fn rnn_relu_unbatched_two_layers() -> Result<()> {
    let g = Golden::load();
    let opts = RnnOptions { num_layers: 2, ..Default::default() };
    let rnn = RNN::with_options(3, 4, Nonlinearity::Relu, opts)?;
    g.load_into(&rnn, "rnn_relu");
    let x = input(&g, "rnn_relu");
    let (out, h) = rnn.forward_with(&x, Some(&g.get("__rnn_relu_s0")))?;
    assert_eq!((&out.sizes()[..], &h.sizes()[..]), (&[5, 4][..], &[2, 4][..]));
    g.check("rnn_relu", &rnn, &x, vec![out, h])
}

#[test]
fn rnn_bidirectional_batch_first() -> Result<()> {
    let g = Golden::load();
    let opts = RnnOptions { bidirectional: true, batch_first: true, ..Default::default() };
    let rnn = RNN::with_options(3, 4, Nonlinearity::Tanh, opts)?;
    g.load_into(&rnn, "rnn_bi");
    let x = input(&g, "rnn_bi");
    let (out, h) = rnn.forward_with(&x, Some(&g.get("__rnn_bi_s0")))?;
    g.check("rnn_bi", &rnn, &x, vec![out, h])
}

#[test]
fn cells() -> Result<()> {
    let g = Golden::load();
    let lstm = LSTMCell::new(3, 4);
    g.load_into(&lstm, "lstm_cell");
    let x = input(&g, "lstm_cell");
    let (h, c) = lstm.forward_with(&x, Some((&g.get("__lstm_cell_s0"), &g.get("__lstm_cell_s1"))))?;
    g.check("lstm_cell", &lstm, &x, vec![h, c])?;

    let gru = GRUCell::new(3, 4);
    g.load_into(&gru, "gru_cell");
    let x = input(&g, "gru_cell");
    let h = gru.forward_with(&x, Some(&g.get("__gru_cell_s0")))?;
    assert_eq!(&h.sizes()[..], &[4]);
    g.check("gru_cell", &gru, &x, vec![h])?;

    let rnn = RNNCell::new(3, 4);
    g.load_into(&rnn, "rnn_cell");
    let x = input(&g, "rnn_cell");
    let h = rnn.forward_with(&x, Some(&g.get("__rnn_cell_s0")))?;
    g.check("rnn_cell", &rnn, &x, vec![h])
}

/// The sequence modules run the same gates as the cell operators: a one-layer LSTM over a
/// sequence equals the LSTM cell applied step by step with the same weights.
#[test]
fn lstm_equals_its_cell_unrolled() -> Result<()> {
    let lstm = LSTM::new(3, 5);
    let cell = LSTMCell::new(3, 5);
    let params = lstm.state_dict();
    let renamed: Vec<(String, Tensor)> =
        params.iter().map(|(n, t)| (n.trim_end_matches("_l0").to_string(), t.clone())).collect();
    oxten::safetensors::copy_into(&renamed, &cell.state_dict())?;
    let x = oxten::randn(&[4, 2, 3]);
    let (out, (h_n, _)) = lstm.forward_with(&x, None)?;
    let mut hc: Option<(Tensor, Tensor)> = None;
    for t in 0..4 {
        let step = cell.forward_with(&x.try_select(0, t)?, hc.as_ref().map(|(h, c)| (h, c)))?;
        close("step", &out.try_select(0, t)?, &step.0);
        hc = Some(step);
    }
    close("h_n", &h_n.try_select(0, 0)?, &hc.unwrap().0);
    Ok(())
}

#[test]
fn bad_arguments_are_errors() {
    let e = |r: Result<Tensor>| r.unwrap_err().to_string();
    let lstm = LSTM::new(3, 4);
    assert!(e(lstm.forward(&oxten::zeros(&[5, 2, 7])))
        .contains("input.size(-1) must be equal to input_size. Expected 3, got 7"));
    assert!(e(lstm.forward(&oxten::zeros(&[5]))).contains("Expected input to be 2D or 3D, got 1D instead"));
    assert!(e(lstm.forward(&oxten::zeros(&[0, 2, 3]))).contains("Expected sequence length to be larger than 0"));
    let wrong = oxten::zeros(&[2, 2, 4]);
    let err = lstm.forward_with(&oxten::zeros(&[5, 2, 3]), Some((&wrong, &wrong))).unwrap_err().to_string();
    assert!(err.contains("Expected hidden size [1, 2, 4], got [2, 2, 4]"), "{err}");
    assert!(GRU::with_options(3, 0, RnnOptions::default()).is_err());
    assert!(RNN::with_options(3, 4, Nonlinearity::Tanh, RnnOptions { dropout: 1.5, ..Default::default() }).is_err());
    assert!(LSTM::with_options(3, 4, RnnOptions { num_layers: 0, ..Default::default() }).is_err());
    let cell = GRUCell::new(3, 4);
    assert!(e(cell.forward_with(&oxten::zeros(&[2, 5]), None))
        .contains("input has inconsistent input_size: got 5 expected 3"));
    let err = e(cell.forward_with(&oxten::zeros(&[2, 3]), Some(&oxten::zeros(&[3, 4]))));
    assert!(err.contains("Input batch size 2 doesn't match hidden0 batch size 3"), "{err}");
}

/// Dropout between layers applies only in training mode and never after the last layer.
#[test]
fn dropout_between_layers_only_in_training() -> Result<()> {
    let opts = RnnOptions { num_layers: 2, dropout: 0.5, ..Default::default() };
    let mut gru = GRU::with_options(3, 4, opts)?;
    let x = oxten::randn(&[6, 2, 3]);
    gru.eval();
    let a = gru.forward(&x)?;
    let b = gru.forward(&x)?;
    assert_eq!(a.to_vec::<f32>()?, b.to_vec::<f32>()?);
    gru.train();
    let c = gru.forward(&x)?;
    assert_ne!(a.to_vec::<f32>()?, c.to_vec::<f32>()?);
    let single = GRU::with_options(3, 4, RnnOptions { dropout: 0.5, ..Default::default() })?;
    assert_eq!(single.forward(&x)?.to_vec::<f32>()?, single.forward(&x)?.to_vec::<f32>()?);
    Ok(())
}

/// `_thnn_fused_lstm_cell`'s formula written with operators, in f64:
/// `(h', c', [σ(i), σ(f), tanh(g), σ(o)])`.
fn lstm_cell_by_operators(ig: &Tensor, hg: &Tensor, cx: &Tensor, bias: Option<(&Tensor, &Tensor)>) -> [Tensor; 3] {
    let f64 = |t: &Tensor| t.try_to_dtype(oxten::DType::F64).unwrap();
    let mut gates = f64(ig).try_add(&f64(hg)).unwrap();
    if let Some((a, b)) = bias {
        gates = gates.try_add(&f64(a).try_add(&f64(b)).unwrap()).unwrap();
    }
    let g = gates.try_chunk(4, -1).unwrap();
    let (i, f, c, o) = (g[0].sigmoid(), g[1].sigmoid(), g[2].tanh(), g[3].sigmoid());
    let cy = f.try_mul(&f64(cx)).unwrap().try_add(&i.try_mul(&c).unwrap()).unwrap();
    let hy = o.try_mul(&cy.tanh()).unwrap();
    [hy, cy, oxten::cat(&[i, f, c, o], -1)]
}

/// Every element of `got` within `tol` (absolute plus relative) of the f64 `want`.
fn near(what: &str, got: &Tensor, want: &Tensor, tol: f64) {
    assert_eq!(got.sizes(), want.sizes(), "{what}: shape");
    let got = got.try_to_dtype(oxten::DType::F64).unwrap().to_vec::<f64>().unwrap();
    for (i, (g, w)) in got.iter().zip(want.to_vec::<f64>().unwrap()).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{i}]: {g} vs {w}");
    }
}

/// The fused LSTM cell against its formula written with operators: every dtype, with and
/// without biases, batched and not, hidden sizes that do and do not fill a vector register,
/// non-contiguous gates, large gate values (saturated sigmoids, `tanh` of ±20), and enough cells
/// (33 rows of 130) for the rows to be split unevenly over the threads.
#[test]
fn fused_lstm_cell_matches_its_formula() -> Result<()> {
    use oxten::options::ThnnFusedLstmCellOpts;
    for (batch, hidden) in [(Some(3), 37), (Some(1), 16), (None, 5), (Some(4), 1), (Some(33), 130)] {
        let lead: Vec<i64> = batch.into_iter().collect();
        let shape = |last: i64| [lead.clone(), vec![last]].concat();
        let ig = oxten::randn(&shape(4 * hidden)).try_mul_scalar(3.0)?;
        // Transposed storage for the hidden gates.
        let mut rev = shape(4 * hidden);
        rev.reverse();
        let hg = oxten::randn(&rev).try_mul_scalar(3.0)?;
        let hg = if batch.is_some() { hg.t() } else { hg };
        let cx = oxten::randn(&shape(hidden)).try_mul_scalar(2.0)?;
        let ib = oxten::randn(&[4 * hidden]).try_mul_scalar(10.0)?;
        let hb = oxten::randn(&[4 * hidden]);
        for dtype in [oxten::DType::F64, oxten::DType::F32, oxten::DType::BF16, oxten::DType::F16] {
            let tol = match dtype {
                oxten::DType::F64 => 1e-14,
                oxten::DType::F32 => 2e-6,
                _ => 1e-2,
            };
            let d = |t: &Tensor| t.try_to_dtype(dtype).unwrap();
            // The inputs the reference sees are the rounded ones.
            let (ig, hg, cx, ib, hb) = (d(&ig), d(&hg), d(&cx), d(&ib), d(&hb));
            for bias in [false, true] {
                let opts = ThnnFusedLstmCellOpts { input_bias: bias.then_some(&ib), hidden_bias: bias.then_some(&hb) };
                let (hy, cy, ws) = oxten::try__thnn_fused_lstm_cell_with(&ig, &hg, &cx, opts)?;
                let want = lstm_cell_by_operators(&ig, &hg, &cx, bias.then_some((&ib, &hb)));
                let what = format!("{dtype} batch {batch:?} hidden {hidden} bias {bias}");
                for (name, got, want) in [("h'", &hy, &want[0]), ("c'", &cy, &want[1]), ("workspace", &ws, &want[2])] {
                    assert_eq!(got.dtype(), dtype, "{what} {name}");
                    near(&format!("{what} {name}"), got, want, tol);
                }
            }
        }
    }
    Ok(())
}

/// The fused backward (no `create_graph`) against autograd through the formula written with
/// operators, for every input, and with a missing `grad_cy`; 33 rows of 130 cells split over
/// the threads.
#[test]
fn fused_lstm_cell_backward_matches_autograd_of_its_formula() -> Result<()> {
    use oxten::options::ThnnFusedLstmCellOpts;
    for (batch, hidden) in [(Some(3i64), 19), (None, 19), (Some(33), 130)] {
        let lead: Vec<i64> = batch.into_iter().collect();
        let shape = |last: i64| [lead.clone(), vec![last]].concat();
        let leaf = |s: &[i64]| oxten::randn(s).try_to_dtype(oxten::DType::F64).unwrap().requires_grad_(true);
        let inputs = [
            leaf(&shape(4 * hidden)),
            leaf(&shape(4 * hidden)),
            leaf(&shape(hidden)),
            leaf(&[4 * hidden]),
            leaf(&[4 * hidden]),
        ];
        let (w_h, w_c) = (
            oxten::randn(&shape(hidden)).try_to_dtype(oxten::DType::F64)?,
            oxten::randn(&shape(hidden)).try_to_dtype(oxten::DType::F64)?,
        );
        let loss = |h: &Tensor, c: &Tensor| -> Result<Tensor> {
            h.try_mul(&w_h)?.try_sum()?.try_add(&c.try_mul(&w_c)?.try_sum()?)
        };
        let opts = ThnnFusedLstmCellOpts { input_bias: Some(&inputs[3]), hidden_bias: Some(&inputs[4]) };
        let (hy, cy, _) = oxten::try__thnn_fused_lstm_cell_with(&inputs[0], &inputs[1], &inputs[2], opts)?;
        let got = oxten::autograd::grad(&[loss(&hy, &cy)?], &inputs)?;
        let want_out = lstm_cell_by_operators(&inputs[0], &inputs[1], &inputs[2], Some((&inputs[3], &inputs[4])));
        let want = oxten::autograd::grad(&[loss(&want_out[0], &want_out[1])?], &inputs)?;
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            near(&format!("batch {batch:?} grad of input {k}"), g.as_ref().unwrap(), w.as_ref().unwrap(), 1e-13);
        }
        // The backward operator itself, with only h''s gradient.
        let (_, cy, ws) =
            oxten::autograd::no_grad(|| oxten::try__thnn_fused_lstm_cell(&inputs[0], &inputs[1], &inputs[2]))?;
        let (gg, gcx, gb) =
            oxten::try__thnn_fused_lstm_cell_backward_impl(Some(&w_h), None, &inputs[2].detach(), &cy, &ws, false)?;
        let want_out = lstm_cell_by_operators(&inputs[0], &inputs[1], &inputs[2], None);
        let want = oxten::autograd::grad(&[want_out[0].try_mul(&w_h)?.try_sum()?], &inputs[..3])?;
        near("grad_gates", &gg, want[0].as_ref().unwrap(), 1e-13);
        near("grad_cx", &gcx, want[2].as_ref().unwrap(), 1e-13);
        assert_eq!(gb.numel(), 0, "no bias: an empty grad_bias");
    }
    Ok(())
}

#[test]
fn fused_lstm_cell_checks_its_arguments() {
    use oxten::options::ThnnFusedLstmCellOpts;
    let z = |s: &[i64]| oxten::zeros(s);
    let e = |r: Result<(Tensor, Tensor, Tensor)>| r.unwrap_err().to_string();
    let cell = |ig: &Tensor, hg: &Tensor, cx: &Tensor| oxten::try__thnn_fused_lstm_cell(ig, hg, cx);
    assert!(e(cell(&z(&[2, 10]), &z(&[2, 10]), &z(&[2, 2]))).contains("not a multiple of 4"));
    assert!(
        e(cell(&z(&[2, 8]), &z(&[2, 4]), &z(&[2, 2]))).contains("expected hidden_gates of shape [2, 8], got [2, 4]")
    );
    assert!(e(cell(&z(&[2, 8]), &z(&[2, 8]), &z(&[3, 2]))).contains("expected cx of shape [2, 2], got [3, 2]"));
    assert!(e(cell(&z(&[1, 2, 8]), &z(&[1, 2, 8]), &z(&[1, 2, 2]))).contains("1-D or 2-D, got 3-D"));
    let ints = z(&[2, 8]).try_to_dtype(oxten::DType::I64).unwrap();
    assert!(e(cell(&ints, &ints, &z(&[2, 2]).try_to_dtype(oxten::DType::I64).unwrap())).contains("floating-point"));
    let f64 = z(&[2, 8]).try_to_dtype(oxten::DType::F64).unwrap();
    assert!(e(cell(&z(&[2, 8]), &f64, &z(&[2, 2]))).contains("expected hidden_gates of dtype float32, got float64"));
    let b = z(&[8]);
    let one = ThnnFusedLstmCellOpts { input_bias: Some(&b), hidden_bias: None };
    assert!(
        e(oxten::try__thnn_fused_lstm_cell_with(&z(&[2, 8]), &z(&[2, 8]), &z(&[2, 2]), one)).contains("both be given")
    );
    let short = z(&[4]);
    let bad = ThnnFusedLstmCellOpts { input_bias: Some(&b), hidden_bias: Some(&short) };
    assert!(e(oxten::try__thnn_fused_lstm_cell_with(&z(&[2, 8]), &z(&[2, 8]), &z(&[2, 2]), bad))
        .contains("hidden_bias of shape [8]"));
    let back = oxten::try__thnn_fused_lstm_cell_backward_impl(None, None, &z(&[2, 2]), &z(&[2, 2]), &z(&[2, 6]), false);
    assert!(e(back).contains("expected workspace of shape [2, 8], got [2, 6]"));
    // Empty batches and a zero hidden size give empty results.
    let (h, c, w) = cell(&z(&[0, 8]), &z(&[0, 8]), &z(&[0, 2])).unwrap();
    assert_eq!((&h.sizes()[..], &c.sizes()[..], &w.sizes()[..]), (&[0, 2][..], &[0, 2][..], &[0, 8][..]));
    let (h, _, w) = cell(&z(&[3, 0]), &z(&[3, 0]), &z(&[3, 0])).unwrap();
    assert_eq!((&h.sizes()[..], &w.sizes()[..]), (&[3, 0][..], &[3, 0][..]));
}

/// Hidden size 0 through every path: the Meta (composite) kernels, and first and second
/// derivatives through the CPU kernel (the create_graph backward splits the gates by operators).
#[test]
fn fused_lstm_cell_with_hidden_size_zero() -> Result<()> {
    use oxten::options::EmptyOpts;
    let meta = |s: &[i64]| oxten::empty_with(s, EmptyOpts { device: Some(oxten::Device::Meta), ..Default::default() });
    let (h, c, w) = oxten::try__thnn_fused_lstm_cell(&meta(&[3, 0]), &meta(&[3, 0]), &meta(&[3, 0]))?;
    assert_eq!((&h.sizes()[..], &c.sizes()[..], &w.sizes()[..]), (&[3, 0][..], &[3, 0][..], &[3, 0][..]));
    let (gg, gcx, _) = oxten::try__thnn_fused_lstm_cell_backward_impl(
        None,
        None,
        &meta(&[3, 0]),
        &meta(&[3, 0]),
        &meta(&[3, 0]),
        true,
    )?;
    assert_eq!((&gg.sizes()[..], &gcx.sizes()[..]), (&[3, 0][..], &[3, 0][..]));
    let x = oxten::zeros(&[3, 0]).try_to_dtype(oxten::DType::F64)?.requires_grad_(true);
    let (h, _, _) = oxten::try__thnn_fused_lstm_cell(&x, &x, &x)?;
    let opts = oxten::autograd::GradOpts { create_graph: true, ..Default::default() };
    let g = oxten::autograd::grad_with(&[h.try_sum()?], &[&x], opts)?;
    assert_eq!(g[0].as_ref().unwrap().sizes(), [3, 0]);
    Ok(())
}
