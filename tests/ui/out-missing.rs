use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Scalar, Tensor};

#[kernel("aten::add.out")]
fn add(_ctx: &KernelContext<'_>, _a: &Tensor, _alpha: Scalar) -> KernelResult {
    Ok(())
}

fn main() {}
