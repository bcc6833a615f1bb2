//! A second host-memory backend at `PrivateUse1`, plugged in through the backend seams only: its
//! own allocator, its own copy kernels to and from the CPU, its own kernels for the handful of
//! operators an MLP's forward and backward use (computed here with plain loops, with the
//! output shapes from Meta), and nothing else. The MLP then runs forward and backward on it and
//! must give the CPU's loss and gradients.

use oxten::alloc;
use oxten::dispatch::DispatchKey;
use oxten::{ops, DType, Device, DeviceType, Layout, MemoryFormat, Result, Scalar, Tensor};
use oxten_tests::host_device::HostBackedAllocator;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

const DEV: Device = Device::PrivateUse1(0);

/// The backend's allocator: host memory (through the host allocator), counted.
static ALLOCATOR: HostBackedAllocator = HostBackedAllocator::new();

// ----- element access: the backend's memory is host memory, read and written as f32 -----

fn check_f32(op: &str, t: &Tensor) -> Result<()> {
    if t.dtype() != DType::F32 {
        return Err(oxten::Error::dtype(format!(
            "{op}: this test backend computes in float32 only, got {}",
            t.dtype()
        )));
    }
    Ok(())
}

/// Advances a row-major multi-index over `sizes`.
fn next_index(idx: &mut [i64], sizes: &[i64]) {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < sizes[d] {
            return;
        }
        idx[d] = 0;
    }
}

/// The elements of `t` (any strides) in row-major order.
fn read(t: &Tensor) -> Vec<f32> {
    let (sizes, strides, offset) = (t.sizes(), t.strides(), t.storage_offset());
    let base = t.storage().data_ptr() as *const f32;
    let n: i64 = sizes.iter().product();
    let mut out = Vec::with_capacity(n as usize);
    let mut idx = vec![0i64; sizes.len()];
    for _ in 0..n {
        let at = offset + idx.iter().zip(strides.iter()).map(|(i, s)| i * s).sum::<i64>();
        // SAFETY: `at` is an element of `t`'s layout, which `Tensor::from_parts` checked lies in
        // its storage; the storage holds f32 host memory (checked by the callers).
        out.push(unsafe { *base.add(at as usize) });
        next_index(&mut idx, &sizes);
    }
    out
}

/// Writes `values` (row-major) into `t` (any strides).
fn write(t: &Tensor, values: &[f32]) {
    let (sizes, strides, offset) = (t.sizes(), t.strides(), t.storage_offset());
    let base = t.storage().data_ptr() as *mut f32;
    let mut idx = vec![0i64; sizes.len()];
    for v in values {
        let at = offset + idx.iter().zip(strides.iter()).map(|(i, s)| i * s).sum::<i64>();
        // SAFETY: as in `read`; the test's tensors are not shared across threads meanwhile.
        unsafe { *base.add(at as usize) = *v };
        next_index(&mut idx, &sizes);
    }
}

/// A meta tensor with `t`'s geometry: what the backend hands to an op's Meta kernel for shapes.
fn meta(t: &Tensor) -> Result<Tensor> {
    Tensor::empty_strided(&t.sizes(), &t.strides(), t.dtype(), Device::Meta)
}

/// A new contiguous backend tensor holding `values`.
fn new_on_device(sizes: &[i64], values: &[f32]) -> Result<Tensor> {
    let t = Tensor::empty(sizes, DType::F32, DEV, MemoryFormat::Contiguous)?;
    write(&t, values);
    Ok(t)
}

// ----- the backend's kernels -----

fn empty(
    size: &[i64],
    dtype: Option<DType>,
    _layout: Option<Layout>,
    device: Option<Device>,
    _pin: Option<bool>,
    format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let format = format.unwrap_or(MemoryFormat::Contiguous);
    Tensor::empty(size, dtype.unwrap_or(DType::F32), device.unwrap_or(DEV), format)
}

fn empty_strided(
    size: &[i64],
    stride: &[i64],
    dtype: Option<DType>,
    _layout: Option<Layout>,
    device: Option<Device>,
    _pin: Option<bool>,
) -> Result<Tensor> {
    Tensor::empty_strided(size, stride, dtype.unwrap_or(DType::F32), device.unwrap_or(DEV))
}

/// Same-device copies the backend's `copy_` made.
static DEVICE_COPIES: AtomicUsize = AtomicUsize::new(0);

fn copy_(dst: &Tensor, src: &Tensor, non_blocking: bool) -> Result<Tensor> {
    if dst.device() != src.device() {
        alloc::copy_between(dst, src, non_blocking)?;
    } else {
        check_f32("copy_", dst)?;
        check_f32("copy_", src)?;
        DEVICE_COPIES.fetch_add(1, Ordering::Relaxed);
        write(dst, &read(&src.expand(&dst.sizes())));
    }
    Ok(dst.clone())
}

/// Elementwise binary op: the output shape from the op's Meta kernel, the values from `f`.
fn binary(op: &str, a: &Tensor, b: &Tensor, out_meta: Tensor, f: impl Fn(f32, f32) -> f32) -> Result<Tensor> {
    check_f32(op, a)?;
    check_f32(op, b)?;
    let sizes = out_meta.sizes();
    let (x, y) = (read(&a.expand(&sizes)), read(&b.expand(&sizes)));
    new_on_device(&sizes, &x.iter().zip(&y).map(|(p, q)| f(*p, *q)).collect::<Vec<_>>())
}

fn add(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    let alpha = alpha.to_f64() as f32;
    binary("add", a, b, ops::add::call(&meta(a)?, &meta(b)?, Scalar::from(1.0))?, |p, q| p + alpha * q)
}

fn add_(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    let sum = add(a, b, alpha)?;
    if sum.sizes() != a.sizes() {
        return Err(oxten::Error::shape(format!("add_: cannot broadcast {:?} into {:?}", b.sizes(), a.sizes())));
    }
    write(a, &read(&sum));
    Ok(a.clone())
}

fn sub(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    let alpha = alpha.to_f64() as f32;
    binary("sub", a, b, ops::sub::call(&meta(a)?, &meta(b)?, Scalar::from(1.0))?, |p, q| p - alpha * q)
}

fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary("mul", a, b, ops::mul::call(&meta(a)?, &meta(b)?)?, |p, q| p * q)
}

fn threshold_backward(grad: &Tensor, input: &Tensor, threshold: Scalar) -> Result<Tensor> {
    let th = threshold.to_f64() as f32;
    let out = ops::threshold_backward::call(&meta(grad)?, &meta(input)?, threshold)?;
    binary("threshold_backward", grad, input, out, |g, x| if x <= th { 0.0 } else { g })
}

fn relu(a: &Tensor) -> Result<Tensor> {
    check_f32("relu", a)?;
    let sizes = ops::relu::call(&meta(a)?)?.sizes();
    new_on_device(&sizes, &read(a).iter().map(|v| v.max(0.0)).collect::<Vec<_>>())
}

fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    check_f32("mm", a)?;
    check_f32("mm", b)?;
    let out = ops::mm::call(&meta(a)?, &meta(b)?)?.sizes();
    let (n, k, m) = (a.sizes()[0] as usize, a.sizes()[1] as usize, b.sizes()[1] as usize);
    let (x, y) = (read(a), read(b));
    let mut r = vec![0f32; n * m];
    for i in 0..n {
        for j in 0..m {
            r[i * m + j] = (0..k).map(|p| x[i * k + p] * y[p * m + j]).sum();
        }
    }
    new_on_device(&out, &r)
}

fn sum_dim(a: &Tensor, dim: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
    check_f32("sum", a)?;
    let out = ops::sum_dim_intlist::call(&meta(a)?, dim, true, dtype)?.sizes();
    // Sum into the keepdim shape: each input element adds to the output element it maps to.
    let sizes = a.sizes();
    let x = read(a);
    let out_n: i64 = out.iter().product();
    let mut r = vec![0f32; out_n as usize];
    let mut idx = vec![0i64; sizes.len()];
    for v in x {
        let mut at = 0i64;
        for d in 0..sizes.len() {
            at = at * out[d] + if out[d] == 1 { 0 } else { idx[d] };
        }
        r[at as usize] += v;
        next_index(&mut idx, &sizes);
    }
    let final_sizes = ops::sum_dim_intlist::call(&meta(a)?, dim, keepdim, dtype)?.sizes();
    new_on_device(&final_sizes, &r)
}

fn sum(a: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    sum_dim(a, None, false, dtype)
}

fn fill_(t: &Tensor, value: Scalar) -> Result<Tensor> {
    check_f32("fill_", t)?;
    write(t, &vec![value.to_f64() as f32; t.sizes().iter().product::<i64>() as usize]);
    Ok(t.clone())
}

// ----- cross-device copies -----

/// CPU -> backend: the CPU converts and lays out the values, the backend writes them.
fn copy_from_cpu(dst: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<()> {
    check_f32("copy_", dst)?;
    let staged = src.try_expand(&dst.sizes())?.try_to_dtype(DType::F32)?.try_contiguous()?;
    write(dst, &staged.to_vec::<f32>()?);
    Ok(())
}

/// Backend -> CPU: the backend reads its values, the CPU converts them into `dst`.
fn copy_to_cpu(dst: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<()> {
    check_f32("copy_", src)?;
    let cpu = Tensor::from_vec(read(src), &src.sizes())?;
    dst.try_copy_(&cpu)?;
    Ok(())
}

fn register_backend() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        oxten::init();
        alloc::register_allocator(DeviceType::PrivateUse1, &ALLOCATOR);
        alloc::register_copy(DeviceType::Cpu, DeviceType::PrivateUse1, copy_from_cpu);
        alloc::register_copy(DeviceType::PrivateUse1, DeviceType::Cpu, copy_to_cpu);
        let k = DispatchKey::PrivateUse1;
        ops::empty::OP.register(k, empty);
        ops::empty_strided::OP.register(k, empty_strided);
        ops::copy_::OP.register(k, copy_);
        ops::fill_scalar_::OP.register(k, fill_);
        ops::add::OP.register(k, add);
        ops::add_::OP.register(k, add_);
        ops::sub::OP.register(k, sub);
        ops::mul::OP.register(k, mul);
        ops::relu::OP.register(k, relu);
        ops::threshold_backward::OP.register(k, threshold_backward);
        ops::mm::OP.register(k, mm);
        ops::sum::OP.register(k, sum);
        ops::sum_dim_intlist::OP.register(k, sum_dim);
    });
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    // A small deterministic spread of positive and negative values.
    (0..n)
        .map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

struct Mlp {
    w1: Tensor,
    b1: Tensor,
    w2: Tensor,
    b2: Tensor,
}

impl Mlp {
    fn on(device: Device) -> Mlp {
        let p = |sizes: &[i64], seed| {
            let n = sizes.iter().product::<i64>() as usize;
            Tensor::from_vec(values(n, seed), sizes).unwrap().to_device(device).requires_grad_(true)
        };
        Mlp { w1: p(&[5, 4], 1), b1: p(&[5], 2), w2: p(&[3, 5], 3), b2: p(&[3], 4) }
    }

    /// Loss of relu(x w1ᵀ + b1) w2ᵀ + b2 against `target`: the sum of squared differences.
    fn loss(&self, x: &Tensor, target: &Tensor) -> Tensor {
        let h = x.mm(&self.w1.t()).add(&self.b1).relu();
        let y = h.mm(&self.w2.t()).add(&self.b2);
        let d = y.sub(target);
        d.mul(&d).sum()
    }

    fn grads(&self) -> Vec<Tensor> {
        [&self.w1, &self.b1, &self.w2, &self.b2].iter().map(|p| p.grad().expect("a gradient")).collect()
    }
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-5 * (1.0 + y.abs()))
}

#[test]
fn an_mlp_trains_on_a_second_backend_with_the_cpus_results() {
    register_backend();
    let x = Tensor::from_vec(values(6 * 4, 7), &[6, 4]).unwrap();
    let target = Tensor::from_vec(values(6 * 3, 9), &[6, 3]).unwrap();

    let cpu = Mlp::on(Device::Cpu);
    let cpu_loss = cpu.loss(&x, &target);
    cpu_loss.backward();

    let before = ALLOCATOR.allocations();
    let dev = Mlp::on(DEV);
    let (xd, td) = (x.to_device(DEV), target.to_device(DEV));
    assert_eq!(xd.device(), DEV);
    // `to(device)` on the device it is already on is the tensor itself, as in PyTorch.
    assert!(xd.to_device(DEV).is_same(&xd));
    let dev_loss = dev.loss(&xd, &td);
    assert_eq!(dev_loss.device(), DEV);
    dev_loss.backward();
    assert!(ALLOCATOR.allocations() > before, "the backend's allocator served its tensors");

    let host = |t: &Tensor| t.to_device(Device::Cpu).to_vec::<f32>().unwrap();
    assert!(close(&host(&dev_loss), &cpu_loss.to_vec::<f32>().unwrap()));
    for (g, want) in dev.grads().iter().zip(cpu.grads()) {
        assert_eq!(g.device(), DEV, "gradients stay on the backend");
        assert_eq!(g.sizes(), want.sizes());
        assert!(close(&host(g), &want.to_vec::<f32>().unwrap()), "{:?} vs {:?}", host(g), want.to_vec::<f32>());
    }
}

#[test]
fn composite_operators_run_on_the_backend_through_its_kernels() {
    register_backend();
    // `repeat` is CompositeExplicitAutograd: it allocates with the backend's `empty` and writes
    // through the backend's `copy_`, and never touches the memory itself.
    let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let on_device = t.to_device(DEV);
    let copies = DEVICE_COPIES.load(Ordering::Relaxed);
    let r = on_device.repeat(&[2, 2]);
    assert!(DEVICE_COPIES.load(Ordering::Relaxed) > copies, "repeat wrote through the backend's copy_");
    assert_eq!(r.device(), DEV);
    assert_eq!(r.sizes()[..], [2, 6]);
    assert_eq!(r.cpu().to_vec::<f32>().unwrap(), t.repeat(&[2, 2]).to_vec::<f32>().unwrap());
}

#[test]
fn ops_the_backend_lacks_and_copies_nobody_registered_are_clear_errors() {
    register_backend();
    let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().to_device(DEV);
    let e = t.try_exp().unwrap_err().to_string();
    assert!(e.contains("'PrivateUse1' backend") && e.contains("exp"), "{e}");
    // Convolution is a backend op (CPU and Meta kernels), not a composite computing on host
    // pointers: on a backend without one it is an error, not a computation on foreign memory.
    let x = Tensor::from_vec(vec![1.0f32; 16], &[1, 1, 4, 4]).unwrap().to_device(DEV);
    let w = Tensor::from_vec(vec![1.0f32; 4], &[1, 1, 2, 2]).unwrap().to_device(DEV);
    let e = oxten::try_conv2d(&x, &w, None, &[1, 1], &[0, 0]).unwrap_err().to_string();
    assert!(e.contains("'PrivateUse1' backend") && e.contains("convolution"), "{e}");
    // No kernel moves data between this backend and the meta device.
    let e = alloc::copy_between(
        &Tensor::empty(&[2], DType::F32, Device::Meta, MemoryFormat::Contiguous).unwrap(),
        &t,
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no copy kernel from privateuseone:0 to meta"), "{e}");
    // A device type with no allocator says so.
    let e = Tensor::empty(&[2], DType::F32, Device::Cuda(0), MemoryFormat::Contiguous).unwrap_err().to_string();
    assert!(e.contains("no allocator is registered for device cuda:0"), "{e}");
}
