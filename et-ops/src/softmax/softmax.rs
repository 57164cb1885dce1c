//! `aten::_softmax.out`: softmax along one dim.

use et_runtime::kernel;
use et_runtime::{et_switch, f16, DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{prepare, softmax_half, softmax_lanes};

/// `out = exp(x - max) / sum(exp(x - max))` along `dim`. With `half_to_float`, a float16
/// input produces a float32 out.
#[kernel("aten::_softmax.out", accepts = [floats])]
pub fn softmax_out<Sel: DtypeSelection>(
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
        return et_switch!(Sel, input.dtype(), [f16], _T => softmax_half(input, d, out, false));
    }
    if input.dtype() == ScalarType::Half {
        return et_switch!(Sel, input.dtype(), [f16], _T => softmax_half(input, d, out, false));
    }
    et_switch!(Sel, input.dtype(), [f32, f64], T => softmax_lanes::<T, T>(input, d, out, false))
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, ShapeDynamism, TensorBuf};
    use std::vec;

    #[test]
    fn lanes_sum_to_one() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(
            &[2, 3],
            &[1.0f32, 2.0, 3.0, 1000.0, 1000.0, f32::NEG_INFINITY],
        )
        .unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
        softmax_out::<AllDtypes>(&ctx, &x, -1, false, &mut o).unwrap();
        let d = o.data::<f32>().unwrap();
        assert!((d[0] - 0.090_030_57).abs() < 1e-7 && (d[2] - 0.665_240_96).abs() < 1e-7);
        assert_eq!(&d[3..], &[0.5, 0.5, 0.0]);
        // Along dim 0 into a column-major out.
        let mut oc =
            TensorBuf::with_layout(ScalarType::Float, &[2, 3], &[1, 0], ShapeDynamism::Static)
                .unwrap();
        softmax_out::<AllDtypes>(&ctx, &x, 0, false, &mut oc).unwrap();
        let d = oc.data::<f32>().unwrap();
        assert!((d[0] + d[1] - 1.0).abs() < 1e-6);
        assert_eq!((d[4], d[5]), (1.0, 0.0));
        // NaN poisons its lane only.
        let n = TensorBuf::from_slice(&[2, 2], &[f32::NAN, 0.0, 0.0, 0.0]).unwrap();
        let mut o2 = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
        softmax_out::<AllDtypes>(&ctx, &n, 1, false, &mut o2).unwrap();
        let d = o2.data::<f32>().unwrap();
        assert!(d[0].is_nan() && d[1].is_nan());
        assert_eq!(&d[2..], &[0.5, 0.5]);
        // half_to_float.
        let h = TensorBuf::from_slice(&[2], &[f16::from_f32(0.0), f16::from_f32(0.0)]).unwrap();
        let mut hf = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
        softmax_out::<AllDtypes>(&ctx, &h, 0, true, &mut hf).unwrap();
        assert_eq!(hf.data::<f32>().unwrap(), &[0.5, 0.5]);
        assert!(softmax_out::<AllDtypes>(&ctx, &x, 0, true, &mut o).is_err());
        assert!(softmax_out::<AllDtypes>(&ctx, &x, 2, false, &mut o).is_err());
    }
}
