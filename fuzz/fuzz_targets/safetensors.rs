//! The safetensors loader returns tensors or an error for any bytes, never panics or reads out
//! of bounds; loaded tensors can be read and saved again.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(tensors) = oxten::safetensors::from_bytes(data) {
        for (_, t) in &tensors {
            let _ = t.to_f64_vec();
        }
        let _ = oxten::safetensors::to_bytes(&tensors, None);
    }
});
