// Every problem is reported in one compile, and the function is still emitted: the
// `et_switch!` in its body adds no error of its own.
use et_macros::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

#[kernel("aten::add.out", dtype = f128, alpah = 1)]
async fn add<S: DtypeSelection>(_ctx: &KernelContext<'_>, a: &Tensor, _b: u32, _out: &mut Tensor) -> KernelResult {
    et_switch!(S, a.dtype(), [f32], T => Ok(()))
}

fn main() {}
