//! `aten::acosh.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Acosh;

impl FloatFn for Acosh {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::acosh(x)
    }
}

/// Elementwise the inverse hyperbolic cosine (NaN below 1). Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::acosh.out", accepts = [all])]
pub fn acosh_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Acosh, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            acosh_out::<AllDtypes>,
            &[1.0, 2.5, 0.5],
            &[0.0, 1.566799236972411, f64::NAN],
        );
    }
}
