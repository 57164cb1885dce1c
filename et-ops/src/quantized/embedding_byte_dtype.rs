//! `quantized_decomposed::embedding_byte.dtype_out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::embed::{quantized_embedding, Bits, Variant};

/// `embedding_byte.out`, with the scales' float dtype free (float32, float16 or bfloat16,
/// read as float32) and `dtype`, when given, naming the out's dtype. The lookup: `out[i..,
/// j] = (w[idx, j] - zp[idx, g]) * scale[idx, g]` in float32, group `g = j / (row length /
/// groups)`; out sized `indices.sizes() + [row length]`.
#[kernel("quantized_decomposed::embedding_byte.dtype_out", accepts = [u8, i8, i64, f16, bf16, f32])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn embedding_byte_dtype_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    weight: &Tensor,
    weight_scales: &Tensor,
    weight_zero_points: Option<&Tensor>,
    weight_quant_min: i64,
    weight_quant_max: i64,
    indices: &Tensor,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    quantized_embedding::<Sel>(
        weight,
        weight_scales,
        weight_zero_points,
        weight_quant_min,
        weight_quant_max,
        indices,
        Variant {
            bits: Bits::Eight,
            params_match_out: false,
            dtype,
        },
        out,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{f16, AllDtypes, TensorBuf};

    #[test]
    fn groupwise_float16_scales_into_float32() {
        with_ctx(|ctx| {
            let w =
                TensorBuf::from_slice(&[3, 4], &[0u8, 1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
            let s = [1.0f32, 2.0, 3.0, 4.0, 0.5, 0.25].map(f16::from_f32);
            let s = TensorBuf::from_slice(&[3, 2], &s).unwrap();
            let i = TensorBuf::from_slice(&[1, 1], &[1i64]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 1, 4]).unwrap();
            embedding_byte_dtype_out::<AllDtypes>(
                ctx,
                &w,
                &s,
                None,
                0,
                255,
                &i,
                Some(ScalarType::Float),
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[3.0, 6.0, 12.0, 16.0]);
            // A dtype argument naming another dtype than the out's.
            assert!(embedding_byte_dtype_out::<AllDtypes>(
                ctx,
                &w,
                &s,
                None,
                0,
                255,
                &i,
                Some(ScalarType::Half),
                &mut o
            )
            .is_err());
        });
    }
}
