//! `quantized_decomposed::embedding_4bit.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::embed::{quantized_embedding, Bits, Variant};

/// Dequantizing embedding lookup in a table of 4-bit values packed two per uint8 byte (high
/// nibble first, stored offset by 8), int64 or int32 indices; scales and zero points must
/// have the out's dtype (float32, float16 or bfloat16), as ExecuTorch reads them as that
/// type. The lookup: `out[i.., j] = (w[idx, j] - zp[idx, g]) * scale[idx, g]` in float32,
/// group `g = j / (row length / groups)`; out sized `indices.sizes() + [row length]`.
#[kernel("quantized_decomposed::embedding_4bit.out", accepts = [u8, i64, f16, bf16, f32])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn embedding_4bit_out<Sel: DtypeSelection>(
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
            bits: Bits::Four,
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
    use et_runtime::{AllDtypes, ScalarType, TensorBuf};

    #[test]
    fn unpacks_high_nibble_first() {
        with_ctx(|ctx| {
            // Row 0: 0x9A 0x07 -> 9, 10, 0, 7 minus 8; row 1: 0xF0 0x88 -> 7, -8, 0, 0.
            let w = TensorBuf::from_slice(&[2, 2], &[0x9Au8, 0x07, 0xF0, 0x88]).unwrap();
            let s = TensorBuf::from_slice(&[2], &[1.0f32, 0.5]).unwrap();
            let i = TensorBuf::from_slice(&[2], &[1i32, 0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 4]).unwrap();
            embedding_4bit_out::<AllDtypes>(ctx, &w, &s, None, -8, 7, &i, &mut o).unwrap();
            assert_eq!(
                o.data::<f32>().unwrap(),
                &[3.5, -4.0, 0.0, 0.0, 1.0, 2.0, -8.0, -1.0]
            );
            // An int8 table and a negative index are errors.
            let wi = TensorBuf::from_slice(&[2, 2], &[0i8; 4]).unwrap();
            assert!(
                embedding_4bit_out::<AllDtypes>(ctx, &wi, &s, None, -8, 7, &i, &mut o).is_err()
            );
            let neg = TensorBuf::from_slice(&[2], &[-1i64, 0]).unwrap();
            assert!(
                embedding_4bit_out::<AllDtypes>(ctx, &w, &s, None, -8, 7, &neg, &mut o).is_err()
            );
        });
    }
}
