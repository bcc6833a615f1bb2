//! Support for out-of-tree backends generated from a backend YAML
//! (`oxten_codegen::backend::generate`): naming the `PrivateUse1` device, and the CPU fallback
//! (PyTorch's `cpu_fallback`) that runs every operator the backend does not implement on the
//! CPU.

use crate::dispatch::{register_fallback, BoxedKernel, DispatchKey, IValue, OpInfo, OperatorEntry, Stack};
use crate::{Device, Error, Result, Tensor};
use oxten_runtime::storage::Storage;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

pub use oxten_runtime::device::{privateuse1_name, rename_privateuse1_backend};

/// The one output of a structured kernel (for generated backend wrappers).
pub fn take1(v: Vec<Tensor>) -> Tensor {
    crate::support::take1(v)
}

/// The two outputs of a structured kernel (for generated backend wrappers).
pub fn take2(v: Vec<Tensor>) -> (Tensor, Tensor) {
    crate::support::take2(v)
}

/// The kernel body of an `autogen:` out= overload (for operator libraries' generated
/// registrations): writes the functional operator's results into the out= tensors.
pub fn write_autogen_out(
    exact_dtype: bool,
    inputs: &[Option<&Tensor>],
    outs: &[(&str, &Tensor, &Tensor)],
) -> Result<()> {
    crate::support::write_autogen_out(exact_dtype, inputs, outs)
}

/// The boxed entry points the CPU fallback knows, by operator handle: oxten's operators, and
/// those of the operator libraries that registered theirs ([`register_op_infos`]).
fn infos() -> &'static RwLock<HashMap<usize, OpInfo>> {
    static INFOS: OnceLock<RwLock<HashMap<usize, OpInfo>>> = OnceLock::new();
    INFOS.get_or_init(|| RwLock::new(crate::ops::operator_infos().into_iter().map(|i| (key(i.entry), i)).collect()))
}

fn key(entry: &OperatorEntry) -> usize {
    entry as *const OperatorEntry as usize
}

/// Makes an operator library's operators reachable by the CPU fallback (a generated library's
/// `register` calls this), so they run on an out-of-tree backend's tensors like oxten's own.
pub fn register_op_infos(list: Vec<OpInfo>) {
    let mut map = infos().write().unwrap_or_else(|e| e.into_inner());
    for i in list {
        map.insert(key(i.entry), i);
    }
}

/// Meta copies of one operator call's tensor arguments, for a lazy backend's recording kernel:
/// arguments that share a storage get meta tensors sharing one meta storage, with the same
/// offsets and strides, so the meta function's overlap checks (`x.add_(&x.narrow(..))`) see
/// what the CPU kernel's would.
#[derive(Default)]
pub struct MetaArgs {
    storages: RefCell<Vec<(Storage, Tensor)>>,
}

impl MetaArgs {
    /// The meta copy of `t`.
    pub fn like(&self, t: &Tensor) -> Result<Tensor> {
        let (sizes, strides, offset) = (t.sizes(), t.strides(), t.storage_offset());
        let mut storages = self.storages.borrow_mut();
        if let Some((_, base)) = storages.iter().find(|(s, b)| s.is_alias_of(t.storage()) && b.dtype() == t.dtype()) {
            return base.alias_with_layout(&sizes, &strides, offset);
        }
        let item = t.dtype().size();
        let nbytes = t.storage().nbytes();
        if item == 0 || !nbytes.is_multiple_of(item) {
            return Tensor::empty_strided(&sizes, &strides, t.dtype(), Device::Meta);
        }
        let base = Tensor::empty_strided(&[(nbytes / item) as i64], &[1], t.dtype(), Device::Meta)?;
        storages.push((t.storage().clone(), base.clone()));
        base.alias_with_layout(&sizes, &strides, offset)
    }
}

/// Moves a tensor of another device to the CPU, remembering its device.
fn to_cpu(t: &Tensor, device: &mut Option<Device>) -> Result<Tensor> {
    if t.device() == Device::Cpu {
        return Ok(t.clone());
    }
    device.get_or_insert(t.device());
    t.try_to_device(Device::Cpu)
}

/// Runs `op` with its tensors moved to the CPU. Arguments the schema marks as written
/// (in-place `self`, `out=`) are copied back into the caller's tensors, which are also what the
/// operator returns for them; other returned tensors move to the device the arguments were on.
/// A `device=` argument naming the backend's device becomes the CPU, and the results go there.
pub fn cpu_fallback(op: &OperatorEntry, stack: &mut Stack) -> Result<()> {
    let name = op.name().trim_start_matches("aten::");
    let info = infos().read().unwrap_or_else(|e| e.into_inner()).get(&key(op)).copied().ok_or_else(|| {
        Error::runtime(format!("{name}: the CPU fallback found no boxed entry point for this operator"))
    })?;
    let n = info.args.len();
    if stack.len() < n {
        return Err(Error::runtime(format!("{name}: the CPU fallback got {} arguments, expected {n}", stack.len())));
    }
    let base = stack.len() - n;
    let mut device = None;
    let mut written: Vec<(Tensor, Tensor)> = Vec::new();
    for (k, arg) in info.args.iter().enumerate() {
        let v = &mut stack[base + k];
        match v {
            IValue::Tensor(t) => {
                let c = to_cpu(t, &mut device)?;
                if arg.write && t.device() != Device::Cpu {
                    written.push((t.clone(), c.clone()));
                }
                *v = IValue::Tensor(c);
            }
            IValue::TensorList(ts) => {
                for t in ts.iter_mut() {
                    *t = to_cpu(t, &mut device)?;
                }
            }
            IValue::OptionalTensorList(ts) => {
                for t in ts.iter_mut().flatten() {
                    *t = to_cpu(t, &mut device)?;
                }
            }
            IValue::Device(d) if *d != Device::Cpu => {
                device.get_or_insert(*d);
                *v = IValue::Device(Device::Cpu);
            }
            _ => {}
        }
    }
    (info.call_boxed)(stack)?;
    for (orig, cpu) in &written {
        orig.try_copy_(cpu)?;
    }
    let Some(device) = device else { return Ok(()) };
    let first = stack.len() - info.returns;
    let mut originals = written.iter().map(|(o, _)| o.clone());
    for v in stack[first..].iter_mut() {
        if let IValue::Tensor(t) = v {
            *v = IValue::Tensor(match originals.next() {
                Some(orig) => orig,
                None => t.try_to_device(device)?,
            });
        } else if let IValue::TensorList(ts) = v {
            for t in ts.iter_mut() {
                *t = t.try_to_device(device)?;
            }
        }
    }
    Ok(())
}

/// Makes [`cpu_fallback`] the kernel of every operator without one at `key`.
pub fn register_cpu_fallback(key: DispatchKey) {
    register_fallback(key, BoxedKernel::new(cpu_fallback));
}
