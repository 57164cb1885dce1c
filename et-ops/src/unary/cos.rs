//! `aten::cos.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Cos;

impl FloatFn for Cos {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::cos(x)
    }
}

/// Elementwise the cosine. Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::cos.out", accepts = [all])]
pub fn cos_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Cos, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            cos_out::<AllDtypes>,
            &[0.5, -3.0, f64::INFINITY],
            &[0.8775825618903728, -0.9899924966004454, f64::NAN],
        );
    }
}
