//! `aten::div.Scalar_out`: true division by a scalar.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_opmath;
use crate::util::element::Float;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, float_compute_set, result_type_scalar, to_float};

/// Elementwise `out = a / other`. Integer and bool tensors promote to float32; float16
/// divides by the scalar in float32 and rounds once. Division by zero follows IEEE.
#[kernel("aten::div.Scalar_out", accepts = [all])]
pub fn div_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = to_float(result_type_scalar(a, other)?);
    et_switch!(in float_compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        let d = scalar_opmath::<C, Sel>(other, common)?;
        unary::<C, C, Sel>(a, out, common, move |x| Float::div(x, d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn divides_by_a_scalar() {
        with_ctx(|ctx| {
            let i = TensorBuf::from_slice(&[3], &[3i32, -1, 0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            div_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(2), &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[1.5, -0.5, 0.0]);
            div_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(0), &mut o).unwrap();
            let v = o.data::<f32>().unwrap();
            assert_eq!(&v[..2], &[f32::INFINITY, f32::NEG_INFINITY]);
            assert!(v[2].is_nan());
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
            assert!(div_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(2), &mut oi).is_err());
        });
    }
}
