//! `aten::log.out`.

use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::math::Float;

struct Log;

impl FloatFn for Log {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::ln(x)
    }
}

/// Elementwise the natural logarithm (`log(0) = -inf`, negative inputs give NaN). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::log.out")]
pub fn log_out(_ctx: &KernelContext<'_>, input: &Tensor, out: &mut Tensor) -> KernelResult {
    float_unary::<Log, { __ET_SELECTED.0 }>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;

    #[test]
    fn values() {
        check_float_unary(
            log_out,
            &[1.0, core::f64::consts::E, 0.0, -1.0],
            &[0.0, 1.0, f64::NEG_INFINITY, f64::NAN],
        );
    }
}
