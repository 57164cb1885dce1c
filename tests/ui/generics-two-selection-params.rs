use et_runtime::{kernel, DtypeSelection, KernelContext, KernelResult, Tensor};

#[kernel("aten::abs.out")]
fn abs<S: DtypeSelection, R: et_runtime::DtypeSelection>(
    _ctx: &KernelContext<'_>,
    _a: &Tensor,
    _out: &mut Tensor,
) -> KernelResult {
    Ok(())
}

fn main() {}
