//! `aten::asinh.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Asinh;

impl FloatFn for Asinh {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::asinh(x)
    }
}

/// Elementwise the inverse hyperbolic sine. Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::asinh.out", accepts = [all])]
pub fn asinh_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Asinh, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            asinh_out::<AllDtypes>,
            &[0.5, -2.0, 0.0],
            &[0.48121182505960347, -1.4436354751788103, 0.0],
        );
    }
}
