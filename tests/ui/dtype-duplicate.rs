use et_macros::kernel;
use et_runtime::{Element, KernelContext, KernelResult, Tensor};

#[kernel("aten::add.out", dtype = [f32, f64, f32])]
fn add<T: Element>(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
