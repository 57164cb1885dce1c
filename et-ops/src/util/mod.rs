//! Shared machinery, written once: the dtype table, broadcasting and type promotion,
//! reductions over dims, and the matrix-multiply core.

pub mod dtype;
pub mod elementwise;
pub mod gemm;
pub mod math;
pub mod promote;
pub mod reduce;
pub mod shape;
