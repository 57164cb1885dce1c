//! `aten::add.out`: `out = self + alpha * other`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::binary_on;
use crate::util::promote::{check_alpha, compute_dtype, compute_set, result_type};

/// Elementwise `out = a + alpha * b` with broadcasting and type promotion. Integer
/// results wrap; bool + bool is logical or (any non-zero sum is true); float16 computes in
/// float32 and rounds once.
#[kernel("aten::add.out", accepts = [all])]
pub fn add_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    check_alpha(common, alpha)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        // `y * 1` is exact, so one instantiation serves alpha = 1 too.
        let alpha = C::from_scalar(alpha);
        binary_on::<C, C, Sel>(ctx, a, b, out, common, move |x, y| x.add(y.mul(alpha)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{f16, Bool, ScalarType, TensorBuf};

    #[test]
    fn adds_with_alpha_broadcast_and_promotion() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[2, 2], &[1.0f32, 2., 3., 4.]).unwrap();
            let b = TensorBuf::from_slice(&[2], &[10.0f32, 20.]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
            add_out::<AllDtypes>(ctx, &a, &b, Scalar::Double(2.5), &mut out).unwrap();
            assert_eq!(out.data::<f32>().unwrap(), &[26., 52., 28., 54.]);

            let i = TensorBuf::from_slice(&[2], &[i32::MAX, 1]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            add_out::<AllDtypes>(ctx, &i, &i, Scalar::Int(1), &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[-2, 2]);
            assert!(add_out::<AllDtypes>(ctx, &i, &i, Scalar::Double(0.5), &mut oi).is_err());

            let t = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            add_out::<AllDtypes>(ctx, &t, &t, Scalar::Int(1), &mut ob).unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(1), Bool(0)]);

            // int64 + float32 0-dim: the float category wins at float32.
            let l = TensorBuf::from_slice(&[2], &[1i64, 2]).unwrap();
            let z = TensorBuf::from_slice(&[], &[0.5f32]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            add_out::<AllDtypes>(ctx, &l, &z, Scalar::Int(1), &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[1.5, 2.5]);

            let h = TensorBuf::from_slice(&[1], &[f16::from_f32(0.1)]).unwrap();
            let mut oh = TensorBuf::zeros(ScalarType::Half, &[1]).unwrap();
            add_out::<AllDtypes>(ctx, &h, &h, Scalar::Int(1), &mut oh).unwrap();
            assert_eq!(oh.data::<f16>().unwrap()[0], f16::from_f32(0.2));
        });
    }
}
