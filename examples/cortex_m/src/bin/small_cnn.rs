//! `small_cnn` from flash, in statics sized from the program by `build.rs`.

#![no_std]
#![no_main]

use cortex_m_example::{exit, planned_total, run, Aligned, Buffers, Model, Pool};
use cortex_m_rt::entry;

include!(concat!(env!("OUT_DIR"), "/buffer_sizes.rs"));

static PROGRAM: Aligned<[u8; include_bytes!("../../../../tests/fixtures/small_cnn.pte").len()]> =
    Aligned(*include_bytes!("../../../../tests/fixtures/small_cnn.pte"));

static METHOD: Pool<SMALL_CNN_METHOD_BYTES> = Pool::new();
static PLANNED: Pool<{ planned_total(&SMALL_CNN_PLANNED_BYTES) }> = Pool::new();
static SCRATCH: Pool<SMALL_CNN_SCRATCH_BYTES> = Pool::new();

#[entry]
fn main() -> ! {
    let model = Model {
        name: "small_cnn",
        program: &PROGRAM.0,
        input: include_bytes!("../../../../tests/fixtures/small_cnn.in0.bin"),
        expected: include_bytes!("../../../../tests/fixtures/small_cnn.out0.bin"),
        // The fixture's tolerance (its io.yaml).
        atol: 1e-4,
        rtol: 1e-4,
    };
    // SAFETY: `main` runs once, so each pool is taken once.
    let buffers = unsafe {
        Buffers {
            method: METHOD.take(),
            planned_sizes: SMALL_CNN_PLANNED_BYTES,
            planned: PLANNED.take(),
            scratch: SCRATCH.take(),
        }
    };
    exit(run(&model, buffers))
}
