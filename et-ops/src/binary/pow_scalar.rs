//! `aten::pow.Scalar_out`: `out = self ** exponent` with a scalar base.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_as;
use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, result_type_scalar};

/// Elementwise `base ** exponent[i]` for a scalar `base`, promoted like a binary op with a
/// scalar (an int base with a float tensor gives the tensor's dtype, a float base with an
/// integer tensor gives float32). The base is cast to the result dtype first. Integer
/// powers wrap; a negative integer exponent gives `1 / base` truncated (0 unless the base
/// is ±1), as PyTorch's integer `pow`; a base of 1 gives 1 everywhere, NaN exponents
/// included (C's `pow`).
#[kernel("aten::pow.Scalar_out", accepts = [all])]
pub fn pow_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    base: Scalar,
    exponent: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(exponent, base)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let b = scalar_as::<C, Sel>(base, common)?;
        unary::<C, C, Sel>(exponent, out, common, move |e| b.power(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn raises_a_scalar() {
        with_ctx(|ctx| {
            let e = TensorBuf::from_slice(&[4], &[0i32, 3, -1, 31]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            pow_scalar_out::<AllDtypes>(ctx, Scalar::Int(2), &e, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[1, 8, 0, i32::MIN]);
            let mut of = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            pow_scalar_out::<AllDtypes>(ctx, Scalar::Double(0.5), &e, &mut of).unwrap();
            assert_eq!(&of.data::<f32>().unwrap()[..3], &[1.0, 0.125, 2.0]);
            let x = TensorBuf::from_slice(&[2], &[f64::NAN, 2.0]).unwrap();
            let mut od = TensorBuf::zeros(ScalarType::Double, &[2]).unwrap();
            pow_scalar_out::<AllDtypes>(ctx, Scalar::Int(1), &x, &mut od).unwrap();
            assert_eq!(od.data::<f64>().unwrap(), &[1.0, 1.0]);
        });
    }
}
