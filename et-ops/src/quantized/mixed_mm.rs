//! `quantized_decomposed::mixed_mm.out`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, f16, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use super::chunk::{store_f, StoreF, CHUNK};
use super::floats::{Floats, Prec};

/// `out[m, p] = sum_k input[m, k] * weight[k, p] * scales[k]`: a float32 or float16
/// input times an int8 weight with one scale per weight row (scales and out have the
/// input's dtype). Every product and partial sum is rounded to the input's dtype, as
/// ExecuTorch's loop does in that type. Zero points are not supported (as in ExecuTorch).
#[kernel("quantized_decomposed::mixed_mm.out", accepts = [i8, f16, f32])]
pub fn mixed_mm_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: &Tensor,
    weight_scales: &Tensor,
    weight_zero_points: Option<&Tensor>,
    out: &mut Tensor,
) -> KernelResult {
    if input.dim() != 2 || weight.dim() != 2 || weight_scales.dim() != 1 {
        return Err(KernelError::invalid(
            "mixed_mm takes a 2-D input and weight and 1-D scales",
        ));
    }
    let (m, n, p) = (input.size(0), input.size(1), weight.size(1));
    if weight.size(0) != n || weight_scales.size(0) != n {
        return Err(KernelError::invalid(
            "mixed_mm: weight rows and scales must match the input's columns",
        ));
    }
    if weight_scales.dtype() != input.dtype() || out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "mixed_mm scales and out must have the input's dtype",
        ));
    }
    if weight.dtype() != ScalarType::Char {
        return Err(KernelError::invalid("mixed_mm weight must be int8"));
    }
    if weight_zero_points.is_some() {
        return Err(KernelError::unsupported(
            "mixed_mm: zero points not supported",
        ));
    }
    out.resize(&[m, p])?;
    if ![input, weight, weight_scales, &*out]
        .iter()
        .all(|t| t.is_contiguous())
    {
        return Err(KernelError::invalid("mixed_mm tensors must be contiguous"));
    }
    // The registration admits int8 (the weight's dtype), so an all-int8 call reaches
    // here: a malformed call, not a dtype this build left out.
    let prec = Prec::of(input.dtype()).ok_or(KernelError::invalid(
        "mixed_mm input must be float32 or float16",
    ))?;
    let store: StoreF =
        et_switch!(Sel, input.dtype(), [f32, f16], T => Ok(store_f::<T> as StoreF))?;
    let (x, s, w) = (
        Floats::of(input)?,
        Floats::of(weight_scales)?,
        weight.data::<i8>()?,
    );
    // out[i, j] for a chunk of j at a time, every step rounded to the input's precision.
    let mut buf = [0.0f64; CHUNK];
    for i in 0..m {
        for j0 in (0..p).step_by(CHUNK) {
            let len = CHUNK.min(p - j0);
            for (dj, o) in buf[..len].iter_mut().enumerate() {
                let j = j0 + dj;
                let mut sum = 0.0f64;
                for k in 0..n {
                    let wk = w.get(k * p + j).copied().unwrap_or(0) as f64;
                    let prod = prec.round(prec.round(x.get(i * n + k) * wk) * s.get(k));
                    sum = prec.round(sum + prod);
                }
                *o = sum;
            }
            store(out, i * p + j0, &buf[..len])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    #[test]
    fn scaled_int8_matmul() {
        with_ctx(|ctx| {
            // [1, 2] x [2, 3] with row scales 0.5 and 2.
            let x = TensorBuf::from_slice(&[1, 2], &[1.0f32, 3.0]).unwrap();
            let w = TensorBuf::from_slice(&[2, 3], &[2i8, -4, 0, 1, 1, -128]).unwrap();
            let s = TensorBuf::from_slice(&[2], &[0.5f32, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 3]).unwrap();
            mixed_mm_out::<AllDtypes>(ctx, &x, &w, &s, None, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[7.0, 4.0, -768.0]);
            // float16 rounds every step: 2049 is not a float16 (2048 + 1 -> 2048).
            let xh = TensorBuf::from_slice(&[1, 2], &[f16::from_f32(2048.0), f16::ONE]).unwrap();
            let wh = TensorBuf::from_slice(&[2, 1], &[1i8, 1]).unwrap();
            let sh = TensorBuf::from_slice(&[2], &[f16::ONE, f16::ONE]).unwrap();
            let mut oh = TensorBuf::zeros(ScalarType::Half, &[1, 1]).unwrap();
            mixed_mm_out::<AllDtypes>(ctx, &xh, &wh, &sh, None, &mut oh).unwrap();
            assert_eq!(oh.data::<f16>().unwrap(), &[f16::from_f32(2048.0)]);
            // Zero points, a uint8 weight, mismatched sizes: errors.
            assert!(mixed_mm_out::<AllDtypes>(ctx, &x, &w, &s, Some(&s), &mut o).is_err());
            let wu = TensorBuf::from_slice(&[2, 3], &[0u8; 6]).unwrap();
            assert!(mixed_mm_out::<AllDtypes>(ctx, &x, &wu, &s, None, &mut o).is_err());
            let mut o1 = TensorBuf::zeros(ScalarType::Float, &[1, 1]).unwrap();
            assert!(mixed_mm_out::<AllDtypes>(ctx, &x, &wh, &s, None, &mut o1).is_ok());
            // An empty inner dim gives zeros.
            let x0 = TensorBuf::from_slice::<f32>(&[2, 0], &[]).unwrap();
            let w0 = TensorBuf::from_slice::<i8>(&[0, 2], &[]).unwrap();
            let s0 = TensorBuf::from_slice::<f32>(&[0], &[]).unwrap();
            let mut o0 = TensorBuf::from_slice(&[2, 2], &[9.0f32; 4]).unwrap();
            mixed_mm_out::<AllDtypes>(ctx, &x0, &w0, &s0, None, &mut o0).unwrap();
            assert_eq!(o0.data::<f32>().unwrap(), &[0.0; 4]);
            let s3 = TensorBuf::from_slice(&[3], &[1.0f32; 3]).unwrap();
            assert!(mixed_mm_out::<AllDtypes>(ctx, &x, &w, &s3, None, &mut o).is_err());
        });
    }
}
