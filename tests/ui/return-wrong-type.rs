use et_macros::kernel;
use et_runtime::{KernelContext, Tensor};

#[kernel("aten::add.out")]
fn add(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> Result<(), String> {
    Ok(())
}

fn main() {}
