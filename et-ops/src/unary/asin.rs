//! `aten::asin.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Asin;

impl FloatFn for Asin {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::asin(x)
    }
}

/// Elementwise the arc sine (NaN outside `[-1, 1]`). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::asin.out", accepts = [all])]
pub fn asin_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Asin, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            asin_out::<AllDtypes>,
            &[1.0, 0.5, 1.5],
            &[
                core::f64::consts::FRAC_PI_2,
                core::f64::consts::FRAC_PI_6,
                f64::NAN,
            ],
        );
    }
}
