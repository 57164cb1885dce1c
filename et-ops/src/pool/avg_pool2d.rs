//! `aten::avg_pool2d.out`: 2-d average pooling.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::{strides4, Pool};
use crate::util::element::Dot;

/// The mean of each window into `out`. The divisor is `divisor_override` if given, else
/// the window's size clipped to the padded input (`count_include_pad`) or to the input.
/// Float sums accumulate in f64 and round once. int64 (the one integer dtype both
/// PyTorch's and ExecuTorch's kernels accept) sums in i64 and divides truncating toward
/// zero, as PyTorch does; PyTorch's result is the specification here.
#[kernel("aten::avg_pool2d.out", accepts = [f16, f32, f64, i64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn avg_pool2d_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    let p = Pool::new(input, kernel_size, stride, padding, &[1], ceil_mode)?;
    if out.dtype() != input.dtype() || out.dim() != input.dim() {
        return Err(KernelError::invalid(
            "avg pool out must match the input's dtype and rank",
        ));
    }
    if divisor_override == Some(0) {
        return Err(KernelError::invalid("avg pool divisor must not be zero"));
    }
    p.resize(input, out)?;
    et_switch!(Sel, input.dtype(), [et_runtime::f16, f32, f64, i64], T => avg_pool::<T>(&p, input, count_include_pad, divisor_override, out))
}

fn avg_pool<T: Dot>(
    p: &Pool,
    input: &Tensor,
    include_pad: bool,
    divisor: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    let os = strides4(out);
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    let is = p.is;
    let window = |o: usize, s: usize, pd: usize, k: usize, len: usize| {
        // Window start and end in input coordinates, first clipped to the padded input
        // (for count_include_pad), then to the input.
        let start = (o * s) as isize - pd as isize;
        let end = (start + k as isize).min((len + pd) as isize);
        let padded = (end - start) as usize;
        (
            start.max(0) as usize,
            end.min(len as isize).max(0) as usize,
            padded,
        )
    };
    for n in 0..p.n {
        for c in 0..p.c {
            let base = n * is[0] + c * is[1];
            for oy in 0..p.oh {
                let (y0, y1, ph) = window(oy, p.sh, p.ph, p.kh, p.ih);
                for ox in 0..p.ow {
                    let (x0, x1, pw) = window(ox, p.sw, p.pw, p.kw, p.iw);
                    let mut sum = T::ACC_ZERO;
                    for iy in y0..y1 {
                        for ix in x0..x1 {
                            sum = T::add(sum, x[base + iy * is[2] + ix * is[3]].widen());
                        }
                    }
                    let count = (y1.saturating_sub(y0) * x1.saturating_sub(x0)) as i64;
                    let div = match divisor {
                        Some(d) => d,
                        None if include_pad => (ph * pw) as i64,
                        None => count,
                    };
                    let v = if count == 0 {
                        T::ACC_ZERO
                    } else {
                        T::div(sum, div)
                    };
                    y[n * os[0] + c * os[1] + oy * os[2] + ox * os[3]] = T::narrow(v);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn divisors() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[1, 1, 2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 1, 1, 1]).unwrap();
        avg_pool2d_out::<AllDtypes>(&ctx, &x, &[2], &[], &[0], false, true, None, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[2.5]);
        // 3x3 window, padding 1, stride 2: the single window covers all four inputs.
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 1, 1, 1]).unwrap();
        avg_pool2d_out::<AllDtypes>(&ctx, &x, &[3], &[2], &[1], false, true, None, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[10.0 / 9.0]);
        avg_pool2d_out::<AllDtypes>(&ctx, &x, &[3], &[2], &[1], false, false, None, &mut o)
            .unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[2.5]);
        avg_pool2d_out::<AllDtypes>(&ctx, &x, &[3], &[2], &[1], false, false, Some(2), &mut o)
            .unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[5.0]);
        // ceil_mode adds a partial window.
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 1, 1, 1]).unwrap();
        assert!(avg_pool2d_out::<AllDtypes>(
            &ctx,
            &x,
            &[2],
            &[],
            &[0],
            false,
            true,
            Some(0),
            &mut o
        )
        .is_err());
        let x3 = TensorBuf::from_slice(&[1, 1, 3], &[1.0f64, 2.0, 3.0]).unwrap();
        let mut o3 = TensorBuf::zeros(ScalarType::Double, &[1, 1, 2]).unwrap();
        avg_pool2d_out::<AllDtypes>(&ctx, &x3, &[1, 2], &[1, 2], &[0], true, true, None, &mut o3)
            .unwrap();
        assert_eq!(o3.data::<f64>().unwrap(), &[1.5, 3.0]);
    }
}
