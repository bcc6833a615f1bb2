//! oxten::nn: PyTorch's state_dict names, default initialisation, train/eval behaviour, a model
//! trained in PyTorch loading through safetensors and giving PyTorch's outputs, and a small
//! training run whose loss must fall.

use oxten::nn::{BatchNorm2d, Conv2d, Dropout, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential};
use oxten::optim::{Adam, AdamOpts, Optimizer};
use oxten::{DType, Tensor};

/// Every test here draws its initial weights from the process-wide default generator, and one
/// checks that reseeding reproduces them: the tests take turns so that no other test draws
/// between the seed and the check.
static DEFAULT_GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    DEFAULT_GENERATOR.lock().unwrap_or_else(|e| e.into_inner())
}

fn cnn() -> Sequential {
    Sequential::new()
        .add(Conv2d::new(1, 4, 3).padding(1))
        .add(BatchNorm2d::new(4))
        .add(ReLU)
        .add(MaxPool2d::new(2))
        .add(Flatten::default())
        .add(Linear::new(4 * 4 * 4, 10))
}

#[test]
fn state_dict_names_and_shapes_follow_pytorch() {
    let _turn = one_at_a_time();
    let net = cnn();
    let sd: Vec<(String, Vec<i64>)> = net.state_dict().into_iter().map(|(n, t)| (n, t.sizes().to_vec())).collect();
    let want: Vec<(&str, Vec<i64>)> = vec![
        ("0.weight", vec![4, 1, 3, 3]),
        ("0.bias", vec![4]),
        ("1.weight", vec![4]),
        ("1.bias", vec![4]),
        ("1.running_mean", vec![4]),
        ("1.running_var", vec![4]),
        ("1.num_batches_tracked", vec![]),
        ("5.weight", vec![10, 64]),
        ("5.bias", vec![10]),
    ];
    assert_eq!(sd.len(), want.len());
    for ((n, s), (wn, ws)) in sd.iter().zip(&want) {
        assert_eq!((n.as_str(), s), (*wn, ws));
    }
    assert_eq!(net.named_parameters().len(), 6);
    assert_eq!(net.num_parameters(), 4 * 9 + 4 + 4 + 4 + 640 + 10);
    assert!(net.parameters().iter().all(|p| p.requires_grad() && p.is_leaf()));
}

#[test]
fn default_initialisation_is_kaiming_uniform() {
    let _turn = one_at_a_time();
    oxten::manual_seed(3);
    let l = Linear::new(400, 300);
    let w = l.weight.to_vec::<f32>().unwrap();
    let bound = 1.0 / 20.0;
    assert!(w.iter().all(|v| v.abs() <= bound));
    // Uniform on ±b: standard deviation b/√3.
    let n = w.len() as f64;
    let mean = w.iter().map(|&v| v as f64).sum::<f64>() / n;
    let std = (w.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n).sqrt();
    assert!(mean.abs() < 1e-3 && (std - bound as f64 / 3f64.sqrt()).abs() < 1e-3, "mean {mean} std {std}");
    // Reproducible from the seed, different without it.
    oxten::manual_seed(3);
    assert_eq!(Linear::new(400, 300).weight.to_vec::<f32>().unwrap(), w);
    assert_ne!(Linear::new(400, 300).weight.to_vec::<f32>().unwrap(), w);
}

#[test]
fn train_and_eval_modes() {
    let _turn = one_at_a_time();
    let mut drop = Dropout::new(0.5);
    let x = oxten::ones(&[1000]);
    let y = drop.forward(&x).unwrap().to_vec::<f32>().unwrap();
    assert!(y.iter().all(|&v| v == 0.0 || v == 2.0) && y.contains(&0.0));
    drop.eval();
    assert_eq!(drop.forward(&x).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 1000]);

    let mut bn = BatchNorm2d::new(2);
    let x = Tensor::from_vec((0..16).map(|v| v as f32).collect::<Vec<_>>(), &[2, 2, 2, 2]).unwrap();
    bn.forward(&x).unwrap();
    // Channel 0 holds 0..4 and 8..12: mean 5.5, unbiased variance 138/7; momentum 0.1.
    let rm = bn.running_mean.to_vec::<f32>().unwrap();
    assert!((rm[0] - 0.55).abs() < 1e-6 && (rm[1] - 0.95).abs() < 1e-6, "{rm:?}");
    let rv = bn.running_var.to_vec::<f32>().unwrap();
    assert!((rv[0] - (0.9 + 13.8 / 7.0)).abs() < 1e-5 && (rv[1] - rv[0]).abs() < 1e-5, "{rv:?}");
    assert_eq!(bn.num_batches_tracked.item::<i64>().unwrap(), 1);
    bn.eval();
    bn.forward(&x).unwrap();
    assert_eq!(bn.running_mean.to_vec::<f32>().unwrap(), rm);
    assert_eq!(bn.num_batches_tracked.item::<i64>().unwrap(), 1);
    // The count is state: a loaded value is continued.
    bn.train();
    bn.num_batches_tracked.fill_scalar_(oxten::Scalar::Int(41));
    bn.forward(&x).unwrap();
    assert_eq!(bn.num_batches_tracked.item::<i64>().unwrap(), 42);
}

#[test]
fn a_model_trained_in_pytorch_gives_pytorch_outputs() {
    let _turn = one_at_a_time();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/digits_cnn.safetensors");
    let file = oxten::safetensors::load(path).unwrap();
    let get = |n: &str| file.iter().find(|(k, _)| k == n).unwrap().1.clone();
    let state: Vec<(String, Tensor)> = file.iter().filter(|(k, _)| !k.starts_with("__")).cloned().collect();
    let mut net = cnn();
    oxten::safetensors::copy_into(&state, &net.state_dict()).unwrap();
    net.eval();
    let y = net.forward(&get("__input")).unwrap();
    let (got, want) = (y.to_vec::<f32>().unwrap(), get("__expected").to_vec::<f32>().unwrap());
    assert_eq!(got.len(), 50);
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-5, "{g} vs PyTorch {w}");
    }
    assert_eq!(net.state_dict()[6].1.dtype(), DType::I64);
    // A checkpoint for another model is rejected with every mismatch named.
    let other = Sequential::new().add(Linear::new(3, 10));
    let err = oxten::safetensors::copy_into(&state, &other.state_dict()).unwrap_err().to_string();
    assert!(err.contains("0.weight") && err.contains("Unexpected key"), "{err}");
}

#[test]
fn a_small_cnn_learns() {
    let _turn = one_at_a_time();
    oxten::manual_seed(1);
    let mut net = cnn();
    net.train();
    // Ten fixed random images, each its own class: the network must memorise them.
    let x = oxten::rand(&[10, 1, 8, 8]);
    let y = Tensor::from_vec((0..10i64).collect::<Vec<_>>(), &[10]).unwrap();
    let mut opt = Adam::new(net.parameters(), AdamOpts { lr: 0.02, ..Default::default() }).unwrap();
    let mut first = None;
    let mut last = 0.0;
    for _ in 0..60 {
        let loss = oxten::cross_entropy_loss(&net.forward(&x).unwrap(), &y);
        opt.zero_grad();
        loss.backward();
        opt.step().unwrap();
        last = loss.item::<f32>().unwrap();
        first.get_or_insert(last);
    }
    assert!(last < 0.1 * first.unwrap(), "loss {} -> {last}", first.unwrap());
}

#[test]
fn more_layers_match_pytorch() {
    let _turn = one_at_a_time();
    use oxten::nn::{AdaptiveAvgPool2d, AvgPool2d, Embedding, GroupNorm, LayerNorm};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/nn_layers.safetensors");
    let file = oxten::safetensors::load(path).unwrap();
    let get = |n: &str| file.iter().find(|(k, _)| k == n).unwrap_or_else(|| panic!("{n}")).1.clone();
    let load = |m: &dyn Module, prefix: &str| {
        let named: Vec<(String, Tensor)> =
            m.state_dict().into_iter().map(|(n, t)| (format!("{prefix}.{n}"), t)).collect();
        let src: Vec<(String, Tensor)> =
            file.iter().filter(|(k, _)| k.starts_with(&format!("{prefix}."))).cloned().collect();
        oxten::safetensors::copy_into(&src, &named).unwrap();
    };
    let check = |name: &str, y: Tensor| {
        let want = get(&format!("__out_{name}"));
        assert_eq!(y.sizes(), want.sizes(), "{name}");
        for (g, w) in y.to_vec::<f32>().unwrap().iter().zip(want.to_vec::<f32>().unwrap()) {
            assert!((g - w).abs() < 1e-5, "{name}: {g} vs PyTorch {w}");
        }
    };
    let x = get("__x");
    let ln = LayerNorm::new(&[4, 6]);
    load(&ln, "ln");
    check("ln", ln.forward(&x).unwrap());
    let gn = GroupNorm::new(2, 4);
    load(&gn, "gn");
    check("gn", gn.forward(&x).unwrap());
    check("avg", AvgPool2d::new(2).forward(&x).unwrap());
    check("ada", AdaptiveAvgPool2d::new(3, 2).forward(&x).unwrap());
    let emb = Embedding::new(7, 3);
    load(&emb, "emb");
    check("emb", emb.forward(&get("__idx")).unwrap());
    assert_eq!(ln.named_parameters().len() + gn.named_parameters().len() + emb.named_parameters().len(), 5);
}

/// The activation layers call their operators with PyTorch's default hyper-parameters; `PReLU`
/// has one learnable slope (0.25) named `weight`; `RReLU` draws slopes only in training mode.
#[test]
fn activation_layers_use_pytorch_defaults() -> oxten::Result<()> {
    use oxten::nn::{
        Hardshrink, Hardtanh, LeakyReLU, LogSigmoid, PReLU, RReLU, ReLU6, Softplus, Softshrink, Softsign, Tanhshrink,
        Threshold, CELU, ELU, GLU, SELU,
    };
    use oxten::{ops, Scalar};
    let _turn = one_at_a_time();
    let x = Tensor::from_vec(vec![-3.0f64, -1.2, -0.4, 0.0, 0.3, 1.7, 4.5, 7.0], &[2, 4])?;
    let f = |v: f64| Scalar::Float(v);
    let same = |layer: &dyn Module, want: Tensor| -> oxten::Result<()> {
        assert_eq!(layer.forward(&x)?.to_f64_vec()?, want.to_f64_vec()?);
        Ok(())
    };
    same(&ReLU6, ops::hardtanh::call(&x, f(0.0), f(6.0))?)?;
    same(&SELU, ops::elu::call(&x, f(1.6732632423543772), f(1.0507009873554805), f(1.0))?)?;
    same(&CELU::default(), ops::elu::call(&x, f(1.0), f(1.0), f(1.0))?)?;
    same(&ELU::default(), ops::elu::call(&x, f(1.0), f(1.0), f(1.0))?)?;
    same(&LeakyReLU::default(), ops::leaky_relu::call(&x, f(0.01))?)?;
    same(&Hardtanh::default(), ops::clamp::call(&x, Some(f(-1.0)), Some(f(1.0)))?)?;
    same(&Hardshrink::default(), ops::hardshrink::call(&x, f(0.5))?)?;
    same(&Softshrink::default(), ops::softshrink::call(&x, f(0.5))?)?;
    same(&Softplus::default(), ops::softplus::call(&x, f(1.0), f(20.0))?)?;
    same(&Threshold { threshold: 0.3, value: -1.0 }, ops::threshold::call(&x, f(0.3), f(-1.0))?)?;
    same(&GLU::default(), ops::glu::call(&x, -1)?)?;
    let xs = x.to_f64_vec()?;
    let log_sigmoid: Vec<f64> = xs.iter().map(|v| v.min(0.0) - (-v.abs()).exp().ln_1p()).collect();
    assert_eq!(LogSigmoid.forward(&x)?.to_f64_vec()?, log_sigmoid);
    let softsign: Vec<f64> = xs.iter().map(|v| v / (1.0 + v.abs())).collect();
    assert_eq!(Softsign.forward(&x)?.to_f64_vec()?, softsign);
    let tanhshrink: Vec<f64> = xs.iter().map(|v| v - v.tanh()).collect();
    assert_eq!(Tanhshrink.forward(&x)?.to_f64_vec()?, tanhshrink);

    let prelu = PReLU::default();
    let names: Vec<String> = prelu.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["weight"]);
    let y = prelu.forward(&x.try_to_dtype(DType::F32)?)?;
    assert_eq!(y.to_f64_vec()?[0], -0.75);
    let per_channel = PReLU::new(2, 0.5);
    let y = per_channel.forward(&x.try_reshape(&[1, 2, 4])?.try_to_dtype(DType::F32)?)?;
    assert_eq!(y.to_f64_vec()?[0], -1.5);

    let mut rrelu = RReLU::default();
    rrelu.eval();
    let mean_slope = (1.0 / 8.0 + 1.0 / 3.0) / 2.0;
    same(&rrelu, ops::leaky_relu::call(&x, f(mean_slope))?)?;
    rrelu.train();
    let y = rrelu.forward(&x)?.to_f64_vec()?;
    let slope = y[0] / xs[0];
    assert!((1.0 / 8.0..=1.0 / 3.0).contains(&slope), "{slope}");
    Ok(())
}

/// The 1-d and 3-d layers, transposed convolutions, adaptive max pooling, `LocalResponseNorm`
/// and `EmbeddingBag` (fixed-size bags, offsets with empty bags and per-sample weights, a
/// padding index) give PyTorch's outputs with PyTorch's parameters (scripts/nn_fixture.py).
#[test]
fn nd_layers_match_pytorch() {
    let _turn = one_at_a_time();
    use oxten::nn::{
        AdaptiveAvgPool1d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d,
        AvgPool3d, Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, EmbeddingBag, EmbeddingBagMode,
        InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm, MaxPool1d, MaxPool3d,
    };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/nn_layers_nd.safetensors");
    let file = oxten::safetensors::load(path).unwrap();
    let get = |n: &str| file.iter().find(|(k, _)| k == n).unwrap_or_else(|| panic!("{n}")).1.clone();
    let load = |m: &dyn Module, prefix: &str| {
        let named: Vec<(String, Tensor)> =
            m.state_dict().into_iter().map(|(n, t)| (format!("{prefix}.{n}"), t)).collect();
        let src: Vec<(String, Tensor)> =
            file.iter().filter(|(k, _)| k.starts_with(&format!("{prefix}."))).cloned().collect();
        assert_eq!(src.len(), named.len(), "{prefix}: parameters");
        oxten::safetensors::copy_into(&src, &named).unwrap();
    };
    let check = |name: &str, m: &dyn Module, x: &Tensor| {
        load(m, name);
        let y = m.forward(x).unwrap();
        let want = get(&format!("__out_{name}"));
        assert_eq!(y.sizes(), want.sizes(), "{name}");
        for (g, w) in y.to_vec::<f32>().unwrap().iter().zip(want.to_vec::<f32>().unwrap()) {
            assert!((g - w).abs() < 2e-5 * (1.0 + w.abs()), "{name}: {g} vs PyTorch {w}");
        }
    };
    let (x1, x2, x3) = (get("__x1"), get("__x2"), get("__x3"));

    check("conv1", &Conv1d::new(4, 6, 3).stride(2).padding(1), &x1);
    let mut conv3 = Conv3d::build(4, 6, [2, 3, 2], 1, true);
    (conv3.stride, conv3.padding, conv3.dilation) = ([1, 2, 1], [1, 0, 1], [2, 1, 1]);
    check("conv3", &conv3, &x3);
    check("convg3", &Conv3d::build(4, 6, [2, 2, 2], 2, false), &x3);
    check("convt1", &ConvTranspose1d::new(4, 6, 3).stride(2).padding(1).output_padding(1), &x1);
    check("convt2", &ConvTranspose2d::new(4, 6, 3).stride(2).padding(1), &x2);
    let mut convt3 = ConvTranspose3d::build(4, 6, [2, 3, 2], 1, true);
    (convt3.stride, convt3.padding, convt3.output_padding) = ([2, 1, 2], [0, 1, 1], [1, 0, 1]);
    check("convt3", &convt3, &x3);

    check("maxp1", &MaxPool1d::new(3).stride(2).padding(1), &x1);
    let mut maxp3 = MaxPool3d::new(3).stride(2).padding(1);
    maxp3.ceil_mode = true;
    check("maxp3", &maxp3, &x3);
    check("avgp1", &AvgPool1d::new(3).stride(2).padding(1), &x1);
    let mut avgp3 = AvgPool3d::new(3).stride(2).padding(1);
    avgp3.count_include_pad = false;
    check("avgp3", &avgp3, &x3);
    check("aavg1", &AdaptiveAvgPool1d::new(4), &x1);
    check("aavg3", &AdaptiveAvgPool3d::new(2, 3, 4), &x3);
    check("amax1", &AdaptiveMaxPool1d::new([4]), &x1);
    check("amax2", &AdaptiveMaxPool2d::new([4, 5]), &x2);
    check("amax3", &AdaptiveMaxPool3d::new([2, 3, 4]), &x3);
    let mut lrn = LocalResponseNorm::new(3).unwrap();
    (lrn.alpha, lrn.beta, lrn.k) = (0.1, 0.6, 2.0);
    check("lrn", &lrn, &x3);
    check("inorm1", &InstanceNorm1d::build(4, true, false), &x1);
    check("inorm3", &InstanceNorm3d::new(4), &x3.select(0, 0));
    let tracked: Vec<String> = InstanceNorm2d::build(3, true, true).state_dict().into_iter().map(|(n, _)| n).collect();
    assert_eq!(tracked, ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]);

    let (idx1, offsets, psw) = (get("__idx1"), get("__offsets"), get("__psw"));
    check("bag_max", &EmbeddingBag::new(7, 3, EmbeddingBagMode::Max), &get("__idx2"));
    let bag_sum = EmbeddingBag::new(7, 3, EmbeddingBagMode::Sum);
    load(&bag_sum, "bag_sum");
    let bag_mean = EmbeddingBag::new(7, 3, EmbeddingBagMode::Mean).with_padding_idx(2).unwrap();
    load(&bag_mean, "bag_mean");
    for (name, y) in [
        ("bag_sum", bag_sum.forward_bags(&idx1, &offsets, Some(&psw)).unwrap()),
        ("bag_mean", bag_mean.forward_bags(&idx1, &offsets, None).unwrap()),
    ] {
        let want = get(&format!("__out_{name}"));
        assert_eq!(y.sizes(), want.sizes(), "{name}");
        for (g, w) in y.to_vec::<f32>().unwrap().iter().zip(want.to_vec::<f32>().unwrap()) {
            assert!((g - w).abs() < 1e-5 * (1.0 + w.abs()), "{name}: {g} vs PyTorch {w}");
        }
    }
    // An index outside the table is an error naming the operator, not a panic.
    let bad = Tensor::from_vec(vec![1i64, 9], &[2]).unwrap();
    let err = bag_sum.forward_bags(&bad, &Tensor::from_vec(vec![0i64], &[1]).unwrap(), None).unwrap_err();
    assert!(err.to_string().contains("embedding_bag") && err.to_string().contains("out of bounds"), "{err}");
}

/// `MaxUnpool1d/2d`, `Bilinear` and `ChannelShuffle` against values worked out by hand (equal to
/// PyTorch 2.15's): unpooling puts each max back where its index says, on the default or a given
/// output size (refused outside a stride of the default, with PyTorch's message), and its
/// gradient reaches the pooled values; `Bilinear` is `x1ᵀ W_o x2 + b_o`.
#[test]
fn unpool_bilinear_and_channel_shuffle_layers() -> oxten::Result<()> {
    use oxten::nn::{Bilinear, ChannelShuffle, MaxUnpool1d, MaxUnpool2d};
    let x = Tensor::from_vec((0..16).map(|v| v as f32).collect::<Vec<_>>(), &[1, 1, 4, 4])?;
    let (y, idx) = oxten::try_max_pool2d_with_indices(&x, &[2, 2])?;
    assert_eq!(idx.to_vec::<i64>()?, [5, 7, 13, 15]);
    let unpool = MaxUnpool2d::new(2);
    let u = unpool.forward_with(&y, &idx, None)?;
    let mut want = vec![0.0f32; 16];
    for k in [5, 7, 13, 15] {
        want[k] = k as f32;
    }
    assert_eq!((u.sizes().to_vec(), u.to_vec::<f32>()?), (vec![1, 1, 4, 4], want.clone()));
    let u5 = unpool.forward_with(&y, &idx, Some(&[5, 5]))?;
    assert_eq!(u5.sizes(), [1, 1, 5, 5]);
    assert_eq!(u5.to_vec::<f32>()?[..16], want[..]);
    let e = unpool.forward_with(&y, &idx, Some(&[7, 7])).unwrap_err();
    assert!(e.to_string().contains("invalid output_size \"[7, 7]\" (dim 0 must be between 2 and 6)"), "{e}");
    let e = oxten::ops::max_unpool2d::call(&y, &idx.try_add_scalar(100)?, &[4, 4]).unwrap_err();
    assert!(e.to_string().contains("Found an invalid max index: 105 (output volumes are of size 4x4)"), "{e}");
    // An empty batch unpools to an empty batch.
    let empty = oxten::ops::max_unpool2d::call(&y.try_narrow(0, 0, 0)?, &idx.try_narrow(0, 0, 0)?, &[4, 4])?;
    assert_eq!(empty.sizes(), [0, 1, 4, 4]);
    let yg = y.detach().requires_grad_(true);
    let g = Tensor::from_vec((0..16).map(|v| v as f32 * 0.5).collect::<Vec<_>>(), &[1, 1, 4, 4])?;
    unpool.forward_with(&yg, &idx, None)?.try_mul(&g)?.try_sum()?.try_backward()?;
    assert_eq!(yg.grad().unwrap().to_vec::<f32>()?, [2.5, 3.5, 6.5, 7.5]);

    // `max_pool1d` of [0, 1, …, 5] with window 2: values 1, 3, 5 at positions 1, 3, 5.
    let y1 = Tensor::from_vec(vec![1.0f32, 3.0, 5.0], &[1, 1, 3])?;
    let i1 = Tensor::from_vec(vec![1i64, 3, 5], &[1, 1, 3])?;
    let u1 = MaxUnpool1d::new(2).forward_with(&y1, &i1, None)?;
    assert_eq!(u1.to_vec::<f32>()?, [0.0, 1.0, 0.0, 3.0, 0.0, 5.0]);
    // A stride whose output size does not fit in i64 is an error, not an overflow.
    let e = MaxUnpool1d::new(2).stride(i64::MAX).forward_with(&y1, &i1, None).unwrap_err();
    assert!(e.to_string().contains("max_unpool1d: the output size overflows int64"), "{e}");
    // The given size must lie strictly within a stride of the default (PyTorch's bounds).
    let e = unpool.forward_with(&y, &idx, Some(&[6, 6])).unwrap_err();
    assert!(e.to_string().contains("invalid output_size \"[6, 6]\" (dim 0 must be between 2 and 6)"), "{e}");
    let u = oxten::ops::max_unpool1d::call(&y1, &i1, &[2], None, &[0], Some(&[1, 1, 7]))?;
    assert_eq!(u.to_vec::<f32>()?, [0.0, 1.0, 0.0, 3.0, 0.0, 5.0, 0.0]);

    let mut bl = Bilinear::new(2, 3, 2, true);
    bl.weight = Tensor::from_vec((0..12).map(|v| v as f32).collect::<Vec<_>>(), &[2, 2, 3])?;
    bl.bias = Some(Tensor::from_vec(vec![0.5f32, -0.5], &[2])?);
    let a = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?;
    let b = Tensor::from_vec(vec![3.0f32, 4.0, 5.0], &[1, 3])?;
    assert_eq!(bl.forward_with(&a, &b)?.to_vec::<f32>()?, [114.5, 329.5]);
    assert_eq!(bl.named_parameters().len(), 2);
    let e = bl.forward_with(&a, &a).unwrap_err();
    assert!(e.to_string().contains("bilinear(): input2 size does not match weight size: got 2 but expected 3"), "{e}");

    let c = Tensor::from_vec((0..6).map(|v| v as f32).collect::<Vec<_>>(), &[1, 6, 1, 1])?;
    assert_eq!(ChannelShuffle { groups: 2 }.forward(&c)?.to_vec::<f32>()?, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(ChannelShuffle { groups: 3 }.forward(&c)?.to_vec::<f32>()?, [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
    let e = ChannelShuffle { groups: 4 }.forward(&c).unwrap_err();
    assert!(
        e.to_string().contains("Number of channels must be divisible by groups. Got 6 channels and 4 groups."),
        "{e}"
    );
    Ok(())
}

/// `FractionalMaxPool2d/3d`: the asked output size (given, or a ratio of the input's), each value
/// the input at its index, the window starts drawn anew per call unless given (then the result is
/// the operator's), and the ratio's bounds.
#[test]
fn fractional_max_pool_layers() -> oxten::Result<()> {
    use oxten::nn::{FractionalMaxPool2d, FractionalMaxPool3d, FractionalOutput};
    let x = Tensor::from_vec((0..200).map(|v| ((v * 37) % 101) as f32).collect::<Vec<_>>(), &[2, 1, 10, 10])?;
    let pool = FractionalMaxPool2d::new(2, FractionalOutput::Size([4, 3]));
    let (y, idx) = pool.forward_with_samples(&x, None)?;
    assert_eq!((y.sizes().to_vec(), idx.sizes().to_vec()), (vec![2, 1, 4, 3], vec![2, 1, 4, 3]));
    let flat = x.try_reshape(&[2, 1, 100])?.to_vec::<f32>()?;
    for (k, (&v, &i)) in y.to_vec::<f32>()?.iter().zip(&idx.to_vec::<i64>()?).enumerate() {
        assert_eq!(v, flat[(k / 12) * 100 + i as usize]);
    }
    let half = FractionalMaxPool2d::new(3, FractionalOutput::Ratio([0.5, 0.5]));
    assert_eq!(half.forward(&x)?.sizes(), [2, 1, 5, 5]);
    let samples = Tensor::from_vec(vec![0.3f32, 0.6, 0.9, 0.1], &[2, 1, 2])?;
    let given = pool.forward_with_samples(&x, Some(&samples))?;
    let direct = oxten::ops::fractional_max_pool2d::call(&x, &[2, 2], &[4, 3], &samples)?;
    assert_eq!(given.1.to_vec::<i64>()?, direct.1.to_vec::<i64>()?);
    let e = FractionalMaxPool2d::new(2, FractionalOutput::Ratio([1.5, 0.5])).forward(&x).unwrap_err();
    assert!(e.to_string().contains("output_ratio must be between 0 and 1 (got 1.5)"), "{e}");
    let e = pool.forward(&x.try_reshape(&[200])?).unwrap_err();
    assert!(e.to_string().contains("Expected 3D or 4D tensor"), "{e}");
    let v = Tensor::from_vec((0..216).map(|v| v as f64).collect::<Vec<_>>(), &[1, 6, 6, 6])?;
    let y3 = FractionalMaxPool3d::new(2, FractionalOutput::Size([3, 3, 3])).forward(&v)?;
    assert_eq!(y3.sizes(), [1, 3, 3, 3]);
    Ok(())
}

/// The dropout layers beyond `Dropout`. Values from PyTorch 2.15: `F.alpha_dropout` with p = 0.5
/// maps dropped elements to -0.7791939305180315 and a kept 1.0 to 1.6655988251839635 (a kept 0.0
/// to 0.7791939305180315).
#[test]
fn channel_and_alpha_dropout_layers() {
    use oxten::nn::{AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout};
    let _turn = one_at_a_time();
    let x = oxten::ones(&[1000]).to_dtype(oxten::DType::F64);
    let y = AlphaDropout::new(0.5).forward(&x).unwrap().to_vec::<f64>().unwrap();
    let (dropped, kept) = (-0.7791939305180315, 1.6655988251839635);
    assert!(y.iter().all(|&v| (v - dropped).abs() < 1e-12 || (v - kept).abs() < 1e-12), "{:?}", &y[..4]);
    assert!(y.iter().any(|&v| (v - dropped).abs() < 1e-12) && y.iter().any(|&v| (v - kept).abs() < 1e-12));

    // Channel-wise: every element of a (sample, channel) plane is dropped or kept together.
    let planes = |y: &Tensor, plane: usize| {
        let v = y.to_vec::<f32>().unwrap();
        v.chunks(plane).all(|c| c.iter().all(|&e| e == c[0]) && (c[0] == 0.0 || c[0] == 2.0))
    };
    let img = oxten::ones(&[8, 16, 3, 3]);
    let y = Dropout2d::new(0.5).forward(&img).unwrap();
    assert!(planes(&y, 9) && y.to_vec::<f32>().unwrap().contains(&0.0));
    let seq = oxten::ones(&[16, 5]);
    let y = Dropout1d::new(0.5).forward(&seq).unwrap();
    assert_eq!(y.sizes(), [16, 5]);
    assert!(planes(&y, 5));
    let e = Dropout1d::new(0.5).forward(&img).unwrap_err().to_string();
    assert!(e.contains("dropout1d: Expected 2D or 3D input, but received a 4D input"), "{e}");
    let vol = oxten::ones(&[4, 2, 2, 2]);
    let y = Dropout3d::new(0.5).forward(&vol).unwrap();
    assert_eq!(y.sizes(), [4, 2, 2, 2]);
    assert!(planes(&y, 8));
    let y = FeatureAlphaDropout::new(0.5).forward(&img).unwrap().to_vec::<f32>().unwrap();
    assert!(y.chunks(9).all(|c| c.iter().all(|&e| e == c[0])));

    // Evaluation mode is the identity for all of them.
    let mut layer = FeatureAlphaDropout::new(0.5);
    layer.eval();
    assert_eq!(layer.forward(&img).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 8 * 16 * 9]);
}

/// `nn::interpolate` / `nn::Upsample` against PyTorch 2.15's `F.interpolate` (float64 values).
#[test]
fn interpolate_modes_match_pytorch() {
    use oxten::nn::{interpolate, InterpolateMode as M, Resize, Upsample};
    let close = |got: Tensor, want: &[f64]| {
        let got = got.to_vec::<f64>().unwrap();
        assert_eq!(got.len(), want.len());
        assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12), "{got:?} vs {want:?}");
    };
    let img = oxten::arange(16.0).to_dtype(DType::F64).view(&[1, 1, 4, 4]);
    let bicubic = interpolate(&img, &Resize::Size(vec![3, 5]), M::Bicubic, Some(false)).unwrap();
    close(
        bicubic,
        &[
            0.443879629629633,
            1.1153796296296334,
            2.0046296296296333,
            2.893879629629633,
            3.5653796296296365,
            5.939250000000002,
            6.610749999999999,
            7.5,
            8.389249999999997,
            9.060750000000006,
            11.434620370370379,
            12.106120370370368,
            12.99537037037037,
            13.884620370370367,
            14.55612037037038,
        ],
    );
    close(interpolate(&img, &Resize::Scale(vec![0.5]), M::Area, None).unwrap(), &[2.5, 4.5, 10.5, 12.5]);
    let seq = oxten::arange(4.0).to_dtype(DType::F64).view(&[1, 1, 4]);
    let up = Upsample::new(Resize::Size(vec![6]), M::Linear).align_corners(true);
    close(up.forward(&seq).unwrap(), &[0.0, 0.6, 1.2, 1.7999999999999998, 2.4, 3.0]);
    close(interpolate(&seq, &Resize::Size(vec![6]), M::NearestExact, None).unwrap(), &[0.0, 1.0, 1.0, 2.0, 3.0, 3.0]);
    close(interpolate(&seq, &Resize::Size(vec![6]), M::Nearest, None).unwrap(), &[0.0, 0.0, 1.0, 2.0, 2.0, 3.0]);
    let vol = oxten::arange(8.0).to_dtype(DType::F64).view(&[1, 1, 2, 2, 2]);
    let tri = interpolate(&vol, &Resize::Scale(vec![1.5]), M::Trilinear, None).unwrap();
    assert_eq!(tri.sizes(), [1, 1, 3, 3, 3]);
    close(
        tri.reshape(&[-1]).narrow(0, 0, 6),
        &[0.0, 0.49999999999999994, 1.0, 0.9999999999999999, 1.4999999999999998, 1.9999999999999998],
    );
    let e = interpolate(&img, &Resize::Size(vec![3]), M::Nearest, Some(true)).unwrap_err().to_string();
    assert!(e.contains("align_corners option can only be set with the interpolating modes"), "{e}");
    let e = interpolate(&img, &Resize::Size(vec![3]), M::Linear, None).unwrap_err().to_string();
    assert!(e.contains("Got 4D input, but linear mode needs 3D input"), "{e}");
}
