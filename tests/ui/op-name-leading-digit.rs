use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

#[kernel("aten::1add.out")]
fn add(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
