//! `aten::leaky_relu.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use super::float_input;
use crate::util::convert::scalar_opmath;
use crate::util::element::Num;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise `x > 0 ? x : x * negative_slope` for floating tensors; NaN stays NaN.
#[kernel("aten::leaky_relu.out", accepts = [floats])]
pub fn leaky_relu_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    negative_slope: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = float_input(input)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        let slope = scalar_opmath::<C, Sel>(negative_slope, common)?;
        unary::<C, C, Sel>(input, out, common, move |x| {
            if x > C::ZERO { x } else { x * slope }
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
    fn leaks() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[4], &[-2.0f64, 0.0, 3.0, f64::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[4]).unwrap();
            leaky_relu_out::<AllDtypes>(ctx, &x, Scalar::Double(0.1), &mut o).unwrap();
            let v = o.data::<f64>().unwrap();
            assert_eq!(&v[..3], &[-0.2, 0.0, 3.0]);
            assert!(v[3].is_nan());
            let i = TensorBuf::from_slice(&[1], &[1i32]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[1]).unwrap();
            assert!(leaky_relu_out::<AllDtypes>(ctx, &i, Scalar::Double(0.1), &mut oi).is_err());
        });
    }
}
