//! `aten::round.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{rounding_unary, FloatFn};
use crate::util::element::Float;

struct Round;

impl FloatFn for Round {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::round_even(x)
    }
}

/// Elementwise: rounds to the nearest integer, ties to even (`round(2.5) = 2`, `round(-0.5) = -0`). Integer and bool tensors are copied unchanged (their dtype is kept);
/// NaN and infinities pass through.
#[kernel("aten::round.out", accepts = [all])]
pub fn round_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    rounding_unary::<Round, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_rounding;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_rounding(
            round_out::<AllDtypes>,
            &[-0.5, 0.5, 1.5, 2.5, -2.5, -3.475, 2.253, f64::NAN],
            &[-0.0, 0.0, 2.0, 2.0, -2.0, -3.0, 2.0, f64::NAN],
        );
    }
}
