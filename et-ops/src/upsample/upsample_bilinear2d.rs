//! `aten::upsample_bilinear2d.vec_out`: bilinear 2-d resize.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::{out_sizes, scale_value, strides4};
use crate::util::element::Float;
use crate::util::element::Num;
use crate::util::element::OpMath;

/// Resizes `input` (`[N, C, H, W]`) bilinearly to `output_size` or by `scale_factors`.
/// Source coordinates follow PyTorch: with `align_corners`, corners map to corners
/// (`src = dst * (in - 1) / (out - 1)`); without, pixel centres map to pixel centres
/// (`src = (dst + 0.5) * scale - 0.5`, clamped at 0), with the scale from the given
/// factor when there is one.
#[kernel("aten::upsample_bilinear2d.vec_out", accepts = [floats])]
pub fn upsample_bilinear2d_vec_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    output_size: Option<&[i64]>,
    align_corners: bool,
    scale_factors: Option<&[f64]>,
    out: &mut Tensor,
) -> KernelResult {
    let ([oh, ow], scales) = out_sizes(input, output_size, scale_factors)?;
    if out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "upsample out dtype differs from the input's",
        ));
    }
    out.resize(&[input.size(0), input.size(1), oh, ow])?;
    et_switch!(Sel, input.dtype(), @floats, T => bilinear::<T>(input, out, align_corners, scales))
}

/// Source index pair and weights `(i0, i1, w0, w1)` of output coordinate `o`.
fn source<T: OpMath>(
    o: usize,
    input: usize,
    output: usize,
    align: bool,
    scale: Option<f64>,
) -> (usize, usize, T::C, T::C) {
    type C<T> = <T as OpMath>::C;
    let one = C::<T>::c(1.0);
    let src = if align {
        let s = if output > 1 {
            C::<T>::c((input - 1) as f64) / C::<T>::c((output - 1) as f64)
        } else {
            C::<T>::c(0.0)
        };
        s * C::<T>::c(o as f64)
    } else {
        let s = C::<T>::c(scale_value(scale, input, output));
        let v = s * (C::<T>::c(o as f64) + C::<T>::c(0.5)) - C::<T>::c(0.5);
        if v < C::<T>::c(0.0) {
            C::<T>::c(0.0)
        } else {
            v
        }
    };
    let i0 = (Num::to_f64(src.floor()) as usize).min(input - 1);
    let i1 = if i0 < input - 1 { i0 + 1 } else { i0 };
    let w1 = src - C::<T>::c(i0 as f64);
    // Past the last input index (clamped `i0`), the weight saturates at 1.
    let w1 = if w1 > one { one } else { w1 };
    (i0, i1, one - w1, w1)
}

fn bilinear<T: OpMath>(
    input: &Tensor,
    out: &mut Tensor,
    align: bool,
    scales: [Option<f64>; 2],
) -> KernelResult {
    let (ih, iw) = (input.size(2), input.size(3));
    let (oh, ow) = (out.size(2), out.size(3));
    let (is, os) = (strides4(input), strides4(out));
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    for n in 0..input.size(0) {
        for c in 0..input.size(1) {
            let (xb, yb) = (n * is[0] + c * is[1], n * os[0] + c * os[1]);
            for oy in 0..oh {
                let (h0, h1, a0, a1) = source::<T>(oy, ih, oh, align, scales[0]);
                for ox in 0..ow {
                    let (w0, w1, b0, b1) = source::<T>(ox, iw, ow, align, scales[1]);
                    let at = |h: usize, w: usize| x[xb + h * is[2] + w * is[3]].up();
                    let v = a0 * (b0 * at(h0, w0) + b1 * at(h0, w1))
                        + a1 * (b0 * at(h1, w0) + b1 * at(h1, w1));
                    y[yb + oy * os[2] + ox * os[3]] = T::down(v);
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
    fn corners_and_centres() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[1, 1, 1, 2], &[0.0f32, 1.0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 1, 1, 3]).unwrap();
        upsample_bilinear2d_vec_out::<AllDtypes>(&ctx, &x, Some(&[1, 3]), true, None, &mut o)
            .unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[0.0, 0.5, 1.0]);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 1, 1, 4]).unwrap();
        upsample_bilinear2d_vec_out::<AllDtypes>(&ctx, &x, None, false, Some(&[1.0, 2.0]), &mut o)
            .unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[0.0, 0.25, 0.75, 1.0]);
    }
}
