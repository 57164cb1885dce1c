//! `aten::erf.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{float_unary, FloatFn};
use crate::util::element::Float;

struct Erf;

impl FloatFn for Erf {
    #[inline(always)]
    fn apply<F: Float>(x: F) -> F {
        Float::erf(x)
    }
}

/// Elementwise the error function. Bool and integer inputs give float32; float16 computes in
/// float32 and rounds once.
#[kernel("aten::erf.out", accepts = [all])]
pub fn erf_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    float_unary::<Erf, Sel>(input, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unary::test_support::check_float_unary;
    use et_runtime::AllDtypes;

    #[test]
    fn values() {
        check_float_unary(
            erf_out::<AllDtypes>,
            &[0.5, -2.0, f64::INFINITY],
            &[0.5204998778130465, -0.9953222650189527, 1.0],
        );
    }
}
