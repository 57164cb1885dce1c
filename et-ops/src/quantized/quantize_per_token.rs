//! `quantized_decomposed::quantize_per_token.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{check_quantize, quantize_with, resize_like, token_rows, Params, Scales, Zeros};

/// Quantizes each row ("token": all dims but the last) with its own float64 scale and
/// int64 zero point (`scales` and `zero_points` hold one value per row, e.g. shaped
/// `[..., 1]`). The input must be contiguous.
#[kernel("quantized_decomposed::quantize_per_token.out", accepts = [u8, i8, u16, i16, i32, i64, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn quantize_per_token_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scales: &Tensor,
    zero_points: &Tensor,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out: &mut Tensor,
) -> KernelResult {
    let (rows, width) = token_rows(input)?;
    let scales = Scales::of(scales, false, rows)?;
    let zeros = Zeros::of(Some(zero_points), false, rows)?;
    resize_like(input, out)?;
    check_quantize(input, quant_min, quant_max, dtype, out)?;
    let params = Params::per_channel(scales, zeros, width, rows);
    quantize_with::<Sel>(input, out, quant_min, quant_max, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    #[test]
    fn one_pair_per_row() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, 1.0, 2.0, 3.0]).unwrap();
            let s = TensorBuf::from_slice(&[2, 1], &[1.0f64, 2.0]).unwrap();
            let z = TensorBuf::from_slice(&[2, 1], &[0i64, -1]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Char, &[2, 3]).unwrap();
            quantize_per_token_out::<AllDtypes>(
                ctx,
                &x,
                &s,
                &z,
                -128,
                127,
                ScalarType::Char,
                &mut o,
            )
            .unwrap();
            // Row 1: 0.5 -> 0 (tie to even), 1.0 -> 1, 1.5 -> 2; minus 1.
            assert_eq!(o.data::<i8>().unwrap(), &[1, 2, 3, -1, 0, 1]);
            // Wrong count, 0-dim input.
            let s1 = TensorBuf::from_slice(&[1], &[1.0f64]).unwrap();
            let z1 = TensorBuf::from_slice(&[1], &[0i64]).unwrap();
            assert!(quantize_per_token_out::<AllDtypes>(
                ctx,
                &x,
                &s1,
                &z1,
                -128,
                127,
                ScalarType::Char,
                &mut o
            )
            .is_err());
            let x0 = TensorBuf::from_slice(&[], &[1.0f32]).unwrap();
            assert!(quantize_per_token_out::<AllDtypes>(
                ctx,
                &x0,
                &s1,
                &z1,
                -128,
                127,
                ScalarType::Char,
                &mut o
            )
            .is_err());
        });
    }
}
