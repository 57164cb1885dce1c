#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

pub(crate) mod util;

/// The f32 matrix multiply under `mm`, `addmm`, `bmm` and the convolutions, for code
/// built on etch's kernels outside this crate (the XNNPACK backend runs its fully
/// connected and convolution nodes on it). See [`sgemm`](gemm::sgemm).
pub mod gemm {
    pub use crate::util::gemm::{
        avx2_fma_available, avx512f_available, sgemm, sgemm_scratch_bytes, Mat, MatMut,
    };
    #[cfg(feature = "fusion")]
    pub use crate::util::gemm::{sgemm_with_epilogue, RowEpilogue};
}

/// Vectorized f32 `exp`, sigmoid, SiLU, `tanh`, GELU, hardswish, ELU and softmax rows over
/// slices, picked at run time for the CPU: what the float32 activation kernels here and
/// in the XNNPACK backend run on.
pub use util::vmath;

// Elementwise families.
pub mod activation;
pub mod binary;
pub mod compare;
pub mod logical;
pub mod unary;

// Data movement, creation and indexing.
pub mod copy;
pub mod creation;
pub mod index;
pub mod pad;
pub mod scan;
pub mod shape;

// Compute-heavy families.
pub mod conv;
pub mod linalg;
pub mod norm;
pub mod pool;
pub mod reduce;
pub mod softmax;
pub mod upsample;

// ExecuTorch's quantized library (`quantized_decomposed::*`).
pub mod quantized;
