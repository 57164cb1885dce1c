use et_macros::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

#[kernel("mine::add_relu.out", dtype = f32, replaces = ["aten::add", "aten::relu.out"])]
fn add_relu<S: DtypeSelection>(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

#[kernel("mine::add_relu2.out", dtype = f32, replaces = [])]
fn add_relu2<S: DtypeSelection>(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
