//! `aten::trunc.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{rounding_unary, FloatFn};
use crate::util::element::Float;

struct Trunc;

impl FloatFn for Trunc {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::trunc(x)
    }
}

/// Elementwise: rounds toward zero. Integer and bool tensors are copied unchanged (their dtype is kept);
/// NaN and infinities pass through.
#[kernel("aten::trunc.out", accepts = [all])]
pub fn trunc_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    rounding_unary::<Trunc, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_rounding;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_rounding(
            trunc_out::<AllDtypes>,
            &[-0.5, 1.5, -2.5, 2.7, f64::NAN],
            &[-0.0, 1.0, -2.0, 2.0, f64::NAN],
        );
    }
}
