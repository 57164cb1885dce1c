//! `aten::acos.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Acos;

impl FloatFn for Acos {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::acos(x)
    }
}

/// Elementwise the arc cosine (NaN outside `[-1, 1]`). Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::acos.out", accepts = [all])]
pub fn acos_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Acos, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            acos_out::<AllDtypes>,
            &[0.5, -1.0, 1.5],
            &[
                core::f64::consts::FRAC_PI_3,
                core::f64::consts::PI,
                f64::NAN,
            ],
        );
    }
}
