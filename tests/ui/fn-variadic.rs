use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

#[kernel("aten::add.out")]
fn add(_ctx: &KernelContext<'_>, _out: &mut Tensor, _rest: ...) -> KernelResult {
    Ok(())
}

fn main() {}
