//! `quantized_decomposed::embedding_byte.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::embed::{quantized_embedding, Bits, Variant};

/// Dequantizing embedding lookup in a uint8 or int8 table (int64 indices), per-row (1-D
/// scales) or per-group (2-D scales); scales and zero points must have the out's dtype
/// (float32, float16 or bfloat16), as ExecuTorch reads them as that type. The lookup:
/// `out[i.., j] = (w[idx, j] - zp[idx, g]) * scale[idx, g]` in float32, group `g = j / (row
/// length / groups)`; out sized `indices.sizes() + [row length]`.
#[kernel("quantized_decomposed::embedding_byte.out", accepts = [u8, i8, i64, f16, bf16, f32])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn embedding_byte_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    weight: &Tensor,
    weight_scales: &Tensor,
    weight_zero_points: Option<&Tensor>,
    weight_quant_min: i64,
    weight_quant_max: i64,
    indices: &Tensor,
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
            params_match_out: true,
            dtype: None,
        },
        out,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{f16, AllDtypes, ScalarType, TensorBuf};

    #[test]
    fn per_row_lookup_with_zero_points() {
        with_ctx(|ctx| {
            let w = [1i8, 2, 3, 4, -1, -2, -3, -4, 10, -10, 0, 127];
            let w = TensorBuf::from_slice(&[3, 4], &w).unwrap();
            let s = TensorBuf::from_slice(&[3], &[0.5f32, 1.0, 2.0]).unwrap();
            let z = TensorBuf::from_slice(&[3], &[1.0f32, 0.0, -1.0]).unwrap();
            let i = TensorBuf::from_slice(&[2], &[2i64, 0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 4]).unwrap();
            embedding_byte_out::<AllDtypes>(ctx, &w, &s, Some(&z), -128, 127, &i, &mut o).unwrap();
            assert_eq!(
                o.data::<f32>().unwrap(),
                &[22.0, -18.0, 2.0, 256.0, 0.0, 0.5, 1.0, 1.5]
            );
            // Index out of range, int32 indices, float16 scales for a float32 out, and
            // quant_min > quant_max: errors.
            let bad = TensorBuf::from_slice(&[1], &[3i64]).unwrap();
            let i32s = TensorBuf::from_slice(&[2], &[2i32, 0]).unwrap();
            for idx in [&bad, &i32s] {
                let r = embedding_byte_out::<AllDtypes>(ctx, &w, &s, None, -128, 127, idx, &mut o);
                assert!(r.is_err());
            }
            let sh = TensorBuf::from_slice(&[3], &[f16::ONE; 3]).unwrap();
            assert!(
                embedding_byte_out::<AllDtypes>(ctx, &w, &sh, None, -128, 127, &i, &mut o).is_err()
            );
            assert!(embedding_byte_out::<AllDtypes>(ctx, &w, &s, None, 1, 0, &i, &mut o).is_err());
            // Groups that do not divide the row; a 3-D weight.
            let s3 = TensorBuf::from_slice(&[3, 3], &[1.0f32; 9]).unwrap();
            assert!(
                embedding_byte_out::<AllDtypes>(ctx, &w, &s3, None, -128, 127, &i, &mut o).is_err()
            );
            let w3 = TensorBuf::from_slice(&[3, 4, 1], &[0i8; 12]).unwrap();
            assert!(
                embedding_byte_out::<AllDtypes>(ctx, &w3, &s, None, -128, 127, &i, &mut o).is_err()
            );
        });
    }
}
