//! A named out-of-tree backend (`rename_privateuse1_backend`): devices print with the name, and
//! the dispatcher's error for an operator without a kernel there names the backend and its key.
//! Its own test binary, since the name is process-wide.

use oxten_runtime::device::{privateuse1_name, rename_privateuse1_backend};
use oxten_runtime::dispatch::{DispatchKey, KeySet, Op};
use oxten_runtime::{Device, DeviceType, Result, Tensor};

#[test]
fn a_named_backend_shows_its_name() {
    assert_eq!(Device::PrivateUse1(1).to_string(), "privateuseone:1");
    rename_privateuse1_backend("toy").unwrap();
    rename_privateuse1_backend("toy").unwrap();
    assert_eq!(privateuse1_name(), "toy");
    assert_eq!(Device::PrivateUse1(1).to_string(), "toy:1");
    assert_eq!(DeviceType::PrivateUse1.to_string(), "toy");
    let e = rename_privateuse1_backend("other").unwrap_err().to_string();
    assert!(e.contains("already named `toy`"), "{e}");
    static OP: Op<fn(&Tensor) -> Result<Tensor>> = Op::new("test::named", "named(Tensor a) -> Tensor");
    OP.register(DispatchKey::Cpu, |t| Ok(t.clone()));
    let e = match OP.resolve(KeySet::of(DispatchKey::PrivateUse1)) {
        Ok(_) => panic!("no PrivateUse1 kernel was registered"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("from the 'toy' (PrivateUse1) backend"), "{e}");
}
