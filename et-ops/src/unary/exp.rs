//! `aten::exp.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Exp;

impl FloatFn for Exp {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::exp(x)
    }
    const F32_SLICES: Option<crate::unary::F32Slices> = Some(crate::vmath::exp);
}

/// Elementwise e^x (`exp(-inf) = 0`, `exp(inf) = inf`, NaN stays NaN). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::exp.out", accepts = [all])]
pub fn exp_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Exp, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            exp_out::<AllDtypes>,
            &[0.0, -1.0, 100.0, f64::NAN, f64::NEG_INFINITY],
            &[1.0, 0.36787944117144233, f64::INFINITY, f64::NAN, 0.0],
        );
    }
}
