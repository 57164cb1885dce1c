//! `aten::gelu.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::float_input;
use crate::util::element::Float;
use crate::util::element::Num;
use crate::util::elementwise::unary_vectorized;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise GELU for floating tensors. `approximate = "none"`:
/// `x/2 * (1 + erf(x / sqrt(2)))`; `"tanh"`:
/// `x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`. float32 and float16 run the
/// vectorized [`vmath::gelu`](crate::vmath::gelu) and
/// [`vmath::gelu_tanh`](crate::vmath::gelu_tanh).
#[kernel("aten::gelu.out", accepts = [floats])]
pub fn gelu_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    approximate: &str,
    out: &mut Tensor,
) -> KernelResult {
    let common = float_input(input)?;
    let tanh = match approximate {
        "none" => false,
        "tanh" => true,
        _ => {
            return Err(KernelError::invalid(
                "gelu approximate must be \"none\" or \"tanh\"",
            ))
        }
    };
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        let half = C::c(0.5);
        if tanh {
            let k = C::c(core::f64::consts::FRAC_2_SQRT_PI * core::f64::consts::FRAC_1_SQRT_2);
            let cubic = C::c(0.044715);
            unary_vectorized::<C, Sel>(input, out, common, move |x| {
                half * x * (C::ONE + Float::tanh(k * (x + cubic * x * x * x)))
            }, crate::vmath::gelu_tanh)
        } else {
            let r = C::c(core::f64::consts::FRAC_1_SQRT_2);
            unary_vectorized::<C, Sel>(input, out, common, move |x| {
                half * x * (C::ONE + Float::erf(x * r))
            }, crate::vmath::gelu)
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
    fn exact_and_tanh() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[-1.0f64, 0.0, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            gelu_out::<AllDtypes>(ctx, &x, "none", &mut o).unwrap();
            let v = o.data::<f64>().unwrap();
            // torch.nn.functional.gelu(torch.tensor([-1., 0., 2.], dtype=torch.float64))
            let want = [-0.15865525393145707, 0.0, 1.9544997361036416];
            for (g, w) in v.iter().zip(want) {
                assert!((g - w).abs() < 1e-15, "{g} {w}");
            }
            gelu_out::<AllDtypes>(ctx, &x, "tanh", &mut o).unwrap();
            let v = o.data::<f64>().unwrap();
            let want = [-0.15880800939172324, 0.0, 1.9545976940877752];
            for (g, w) in v.iter().zip(want) {
                assert!((g - w).abs() < 1e-15, "{g} {w}");
            }
            assert!(gelu_out::<AllDtypes>(ctx, &x, "fast", &mut o).is_err());
        });
    }
}
