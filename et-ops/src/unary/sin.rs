//! `aten::sin.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Sin;

impl FloatFn for Sin {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::sin(x)
    }
}

/// Elementwise the sine. Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::sin.out", accepts = [all])]
pub fn sin_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Sin, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            sin_out::<AllDtypes>,
            &[0.5, -3.0, f64::INFINITY],
            &[0.479425538604203, -0.1411200080598672, f64::NAN],
        );
    }
}
