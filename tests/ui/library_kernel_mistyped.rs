// An operator library's kernels type (tests/ops_library: `row_norms(Tensor self, bool keepdim=False)`
// with `dispatch: CPU: row_norms`) implementing the generated kernel trait with the wrong
// signature: the compile error names the kernel and shows the signature the YAML declares.
use oxten::{Result, Tensor};
use oxten_tests::myops::generated::decls::RowNormsCpu;

struct Kernels;

impl RowNormsCpu for Kernels {
    fn row_norms(self_: &Tensor) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

fn main() {}
