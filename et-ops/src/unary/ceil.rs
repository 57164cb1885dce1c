//! `aten::ceil.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{rounding_unary, FloatFn};
use crate::util::element::Float;

struct Ceil;

impl FloatFn for Ceil {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::ceil(x)
    }
}

/// Elementwise: rounds toward positive infinity. Integer and bool tensors are copied unchanged (their dtype is kept);
/// NaN and infinities pass through.
#[kernel("aten::ceil.out", accepts = [all])]
pub fn ceil_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    rounding_unary::<Ceil, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_rounding;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_rounding(
            ceil_out::<AllDtypes>,
            &[-0.5, 1.5, -2.5, 2.2, f64::NAN, f64::NEG_INFINITY],
            &[-0.0, 2.0, -2.0, 3.0, f64::NAN, f64::NEG_INFINITY],
        );
    }
}
