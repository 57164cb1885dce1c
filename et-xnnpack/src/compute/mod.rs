//! NHWC compute shared by the node kinds: broadcasting, permutes, and the convolution
//! geometry. The matrix multiplies are et-ops' `gemm`.

pub(crate) mod broadcast;
pub(crate) mod permute;
