//! The reference convolution: a direct loop over every output element, for any real
//! dtype, any layout, groups, dilation and transposed convolutions. Accumulates as
//! [`Dot`] says: floats in f64, rounding once at the store; integers wrapping around, as
//! PyTorch's integer convolutions do.

use et_runtime::KernelResult;

use super::geom::Geom;
use crate::util::element::Dot;

/// `y = conv(x, w) + bias` with the geometry `g`; `os` are the output's (n, c, h, w)
/// strides. All slices are the tensors' full data.
pub(crate) fn conv_direct<T: Dot>(
    g: &Geom,
    x: &[T],
    w: &[T],
    bias: Option<&[T]>,
    y: &mut [T],
    os: [usize; 4],
) -> KernelResult {
    let (is, ws) = (g.is, g.ws);
    for n in 0..g.n {
        for co in 0..g.cout {
            let grp = co / g.cout_g;
            let cog = co % g.cout_g;
            let b = bias.map_or(T::ACC_ZERO, |b| b[co].widen());
            for oy in 0..g.oh {
                for ox in 0..g.ow {
                    let mut acc = b;
                    for cig in 0..g.cin_g {
                        let ci = grp * g.cin_g + cig;
                        for ky in 0..g.kh {
                            let Some(iy) = src_index(g.transposed, oy, ky, g.sh, g.dh, g.ph, g.ih)
                            else {
                                continue;
                            };
                            for kx in 0..g.kw {
                                let Some(ix) =
                                    src_index(g.transposed, ox, kx, g.sw, g.dw, g.pw, g.iw)
                                else {
                                    continue;
                                };
                                let xv = x[n * is[0] + ci * is[1] + iy * is[2] + ix * is[3]];
                                let wi = if g.transposed {
                                    ci * ws[0] + cog * ws[1]
                                } else {
                                    co * ws[0] + cig * ws[1]
                                };
                                let wv = w[wi + ky * ws[2] + kx * ws[3]];
                                acc = T::mul_add(acc, xv, wv);
                            }
                        }
                    }
                    y[n * os[0] + co * os[1] + oy * os[2] + ox * os[3]] = T::narrow(acc);
                }
            }
        }
    }
    Ok(())
}

/// The input index that kernel tap `k` reads for output index `o`, if any.
///
/// Forward: `i = o * s + k * d - p`. Transposed (the adjoint, gathered): output `o` receives
/// input `i` through tap `k` when `o = i * s + k * d - p`, so `i = (o + p - k * d) / s`
/// when that division is exact.
#[inline]
fn src_index(
    transposed: bool,
    o: usize,
    k: usize,
    s: usize,
    d: usize,
    p: usize,
    len: usize,
) -> Option<usize> {
    let (o, k, s, d, p) = (o as i128, k as i128, s as i128, d as i128, p as i128);
    let i = if transposed {
        let t = o + p - k * d;
        if t < 0 || t % s != 0 {
            return None;
        }
        t / s
    } else {
        o * s + k * d - p
    };
    if i >= 0 && (i as usize) < len {
        Some(i as usize)
    } else {
        None
    }
}
