//! `aten::log2.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Log2;

impl FloatFn for Log2 {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::log2(x)
    }
}

/// Elementwise the base-2 logarithm (NaN below 0, -inf at 0). Bool and integer inputs give float32; float16 computes in float32
/// and rounds once.
#[kernel("aten::log2.out", accepts = [all])]
pub fn log2_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Log2, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            log2_out::<AllDtypes>,
            &[8.0, 0.5, 0.0, -1.0],
            &[3.0, -1.0, f64::NEG_INFINITY, f64::NAN],
        );
    }
}
