//! `quantized_decomposed::embedding_4bit.dtype_out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::embed::{quantized_embedding, Bits, Variant};

/// `embedding_4bit.out`, with the scales' float dtype free (float32, float16 or bfloat16,
/// read as float32) and `dtype`, when given, naming the out's dtype. The lookup: `out[i..,
/// j] = (w[idx, j] - zp[idx, g]) * scale[idx, g]` in float32, group `g = j / (row length /
/// groups)`; out sized `indices.sizes() + [row length]`.
#[kernel("quantized_decomposed::embedding_4bit.dtype_out", accepts = [u8, i64, f16, bf16, f32])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn embedding_4bit_dtype_out<Sel: DtypeSelection>(
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
            bits: Bits::Four,
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
    use et_runtime::{bf16, AllDtypes, TensorBuf};

    #[test]
    fn bfloat16_scales_into_float32() {
        with_ctx(|ctx| {
            let w = TensorBuf::from_slice(&[1, 1], &[0x9Au8]).unwrap();
            let s = TensorBuf::from_slice(&[1], &[bf16::from_f32(0.5)]).unwrap();
            let i = TensorBuf::from_slice(&[1], &[0i64]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 2]).unwrap();
            embedding_4bit_dtype_out::<AllDtypes>(ctx, &w, &s, None, -8, 7, &i, None, &mut o)
                .unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[0.5, 1.0]);
        });
    }
}
