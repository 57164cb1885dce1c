// An operator without an overload, returning an int, as prim ops do.
use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

#[kernel("my_ops::rank")]
fn rank(_ctx: &KernelContext<'_>, t: &Tensor) -> KernelResult<i64> {
    Ok(t.dim() as i64)
}

fn main() {
    assert!(et_runtime::registry::find_kernel("my_ops::rank", "", None).is_some());
}
