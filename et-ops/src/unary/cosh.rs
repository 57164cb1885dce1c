//! `aten::cosh.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Cosh;

impl FloatFn for Cosh {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::cosh(x)
    }
}

/// Elementwise the hyperbolic cosine. Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::cosh.out", accepts = [all])]
pub fn cosh_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Cosh, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            cosh_out::<AllDtypes>,
            &[0.5, -2.0, 0.0],
            &[1.1276259652063807, 3.7621956910836314, 1.0],
        );
    }
}
