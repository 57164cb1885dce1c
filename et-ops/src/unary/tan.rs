//! `aten::tan.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Tan;

impl FloatFn for Tan {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::tan(x)
    }
}

/// Elementwise the tangent. Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::tan.out", accepts = [all])]
pub fn tan_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Tan, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            tan_out::<AllDtypes>,
            &[0.5, -1.0, 0.0],
            &[0.5463024898437905, -1.5574077246549023, 0.0],
        );
    }
}
