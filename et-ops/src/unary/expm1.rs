//! `aten::expm1.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Expm1;

impl FloatFn for Expm1 {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::exp_m1(x)
    }
}

/// Elementwise `e^x - 1`, accurate near zero. Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::expm1.out", accepts = [all])]
pub fn expm1_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Expm1, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            expm1_out::<AllDtypes>,
            &[1e-10, 1.0, f64::NEG_INFINITY],
            &[1e-10, 1.718281828459045, -1.0],
        );
    }
}
