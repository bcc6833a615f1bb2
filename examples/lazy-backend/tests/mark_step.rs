//! `mark_step` computes every live lazy tensor's pending graph. A test binary of its own: it
//! would run other tests' graphs too, under their feet.

use oxten::{tensor, Device};
use oxten_lazy::{graph, init, mark_step, LAZY};

#[test]
fn mark_step_computes_every_pending_graph() {
    init().unwrap();
    let a = tensor![[1.0, -2.0], [3.0, -4.0]];
    let la = a.to_device(LAZY);
    let (y, z) = (la.relu().mul_scalar(3.0), la.exp());
    assert!(graph(&y).unwrap().contains("relu(") && graph(&z).unwrap().contains("exp("));
    mark_step().unwrap();
    for t in [&y, &z] {
        assert_eq!(graph(t).unwrap(), "%0 = data f32[2, 2]\nreturn %0\n");
    }
    assert_eq!(y.to_device(Device::Cpu).to_vec::<f32>().unwrap(), [3.0, 0.0, 9.0, 0.0]);
    assert_eq!(z.to_device(Device::Cpu).to_vec::<f32>().unwrap(), a.exp().to_vec::<f32>().unwrap());
}
