//! `aten::sigmoid.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::unary::{float_unary, FloatFn};
use crate::util::element::Float;

struct Sigmoid;

impl FloatFn for Sigmoid {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        // exp(-x) overflows to inf for very negative x, giving exactly 0; NaN stays NaN.
        F::ONE / (F::ONE + Float::exp(-x))
    }
    const F32_SLICES: Option<crate::unary::F32Slices> = Some(crate::vmath::sigmoid);
}

/// Elementwise logistic function `1 / (1 + e^-x)`. Bool and integer inputs give float32;
/// float16 computes in float32.
#[kernel("aten::sigmoid.out", accepts = [all])]
pub fn sigmoid_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Sigmoid, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            sigmoid_out::<AllDtypes>,
            &[0.0, 2.0, -2.0, -1000.0, 1000.0, f64::NAN],
            &[
                0.5,
                0.8807970779778823,
                0.11920292202211755,
                0.0,
                1.0,
                f64::NAN,
            ],
        );
    }
}
