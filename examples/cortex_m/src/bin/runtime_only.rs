//! The runtime alone, for its flash and RAM: built without the kernels
//! (`--no-default-features`, which holds the runtime, its prim ops and the report), it
//! loads `mlp.pte` and stops at the first missing kernel; it exits 1. Built with them, it
//! is the `mlp` binary again.

#![no_std]
#![no_main]

use cortex_m_example::{exit, planned_total, run, Aligned, Buffers, Model, Pool};
use cortex_m_rt::entry;

include!(concat!(env!("OUT_DIR"), "/buffer_sizes.rs"));

static PROGRAM: Aligned<[u8; include_bytes!("../../../../tests/fixtures/mlp.pte").len()]> =
    Aligned(*include_bytes!("../../../../tests/fixtures/mlp.pte"));

static METHOD: Pool<MLP_METHOD_BYTES> = Pool::new();
static PLANNED: Pool<{ planned_total(&MLP_PLANNED_BYTES) }> = Pool::new();
static SCRATCH: Pool<MLP_SCRATCH_BYTES> = Pool::new();

#[entry]
fn main() -> ! {
    let model = Model {
        name: "mlp",
        program: &PROGRAM.0,
        input: include_bytes!("../../../../tests/fixtures/mlp.in0.bin"),
        expected: include_bytes!("../../../../tests/fixtures/mlp.out0.bin"),
        atol: 1e-5,
        rtol: 1e-5,
    };
    // SAFETY: `main` runs once, so each pool is taken once.
    let buffers = unsafe {
        Buffers {
            method: METHOD.take(),
            planned_sizes: MLP_PLANNED_BYTES,
            planned: PLANNED.take(),
            scratch: SCRATCH.take(),
        }
    };
    exit(run(&model, buffers))
}
