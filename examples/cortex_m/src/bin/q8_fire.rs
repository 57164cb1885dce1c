//! `q8_fire` from flash, in statics sized from the program by `build.rs`.

#![no_std]
#![no_main]

use cortex_m_example::{exit, planned_total, run, Aligned, Buffers, Model, Pool};
use cortex_m_rt::entry;

include!(concat!(env!("OUT_DIR"), "/buffer_sizes.rs"));

static PROGRAM: Aligned<[u8; include_bytes!("../../../../tests/fixtures/q8/q8_fire.pte").len()]> =
    Aligned(*include_bytes!("../../../../tests/fixtures/q8/q8_fire.pte"));

static METHOD: Pool<Q8_FIRE_METHOD_BYTES> = Pool::new();
static PLANNED: Pool<{ planned_total(&Q8_FIRE_PLANNED_BYTES) }> = Pool::new();
static SCRATCH: Pool<Q8_FIRE_SCRATCH_BYTES> = Pool::new();

#[entry]
fn main() -> ! {
    let model = Model {
        name: "q8_fire",
        program: &PROGRAM.0,
        input: include_bytes!("../../../../tests/fixtures/q8/q8_fire.in0.bin"),
        expected: include_bytes!("../../../../tests/fixtures/q8/q8_fire.out0.bin"),
        // The fixture's tolerance (its io.yaml).
        atol: 0.213409,
        rtol: 0.0,
    };
    // SAFETY: `main` runs once, so each pool is taken once.
    let buffers = unsafe {
        Buffers {
            method: METHOD.take(),
            planned_sizes: Q8_FIRE_PLANNED_BYTES,
            planned: PLANNED.take(),
            scratch: SCRATCH.take(),
        }
    };
    exit(run(&model, buffers))
}
