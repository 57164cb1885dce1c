//! `aten::gt.Scalar_out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use super::compare_scalar;
use super::gt_tensor::Gt;

/// Elementwise `a > b` (greater than) with a scalar `b`, as bools; the scalar is cast to
/// the common dtype first.
#[kernel("aten::gt.Scalar_out", accepts = [all])]
pub fn gt_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    compare_scalar::<Gt, Sel>(a, b, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn compares() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[1.0f32, 2.0, 3.0, f32::NAN]).unwrap();
            let b = Scalar::Double(2.0);
            let mut out = TensorBuf::zeros(ScalarType::Bool, &[4]).unwrap();
            gt_scalar_out::<AllDtypes>(ctx, &a, b, &mut out).unwrap();
            assert_eq!(
                out.data::<Bool>().unwrap(),
                &[Bool(0), Bool(0), Bool(1), Bool(0)]
            );
            let ai = TensorBuf::from_slice(&[3], &[1i32, 2, 3]).unwrap();
            let bi = Scalar::Int(2);
            let mut oi = TensorBuf::zeros(ScalarType::Bool, &[3]).unwrap();
            gt_scalar_out::<AllDtypes>(ctx, &ai, bi, &mut oi).unwrap();
            assert_eq!(oi.data::<Bool>().unwrap(), &[Bool(0), Bool(0), Bool(1)]);
        });
    }
}
