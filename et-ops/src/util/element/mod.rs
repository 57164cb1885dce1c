//! The element-type traits, in one tower. Each level adds what a family of kernels needs:
//!
//! * [`Element`](et_runtime::Element) (from et-runtime, at the bottom): a plain-old-data
//!   type with a [`ScalarType`](et_runtime::ScalarType) tag, which is all a tensor's storage
//!   needs. Kernels that only move bytes (`permute`, `cat`, `slice`, ...) stay here or below,
//!   working on `[u8; W]`.
//! * [`Num`]: every dtype the portable kernels compute with (the integers, f16, bf16, f32,
//!   f64, bool), with PyTorch's cast rules ([`cast`]), zero and one, and NaN checks. The
//!   storage type of nearly every kernel: the elementwise drivers' gathers and stores,
//!   reductions, `arange`, `topk`, the reference matrix multiply.
//! * [`RawElement`]: a [`Num`] read from and written to native-endian bytes; the per-dtype
//!   load and store functions of the layout helpers (dtype-converting copies, `full`,
//!   `constant_pad_nd`, `cumsum`, `sum`'s output stores) are built from it.
//! * [`Compute`]: the three types elementwise kernels compute in (`i64`, `f32`, `f64`), with
//!   the arithmetic whose integer and float rules differ (wrapping, floor division, Python's
//!   remainder, NaN-propagating min/max). Used by the unary, binary, compare, activation and
//!   logical families through [`unary`](crate::util::elementwise::unary),
//!   [`binary`](crate::util::elementwise::binary) and
//!   [`ternary`](crate::util::elementwise::ternary).
//! * [`Float`]: the floating compute types (`f32`, `f64`) with IEEE operators and the math
//!   functions (`exp`, `ln`, `erf`, ...) `no_std` lacks, forwarded to `libm`. Used by the
//!   float unary ops, activations, softmax, norms, pooling and upsampling.
//! * [`OpMath`]: maps a floating storage type to its [`Float`] compute type, as PyTorch's
//!   `opmath_type` (f16 and bf16 compute in f32, rounding once at the store). Used by the
//!   kernels that loop over float tensors themselves: softmax, the norms, upsampling.
//!
//! * [`Dot`]: how sums of products accumulate (f64 for floats, wrapping i64 for
//!   integers): the reference matrix multiply, the direct convolution, average pooling.
//!
//! The matrix multiply has its own dispatch trait,
//! [`GemmElem`](crate::util::gemm::GemmElem), beside the algorithm it selects.

mod compute;
mod dot;
mod float;
mod num;
mod opmath;
mod raw;

pub use compute::Compute;
pub use dot::Dot;
pub use float::Float;
pub use num::{cast, Num};
pub use opmath::OpMath;
pub use raw::RawElement;
