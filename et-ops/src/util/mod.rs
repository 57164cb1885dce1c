//! Shared machinery, written once: the element-type traits, broadcasting and type
//! promotion, reductions over dims, and the matrix-multiply core.

pub mod element;
pub mod elementwise;
pub mod gemm;
pub mod promote;
pub mod reduce;
pub mod shape;
