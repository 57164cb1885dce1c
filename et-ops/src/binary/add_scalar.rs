//! `aten::add.Scalar_out`: `out = self + alpha * other` with a scalar `other`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_opmath;
use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{check_alpha, compute_dtype, compute_set, result_type_scalar};

/// Elementwise `out = a + alpha * other`. An int scalar keeps an integer tensor's dtype, a
/// float scalar makes an integer or bool tensor float32 (PyTorch's answer; ExecuTorch's
/// portable kernel refuses int64 + 1.5). Integer results wrap; bool + bool is logical or;
/// float16 adds the scalar in float32 and rounds once.
#[kernel("aten::add.Scalar_out", accepts = [all])]
pub fn add_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, other)?;
    check_alpha(common, alpha)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let addend = scalar_opmath::<C, Sel>(other, common)?.mul(C::from_scalar(alpha));
        unary::<C, C, Sel>(a, out, common, move |x| x.add(addend))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn adds_a_scalar() {
        with_ctx(|ctx| {
            let i = TensorBuf::from_slice(&[3], &[1i64, -2, i64::MAX]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            add_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(2), Scalar::Int(3), &mut oi).unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[7, 4, i64::MIN + 5]);
            let mut of = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            add_scalar_out::<AllDtypes>(ctx, &i, Scalar::Double(1.5), Scalar::Int(1), &mut of)
                .unwrap();
            assert_eq!(&of.data::<f32>().unwrap()[..2], &[2.5, -0.5]);
            // A float alpha needs a floating result.
            let r =
                add_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(1), Scalar::Double(0.5), &mut oi);
            assert!(r.is_err());
            let b = TensorBuf::from_slice(&[2], &[Bool(0), Bool(1)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            add_scalar_out::<AllDtypes>(ctx, &b, Scalar::Bool(true), Scalar::Int(1), &mut ob)
                .unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(1), Bool(1)]);
        });
    }
}
