//! `aten::mul.out`: `out = self * other`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::binary_on;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise product with broadcasting and type promotion. Integer results wrap;
/// bool * bool is logical and.
#[kernel("aten::mul.out", accepts = [all])]
pub fn mul_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        binary_on::<C, C, Sel>(ctx, a, b, out, common, |x, y| x.mul(y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, ShapeDynamism, TensorBuf};

    #[test]
    fn multiplies() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[3], &[65536i32, -3, 7]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
            mul_out::<AllDtypes>(ctx, &a, &a, &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[0, 9, 49]);
            // Channels-last input times a 0-dim scalar into a channels-last out.
            let mut x = TensorBuf::with_layout(
                ScalarType::Float,
                &[1, 2, 1, 2],
                &[0, 2, 3, 1],
                ShapeDynamism::Static,
            )
            .unwrap();
            x.data_mut::<f32>()
                .unwrap()
                .copy_from_slice(&[1., 2., 3., 4.]);
            let s = TensorBuf::from_slice(&[], &[2.0f32]).unwrap();
            let mut o = TensorBuf::with_layout(
                ScalarType::Float,
                &[1, 2, 1, 2],
                &[0, 2, 3, 1],
                ShapeDynamism::Static,
            )
            .unwrap();
            mul_out::<AllDtypes>(ctx, &x, &s, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[2., 4., 6., 8.]);
            // ... and into a contiguous out: the values move to logical positions.
            let mut c = TensorBuf::zeros(ScalarType::Float, &[1, 2, 1, 2]).unwrap();
            mul_out::<AllDtypes>(ctx, &x, &s, &mut c).unwrap();
            assert_eq!(c.data::<f32>().unwrap(), &[2., 6., 4., 8.]);
        });
    }
}
