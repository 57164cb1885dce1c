//! `aten::rsqrt.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Rsqrt;

impl FloatFn for Rsqrt {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        F::ONE / Float::sqrt(x)
    }
}

/// Elementwise `1 / sqrt(x)` (`rsqrt(0) = inf`, NaN below zero). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::rsqrt.out", accepts = [all])]
pub fn rsqrt_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Rsqrt, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            rsqrt_out::<AllDtypes>,
            &[4.0, 0.0, -1.0],
            &[0.5, f64::INFINITY, f64::NAN],
        );
    }
}
