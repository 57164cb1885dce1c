//! NHWC compute shared by the node kinds: broadcasting, permutes, the window geometry,
//! the depthwise convolution kernel and 8-bit integer arithmetic (`requant`). The matrix multiplies are et-ops' `gemm`.

pub(crate) mod broadcast;
pub(crate) mod clamp;
pub(crate) mod cpu;
pub(crate) mod depthwise;
pub(crate) mod direct;
pub(crate) mod fgemm;
pub(crate) mod lut;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon_dot;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon_qd8;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon_qgemm;
pub(crate) mod permute;
pub(crate) mod qconv;
pub(crate) mod qd8_gemm;
#[cfg(target_arch = "x86_64")]
pub(crate) mod qdepthwise_avx2;
pub(crate) mod qelementwise;
pub(crate) mod qgemm;
pub(crate) mod qmul;
pub(crate) mod qpool;
pub(crate) mod quant;
pub(crate) mod requant;
pub(crate) mod shape;
pub(crate) mod sweep;
pub(crate) mod window;
