//! `aten::relu.out`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use crate::util::element::Compute;
use crate::util::element::Num;
use crate::util::elementwise::unary_on;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise `max(x, 0)` in the input's dtype; NaN stays NaN. Bool is rejected.
#[kernel("aten::relu.out", accepts = [reals])]
pub fn relu_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    if common == ScalarType::Bool {
        return Err(KernelError::invalid(
            "relu is not supported for bool tensors",
        ));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        unary_on::<C, C, Sel>(ctx, input, out, common, |x| x.at_least(C::ZERO))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn rectifies() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[4], &[-1.0f32, 0.0, 2.5, f32::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            relu_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            let v = o.data::<f32>().unwrap();
            assert_eq!(&v[..3], &[0.0, 0.0, 2.5]);
            assert!(v[3].is_nan());
            let i = TensorBuf::from_slice(&[2], &[-3i32, 3]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            relu_out::<AllDtypes>(ctx, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[0, 3]);
        });
    }
}
