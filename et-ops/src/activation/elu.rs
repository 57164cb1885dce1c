//! `aten::elu.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use super::float_input;
use crate::util::element::Compute;
use crate::util::element::Float;
use crate::util::element::Num;
use crate::util::elementwise::{unary, unary_vectorized};
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise ELU for floating tensors: `scale * x` for `x > 0`, else
/// `scale * alpha * (e^(input_scale * x) - 1)` (computed with `expm1`, accurate near 0).
/// NaN stays NaN.
#[kernel("aten::elu.out", accepts = [floats])]
pub fn elu_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    alpha: Scalar,
    scale: Scalar,
    input_scale: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = float_input(input)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        // PyTorch folds the coefficients in the compute type, as here.
        let neg = C::from_scalar(alpha) * C::from_scalar(scale);
        let pos = C::from_scalar(scale);
        let ins = C::from_scalar(input_scale);
        let each = move |x| if x > C::ZERO { x * pos } else { Float::exp_m1(x * ins) * neg };
        // nn.ELU's case (scale and input_scale 1) has a vectorized f32 form.
        let plain = pos == C::ONE && ins == C::ONE;
        let alpha = neg.to_f64() as f32;
        if plain {
            let f32_slices = move |x: &[f32], y: &mut [f32]| crate::vmath::elu(x, alpha, y);
            unary_vectorized::<C, Sel>(input, out, common, each, f32_slices)
        } else {
            unary::<C, C, Sel>(input, out, common, each)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn exponential_below_zero() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[4], &[-1.0f64, 0.0, 2.0, f64::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[4]).unwrap();
            let one = Scalar::Int(1);
            elu_out::<AllDtypes>(ctx, &x, one, one, one, &mut o).unwrap();
            let v = o.data::<f64>().unwrap();
            assert!((v[0] - (-0.6321205588285577)).abs() < 1e-15);
            assert_eq!(&v[1..3], &[0.0, 2.0]);
            assert!(v[3].is_nan());
            elu_out::<AllDtypes>(
                ctx,
                &x,
                Scalar::Double(2.0),
                Scalar::Double(1.5),
                Scalar::Double(0.5),
                &mut o,
            )
            .unwrap();
            let v = o.data::<f64>().unwrap();
            assert!((v[0] - 3.0 * (libm::exp(-0.5) - 1.0)).abs() < 1e-15);
            assert_eq!(v[2], 3.0);
        });
    }
}
