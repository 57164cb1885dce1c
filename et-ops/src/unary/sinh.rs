//! `aten::sinh.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Sinh;

impl FloatFn for Sinh {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::sinh(x)
    }
}

/// Elementwise the hyperbolic sine. Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::sinh.out", accepts = [all])]
pub fn sinh_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Sinh, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            sinh_out::<AllDtypes>,
            &[0.5, -2.0, 0.0],
            &[0.5210953054937474, -3.626860407847019, 0.0],
        );
    }
}
