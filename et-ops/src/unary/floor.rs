//! `aten::floor.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{rounding_unary, FloatFn};
use crate::util::element::Float;

struct Floor;

impl FloatFn for Floor {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::floor(x)
    }
}

/// Elementwise: rounds toward negative infinity. Integer and bool tensors are copied unchanged (their dtype is kept);
/// NaN and infinities pass through.
#[kernel("aten::floor.out", accepts = [all])]
pub fn floor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    rounding_unary::<Floor, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_rounding;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_rounding(
            floor_out::<AllDtypes>,
            &[-0.5, 1.5, -2.5, 2.7, f64::NAN, f64::INFINITY],
            &[-1.0, 1.0, -3.0, 2.0, f64::NAN, f64::INFINITY],
        );
    }
}
