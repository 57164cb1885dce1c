//! `aten::atanh.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Atanh;

impl FloatFn for Atanh {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::atanh(x)
    }
}

/// Elementwise the inverse hyperbolic tangent (infinite at ±1, NaN beyond). Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::atanh.out", accepts = [all])]
pub fn atanh_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Atanh, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            atanh_out::<AllDtypes>,
            &[0.5, -1.0, 1.5],
            &[0.5493061443340548, f64::NEG_INFINITY, f64::NAN],
        );
    }
}
