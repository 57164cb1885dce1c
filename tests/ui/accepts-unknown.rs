use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

// `accepts` names dtypes or the groups floats, ints, reals, all.
#[kernel("aten::abs.out", accepts = [f32, complex])]
fn abs_out(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
