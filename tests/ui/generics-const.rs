use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

#[kernel("aten::add.out")]
fn add<const N: usize>(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
