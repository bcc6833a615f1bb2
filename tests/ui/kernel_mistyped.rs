// A backend implements the generated declaration of the CPU kernel of `where.self` with the wrong
// signature: the compiler names the kernel and the trait.
use oxten::{Result, Tensor};
use oxten_kernels::generated::decls::WhereSelfCpu;

struct MyBackend;

impl WhereSelfCpu for MyBackend {
    fn where_self(condition: &Tensor) -> Result<Tensor> {
        Ok(condition.clone())
    }
}

fn main() {}
