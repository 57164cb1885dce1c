//! `aten::abs.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise absolute value in the input's dtype. Integers wrap (`|MIN| = MIN`);
/// floats clear the sign bit (`|-0.0| = 0.0`, NaN stays NaN).
#[kernel("aten::abs.out", accepts = [all])]
pub fn abs_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        unary::<C, C, Sel>(input, out, common, |x| x.absolute())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn magnitudes() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[-2.5f32, -0.0, f32::NEG_INFINITY]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            abs_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            let v = o.data::<f32>().unwrap();
            assert_eq!(v, &[2.5, 0.0, f32::INFINITY]);
            assert!(v[1].is_sign_positive());
            let i = TensorBuf::from_slice(&[3], &[i64::MIN, -4, 4]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            abs_out::<AllDtypes>(ctx, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[i64::MIN, 4, 4]);
        });
    }
}
