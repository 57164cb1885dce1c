use et_macros::kernel;
use et_runtime::{KernelResult, Tensor};

#[kernel("aten::add.out")]
fn add(_a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
