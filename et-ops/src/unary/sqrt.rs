//! `aten::sqrt.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Sqrt;

impl FloatFn for Sqrt {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::sqrt(x)
    }
}

/// Elementwise the square root (correctly rounded; NaN below zero). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::sqrt.out", accepts = [all])]
pub fn sqrt_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Sqrt, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            sqrt_out::<AllDtypes>,
            &[4.0, 2.0, -1.0, f64::INFINITY],
            &[2.0, core::f64::consts::SQRT_2, f64::NAN, f64::INFINITY],
        );
    }
}
