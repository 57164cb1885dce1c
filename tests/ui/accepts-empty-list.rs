use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

#[kernel("aten::abs.out", accepts = [])]
fn abs_out(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
