//! The runtime alone, for its flash and RAM: built without the kernels
//! (`--no-default-features`, which holds the runtime, its prim ops and the report), it
//! loads `mlp.pte` and stops at the first missing kernel; it exits 1. Built with them, it
//! is the `mlp` binary again.

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
