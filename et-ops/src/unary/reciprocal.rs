//! `aten::reciprocal.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Reciprocal;

impl FloatFn for Reciprocal {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        F::ONE / x
    }
}

/// Elementwise `1 / x` (`1 / 0 = inf`). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::reciprocal.out", accepts = [all])]
pub fn reciprocal_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Reciprocal, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            reciprocal_out::<AllDtypes>,
            &[4.0, -0.5, 0.0],
            &[0.25, -2.0, f64::INFINITY],
        );
    }
}
