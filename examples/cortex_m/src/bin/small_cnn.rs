//! `small_cnn` from flash, in statics sized from the program by `build.rs`.

#![no_std]
#![no_main]

cortex_m_example::firmware! {
    name: "small_cnn",
    path: "small_cnn",
    sizes: (SMALL_CNN_METHOD_BYTES, SMALL_CNN_PLANNED_BYTES, SMALL_CNN_SCRATCH_BYTES),
    // The fixture's tolerance (its io.yaml).
    atol: 1e-4,
    rtol: 1e-4,
}
