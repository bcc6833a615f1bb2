//! An out-of-tree backend built the generated way: `backends/toy_backend.yaml` names five
//! operators, the build script generates `ToyKernels` and `register` from it
//! (`oxten_codegen::backend::generate`), and this file implements the trait for a device whose
//! memory is host memory. Everything else runs through the CPU fallback the YAML asks for:
//! functional, in-place and out= operators, and autograd on top. For `mul` the backend brings
//! its own Autograd kernel (the YAML's `autograd:` list), which records its own node.

use oxten::alloc::{self, Allocator};
use oxten::autograd::{collect_next_edges, compute_requires_grad, set_history, Node, NodeBase, SavedVariable};
use oxten::dispatch::{ExcludeGuard, KeySet};
use oxten::{DType, Device, DeviceType, Layout, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::host_device::HostBackedAllocator;
use oxten_tests::toy_backend::{self, ToyKernels};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};

const TOY: Device = Device::PrivateUse1(0);

/// The toy device's memory: host memory from the host allocator.
static ALLOCATOR: HostBackedAllocator = HostBackedAllocator::new();

static ADDS: AtomicUsize = AtomicUsize::new(0);
static STRUCTURED: AtomicUsize = AtomicUsize::new(0);
/// Held by the tests that run the backend's `mm`/`sigmoid` impls, so that the one counting them
/// sees only its own calls.
static STRUCTURED_USERS: std::sync::Mutex<()> = std::sync::Mutex::new(());
static AUTOGRAD_MULS: AtomicUsize = AtomicUsize::new(0);

/// The toy backend's own backward node for `mul`.
struct ToyMulBackward {
    base: NodeBase,
    self_: SavedVariable,
    other: SavedVariable,
}

impl Node for ToyMulBackward {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        "ToyMulBackward".into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = grads.into_iter().next().flatten() else { return Ok(vec![None, None]) };
        let (a, b) = (self.self_.unpack(self)?, self.other.unpack(self)?);
        // Each gradient summed back to its input's shape (the operands broadcast).
        let ga = oxten::autograd::sum_to(&g.try_mul(&b)?, &a.sizes())?;
        let gb = oxten::autograd::sum_to(&g.try_mul(&a)?, &b.sizes())?;
        Ok(vec![Some(ga), Some(gb)])
    }
    fn release_variables(&self) {
        self.self_.reset();
        self.other.reset();
    }
}

/// The toy device's values as a contiguous CPU tensor: its storage copied to the host (the
/// same bytes: the memory is host memory), viewed with its layout, made contiguous.
fn host_copy(t: &Tensor) -> Result<Tensor> {
    t.storage_copy_to(Device::Cpu)?.try_contiguous()
}

/// Writes a CPU tensor's values (broadcast and converted) into a toy tensor of any layout: its
/// storage comes to the host, the values are written through its layout there, and the bytes go
/// back.
fn upload(dst: &Tensor, host: &Tensor) -> Result<()> {
    let staged = dst.storage_copy_to(Device::Cpu)?;
    staged.try_copy_(host)?;
    let n = dst.storage().nbytes();
    // SAFETY: `staged` is a host storage of `n` bytes with `dst`'s layout, `dst`'s storage holds
    // `n` bytes of toy (host) memory; every byte is written.
    unsafe { ALLOCATOR.copy_from_host(dst.storage().data_ptr(), staged.storage().data_ptr(), n) }
}

fn to_toy(host: &Tensor) -> Result<Tensor> {
    let t = Tensor::empty(&host.sizes(), host.dtype(), TOY, MemoryFormat::Contiguous)?;
    upload(&t, host)?;
    Ok(t)
}

/// The toy backend: allocation on its device, copies, and `add`/`mul` computed on the host.
struct Toy;

impl ToyKernels for Toy {
    fn empty(
        size: &[i64],
        dtype: Option<DType>,
        _layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        Tensor::empty(size, dtype.unwrap_or(DType::F32), TOY, memory_format.unwrap_or(MemoryFormat::Contiguous))
    }
    fn empty_strided(
        size: &[i64],
        stride: &[i64],
        dtype: Option<DType>,
        _layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        Tensor::empty_strided(size, stride, dtype.unwrap_or(DType::F32), TOY)
    }
    fn copy_(self_: &Tensor, src: &Tensor, non_blocking: bool) -> Result<Tensor> {
        if self_.device() != src.device() && src.dim() > 0 {
            alloc::copy_between(self_, src, non_blocking)?;
        } else {
            let src_host = if src.device() == Device::Cpu { src.clone() } else { host_copy(src)? };
            upload(self_, &src_host)?;
        }
        Ok(self_.clone())
    }
    fn add(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        ADDS.fetch_add(1, Ordering::Relaxed);
        to_toy(&oxten::try_add_with(&host_copy(self_)?, &host_copy(other)?, oxten::options::AddOpts { alpha })?)
    }
    fn mul(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        to_toy(&host_copy(self_)?.try_mul(&host_copy(other)?)?)
    }
    fn mul_autograd(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        AUTOGRAD_MULS.fetch_add(1, Ordering::Relaxed);
        let out = {
            let _below_autograd = ExcludeGuard::new(KeySet::AUTOGRAD);
            oxten::ops::mul::call(self_, other)?
        };
        if compute_requires_grad(&[Some(self_), Some(other)]) {
            let node = ToyMulBackward {
                base: NodeBase::new(collect_next_edges(&[Some(self_), Some(other)])),
                self_: SavedVariable::new(self_, false)?,
                other: SavedVariable::new(other, false)?,
            };
            set_history(&[&out], Arc::new(node));
        }
        Ok(out)
    }
    fn mm_out(self_: &Tensor, mat2: &Tensor, out: &Tensor) -> Result<()> {
        STRUCTURED.fetch_add(1, Ordering::Relaxed);
        upload(out, &host_copy(self_)?.try_mm(&host_copy(mat2)?)?)
    }
    fn sigmoid_out(iter: &oxten::iter::TensorIterator, self_: &Tensor) -> Result<()> {
        STRUCTURED.fetch_add(1, Ordering::Relaxed);
        upload(iter.output(0), &host_copy(self_)?.try_sigmoid()?)
    }
}

fn copy_from_cpu(dst: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<()> {
    upload(dst, src)
}

fn copy_to_cpu(dst: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<()> {
    dst.try_copy_(&host_copy(&src.try_contiguous()?)?)?;
    Ok(())
}

fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        alloc::register_allocator(DeviceType::PrivateUse1, &ALLOCATOR);
        alloc::register_copy(DeviceType::Cpu, DeviceType::PrivateUse1, copy_from_cpu);
        alloc::register_copy(DeviceType::PrivateUse1, DeviceType::Cpu, copy_to_cpu);
        toy_backend::register::<Toy>().unwrap();
    });
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

fn cpu(sizes: &[i64], seed: u32) -> Tensor {
    Tensor::from_vec(values(sizes.iter().product::<i64>() as usize, seed), sizes).unwrap()
}

#[test]
fn supported_ops_run_the_backend_kernels_and_the_device_has_its_name() {
    setup();
    let (a, b) = (cpu(&[3, 4], 1), cpu(&[4], 2));
    let before = ADDS.load(Ordering::Relaxed);
    let c = a.to_device(TOY).add(&b.to_device(TOY));
    assert!(ADDS.load(Ordering::Relaxed) > before, "add ran the backend's kernel");
    assert_eq!(c.device(), TOY);
    assert_eq!(c.cpu().to_vec::<f32>().unwrap(), a.add(&b).to_vec::<f32>().unwrap());
    assert_eq!(TOY.to_string(), "toy:0");
    // Printed from a host copy, like a CUDA tensor.
    let on_cpu = a.add(&b).to_string();
    assert_eq!(c.to_string(), format!("{}, device='toy:0')", on_cpu.strip_suffix(')').unwrap()));
    assert_eq!(toy_backend::SUPPORTED.len(), 7);
    // A second name for the device is refused.
    assert!(oxten::backend::rename_privateuse1_backend("other").is_err());
}

#[test]
fn structured_impls_give_functional_in_place_and_out_variants() {
    setup();
    let _only_us = STRUCTURED_USERS.lock().unwrap_or_else(|e| e.into_inner());
    let (a, b) = (cpu(&[3, 4], 7), cpu(&[4, 2], 8));
    let before = STRUCTURED.load(Ordering::Relaxed);
    let (ta, tb) = (a.to_device(TOY), b.to_device(TOY));
    let m = ta.mm(&tb);
    assert_eq!(m.sizes(), [3, 2]);
    assert_eq!(m.cpu().to_vec::<f32>().unwrap(), a.mm(&b).to_vec::<f32>().unwrap());
    // The shared meta function checks shapes before the backend sees anything.
    let e = ta.try_mm(&ta).unwrap_err().to_string();
    assert!(e.contains("mat1 and mat2 shapes cannot be multiplied"), "{e}");
    let s = ta.sigmoid();
    assert_eq!(s.cpu().to_vec::<f32>().unwrap(), a.sigmoid().to_vec::<f32>().unwrap());
    let out = Tensor::empty(&[3, 4], DType::F32, TOY, MemoryFormat::Contiguous).unwrap();
    assert!(oxten::sigmoid_out(&ta, &out).is_same(&out));
    assert_eq!(out.cpu().to_vec::<f32>().unwrap(), a.sigmoid().to_vec::<f32>().unwrap());
    let c = a.to_device(TOY);
    c.sigmoid_();
    assert_eq!(c.cpu().to_vec::<f32>().unwrap(), a.sigmoid().to_vec::<f32>().unwrap());
    assert_eq!(
        STRUCTURED.load(Ordering::Relaxed) - before,
        4,
        "mm, sigmoid, sigmoid.out and sigmoid_ ran the backend's impls"
    );
}

#[test]
fn other_ops_fall_back_to_the_cpu_and_come_back() {
    setup();
    let x = cpu(&[5, 6], 3);
    let t = x.to_device(TOY);
    // Functional: the result lives on the toy device.
    let e = t.exp();
    assert_eq!(e.device(), TOY);
    assert_eq!(e.cpu().to_vec::<f32>().unwrap(), x.exp().to_vec::<f32>().unwrap());
    let (v, i) = t.max_dim(1, false);
    assert_eq!((v.device(), i.device()), (TOY, TOY));
    assert_eq!(i.cpu().to_vec::<i64>().unwrap(), x.max_dim(1, false).1.to_vec::<i64>().unwrap());
    // In place: the toy tensor itself is updated and returned.
    let y = x.to_device(TOY);
    let r = y.sub_(&x.to_device(TOY).mul_scalar(0.5));
    assert!(r.is_same(&y));
    assert_eq!(y.cpu().to_vec::<f32>().unwrap(), x.sub(&x.mul_scalar(0.5)).to_vec::<f32>().unwrap());
    // out=: written where it lives.
    let out = Tensor::empty(&[5, 6], DType::F32, TOY, MemoryFormat::Contiguous).unwrap();
    let r = oxten::relu_out(&t, &out);
    assert!(r.is_same(&out));
    assert_eq!(out.cpu().to_vec::<f32>().unwrap(), x.relu().to_vec::<f32>().unwrap());
    // A factory with device=toy.
    let z = oxten::zeros_with(&[2, 3], oxten::options::ZerosOpts { device: Some(TOY), ..Default::default() });
    assert_eq!(z.device(), TOY);
    assert_eq!(z.cpu().to_vec::<f32>().unwrap(), vec![0.0; 6]);
}

#[test]
fn autocast_on_an_out_of_tree_device_follows_the_cuda_lists() {
    use oxten::autocast::AutocastGuard;
    setup();
    let (a, b) = (cpu(&[4, 5], 11), cpu(&[5, 3], 12));
    let (ta, tb) = (a.to_device(TOY), b.to_device(TOY));
    let _amp = AutocastGuard::new(TOY, DType::BF16);
    // lower_precision_fp on both lists (bmm: the CPU fallback; `mm` would run the backend's own
    // impl, which another test counts).
    assert_eq!(ta.unsqueeze(0).bmm(&tb.unsqueeze(0)).dtype(), DType::BF16);
    let h = ta.to_dtype(DType::BF16);
    // CUDA's fp32 list has exp (CPU's does not).
    let e = h.exp();
    assert_eq!(e.dtype(), DType::F32);
    assert_eq!(
        e.cpu().to_vec::<f32>().unwrap(),
        a.to_dtype(DType::BF16).to_dtype(DType::F32).exp().to_vec::<f32>().unwrap()
    );
    // fp32_set_opt_dtype: sum and softmax of a bf16 tensor compute and return f32.
    assert_eq!(h.sum().dtype(), DType::F32);
    assert_eq!(h.softmax(1).dtype(), DType::F32);
    // An explicit dtype is respected.
    assert_eq!(oxten::sum_with(&h, oxten::options::SumOpts { dtype: Some(DType::BF16) }).dtype(), DType::BF16);
    // prod: CPU casts to f32, CUDA sets the dtype; both give f32 here.
    assert_eq!(h.prod().dtype(), DType::F32);
    // promote: addcmul of bf16 and f32 runs in f32.
    assert_eq!(h.addcmul(&h, &ta).dtype(), DType::F32);
    // The CPU list is unchanged meanwhile: a CPU region leaves exp and sum alone.
    let _cpu = AutocastGuard::new(Device::Cpu, DType::BF16);
    let hc = a.to_dtype(DType::BF16);
    assert_eq!((hc.exp().dtype(), hc.sum().dtype()), (DType::BF16, DType::BF16));
}

#[test]
fn an_mlp_trains_on_the_toy_device_like_on_the_cpu() {
    setup();
    let _only_us = STRUCTURED_USERS.lock().unwrap_or_else(|e| e.into_inner());
    let x = cpu(&[8, 5], 4);
    let w1 = cpu(&[5, 6], 5).mul_scalar(0.3);
    let w2 = cpu(&[6, 1], 6).mul_scalar(0.3);
    let run = |dev: Device| {
        let leaf = |t: &Tensor| t.to_device(dev).mul_scalar(1.0).requires_grad_(true);
        let (w1, w2) = (leaf(&w1), leaf(&w2));
        let xd = x.to_device(dev);
        let mut losses = Vec::new();
        for _ in 0..3 {
            let loss = xd.mm(&w1).relu().mm(&w2).mul(&xd.mm(&w1).relu().mm(&w2)).mean_dim(None, false);
            loss.backward();
            losses.push(loss.cpu().to_vec::<f32>().unwrap()[0]);
            oxten::autograd::no_grad(|| {
                for w in [&w1, &w2] {
                    w.sub_(&w.grad().unwrap().mul_scalar(0.1));
                    w.set_grad(None);
                }
            });
        }
        (losses, w1.detach().cpu().to_vec::<f32>().unwrap())
    };
    let before = AUTOGRAD_MULS.load(Ordering::Relaxed);
    let (cpu_run, toy_run) = (run(Device::Cpu), run(TOY));
    // The toy run's three `mul`s went through the backend's own Autograd kernel.
    assert!(AUTOGRAD_MULS.load(Ordering::Relaxed) >= before + 3);
    assert_eq!(toy_run.0, cpu_run.0, "losses");
    for (a, b) in toy_run.1.iter().zip(&cpu_run.1) {
        assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
    }
}

#[test]
fn the_backends_own_autograd_kernel_records_its_node() {
    setup();
    let a = cpu(&[3, 4], 7);
    let b = cpu(&[4], 8);
    let (ta, tb) = (a.to_device(TOY).requires_grad_(true), b.to_device(TOY).requires_grad_(true));
    let y = ta.mul(&tb);
    assert_eq!(y.grad_fn().unwrap().name(), "ToyMulBackward");
    y.sum().backward();
    // d(sum(a * b))/da = b (broadcast), /db = column sums of a.
    let (ga, gb) = (ta.grad().unwrap().cpu(), tb.grad().unwrap().cpu());
    assert_eq!(ga.to_vec::<f32>().unwrap(), b.expand(&[3, 4]).contiguous().to_vec::<f32>().unwrap());
    assert_eq!(gb.to_vec::<f32>().unwrap(), a.sum_dim_intlist(Some(&[0]), false).to_vec::<f32>().unwrap());
    // CPU tensors keep oxten's generated node; other toy ops keep it too.
    let c = a.requires_grad_(true).mul(&b);
    assert_eq!(c.grad_fn().unwrap().name(), "MulBackward0");
    assert_eq!(ta.add(&tb).grad_fn().unwrap().name(), "AddBackward0");
    // No history without grad mode.
    let n = oxten::autograd::no_grad(|| ta.mul(&tb));
    assert!(n.grad_fn().is_none());
}
