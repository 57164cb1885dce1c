use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

// A dtype-keyed entry names its dtype already; `accepts` is for fallback kernels.
#[kernel("aten::abs.out", dtype = f32, accepts = [f32])]
fn abs_out(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
