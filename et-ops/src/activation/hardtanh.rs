//! `aten::hardtanh.out`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, ScalarType, Tensor,
};

use crate::util::convert::scalar_as;
use crate::util::element::Compute;
use crate::util::element::Num;
use crate::util::elementwise::{unary, unary_on};
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise `min(max(x, min_val), max_val)` in the input's dtype (ReLU6 is
/// `hardtanh(x, 0, 6)`); NaN stays NaN. The bounds are converted to the input's dtype.
#[kernel("aten::hardtanh.out", accepts = [reals])]
pub fn hardtanh_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    min_val: Scalar,
    max_val: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    if common == ScalarType::Bool {
        return Err(KernelError::invalid(
            "hardtanh is not supported for bool tensors",
        ));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let lo = scalar_as::<C, Sel>(min_val, common)?;
        let hi = scalar_as::<C, Sel>(max_val, common)?;
        if C::IS_FLOAT && (lo.is_nan() || hi.is_nan()) {
            // A NaN bound makes every element NaN (as clamp does).
            return unary::<C, C, Sel>(input, out, common, move |x| x.max_nan(lo).min_nan(hi));
        }
        unary_on::<C, C, Sel>(ctx, input, out, common, move |x| x.at_least(lo).at_most(hi))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn clips() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[4], &[-1.0f32, 3.0, 7.5, f32::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            hardtanh_out::<AllDtypes>(ctx, &x, Scalar::Int(0), Scalar::Int(6), &mut o).unwrap();
            let v = o.data::<f32>().unwrap();
            assert_eq!(&v[..3], &[0.0, 3.0, 6.0]);
            assert!(v[3].is_nan());
            let mut o2 = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            hardtanh_out::<AllDtypes>(ctx, &x, Scalar::Double(-0.5), Scalar::Double(0.5), &mut o2)
                .unwrap();
            assert_eq!(&o2.data::<f32>().unwrap()[..3], &[-0.5, 0.5, 0.5]);
            hardtanh_out::<AllDtypes>(ctx, &x, Scalar::Double(f64::NAN), Scalar::Int(1), &mut o2)
                .unwrap();
            assert!(o2.data::<f32>().unwrap().iter().all(|v| v.is_nan()));
        });
    }
}
