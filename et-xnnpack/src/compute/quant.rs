//! The quantization parameters of an 8-bit value.

/// One scale and zero point: real = scale * (q - zero_point).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Quant {
    pub(crate) scale: f32,
    pub(crate) zero_point: i32,
}
