//! The firmware: the model named by `ET_SELECT_OPS_MODEL` (the build's selection), from
//! flash, in statics of the sizes `build.rs` measured from it; checks its output against
//! ExecuTorch's and the stack it used against the stack reserved in `memory.x`, and exits
//! through semihosting (0 when both hold, 1 otherwise).

#![no_std]
#![no_main]

use cortex_m_example::{planned_total, Aligned, Buffers, Model, Pool};

// `MODEL_METHOD_BYTES`, `MODEL_PLANNED_BYTES`, `MODEL_SCRATCH_BYTES`, `MODEL_NAME`,
// `MODEL_ATOL`, `MODEL_RTOL`.
include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// The program, 64-byte aligned, in flash: its constants are read in place.
static PROGRAM: Aligned<[u8; include_bytes!(env!("MODEL_PTE")).len()]> =
    Aligned(*include_bytes!(env!("MODEL_PTE")));
/// Input 0 (the fixture's).
static INPUT: [u8; include_bytes!(env!("MODEL_INPUT")).len()] =
    *include_bytes!(env!("MODEL_INPUT"));
/// Output 0 as ExecuTorch computed it from `INPUT`.
static EXPECTED: [u8; include_bytes!(env!("MODEL_EXPECTED")).len()] =
    *include_bytes!(env!("MODEL_EXPECTED"));

static METHOD: Pool<MODEL_METHOD_BYTES> = Pool::new();
static PLANNED: Pool<{ planned_total(&MODEL_PLANNED_BYTES) }> = Pool::new();
static SCRATCH: Pool<MODEL_SCRATCH_BYTES> = Pool::new();

#[cortex_m_rt::entry]
fn main() -> ! {
    let model = Model {
        name: MODEL_NAME,
        program: &PROGRAM.0,
        input: &INPUT,
        expected: &EXPECTED,
        atol: MODEL_ATOL,
        rtol: MODEL_RTOL,
    };
    // SAFETY: `main` runs once, so each pool is taken once.
    let buffers = unsafe {
        Buffers {
            method: METHOD.take(),
            planned_sizes: MODEL_PLANNED_BYTES,
            planned: PLANNED.take(),
            scratch: SCRATCH.take(),
        }
    };
    let output_ok = cortex_m_example::run(&model, buffers);
    let stack_ok = cortex_m_example::report_stack();
    cortex_m_example::exit(output_ok && stack_ok)
}
