//! `aten::fmod.Scalar_out`: the remainder with the dividend's sign, by a scalar.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use crate::util::convert::scalar_as;
use crate::util::element::{Compute, Num};
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, result_type_scalar};

/// Elementwise C `fmod(self, other)` with a scalar divisor: an int scalar keeps an integer
/// tensor's dtype, a float scalar makes it float32. The scalar is cast to the result dtype
/// first (PyTorch's fmod has no full-precision scalar path). An integer zero divisor is an
/// error; a zero float divisor gives NaN.
#[kernel("aten::fmod.Scalar_out", accepts = [all])]
pub fn fmod_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, other)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let d = scalar_as::<C, Sel>(other, common)?;
        if !C::IS_FLOAT && d == C::ZERO {
            return Err(KernelError::invalid("integer fmod by zero"));
        }
        unary::<C, C, Sel>(a, out, common, move |x| x.trunc_rem(d))
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
            let a = TensorBuf::from_slice(&[4], &[-7i32, 7, -6, 0]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            fmod_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(-3), &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[-1, 1, 0, 0]);
            assert!(fmod_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(0), &mut out).is_err());
            let mut f = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            fmod_scalar_out::<AllDtypes>(ctx, &a, Scalar::Double(2.5), &mut f).unwrap();
            assert_eq!(f.data::<f32>().unwrap(), &[-2.0, 2.0, -1.0, 0.0]);
            fmod_scalar_out::<AllDtypes>(ctx, &a, Scalar::Double(0.0), &mut f).unwrap();
            assert!(f.data::<f32>().unwrap().iter().all(|v| v.is_nan()));
        });
    }
}
