// rustc, not the macro, reports that `i32` does not meet the bound; the error points at
// the dtype in the attribute.
use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

trait Float: et_runtime::Element {}
impl Float for f32 {}
impl Float for f64 {}

#[kernel("aten::sqrt.out", dtype = [f32, f64, i32])]
fn sqrt<T: Float>(_ctx: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {}
