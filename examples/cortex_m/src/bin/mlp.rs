//! `mlp` from flash, in statics sized from the program by `build.rs`.

#![no_std]
#![no_main]

cortex_m_example::firmware! {
    name: "mlp",
    path: "mlp",
    sizes: (MLP_METHOD_BYTES, MLP_PLANNED_BYTES, MLP_SCRATCH_BYTES),
    // The fixture's tolerance (its io.yaml).
    atol: 1e-5,
    rtol: 1e-5,
}
