//! Binary arithmetic: `out = f(a, b)` with broadcasting and type promotion, through
//! the crate-private `util::elementwise::binary`.

pub mod add;
pub mod add_scalar;
pub mod atan2;
pub mod bitwise_and;
pub mod bitwise_and_scalar;
pub mod bitwise_left_shift;
pub mod bitwise_left_shift_scalar;
pub mod bitwise_or;
pub mod bitwise_or_scalar;
pub mod bitwise_right_shift;
pub mod bitwise_right_shift_scalar;
pub mod bitwise_xor;
pub mod bitwise_xor_scalar;
pub mod div;
pub mod div_mode;
pub mod div_scalar;
pub mod div_scalar_mode;
pub mod floor_divide;
pub mod fmod_scalar;
pub mod fmod_tensor;
pub mod maximum;
pub mod minimum;
pub mod mul;
pub mod mul_scalar;
pub mod pow_scalar;
pub mod pow_tensor_scalar;
pub mod pow_tensor_tensor;
pub mod remainder;
pub mod remainder_scalar;
pub mod rsub_scalar;
pub mod sub;
pub mod sub_scalar;

use et_runtime::{KernelError, KernelResult, ScalarType};

/// The width in bits of the integer dtype `common` that a shift acts on, or an error for
/// floats and bools (PyTorch implements shifts for integers only).
pub(crate) fn shift_width(common: ScalarType) -> KernelResult<i64> {
    if common.is_integral(false) {
        Ok(common.element_size() as i64 * 8)
    } else {
        Err(KernelError::invalid("shifts need integer operands"))
    }
}

/// `x << s` on an integer of `bits` bits held sign- or zero-extended in an i64 (the low
/// `bits` bits of the result are the narrow shift's). A shift by a negative amount or by
/// the width or more gives 0, as in PyTorch.
#[inline(always)]
pub(crate) fn shift_left(x: i64, s: i64, bits: i64) -> i64 {
    if (0..bits).contains(&s) {
        x.wrapping_shl(s as u32)
    } else {
        0
    }
}

/// Arithmetic `x >> s` on an integer of `bits` bits held sign- or zero-extended in an i64.
/// A shift by a negative amount or by the width or more fills with the sign (-1 or 0), as
/// in PyTorch; unsigned values are non-negative here, so they become 0.
#[inline(always)]
pub(crate) fn shift_right(x: i64, s: i64, bits: i64) -> i64 {
    if (0..bits).contains(&s) {
        x >> s
    } else {
        x >> 63
    }
}
