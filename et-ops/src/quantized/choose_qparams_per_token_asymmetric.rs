//! `quantized_decomposed::choose_qparams_per_token_asymmetric.out`.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor, MAX_DIM};

use super::choose_qparams::{check_choose, min_max, scale_and_zero_point};
use super::token_rows;

/// One asymmetric int8 (scale, zero point) pair per row ("token": all dims but the
/// last), range `[-128, 127]`; the outs are resized to the input's sizes with a last dim
/// of 1. `dtype` is not used (as in ExecuTorch). Rows must not be empty.
#[kernel("quantized_decomposed::choose_qparams_per_token_asymmetric.out", accepts = [i64, f32, f64])]
pub fn choose_qparams_per_token_asymmetric_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    _dtype: ScalarType,
    scale_out: &mut Tensor,
    zero_point_out: &mut Tensor,
) -> KernelResult {
    let (rows, width) = token_rows(input)?;
    let d = input.dim();
    let mut sizes = [0usize; MAX_DIM];
    sizes[..d].copy_from_slice(input.sizes());
    sizes[d - 1] = 1;
    scale_out.resize(&sizes[..d])?;
    zero_point_out.resize(&sizes[..d])?;
    let (qmin, qmax) = check_choose(input, -128, 127, scale_out, zero_point_out)?;
    // Row r's pair goes to flat offset r.
    if !scale_out.is_contiguous() || !zero_point_out.is_contiguous() {
        return Err(KernelError::invalid(
            "choose_qparams_per_token outs must be contiguous",
        ));
    }
    if rows > 0 && width == 0 {
        return Err(KernelError::invalid(
            "choose_qparams_per_token of empty rows",
        ));
    }
    let x = input.data::<f32>()?;
    let scales = scale_out.data_mut::<f64>()?;
    let zeros = zero_point_out.data_mut::<i64>()?;
    for ((row, s), z) in x.chunks_exact(width.max(1)).zip(scales).zip(zeros) {
        let (min, max) = min_max(row).ok_or(KernelError::invalid("empty row"))?;
        (*s, *z) = scale_and_zero_point(min, max, qmin, qmax)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::TensorBuf;

    #[test]
    fn one_pair_per_row() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 1, 2], &[-1.0f32, 3.0, 0.0, 0.0]).unwrap();
            let mut s = TensorBuf::zeros(ScalarType::Double, &[2, 1, 1]).unwrap();
            let mut z = TensorBuf::zeros(ScalarType::Long, &[2, 1, 1]).unwrap();
            choose_qparams_per_token_asymmetric_out(ctx, &x, ScalarType::Char, &mut s, &mut z)
                .unwrap();
            assert_eq!(s.data::<f64>().unwrap(), &[4.0 / 255.0, 0.1]);
            assert_eq!(z.data::<i64>().unwrap(), &[-64, 127]);
            // Float64 input, int32 zero point out, 0-dim input: errors.
            let xd = TensorBuf::from_slice(&[1, 2], &[1.0f64, 2.0]).unwrap();
            assert!(choose_qparams_per_token_asymmetric_out(
                ctx,
                &xd,
                ScalarType::Char,
                &mut s,
                &mut z
            )
            .is_err());
            let x0 = TensorBuf::from_slice(&[], &[1.0f32]).unwrap();
            assert!(choose_qparams_per_token_asymmetric_out(
                ctx,
                &x0,
                ScalarType::Char,
                &mut s,
                &mut z
            )
            .is_err());
        });
    }
}
