//! `aten::log1p.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Log1p;

impl FloatFn for Log1p {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::ln_1p(x)
    }
}

/// Elementwise `ln(1 + x)`, accurate near zero (`log1p(-1) = -inf`). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::log1p.out", accepts = [all])]
pub fn log1p_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Log1p, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            log1p_out::<AllDtypes>,
            &[1e-10, 1.0, -1.0, -2.0],
            &[1e-10, core::f64::consts::LN_2, f64::NEG_INFINITY, f64::NAN],
        );
    }
}
