// Registering a backend that lacks the CPU impl of the structured `gelu.out`: the error names the
// operator's kernel trait.
use oxten_kernels::generated::decls::GeluOutCpu;

struct MyBackend;

fn register_gelu<K: GeluOutCpu>() {}

fn main() {
    register_gelu::<MyBackend>();
}
