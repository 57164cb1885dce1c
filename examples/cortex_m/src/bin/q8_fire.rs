//! `q8_fire` from flash, in statics sized from the program by `build.rs`.

#![no_std]
#![no_main]

cortex_m_example::firmware! {
    name: "q8_fire",
    path: "q8/q8_fire",
    sizes: (Q8_FIRE_METHOD_BYTES, Q8_FIRE_PLANNED_BYTES, Q8_FIRE_SCRATCH_BYTES),
    // The fixture's tolerance (its io.yaml).
    atol: 0.213409,
    rtol: 0.0,
}
