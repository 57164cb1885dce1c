//! `aten::atan2.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Float;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, float_compute_set, result_type, to_float};

/// Elementwise `atan2(a, b)`: the angle of the point `(b, a)`, in `[-pi, pi]`, with
/// broadcasting. Integer and bool inputs promote to float32; float16 computes in float32.
#[kernel("aten::atan2.out", accepts = [all])]
pub fn atan2_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = to_float(result_type(a, b)?);
    et_switch!(in float_compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        binary::<C, C, Sel>(a, b, out, common, Float::atan2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use core::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn angles() {
        with_ctx(|ctx| {
            let y = TensorBuf::from_slice(&[4], &[1.0f64, 1.0, 0.0, -0.0]).unwrap();
            let x = TensorBuf::from_slice(&[4], &[1.0f64, 0.0, -1.0, -1.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[4]).unwrap();
            atan2_out::<AllDtypes>(ctx, &y, &x, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[FRAC_PI_4, FRAC_PI_2, PI, -PI]);
            let i = TensorBuf::from_slice(&[1], &[1i32]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[1]).unwrap();
            atan2_out::<AllDtypes>(ctx, &i, &i, &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[core::f32::consts::FRAC_PI_4]);
        });
    }
}
