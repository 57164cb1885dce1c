//! `aten::_log_softmax.out`: log-softmax along one dim.

use et_runtime::kernel;
use et_runtime::{et_switch, f16, DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{prepare, softmax_half, softmax_lanes};

/// `out = x - max - ln(sum(exp(x - max)))` along `dim`, computed directly (not as the log
/// of a softmax, which underflows to `-inf`). With `half_to_float`, a float16 input
/// produces a float32 out.
#[kernel("aten::_log_softmax.out", accepts = [floats])]
pub fn log_softmax_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    half_to_float: bool,
    out: &mut Tensor,
) -> KernelResult {
    let d = prepare(input, dim, half_to_float, out)?;
    if half_to_float {
        // `prepare` checked the input is float16; the switch compiles the branch only in
        // builds that select float16 for this operator.
        return et_switch!(Sel, input.dtype(), [f16], _T => softmax_half(input, d, out, true));
    }
    if input.dtype() == ScalarType::Half {
        return et_switch!(Sel, input.dtype(), [f16], _T => softmax_half(input, d, out, true));
    }
    et_switch!(Sel, input.dtype(), [f32, f64], T => softmax_lanes::<T, T>(input, d, out, true))
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn stable_log_probabilities() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[3], &[0.0f64, 0.0, -1000.0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
        log_softmax_out::<AllDtypes>(&ctx, &x, 0, false, &mut o).unwrap();
        let d = o.data::<f64>().unwrap();
        assert!((d[0] + core::f64::consts::LN_2).abs() < 1e-15);
        assert!((d[2] - (-1000.0 - core::f64::consts::LN_2)).abs() < 1e-9);
    }
}
