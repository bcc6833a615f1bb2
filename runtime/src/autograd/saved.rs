//! `SavedVariable`: a tensor a node keeps for its backward formula, with the version it had when
//! saved, so that modifying it in place afterwards is detected instead of silently giving wrong
//! gradients.

use super::mode::is_anomaly_enabled;
use super::node::Node;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use std::sync::{Arc, Mutex, Weak};

/// The error for unpacking a saved variable after `release_variables`.
pub const ERR_BACKWARD_TWICE: &str = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.";

/// The error for saving an inference tensor.
pub const ERR_INFERENCE_SAVED: &str = "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd.";

struct Inner {
    /// The saved tensor: the original for inputs and leaves; for outputs an alias without autograd
    /// metadata (so the node does not own itself through its output's `grad_fn`).
    data: Option<Tensor>,
    was_default_constructed: bool,
    saved_version: u64,
    /// Saved the original tensor (an input or a leaf).
    saved_original: bool,
    is_output: bool,
    requires_grad: bool,
    output_nr: usize,
    weak_grad_fn: Option<Weak<dyn Node>>,
    /// Address of the tensor that was saved (for `rebase_history`'s version fix-up).
    source: usize,
}

/// A tensor a node keeps for its backward formula, with the version it had when saved: using it
/// after an in-place modification is an error instead of a silently wrong gradient. Saved outputs
/// do not keep their node alive (no reference cycle); they get it back on unpack.
pub struct SavedVariable {
    inner: Mutex<Inner>,
}

impl Default for SavedVariable {
    fn default() -> Self {
        SavedVariable::none()
    }
}

impl SavedVariable {
    /// Saves `t`. `is_output`: `t` is an output of the node that saves it.
    ///
    /// Errors for inference tensors. The saved version is the tensor's current version, except
    /// when `t` is the output of an in-place op whose history was just rebased (the generated
    /// in-place wrapper bumps the version after the Autograd kernel returns; that bump is
    /// expected).
    pub fn new(t: &Tensor, is_output: bool) -> Result<SavedVariable> {
        if t.is_inference() {
            return Err(Error::runtime(ERR_INFERENCE_SAVED));
        }
        let mut version = t.version();
        let (grad_fn, output_nr, requires_grad, rebased_at) = match t.ag_meta() {
            Some(m) => (m.grad_fn.clone(), m.output_nr, m.requires_grad || m.grad_fn.is_some(), m.rebased_at_version),
            None => (None, 0, false, None),
        };
        if is_output && rebased_at == Some(version) {
            version += 1;
        }
        let is_leaf = grad_fn.is_none();
        let saved_original = !is_output || is_leaf;
        let data = if saved_original {
            t.clone()
        } else {
            let l = t.layout();
            let alias = t.alias_with_layout(&l.sizes, &l.strides, l.offset)?;
            // A backward pass over this graph propagates the output's tangents
            // (forward-over-reverse).
            super::forward_ad::copy_tangents(t, &alias);
            alias
        };
        Ok(SavedVariable {
            inner: Mutex::new(Inner {
                data: Some(data),
                was_default_constructed: false,
                saved_version: version,
                saved_original,
                is_output,
                requires_grad,
                output_nr,
                weak_grad_fn: if saved_original { None } else { grad_fn.as_ref().map(Arc::downgrade) },
                source: tensor_addr(t),
            }),
        })
    }

    /// Saves an optional tensor (`None` for an absent `Tensor?` argument).
    pub fn new_opt(t: Option<&Tensor>, is_output: bool) -> Result<SavedVariable> {
        match t {
            Some(t) => SavedVariable::new(t, is_output),
            None => Ok(SavedVariable::none()),
        }
    }

    /// A saved `None` (unpacks to `None`, also after release).
    pub fn none() -> SavedVariable {
        SavedVariable {
            inner: Mutex::new(Inner {
                data: None,
                was_default_constructed: true,
                saved_version: 0,
                saved_original: true,
                is_output: false,
                requires_grad: false,
                output_nr: 0,
                weak_grad_fn: None,
                source: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this saved a `None`.
    pub fn is_none(&self) -> bool {
        self.lock().was_default_constructed
    }
    /// Whether the saved tensor was released.
    pub fn is_released(&self) -> bool {
        let i = self.lock();
        i.data.is_none() && !i.was_default_constructed
    }
    /// The version the tensor had when saved.
    pub fn saved_version(&self) -> u64 {
        self.lock().saved_version
    }

    /// The saved tensor for `node`'s backward. Errors if it was released (second backward
    /// without `retain_graph`) or modified in place since it was saved. A saved output comes back
    /// with its `grad_fn` (the saving node) re-attached, so `create_graph` works.
    pub fn unpack(&self, node: &dyn Node) -> Result<Tensor> {
        match self.unpack_opt(node)? {
            Some(t) => Ok(t),
            None => Err(Error::runtime("unpack: the saved variable is None (use unpack_opt for optional tensors)")),
        }
    }

    /// Like [`SavedVariable::unpack`]; `None` for a saved `None`.
    pub fn unpack_opt(&self, node: &dyn Node) -> Result<Option<Tensor>> {
        let i = self.lock();
        let Some(data) = i.data.as_ref() else {
            if i.was_default_constructed {
                return Ok(None);
            }
            return Err(Error::runtime(ERR_BACKWARD_TWICE));
        };
        let grad_fn: Option<Arc<dyn Node>> = if i.saved_original {
            data.grad_fn()
        } else if i.is_output {
            i.weak_grad_fn.as_ref().and_then(Weak::upgrade).or_else(|| node.base().self_arc())
        } else {
            None
        };
        let current = data.version();
        if current != i.saved_version {
            let mut msg = format!(
                "one of the variables needed for gradient computation has been modified by an inplace operation: [{} {:?}]",
                torch_type_name(data.dtype(), data.device()),
                &data.sizes()[..]
            );
            if let Some(f) = grad_fn.as_ref() {
                msg += &format!(
                    ", which is output {} of {},",
                    if i.saved_original { data.output_nr() } else { i.output_nr },
                    f.name()
                );
            }
            msg += &format!(" is at version {current}; expected version {} instead.", i.saved_version);
            if is_anomaly_enabled() {
                msg += " Hint: the backtrace further above shows the operation that failed to compute its gradient. The variable in question was changed in there or anywhere later. Good luck!";
            } else {
                msg += " Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).";
            }
            return Err(Error::runtime(msg));
        }
        if i.saved_original {
            return Ok(Some(data.clone()));
        }
        // A fresh alias with the node re-attached as its history.
        let l = data.layout();
        let t = data.alias_with_layout(&l.sizes, &l.strides, l.offset)?;
        super::forward_ad::copy_tangents(data, &t);
        if i.requires_grad {
            if let Some(f) = grad_fn {
                t.set_gradient_edge(Some(f), i.output_nr);
            }
        }
        Ok(Some(t))
    }

    /// Frees the saved tensor; unpacking afterwards errors.
    pub fn reset(&self) {
        let mut i = self.lock();
        let data = i.data.take();
        i.weak_grad_fn = None;
        drop(i);
        drop(data);
    }

    /// For `rebase_history`: a saved output of the in-place op on `t` expects the version bump
    /// that follows the Autograd kernel.
    pub(crate) fn expect_inplace_bump(&self, t: &Tensor) {
        let mut i = self.lock();
        if i.is_output && i.source == tensor_addr(t) && i.data.is_some() && i.saved_version == t.version() {
            i.saved_version += 1;
        }
    }
}

impl std::fmt::Debug for SavedVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = self.lock();
        match &i.data {
            Some(t) => write!(f, "SavedVariable({:?} v{})", &t.sizes()[..], i.saved_version),
            None if i.was_default_constructed => f.write_str("SavedVariable(None)"),
            None => f.write_str("SavedVariable(<released>)"),
        }
    }
}

fn tensor_addr(t: &Tensor) -> usize {
    t.autograd_slot() as *const _ as usize
}

/// PyTorch's legacy type name, as in `torch.FloatTensor` / `torch.cuda.LongTensor`.
pub fn torch_type_name(dtype: DType, device: Device) -> String {
    let scalar = match dtype {
        DType::F32 => "Float",
        DType::F64 => "Double",
        DType::F16 => "Half",
        DType::BF16 => "BFloat16",
        DType::I64 => "Long",
        DType::I32 => "Int",
        DType::I16 => "Short",
        DType::I8 => "Char",
        DType::U8 => "Byte",
        DType::Bool => "Bool",
    };
    match device {
        Device::Cpu => format!("torch.{scalar}Tensor"),
        Device::Cuda(_) => format!("torch.cuda.{scalar}Tensor"),
        Device::Meta => format!("torch.meta.{scalar}Tensor"),
        Device::PrivateUse1(_) => format!("torch.privateuseone.{scalar}Tensor"),
    }
}
