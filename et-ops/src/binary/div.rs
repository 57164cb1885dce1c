//! `aten::div.out`: true division.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Float;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, float_compute_set, result_type, to_float};

/// Elementwise `out = a / b` with broadcasting. Integer and bool inputs promote to
/// float32 (true division); division by zero follows IEEE (`1/0 = inf`, `0/0 = NaN`).
#[kernel("aten::div.out", accepts = [all])]
pub fn div_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = to_float(result_type(a, b)?);
    et_switch!(in float_compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        binary::<C, C, Sel>(a, b, out, common, Float::div)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn divides() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[3], &[1i64, -3, 0]).unwrap();
            let b = TensorBuf::from_slice(&[3], &[4i64, 2, 0]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            div_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            let o = out.data::<f32>().unwrap();
            assert_eq!(&o[..2], &[0.25, -1.5]);
            assert!(o[2].is_nan());
            let x = TensorBuf::from_slice(&[2], &[1.0f64, -1.0]).unwrap();
            let z = TensorBuf::from_slice(&[], &[0.0f64]).unwrap();
            let mut od = TensorBuf::zeros(ScalarType::Double, &[2]).unwrap();
            div_out::<AllDtypes>(ctx, &x, &z, &mut od).unwrap();
            assert_eq!(
                od.data::<f64>().unwrap(),
                &[f64::INFINITY, f64::NEG_INFINITY]
            );
            // A float result cannot go to an integer out.
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            assert!(div_out::<AllDtypes>(ctx, &a, &b, &mut oi).is_err());
        });
    }
}
