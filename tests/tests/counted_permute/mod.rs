//! A float32 `aten::permute_copy.out` that counts its calls on the calling thread, then
//! runs et-ops' kernel: what an execute really ran, whichever way a test binary's other
//! kernels resolve. Each test binary that includes this module registers it once.

use std::cell::Cell;

use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

thread_local! {
    static PERMUTES: Cell<usize> = const { Cell::new(0) };
}

#[kernel("aten::permute_copy.out", dtype = f32)]
fn counted_permute(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    dims: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    PERMUTES.with(|n| n.set(n.get() + 1));
    et_ops::shape::permute_copy::permute_copy_out(ctx, input, dims, out)
}

/// Runs `f`: its result, and how many permutes this thread ran during it.
pub fn permutes_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    PERMUTES.with(|n| n.set(0));
    let result = f();
    (result, PERMUTES.with(Cell::get))
}
