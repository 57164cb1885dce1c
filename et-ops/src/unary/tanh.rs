//! `aten::tanh.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Tanh;

impl FloatFn for Tanh {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::tanh(x)
    }
    const F32_SLICES: Option<crate::unary::F32Slices> = Some(crate::vmath::tanh);
}

/// Elementwise the hyperbolic tangent (saturating to ±1). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::tanh.out", accepts = [all])]
pub fn tanh_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Tanh, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            tanh_out::<AllDtypes>,
            &[0.5, 30.0, -30.0, f64::NAN],
            &[0.46211715726000974, 1.0, -1.0, f64::NAN],
        );
    }
}
