//! `aten::log.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Log;

impl FloatFn for Log {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::ln(x)
    }
}

/// Elementwise the natural logarithm (`log(0) = -inf`, negative inputs give NaN). Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::log.out", accepts = [all])]
pub fn log_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Log, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            log_out::<AllDtypes>,
            &[1.0, core::f64::consts::E, 0.0, -1.0],
            &[0.0, 1.0, f64::NEG_INFINITY, f64::NAN],
        );
    }
}
