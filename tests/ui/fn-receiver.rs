use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

struct Ops;

impl Ops {
    #[kernel("aten::add.out")]
    fn add(&self, _ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
        Ok(())
    }
}

fn main() {}
