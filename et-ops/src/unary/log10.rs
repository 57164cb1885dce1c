//! `aten::log10.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Log10;

impl FloatFn for Log10 {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::log10(x)
    }
}

/// Elementwise the base-10 logarithm (NaN below 0, -inf at 0). Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::log10.out", accepts = [all])]
pub fn log10_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Log10, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            log10_out::<AllDtypes>,
            &[1000.0, 0.5, 0.0, -1.0],
            &[
                3.0,
                -core::f64::consts::LOG10_2,
                f64::NEG_INFINITY,
                f64::NAN,
            ],
        );
    }
}
