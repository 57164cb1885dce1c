//! `quantized_decomposed::dequantize_per_token.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{check_dequantize, dequantize_with, resize_like, token_rows, Params, Scales, Zeros};

/// Dequantizes each row ("token": all dims but the last) with its own scale (float32 or
/// float64) and zero point (int64 or int32); `output_dtype` must name the out's dtype.
/// The input must be contiguous.
#[kernel("quantized_decomposed::dequantize_per_token.out", accepts = [u8, i8, u16, i16, i32, i64, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn dequantize_per_token_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scales: &Tensor,
    zero_points: &Tensor,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    output_dtype: ScalarType,
    out: &mut Tensor,
) -> KernelResult {
    let (rows, width) = token_rows(input)?;
    let scales = Scales::of(scales, true, rows)?;
    let zeros = Zeros::of(Some(zero_points), true, rows)?;
    resize_like(input, out)?;
    check_dequantize(input, quant_min, quant_max, dtype, Some(output_dtype), out)?;
    let params = Params::per_channel(scales, zeros, width, rows);
    dequantize_with::<Sel>(input, out, false, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    #[test]
    fn one_pair_per_row() {
        with_ctx(|ctx| {
            let q = TensorBuf::from_slice(&[2, 1, 2], &[1i8, 2, 3, 4]).unwrap();
            let s = TensorBuf::from_slice(&[2, 1, 1], &[0.5f32, 0.25]).unwrap();
            let z = TensorBuf::from_slice(&[2, 1, 1], &[1i64, -4]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 1, 2]).unwrap();
            dequantize_per_token_out::<AllDtypes>(
                ctx,
                &q,
                &s,
                &z,
                -128,
                127,
                ScalarType::Char,
                ScalarType::Float,
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[0.0, 0.5, 1.75, 2.0]);
            // output_dtype must name the out's dtype.
            assert!(dequantize_per_token_out::<AllDtypes>(
                ctx,
                &q,
                &s,
                &z,
                -128,
                127,
                ScalarType::Char,
                ScalarType::Double,
                &mut o
            )
            .is_err());
        });
    }
}
