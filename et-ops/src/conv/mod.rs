//! conv operators. `convolution` validates arguments into a `geom::Geom` and picks a
//! path: f32 pointwise convs are gemms and other f32 convs im2col + gemm (`fast`), f32
//! depthwise convs a direct loop (`depthwise`); every other case (f16, f64, transposed)
//! the reference loop (`direct`).

pub mod convolution;
pub mod convolution_backward;
#[cfg(feature = "fusion")]
pub mod fused;

mod depthwise;
mod direct;
mod fast;
mod geom;
