//! `quantized_decomposed::choose_qparams.Tensor_out`, and the scale/zero-point rule the
//! per-token variant shares.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor};

/// ExecuTorch's floor for scales: smaller ones are raised to it and the range widened.
const SMALL_SCALE_THRESHOLD: f32 = 6.1e-5;

/// The first smallest and first largest value, compared with `<` as `std::min_element`
/// and `std::max_element` do (a NaN is kept only when it comes first). None when empty.
pub(crate) fn min_max(x: &[f32]) -> Option<(f32, f32)> {
    let (&first, rest) = x.split_first()?;
    let (mut lo, mut hi) = (first, first);
    for &v in rest {
        if v < lo {
            lo = v;
        }
        if hi < v {
            hi = v;
        }
    }
    Some((lo, hi))
}

/// The asymmetric scale (float64) and zero point for values in `[min, max]`, step for
/// step as ExecuTorch computes them (the range is widened to include 0; a zero or
/// reciprocal-overflowing scale becomes 0.1; scales under 6.1e-5 are raised to it; the
/// zero point comes from whichever end has the smaller error, rounded half to even in
/// float32 and clamped). A NaN range has no valid scale: an error.
pub(crate) fn scale_and_zero_point(
    min: f32,
    max: f32,
    qmin: i32,
    qmax: i32,
) -> KernelResult<(f64, i64)> {
    // std::min(min, 0.f) / std::max(max, 0.f): a NaN bound stays NaN.
    let mut min = if 0.0 < min { 0.0 } else { min };
    let mut max = if max < 0.0 { 0.0 } else { max };
    // In i64: the full int32 range would overflow int32.
    let levels = qmax as i64 - qmin as i64;
    let mut scale = (max as f64 - min as f64) / levels as f64;
    if scale as f32 == 0.0 || (1.0f32 / scale as f32).is_infinite() {
        scale = 0.1;
    }
    // A NaN bound makes the scale NaN.
    if scale.is_nan() || scale <= 0.0 {
        return Err(KernelError::invalid(
            "choose_qparams: input range gives no positive scale (NaN input?)",
        ));
    }
    if scale < SMALL_SCALE_THRESHOLD as f64 {
        let original = scale as f32;
        scale = SMALL_SCALE_THRESHOLD as f64;
        if min == 0.0 {
            max = SMALL_SCALE_THRESHOLD * levels as f32;
        } else if max == 0.0 {
            min = -SMALL_SCALE_THRESHOLD * levels as f32;
        } else {
            let amplifier = SMALL_SCALE_THRESHOLD / original;
            min *= amplifier;
            max *= amplifier;
        }
    }
    let from_min = qmin as f64 - min as f64 / scale;
    let from_max = qmax as f64 - max as f64 / scale;
    let min_error = qmin.unsigned_abs() as f64 - (min as f64 / scale).abs();
    let max_error = qmax.unsigned_abs() as f64 - (max as f64 / scale).abs();
    let initial = if min_error < max_error {
        from_min
    } else {
        from_max
    };
    let zero_point = if initial < qmin as f64 {
        qmin
    } else if initial > qmax as f64 {
        qmax
    } else {
        crate::util::element::Float::round_even(initial as f32) as i32
    };
    Ok((scale, zero_point as i64))
}

/// Checks the range and the outs' dtypes every choose_qparams kernel shares: `quant_min
/// < quant_max` (both within int32), a float32 input, a float64 scale out and an int64
/// zero point out.
pub(crate) fn check_choose(
    input: &Tensor,
    quant_min: i64,
    quant_max: i64,
    scale_out: &Tensor,
    zero_point_out: &Tensor,
) -> KernelResult<(i32, i32)> {
    let (Ok(qmin), Ok(qmax)) = (i32::try_from(quant_min), i32::try_from(quant_max)) else {
        return Err(KernelError::invalid("quant_min/quant_max outside int32"));
    };
    if qmin >= qmax {
        return Err(KernelError::invalid(
            "quant_min must be less than quant_max",
        ));
    }
    if input.dtype() != ScalarType::Float {
        return Err(KernelError::invalid("choose_qparams input must be float32"));
    }
    if scale_out.dtype() != ScalarType::Double {
        return Err(KernelError::invalid(
            "choose_qparams scale out must be float64",
        ));
    }
    if zero_point_out.dtype() != ScalarType::Long {
        return Err(KernelError::invalid(
            "choose_qparams zero point out must be int64",
        ));
    }
    Ok((qmin, qmax))
}

/// One (scale, zero point) pair for the whole input's `[min, max]`. `eps` and `dtype` are
/// not used (as in ExecuTorch); the outs hold one element each. An empty input has no
/// range: an error.
#[kernel("quantized_decomposed::choose_qparams.Tensor_out", accepts = [i64, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn choose_qparams_tensor_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    quant_min: i64,
    quant_max: i64,
    _eps: f64,
    _dtype: ScalarType,
    scale_out: &mut Tensor,
    zero_point_out: &mut Tensor,
) -> KernelResult {
    let (qmin, qmax) = check_choose(input, quant_min, quant_max, scale_out, zero_point_out)?;
    if scale_out.numel() != 1 || zero_point_out.numel() != 1 {
        return Err(KernelError::invalid(
            "choose_qparams outs must have one element each",
        ));
    }
    let (min, max) = min_max(input.data::<f32>()?)
        .ok_or(KernelError::invalid("choose_qparams of an empty input"))?;
    let (scale, zero_point) = scale_and_zero_point(min, max, qmin, qmax)?;
    scale_out.data_mut::<f64>()?[0] = scale;
    zero_point_out.data_mut::<i64>()?[0] = zero_point;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::TensorBuf;

    fn choose(x: &[f32], qmin: i64, qmax: i64) -> KernelResult<(f64, i64)> {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[x.len()], x).unwrap();
            let mut s = TensorBuf::zeros(ScalarType::Double, &[1]).unwrap();
            let mut z = TensorBuf::zeros(ScalarType::Long, &[1]).unwrap();
            choose_qparams_tensor_out(ctx, &x, qmin, qmax, 1e-5, ScalarType::Char, &mut s, &mut z)?;
            Ok((s.data::<f64>().unwrap()[0], z.data::<i64>().unwrap()[0]))
        })
    }

    #[test]
    fn asymmetric_range() {
        // [-1, 3] over 255 levels: scale 4/255; both ends give -64.25, rounded to -64.
        let (s, z) = choose(&[-1.0, 0.5, 3.0], -128, 127).unwrap();
        assert_eq!(s, 4.0 / 255.0);
        assert_eq!(z, -64);
        // All positive: the range is widened to 0, so the zero point is quant_min.
        let (s, z) = choose(&[2.0, 5.1], 0, 255).unwrap();
        assert_eq!(s, 5.1f32 as f64 / 255.0);
        assert_eq!(z, 0);
    }

    #[test]
    fn degenerate_ranges() {
        // All zeros: scale 0 becomes 0.1; quant_max's end has the smaller error (127 vs
        // 128), so the zero point is 127.
        assert_eq!(choose(&[0.0, 0.0], -128, 127).unwrap(), (0.1, 127));
        // A tiny range is raised to the threshold scale.
        let (s, _) = choose(&[1e-6, -1e-6], -128, 127).unwrap();
        assert_eq!(s, SMALL_SCALE_THRESHOLD as f64);
        // NaN first, empty, bad range.
        assert!(choose(&[f32::NAN, 1.0], -128, 127).is_err());
        assert!(choose(&[], -128, 127).is_err());
        assert!(choose(&[1.0], 5, 5).is_err());
        assert!(choose(&[1.0], 0, i64::MAX).is_err());
        // The whole int32 range: scale 2 / (2^32 - 1) is under the threshold.
        let (s, _) = choose(&[-1.0, 1.0], i32::MIN as i64, i32::MAX as i64).unwrap();
        assert_eq!(s, SMALL_SCALE_THRESHOLD as f64);
    }
}
