//! Shared machinery, written once: the element-type traits, dtype conversion, the
//! elementwise drivers with broadcasting, type promotion, strided layouts and copies,
//! reductions over dims, the matrix-multiply core and the vectorized float functions.

pub mod accumulate;
pub mod convert;
pub mod element;
pub mod elementwise;
pub mod gemm;
pub mod layout;
pub(crate) mod own_kernels;
pub mod promote;
pub mod random;
pub mod reduction;
pub mod split;
#[cfg(test)]
pub mod test_pool;
pub mod vmath;
