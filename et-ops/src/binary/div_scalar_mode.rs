//! `aten::div.Scalar_mode_out`: division by a scalar with an optional rounding mode.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use crate::util::convert::scalar_opmath;
use crate::util::element::{Compute, Float, Num};
use crate::util::elementwise::unary;
use crate::util::promote::{
    compute_dtype, compute_set, float_compute_set, result_type_scalar, to_float,
};

/// `out = a / other` rounded as `rounding_mode` says: `None` is true division (integers
/// promote to float32), `"trunc"` rounds toward zero and `"floor"` toward negative
/// infinity, both keeping integer dtypes. Floats follow IEEE for a zero divisor; integer
/// division by zero is an error, as in PyTorch.
#[kernel("aten::div.Scalar_mode_out", accepts = [all])]
pub fn div_scalar_mode_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    rounding_mode: Option<&str>,
    out: &mut Tensor,
) -> KernelResult {
    let floor = match rounding_mode {
        None => {
            let common = to_float(result_type_scalar(a, other)?);
            return et_switch!(in float_compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
                let d = scalar_opmath::<C, Sel>(other, common)?;
                unary::<C, C, Sel>(a, out, common, move |x| Float::div(x, d))
            });
        }
        Some("trunc") => false,
        Some("floor") => true,
        Some(_) => {
            return Err(KernelError::invalid(
                "rounding_mode must be none, \"trunc\" or \"floor\"",
            ))
        }
    };
    let common = result_type_scalar(a, other)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let d = scalar_opmath::<C, Sel>(other, common)?;
        if !C::IS_FLOAT && d == C::ZERO {
            return Err(KernelError::invalid("integer division by zero"));
        }
        // One closure for both modes (a branch per element instead of a second copy of
        // the unary driver per compute type).
        unary::<C, C, Sel>(a, out, common, move |x| {
            if floor {
                x.floor_div(d)
            } else {
                x.trunc_div(d)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn rounds_by_mode() {
        with_ctx(|ctx| {
            let i = TensorBuf::from_slice(&[3], &[-7i64, 7, i64::MIN]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            div_scalar_mode_out::<AllDtypes>(ctx, &i, Scalar::Int(2), Some("floor"), &mut oi)
                .unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[-4, 3, i64::MIN / 2]);
            div_scalar_mode_out::<AllDtypes>(ctx, &i, Scalar::Int(-1), Some("trunc"), &mut oi)
                .unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[7, -7, i64::MIN]);
            let r =
                div_scalar_mode_out::<AllDtypes>(ctx, &i, Scalar::Int(0), Some("floor"), &mut oi);
            assert!(r.is_err());
            let mut of = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            div_scalar_mode_out::<AllDtypes>(ctx, &i, Scalar::Double(2.0), Some("floor"), &mut of)
                .unwrap();
            assert_eq!(&of.data::<f32>().unwrap()[..2], &[-4.0, 3.0]);
            div_scalar_mode_out::<AllDtypes>(ctx, &i, Scalar::Int(4), None, &mut of).unwrap();
            assert_eq!(&of.data::<f32>().unwrap()[..2], &[-1.75, 1.75]);
            let r = div_scalar_mode_out::<AllDtypes>(ctx, &i, Scalar::Int(2), Some("up"), &mut oi);
            assert!(r.is_err());
        });
    }
}
