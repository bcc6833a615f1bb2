//! Autograd modes, tensor metadata and graph bookkeeping that need no kernels (the runtime crate
//! alone registers none): grad / inference / anomaly modes and their thread-locality, leaf and
//! history metadata, saved-variable checks, in-place rules, hooks, node numbering.

use oxten_runtime::autograd::*;
use oxten_runtime::dispatch::{local_keys, DispatchKey};
use oxten_runtime::{DType, Result, Tensor};
use std::sync::Arc;

fn leaf(v: &[f32]) -> Tensor {
    Tensor::from_slice(v, &[v.len() as i64]).unwrap().requires_grad_(true)
}

/// A node that passes gradients through (one per next edge), optionally saving a tensor.
struct PassNode {
    base: NodeBase,
    name: &'static str,
    saved: SavedVariable,
}

impl PassNode {
    fn new(name: &'static str, inputs: &[&Tensor]) -> Self {
        let opts: Vec<Option<&Tensor>> = inputs.iter().map(|t| Some(*t)).collect();
        PassNode { base: NodeBase::new(collect_next_edges(&opts)), name, saved: SavedVariable::none() }
    }
}

impl Node for PassNode {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        self.name.into()
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![grads[0].clone(); self.base.num_outputs()])
    }
    fn release_variables(&self) {
        self.saved.reset();
    }
    fn visit_saved(&self, f: &mut dyn FnMut(&str, &SavedVariable)) {
        f("saved", &self.saved);
    }
}

/// `out = op(inputs)` recorded with a PassNode.
fn record(name: &'static str, inputs: &[&Tensor]) -> (Tensor, Arc<dyn Node>) {
    let out = inputs[0].detach();
    let out = Tensor::from_vec(out.to_vec::<f32>().unwrap(), &out.sizes()).unwrap();
    let node: Arc<dyn Node> = Arc::new(PassNode::new(name, inputs));
    set_history(&[&out], node.clone());
    (out, node)
}

#[test]
fn grad_mode_guards_nest_and_restore() {
    assert!(is_grad_enabled());
    {
        let _g = NoGradGuard::new();
        assert!(!is_grad_enabled());
        {
            let _e = EnableGradGuard::new();
            assert!(is_grad_enabled());
        }
        assert!(!is_grad_enabled());
        assert!(enable_grad(is_grad_enabled));
    }
    assert!(is_grad_enabled());
    assert!(!no_grad(is_grad_enabled));
    // Restored on panic too.
    let r = std::panic::catch_unwind(|| {
        let _g = NoGradGuard::new();
        let _a = AnomalyModeGuard::new();
        let _i = InferenceModeGuard::new();
        panic!("boom");
    });
    assert!(r.is_err());
    assert!(is_grad_enabled() && !is_anomaly_enabled() && !is_inference_mode_enabled());
    assert!(!local_keys().1.contains(DispatchKey::Autograd));
}

#[test]
fn modes_are_thread_local_and_thread_local_state_carries_them() {
    let _g = NoGradGuard::new();
    let _a = AnomalyModeGuard::new();
    // A new thread starts with the defaults.
    let (grad, anomaly) = std::thread::spawn(|| (is_grad_enabled(), is_anomaly_enabled())).join().unwrap();
    assert!(grad && !anomaly);
    // Captured state is installed for the closure only.
    let state = ThreadLocalState::capture();
    let (inside, after) = std::thread::spawn(move || {
        let inside = state.enter(|| (is_grad_enabled(), is_anomaly_enabled()));
        (inside, (is_grad_enabled(), is_anomaly_enabled()))
    })
    .join()
    .unwrap();
    assert_eq!(inside, (false, true));
    assert_eq!(after, (true, false));
    // Inference mode and the dispatcher's exclude set travel too.
    let _i = InferenceModeGuard::new();
    let state = ThreadLocalState::capture();
    let (inf, excluded) = std::thread::spawn(move || {
        state.enter(|| (is_inference_mode_enabled(), local_keys().1.contains(DispatchKey::Autograd)))
    })
    .join()
    .unwrap();
    assert!(inf && excluded);
}

#[test]
fn inference_mode_makes_inference_tensors() {
    let normal = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let (inf, view_of_normal) = inference_mode(|| {
        assert!(is_inference_mode_enabled());
        assert!(!is_grad_enabled());
        assert!(local_keys().1.contains(DispatchKey::Autograd));
        let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        (t, normal.alias_with_layout(&[1], &[1], 1).unwrap())
    });
    assert!(is_grad_enabled() && !is_inference_mode_enabled());
    assert!(!local_keys().1.contains(DispatchKey::Autograd));
    assert!(inf.is_inference());
    assert!(
        inf.key_set().contains(DispatchKey::Autograd),
        "inference-ness is not a key: Autograd must see in-place updates"
    );
    assert!(!inf.requires_grad());
    assert!(!normal.is_inference());
    // A view of a normal tensor taken inside is normal; a view of an inference tensor taken
    // outside is an inference tensor.
    assert!(!view_of_normal.is_inference());
    assert!(inf.alias_with_layout(&[1], &[1], 0).unwrap().is_inference());
    assert!(inf.detach().is_inference());
    // inference_mode(false) inside inference mode.
    inference_mode(|| {
        let _off = InferenceModeGuard::with_enabled(false);
        assert!(!is_inference_mode_enabled() && is_grad_enabled());
        assert!(!local_keys().1.contains(DispatchKey::Autograd));
        assert!(!Tensor::scalar(1.0f32).is_inference());
    });
}

#[test]
fn inference_tensor_rules() {
    let inf = inference_mode(|| Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap());
    let e = SavedVariable::new(&inf, false).unwrap_err();
    assert_eq!(e.message, "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd.");
    let e = check_inplace(&inf, false).unwrap_err();
    assert!(e.message.starts_with("Inplace update to inference tensor outside InferenceMode is not allowed."), "{e}");
    inference_mode(|| check_inplace(&inf, false)).unwrap();
    let e = inf.try_requires_grad_(true).unwrap_err();
    assert!(e.message.contains("inference tensor outside InferenceMode"), "{e}");
}

#[test]
fn requires_grad_flags() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    assert!(!x.requires_grad() && x.is_leaf() && x.grad().is_none() && x.grad_fn().is_none());
    x.requires_grad_(true);
    assert!(x.requires_grad() && x.is_leaf());
    x.requires_grad_(false);
    assert!(!x.requires_grad());
    let i = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
    let e = i.try_requires_grad_(true).unwrap_err();
    assert_eq!(e.message, "only Tensors of floating point and complex dtype can require gradients");
    let x = leaf(&[1.0, 2.0]);
    let (y, _) = record("MulBackward0", &[&x]);
    assert!(y.requires_grad() && !y.is_leaf());
    assert_eq!(y.grad_fn().unwrap().name(), "MulBackward0");
    let e = y.try_requires_grad_(false).unwrap_err();
    assert!(e.message.starts_with("you can only change requires_grad flags of leaf variables."), "{e}");
    y.try_requires_grad_(true).unwrap();
    let d = y.detach();
    assert!(!d.requires_grad() && d.is_leaf());
    assert!(d.storage().is_alias_of(y.storage()));
    d.bump_version();
    assert_eq!(y.version(), 1, "detach shares the version counter");
    let e = Tensor::scalar(1.0f32).retain_grad().unwrap_err();
    assert_eq!(e.message, "can't retain_grad on Tensor that has requires_grad=False");
    y.retain_grad().unwrap();
    assert!(y.retains_grad());
    x.set_grad(Some(Tensor::scalar(3.0f32)));
    assert_eq!(x.grad().unwrap().item::<f32>().unwrap(), 3.0);
    x.set_grad(None);
    assert!(x.grad().is_none());
}

#[test]
fn history_edges_metadata_and_numbers() {
    let x = leaf(&[1.0, 2.0, 3.0]);
    let c = Tensor::from_vec(vec![1.0f32; 3], &[3]).unwrap();
    assert!(compute_requires_grad(&[Some(&x), Some(&c)]));
    assert!(!compute_requires_grad(&[Some(&c), None]));
    assert!(!no_grad(|| compute_requires_grad(&[Some(&x)])));
    // No accumulator until an edge is collected; then it is held weakly by the leaf.
    assert!(x.try_grad_accumulator().is_none());
    let edges = collect_next_edges(&[Some(&x), Some(&c), None]);
    assert_eq!(edges.len(), 3);
    assert!(edges[0].is_valid() && !edges[1].is_valid() && !edges[2].is_valid());
    let acc = edges[0].function.clone().unwrap();
    assert_eq!(acc.name(), "torch::autograd::AccumulateGrad");
    assert_eq!(acc.base().sequence_nr(), u64::MAX);
    assert_eq!(acc.base().topological_nr(), 0);
    assert_eq!(
        acc.base().input_metadata(0).unwrap(),
        InputMetadata { sizes: [3].as_slice().into(), dtype: DType::F32, device: oxten_runtime::Device::Cpu }
    );
    assert!(x.try_grad_accumulator().is_some());
    drop((edges, acc));
    assert!(x.try_grad_accumulator().is_none(), "the leaf holds its accumulator weakly");

    let (y, ny) = record("AddBackward0", &[&x, &c]);
    let (z, nz) = record("MulBackward0", &[&y, &x]);
    assert_eq!(y.output_nr(), 0);
    assert!(nz.base().sequence_nr() > ny.base().sequence_nr());
    assert_eq!(ny.base().topological_nr(), 1);
    assert_eq!(nz.base().topological_nr(), 2);
    assert_eq!(nz.base().next_edges()[0].function.as_ref().map(node_id), Some(node_id(&ny)));
    assert_eq!(nz.base().num_inputs(), 1);
    assert_eq!(nz.base().input_metadata(0).unwrap().sizes[..], [3]);
    assert!(z.gradient_edge().same_as(&Edge::new(nz.clone(), 0)));
    // Two outputs of one node.
    let n: Arc<dyn Node> = Arc::new(PassNode::new("SplitBackward0", &[&x]));
    let (a, b) = (Tensor::scalar(1.0f32), Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap());
    set_history(&[&a, &b], n.clone());
    assert_eq!((a.output_nr(), b.output_nr()), (0, 1));
    assert_eq!(n.base().num_inputs(), 2);
    assert_eq!(n.base().input_metadata(1).unwrap().sizes[..], [2]);
}

#[test]
fn saved_variable_version_and_release() {
    let x = leaf(&[1.0, 2.0, 3.0]);
    let b = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let node: Arc<dyn Node> = Arc::new(PassNode::new("ExpBackward0", &[&x]));
    set_history(&[&b], node.clone());
    // A node saving its own output (as the generated code does: after set_history).
    let node2 = PassNode { saved: SavedVariable::new(&b, true).unwrap(), ..PassNode::new("ExpBackward0", &[&x]) };
    drop(node2);
    let saver = Arc::new(PassNode { saved: SavedVariable::new(&b, true).unwrap(), ..PassNode::new("X", &[&x]) });
    let unpacked = saver.saved.unpack(&*node).unwrap();
    // The saved output comes back with its grad_fn re-attached, as a new alias of the data.
    assert!(Arc::ptr_eq(&unpacked.grad_fn().unwrap(), &node));
    assert!(!unpacked.is_same(&b) && unpacked.storage().is_alias_of(b.storage()));
    // The saved output does not keep its node alive (no cycle).
    let weak = Arc::downgrade(&node);
    drop(node);
    assert!(weak.upgrade().is_some(), "b still holds its grad_fn");
    // In-place modification is detected.
    b.bump_version();
    let n = weak.upgrade().unwrap();
    let err = saver.saved.unpack(&*n).unwrap_err();
    assert_eq!(
        err.message,
        "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."
    );
    // Released: the backward-twice error; a saved None stays None.
    saver.release_variables();
    let err = saver.saved.unpack(&*n).unwrap_err();
    assert!(err.message.starts_with("Trying to backward through the graph a second time"));
    let none = SavedVariable::none();
    none.reset();
    assert!(none.unpack_opt(&*n).unwrap().is_none());
    drop((n, unpacked));
    drop(b);
    assert!(weak.upgrade().is_none(), "graph freed once its output is gone");
}

#[test]
fn saved_input_frees_its_storage_on_release() {
    let x = leaf(&[1.0, 2.0]);
    let (y, _) = record("ExpBackward0", &[&x]);
    let node =
        Arc::new(PassNode { saved: SavedVariable::new(&y, false).unwrap(), ..PassNode::new("SinBackward0", &[&y]) });
    assert_eq!(y.storage().use_count(), 1);
    assert_eq!(y.use_count(), 2);
    node.release_variables();
    assert_eq!(y.use_count(), 1);
}

#[test]
fn inplace_rules() {
    let x = leaf(&[1.0, 2.0]);
    let e = check_inplace(&x, true).unwrap_err();
    assert_eq!(e.message, "a leaf Variable that requires grad is being used in an in-place operation.");
    no_grad(|| check_inplace(&x, true)).unwrap();
    // A view of a leaf.
    let v = x.alias_with_layout(&[1], &[1], 0).unwrap();
    let n: Arc<dyn Node> = Arc::new(PassNode::new("SliceBackward0", &[&x]));
    set_history(&[&v], n);
    make_view(&v, &x);
    assert!(v.is_view() && v.view_base().unwrap().is_same(&x));
    let e = check_inplace(&v, true).unwrap_err();
    assert_eq!(e.message, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    // A view created in no_grad mode, modified with grad mode on.
    let (y, _) = record("ExpBackward0", &[&x]);
    let w = no_grad(|| {
        let w = y.alias_with_layout(&[1], &[1], 1).unwrap();
        make_view(&w, &y);
        w
    });
    let e = check_inplace(&w, true).unwrap_err();
    assert!(e.message.starts_with("A view was created in no_grad mode and is being modified inplace"), "{e}");
    check_inplace(&w, false).unwrap();
    // A non-leaf is fine.
    check_inplace(&y, true).unwrap();
}

#[test]
fn view_requires_grad_follows_its_base() {
    let base = Tensor::from_vec(vec![0.0f32; 4], &[4]).unwrap();
    let v = base.alias_with_layout(&[2], &[1], 1).unwrap();
    make_view(&v, &base);
    let vv = v.alias_with_layout(&[1], &[1], 2).unwrap();
    make_view(&vv, &v);
    assert!(vv.view_base().unwrap().is_same(&base), "views record the root base");
    assert!(!v.requires_grad());
    base.requires_grad_(true);
    assert!(v.requires_grad() && vv.requires_grad());
}

#[test]
fn hook_handles_remove() {
    let x = leaf(&[1.0]);
    let h = x.register_hook(|_| Ok(None)).unwrap();
    assert!(h.remove());
    assert!(!h.remove());
    let e = Tensor::scalar(1.0f32).register_hook(|_| Ok(None)).unwrap_err();
    assert_eq!(e.message, "cannot register a hook on a tensor that doesn't require gradient");
    let (y, n) = record("ExpBackward0", &[&x]);
    let h1 = y.register_hook(|_| Ok(None)).unwrap();
    let h2 = n.base().register_prehook(|_| Ok(None));
    let h3 = n.base().register_hook(|_, _| Ok(None));
    assert!(h1.remove() && h2.remove() && h3.remove());
    drop((y, n));
    // Removing after the node is gone is harmless.
    assert!(!h1.remove());
}

#[test]
fn anomaly_mode_records_creation_traces() {
    let x = leaf(&[1.0]);
    let (_, plain) = record("ExpBackward0", &[&x]);
    assert!(plain.base().anomaly_metadata().is_none());
    let (_, traced) = detect_anomaly(|| {
        assert!(is_anomaly_enabled());
        record("ExpBackward0", &[&x])
    });
    assert!(!is_anomaly_enabled());
    let md = traced.base().anomaly_metadata().unwrap();
    assert_eq!(md.trace.status(), std::backtrace::BacktraceStatus::Captured);
    assert!(md.parent.is_none());
}

#[test]
fn dropping_a_long_graph_does_not_overflow_the_stack() {
    // 200k chained nodes; recursive drop would need far more than a test thread's stack.
    let x = leaf(&[1.0]);
    let mut t = x.clone();
    for _ in 0..200_000 {
        let n: Arc<dyn Node> = Arc::new(PassNode::new("ExpBackward0", &[&t]));
        let out = Tensor::scalar(1.0f32).alias_with_layout(&[1], &[0], 0).unwrap();
        set_history(&[&out], n);
        t = out;
    }
    assert_eq!(t.grad_fn().unwrap().base().topological_nr(), 200_000);
    drop(t);
}

#[test]
fn not_implemented_node_errors_on_backward() {
    let n = NotImplementedBackward::new("foo", vec![]);
    assert_eq!(n.name(), "NotImplemented");
    let e = n.apply(vec![None]).unwrap_err();
    assert_eq!(e.message, "the derivative for 'foo' is not implemented.");
    assert_eq!(e.kind, oxten_runtime::ErrorKind::NotImplemented);
}

#[test]
fn sum_to_shape_rules() {
    assert!(is_expandable_to(&[3], &[2, 3]));
    assert!(is_expandable_to(&[1, 3], &[2, 3]));
    assert!(is_expandable_to(&[], &[2, 3]));
    assert!(!is_expandable_to(&[2], &[2, 3]));
    assert!(!is_expandable_to(&[4, 2, 3], &[2, 3]));
}
