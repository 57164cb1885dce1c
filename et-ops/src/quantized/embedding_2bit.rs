//! `quantized_decomposed::embedding_2bit.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::embed::{quantized_embedding, Bits, Variant};

/// Dequantizing embedding lookup in a table of 2-bit values packed four per uint8 byte
/// (lowest bits first, stored offset by 2), int64 or int32 indices; scales and zero points
/// must have the out's dtype (float32, float16 or bfloat16), as ExecuTorch reads them as
/// that type. The lookup: `out[i.., j] = (w[idx, j] - zp[idx, g]) * scale[idx, g]` in
/// float32, group `g = j / (row length / groups)`; out sized `indices.sizes() + [row
/// length]`.
#[kernel("quantized_decomposed::embedding_2bit.out", accepts = [u8, i64, f16, bf16, f32])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn embedding_2bit_out<Sel: DtypeSelection>(
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
            bits: Bits::Two,
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
    fn unpacks_low_bits_first_with_groups() {
        with_ctx(|ctx| {
            // 0b11_10_01_00: values 0, 1, 2, 3 minus 2; groups of 2 with scales 1 and 3,
            // zero points 0 and 1.
            let w = TensorBuf::from_slice(&[1, 1], &[0b1110_0100u8]).unwrap();
            let s = TensorBuf::from_slice(&[1, 2], &[1.0f32, 3.0]).unwrap();
            let z = TensorBuf::from_slice(&[1, 2], &[0.0f32, 1.0]).unwrap();
            let i = TensorBuf::from_slice(&[1], &[0i64]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 4]).unwrap();
            embedding_2bit_out::<AllDtypes>(ctx, &w, &s, Some(&z), -2, 1, &i, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[-2.0, -1.0, -3.0, 0.0]);
            // Zero points shaped unlike the scales.
            let z1 = TensorBuf::from_slice(&[1], &[0.0f32]).unwrap();
            assert!(
                embedding_2bit_out::<AllDtypes>(ctx, &w, &s, Some(&z1), -2, 1, &i, &mut o).is_err()
            );
        });
    }
}
