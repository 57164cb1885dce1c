//! `aten::pow.Tensor_Scalar_out`: `out = self ** exponent` with a scalar exponent.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use crate::util::convert::scalar_as;
use crate::util::element::Compute;
use crate::util::element::Float;
use crate::util::element::Num;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, result_type_scalar};

/// Elementwise power with a scalar exponent, promoted like a binary op with a scalar
/// (an integer tensor with a float exponent gives float32). Integer powers wrap; a
/// negative integer exponent of an integer tensor is an error, as in PyTorch. Float
/// exponents 2 and 0.5 use `x * x` and `sqrt`, which are correctly rounded, and a
/// float32 cube (GPT-2's GELU) multiplies in double precision: three float32s' product
/// is within one double rounding of exact, so it rounds to the correctly rounded cube,
/// where a general power takes tens of nanoseconds per element.
#[kernel("aten::pow.Tensor_Scalar_out", accepts = [all])]
pub fn pow_tensor_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    exponent: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, exponent)?;
    if !common.is_floating() && exponent.is_integral() && exponent.to_i64() < 0 {
        return Err(KernelError::invalid(
            "integers to negative integer powers are not allowed",
        ));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let e = scalar_as::<C, Sel>(exponent, common)?;
        if C::IS_FLOAT && e == C::from_f64(2.0) {
            unary::<C, C, Sel>(a, out, common, |x| x.mul(x))
        } else if C::IS_FLOAT && size_of::<C>() == 4 && e == C::from_f64(3.0) {
            unary::<C, C, Sel>(a, out, common, |x| {
                let v = x.to_f64();
                C::from_f64(v * v * v)
            })
        } else if C::IS_FLOAT && e == C::from_f64(0.5) {
            unary::<C, C, Sel>(a, out, common, sqrt_of)
        } else {
            unary::<C, C, Sel>(a, out, common, move |x| x.power(e))
        }
    })
}

/// `sqrt` for floats; never called for integers (the caller checks `IS_FLOAT`).
fn sqrt_of<C: Compute>(x: C) -> C {
    C::from_f64(Float::sqrt(x.to_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn raises() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[-2i32, 3, 0, 1 << 16]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            pow_tensor_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(2), &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[4, 9, 0, 0]);
            assert!(
                pow_tensor_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(-1), &mut out).is_err()
            );
            let mut of = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            pow_tensor_scalar_out::<AllDtypes>(ctx, &a, Scalar::Double(0.5), &mut of).unwrap();
            let o = of.data::<f32>().unwrap();
            assert!(o[0].is_nan());
            assert_eq!(&o[1..], &[3.0f32.sqrt(), 0.0, 256.0]);
            let x = TensorBuf::from_slice(&[3], &[2.0f64, -1.5, 0.0]).unwrap();
            let mut od = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            pow_tensor_scalar_out::<AllDtypes>(ctx, &x, Scalar::Int(3), &mut od).unwrap();
            assert_eq!(od.data::<f64>().unwrap(), &[8.0, -3.375, 0.0]);
            pow_tensor_scalar_out::<AllDtypes>(ctx, &x, Scalar::Int(-1), &mut od).unwrap();
            assert_eq!(od.data::<f64>().unwrap(), &[0.5, -1.0 / 1.5, f64::INFINITY]);
            // Float32 cubes, correctly rounded: against a double-precision power rounded
            // to float32, through overflow, signed zeros, infinities and NaN.
            let x = [
                1.1f32,
                -3.7,
                1e-13,
                7e12,
                -0.0,
                f32::INFINITY,
                f32::NAN,
                0.3,
            ];
            let xs = TensorBuf::from_slice(&[8], &x).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[8]).unwrap();
            pow_tensor_scalar_out::<AllDtypes>(ctx, &xs, Scalar::Double(3.0), &mut of).unwrap();
            let o = of.data::<f32>().unwrap();
            for (&x, &y) in x.iter().zip(o) {
                let want = libm::pow(f64::from(x), 3.0) as f32;
                assert!(
                    y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()),
                    "{x}"
                );
            }
            assert_eq!(o[3], f32::INFINITY);
            assert!(o[4] == 0.0 && o[4].is_sign_negative());
        });
    }
}
