//! `aten::_upsample_bilinear2d_aa.out`: antialiased bilinear 2-d resize.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::{out_sizes, scale_value, strides4};
use crate::util::element::Num;

/// Resizes `input` (`[N, C, H, W]`) to `output_size` with PyTorch's antialiased bilinear
/// filter: a triangle filter stretched by the scale when downsampling (so every input
/// pixel under an output pixel contributes), its weights normalized to sum to 1. The
/// scale is `(in - 1) / (out - 1)` with `align_corners`, else `1 / scales_*` when given,
/// else `in / out`; taps are centred at `scale * (i + 0.5)` in both cases, as in PyTorch.
/// The filter weights follow PyTorch's arithmetic in the compute type (f32 except for
/// float64); the weighted sum is accumulated in f64 and rounded once.
#[kernel("aten::_upsample_bilinear2d_aa.out", accepts = [floats])]
pub fn upsample_bilinear2d_aa_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    output_size: &[i64],
    align_corners: bool,
    scales_h: Option<f64>,
    scales_w: Option<f64>,
    out: &mut Tensor,
) -> KernelResult {
    let ([oh, ow], _) = out_sizes(input, Some(output_size), None)?;
    if out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "upsample out dtype differs from the input's",
        ));
    }
    out.resize(&[input.size(0), input.size(1), oh, ow])?;
    // PyTorch computes the filter in the element type (f32 for float32, as ExecuTorch
    // does for every type but double): taps sit where the f32 centre and bounds put them,
    // and f64 weights land up to ~2e-5 away from PyTorch's on some scales.
    let narrow = input.dtype() != et_runtime::ScalarType::Double;
    let axis = |len: usize, out: usize, given: Option<f64>| {
        let r = Round(narrow);
        let scale = if align_corners {
            if out > 1 {
                r.r((len - 1) as f64 / (out - 1) as f64)
            } else {
                0.0
            }
        } else {
            r.r(scale_value(given, len, out))
        };
        Axis { len, scale, r }
    };
    let ys = axis(input.size(2), oh, scales_h);
    let xs = axis(input.size(3), ow, scales_w);
    et_switch!(Sel, input.dtype(), @floats, T => resize::<T>(input, out, ys, xs))
}

/// Rounding to the compute type after each operation: to f32 when set (each f32 `+ - * /`
/// equals the f64 result rounded once, f64 having more than twice f32's precision), none
/// for f64.
#[derive(Clone, Copy)]
struct Round(bool);

impl Round {
    fn r(self, v: f64) -> f64 {
        if self.0 {
            v as f32 as f64
        } else {
            v
        }
    }
}

/// One spatial dim: its input length, the output-to-input scale and the compute type.
#[derive(Clone, Copy)]
struct Axis {
    len: usize,
    scale: f64,
    r: Round,
}

/// The triangle (bilinear) filter.
fn triangle(x: f64) -> f64 {
    let x = libm::fabs(x);
    if x < 1.0 {
        1.0 - x
    } else {
        0.0
    }
}

impl Axis {
    /// The taps of output index `i`: first input index, count, filter centre, and the
    /// filter's argument scale, with PyTorch's operation order and roundings.
    fn taps(&self, i: usize) -> (usize, usize, f64, f64) {
        let (s, r) = (self.scale, self.r);
        // Downsampling widens the filter by the scale; upsampling keeps it at one pixel.
        let (support, inv) = if s >= 1.0 {
            (s, r.r(1.0 / s))
        } else {
            (1.0, 1.0)
        };
        // `scale * (i + 0.5)` in double, stored in the compute type.
        let centre = r.r(s * (i as f64 + 0.5));
        // `centre -/+ support` in the compute type, `+ 0.5` in double, then truncation
        // toward zero and clamping, as PyTorch's int64 casts.
        let lo = ((r.r(centre - support) + 0.5) as i64).max(0) as usize;
        let hi = ((r.r(centre + support) + 0.5) as i64).clamp(0, self.len as i64) as usize;
        (lo, hi.saturating_sub(lo), centre, inv)
    }

    /// The normalized weight of each input index among the taps of output index `i`.
    fn weights(&self, i: usize, mut f: impl FnMut(usize, f64)) {
        let (lo, n, centre, inv) = self.taps(i);
        let r = self.r;
        // `(j - centre)` in the compute type, `(+ 0.5) * invscale` in double, the filter
        // in the compute type.
        let w = |j: usize| r.r(triangle(r.r((r.r(j as f64 - centre) + 0.5) * inv)));
        let total = (lo..lo + n).fold(0.0, |t, j| r.r(t + w(j)));
        for j in lo..lo + n {
            f(
                j,
                if total != 0.0 {
                    r.r(w(j) / total)
                } else {
                    w(j)
                },
            );
        }
    }
}

fn resize<T: Num>(input: &Tensor, out: &mut Tensor, ys: Axis, xs: Axis) -> KernelResult {
    let (is, os) = (strides4(input), strides4(out));
    let (n, c, oh, ow) = (out.size(0), out.size(1), out.size(2), out.size(3));
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    for b in 0..n {
        for ch in 0..c {
            let (ib, ob) = (b * is[0] + ch * is[1], b * os[0] + ch * os[1]);
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = 0.0f64;
                    ys.weights(i, |r, wy| {
                        xs.weights(j, |q, wx| {
                            acc += wy * wx * x[ib + r * is[2] + q * is[3]].to_f64();
                        });
                    });
                    y[ob + i * os[2] + j * os[3]] = T::from_f64(acc);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn halving_averages_with_a_wide_filter() {
        with_ctx(|ctx| {
            // 1x4 -> 1x2: scale 2, so output 0 is centred at input coordinate 1.0 with a
            // filter two pixels wide each side: pixels 0, 1, 2 (centres 0.5, 1.5, 2.5)
            // weigh 0.75, 0.75, 0.25 before normalizing.
            let x = TensorBuf::from_slice(&[1, 1, 1, 4], &[0.0f64, 4.0, 8.0, 12.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[1, 1, 1, 2]).unwrap();
            upsample_bilinear2d_aa_out::<AllDtypes>(ctx, &x, &[1, 2], false, None, None, &mut o)
                .unwrap();
            let v = o.data::<f64>().unwrap();
            assert!((v[0] - (0.0 * 0.75 + 4.0 * 0.75 + 8.0 * 0.25) / 1.75).abs() < 1e-12);
            // A constant image stays constant whatever the filter.
            let k = TensorBuf::from_slice(&[1, 1, 2, 3], &[5.0f32; 6]).unwrap();
            let mut ok = TensorBuf::zeros(ScalarType::Float, &[1, 1, 3, 5]).unwrap();
            upsample_bilinear2d_aa_out::<AllDtypes>(ctx, &k, &[3, 5], true, None, None, &mut ok)
                .unwrap();
            assert!(ok
                .data::<f32>()
                .unwrap()
                .iter()
                .all(|&v| (v - 5.0).abs() < 1e-6));
        });
    }
}
