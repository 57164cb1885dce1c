//! `aten::atan.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Atan;

impl FloatFn for Atan {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::atan(x)
    }
}

/// Elementwise the arc tangent, in `[-pi/2, pi/2]`. Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::atan.out", accepts = [all])]
pub fn atan_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Atan, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            atan_out::<AllDtypes>,
            &[1.0, f64::INFINITY, -2.0],
            &[
                core::f64::consts::FRAC_PI_4,
                core::f64::consts::FRAC_PI_2,
                -1.1071487177940904,
            ],
        );
    }
}
