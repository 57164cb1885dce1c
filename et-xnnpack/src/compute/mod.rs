//! NHWC compute shared by the node kinds: broadcasting, permutes, the window geometry
//! and the depthwise convolution kernel. The matrix multiplies are et-ops' `gemm`.

pub(crate) mod broadcast;
pub(crate) mod depthwise;
pub(crate) mod direct;
pub(crate) mod permute;
pub(crate) mod sweep;
pub(crate) mod window;
