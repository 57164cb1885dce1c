//! `quantized_decomposed::mixed_linear.out`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, f16, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use super::chunk::{store_f, StoreF, CHUNK};
use super::floats::{Floats, Prec};

/// `out[m, p] = sum_groups (sum_{k in group} input[m, k] * weight[p, k]) * scales[p, g]`:
/// a float32 or float16 input times an int8 weight stored `[out features, in features]`,
/// with one scale per output row (1-D scales) or per group of `ceil(n / groups)` inputs
/// (2-D scales `[p, groups]`), scales in the input's dtype. The out is float32, float64
/// or float16 (`dtype`, when given, must name it and be float32 or float16). As in
/// ExecuTorch's loop, products are rounded to the input's dtype and sums to the out's.
/// Zero points are not supported (as in ExecuTorch).
#[kernel("quantized_decomposed::mixed_linear.out", accepts = [i8, f16, f32, f64])]
pub fn mixed_linear_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: &Tensor,
    weight_scales: &Tensor,
    weight_zero_points: Option<&Tensor>,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    if input.dim() != 2 || weight.dim() != 2 || !(1..=2).contains(&weight_scales.dim()) {
        return Err(KernelError::invalid(
            "mixed_linear takes a 2-D input and weight and 1-D or 2-D scales",
        ));
    }
    let (m, n, p) = (input.size(0), input.size(1), weight.size(0));
    if weight.size(1) != n || weight_scales.size(0) != p {
        return Err(KernelError::invalid(
            "mixed_linear: weight must be [out, in] and scales one row per output",
        ));
    }
    if weight_scales.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "mixed_linear scales must have the input's dtype",
        ));
    }
    if let Some(d) = dtype {
        if d != out.dtype() || !matches!(d, ScalarType::Float | ScalarType::Half) {
            return Err(KernelError::invalid(
                "mixed_linear dtype must be float32 or float16 and name the out's dtype",
            ));
        }
    }
    if weight.dtype() != ScalarType::Char {
        return Err(KernelError::invalid("mixed_linear weight must be int8"));
    }
    if weight_zero_points.is_some() {
        return Err(KernelError::unsupported(
            "mixed_linear: zero points not supported",
        ));
    }
    // Group length and groups per row, as ExecuTorch derives them.
    let (g, groups) = if weight_scales.dim() == 2 {
        let cols = weight_scales.size(1);
        if cols == 0 {
            return Err(KernelError::invalid("mixed_linear scales have no groups"));
        }
        let g = n.div_ceil(cols);
        // Groups of that length must tile the row exactly as the scales' columns.
        if g != 0 && n.div_ceil(g) != cols {
            return Err(KernelError::invalid(
                "mixed_linear scale groups do not tile the input features",
            ));
        }
        (g, cols)
    } else {
        (n, 1)
    };
    out.resize(&[m, p])?;
    if ![input, weight, weight_scales, &*out]
        .iter()
        .all(|t| t.is_contiguous())
    {
        return Err(KernelError::invalid(
            "mixed_linear tensors must be contiguous",
        ));
    }
    if !matches!(input.dtype(), ScalarType::Float | ScalarType::Half) {
        // The registration admits int8 (the weight's dtype), so an all-int8 call reaches
        // here: a malformed call, not a dtype this build left out.
        return Err(KernelError::invalid(
            "mixed_linear input must be float32 or float16",
        ));
    }
    et_switch!(Sel, input.dtype(), [f32, f16], U => Ok(()))?;
    let store: StoreF =
        et_switch!(Sel, out.dtype(), [f32, f64, f16], T => Ok(store_f::<T> as StoreF))?;
    let bad = KernelError::invalid("mixed_linear dtypes must be float");
    let (u, t) = (
        Prec::of(input.dtype()).ok_or(bad)?,
        Prec::of(out.dtype()).ok_or(bad)?,
    );
    let (x, s, w) = (
        Floats::of(input)?,
        Floats::of(weight_scales)?,
        weight.data::<i8>()?,
    );
    let g = g.max(1);
    // out[i, j] for a chunk of j at a time. As in ExecuTorch's loop: the products are of
    // the input's type, the sums of the out's, and a sum times a scale is of the wider of
    // the two.
    let mut buf = [0.0f64; CHUNK];
    for i in 0..m {
        let xrow = i * n;
        for j0 in (0..p).step_by(CHUNK) {
            let len = CHUNK.min(p - j0);
            for (dj, o) in buf[..len].iter_mut().enumerate() {
                let j = j0 + dj;
                let wrow = w.get(j * n..(j + 1) * n).unwrap_or(&[]);
                let mut sum = 0.0f64;
                for k in (0..n).step_by(g) {
                    let mut psum = 0.0f64;
                    for k2 in k..n.min(k + g) {
                        let wk = wrow.get(k2).copied().unwrap_or(0) as f64;
                        psum = t.round(psum + u.round(x.get(xrow + k2) * wk));
                    }
                    let scale = s.get(j * groups + k / g);
                    sum = t.round(sum + t.max(u).round(psum * scale));
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
    fn per_row_and_grouped_scales() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[1, 4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
            // Two outputs; weight rows [1, 1, 1, 1] and [1, -1, 2, 0].
            let w = TensorBuf::from_slice(&[2, 4], &[1i8, 1, 1, 1, 1, -1, 2, 0]).unwrap();
            let s = TensorBuf::from_slice(&[2], &[0.5f32, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 2]).unwrap();
            mixed_linear_out::<AllDtypes>(ctx, &x, &w, &s, None, None, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[5.0, 10.0]);
            // Groups of 2: row 0 scales (1, 10), row 1 (1, 0.5).
            let s2 = TensorBuf::from_slice(&[2, 2], &[1.0f32, 10.0, 1.0, 0.5]).unwrap();
            let mut od = TensorBuf::zeros(ScalarType::Double, &[1, 2]).unwrap();
            mixed_linear_out::<AllDtypes>(ctx, &x, &w, &s2, None, None, &mut od).unwrap();
            assert_eq!(od.data::<f64>().unwrap(), &[73.0, 2.0]);
            // dtype float64 is refused (ExecuTorch allows float32/float16 there), as are a
            // dtype naming another out, zero points and groups that cannot tile 4 inputs.
            let bad = [Some(ScalarType::Double), Some(ScalarType::Half)];
            for d in bad {
                assert!(mixed_linear_out::<AllDtypes>(ctx, &x, &w, &s2, None, d, &mut od).is_err());
            }
            assert!(
                mixed_linear_out::<AllDtypes>(ctx, &x, &w, &s, Some(&s), None, &mut o).is_err()
            );
            let s3 = TensorBuf::from_slice(&[2, 3], &[1.0f32; 6]).unwrap();
            assert!(mixed_linear_out::<AllDtypes>(ctx, &x, &w, &s3, None, None, &mut o).is_err());
        });
    }
}
