// A type that is merely named `Tensor` classifies as a tensor, and rustc rejects it at
// the parameter's type.
use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult};

struct Tensor;

#[kernel("aten::add.out")]
fn add(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut et_runtime::Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
