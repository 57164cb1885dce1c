use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

#[kernel("aten::add.out")]
fn add(_ctx: &KernelContext<'_>, _a: &Tensor, _b: &Tensor, _out: &Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
