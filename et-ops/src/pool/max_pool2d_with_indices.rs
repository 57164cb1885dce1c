//! `aten::max_pool2d_with_indices.out`: 2-d max pooling with argmax indices.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use super::{strides4, Pool};
use crate::util::element::Num;

/// The maximum of each (dilated) window into `out`, and its position as `h * W + w` in the
/// input plane into the int64 `indices`. Ties keep the first position; NaN wins (the last
/// NaN of a window, as PyTorch's CPU kernel scans).
#[kernel("aten::max_pool2d_with_indices.out", accepts = [reals])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn max_pool2d_with_indices_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
    out: &mut Tensor,
    indices: &mut Tensor,
) -> KernelResult {
    let p = Pool::new(input, kernel_size, stride, padding, dilation, ceil_mode)?;
    if out.dtype() != input.dtype() || indices.dtype() != ScalarType::Long {
        return Err(KernelError::invalid(
            "max pool out must match the input dtype, indices int64",
        ));
    }
    if out.dim() != input.dim() || indices.dim() != input.dim() {
        return Err(KernelError::invalid(
            "max pool outs must have the input's rank",
        ));
    }
    p.resize(input, out)?;
    p.resize(input, indices)?;
    et_switch!(Sel, input.dtype(), @reals, T => max_pool::<T>(&p, input, out, indices))
}

fn max_pool<T: Num>(
    p: &Pool,
    input: &Tensor,
    out: &mut Tensor,
    indices: &mut Tensor,
) -> KernelResult {
    let (os, xs) = (strides4(out), strides4(indices));
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    let ix = indices.data_mut::<i64>()?;
    let is = p.is;
    for n in 0..p.n {
        for c in 0..p.c {
            let base = n * is[0] + c * is[1];
            for oy in 0..p.oh {
                for ox in 0..p.ow {
                    let mut best: Option<(T, usize)> = None;
                    for ky in 0..p.kh {
                        let iy = (oy * p.sh + ky * p.dh) as isize - p.ph as isize;
                        if iy < 0 || iy as usize >= p.ih {
                            continue;
                        }
                        for kx in 0..p.kw {
                            let iw = (ox * p.sw + kx * p.dw) as isize - p.pw as isize;
                            if iw < 0 || iw as usize >= p.iw {
                                continue;
                            }
                            let (iy, iw) = (iy as usize, iw as usize);
                            let v = x[base + iy * is[2] + iw * is[3]];
                            let pos = iy * p.iw + iw;
                            best = match best {
                                None => Some((v, pos)),
                                Some((b, _)) if v > b || v.is_nan() => Some((v, pos)),
                                keep => keep,
                            };
                        }
                    }
                    // Padding is at most half the kernel, so every window holds an input.
                    if let Some((v, pos)) = best {
                        y[n * os[0] + c * os[1] + oy * os[2] + ox * os[3]] = v;
                        ix[n * xs[0] + c * xs[1] + oy * xs[2] + ox * xs[3]] = pos as i64;
                    }
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
    use et_runtime::{Arena, TensorBuf};
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn windows_and_indices() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let vals: Vec<f32> = (0..16).map(|v| ((v * 7) % 16) as f32).collect();
        let x = TensorBuf::from_slice(&[1, 1, 4, 4], &vals).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 1, 2, 2]).unwrap();
        let mut i = TensorBuf::zeros(ScalarType::Long, &[1, 1, 2, 2]).unwrap();
        max_pool2d_with_indices_out::<AllDtypes>(
            &ctx,
            &x,
            &[2, 2],
            &[],
            &[0, 0],
            &[1, 1],
            false,
            &mut o,
            &mut i,
        )
        .unwrap();
        // vals: 0 7 14 5 / 12 3 10 1 / 8 15 6 13 / 4 11 2 9
        assert_eq!(o.data::<f32>().unwrap(), &[12.0, 14.0, 15.0, 13.0]);
        assert_eq!(i.data::<i64>().unwrap(), &[4, 2, 9, 11]);
        // 3x3 stride 2 padding 1, ceil mode on a 3-d input.
        let x3 = TensorBuf::from_slice(
            &[1, 3, 3],
            &[1.0f32, 2.0, 3.0, 4.0, f32::NAN, 6.0, 7.0, 8.0, 9.0],
        )
        .unwrap();
        let mut o3 = TensorBuf::zeros(ScalarType::Float, &[1, 2, 2]).unwrap();
        let mut i3 = TensorBuf::zeros(ScalarType::Long, &[1, 2, 2]).unwrap();
        max_pool2d_with_indices_out::<AllDtypes>(
            &ctx,
            &x3,
            &[3],
            &[2],
            &[1],
            &[1],
            true,
            &mut o3,
            &mut i3,
        )
        .unwrap();
        assert!(o3.data::<f32>().unwrap().iter().all(|v| v.is_nan()));
        assert_eq!(i3.data::<i64>().unwrap(), &[4, 4, 4, 4]);
        assert!(max_pool2d_with_indices_out::<AllDtypes>(
            &ctx,
            &x,
            &[2],
            &[],
            &[2],
            &[1],
            false,
            &mut o,
            &mut i
        )
        .is_err());
    }
}
