//! f32 convolution paths (non-transposed):
//!
//! - **pointwise** (1x1, stride 1, no padding): for each image and group the conv is one
//!   gemm, `Y[cout_g, h*w] = W[cout_g, cin_g] * X[cin_g, h*w]`, read straight from the
//!   tensors through their strides (NCHW and NHWC alike), no copy;
//! - **depthwise** (one input channel per group, in `depthwise.rs`): a direct loop per
//!   channel plane; rows are contiguous in NCHW, so each kernel tap is one vectorizable
//!   multiply-add over the valid span of an output row, and 3x3 stride-1 interiors fuse
//!   all nine taps per output element;
//! - **general**: im2col of a band of output rows into scratch (`[cin_g*kh*kw, rows*ow]`,
//!   at most [`COL_BUDGET`] floats), then one gemm per band.
//!
//! Bias is written into the output first and the gemm accumulates onto it (`beta = 1`);
//! without bias the gemm overwrites the output (`beta = 0`).
//!
//! Scratch for mv2 (the largest request): its first conv (3x3, stride 2, 3 -> 32
//! channels, 112x112 output) im2cols `27 x 12544` floats (1.35 MB) plus the gemm's
//! packing buffers (`sgemm_scratch_bytes`: about 0.25 MB), so 1.6 MB; pointwise convs
//! only need the packing buffers (under 2.3 MB for any shape).

use et_runtime::{KernelContext, KernelResult};

use super::depthwise::depthwise;
use super::geom::Geom;
use crate::util::gemm::{sgemm_epilogue, Epilogue, Mat, MatMut};

/// The most floats one im2col band may take (16 MiB).
pub(crate) const COL_BUDGET: usize = 4 << 20;

/// Runs a non-transposed f32 convolution. `os` are the output's (n, c, h, w) strides.
/// `epilogue`, if any, maps each output channel's values as they are stored (row `c` is
/// channel `c`; it must have a row per output channel).
#[allow(
    clippy::too_many_arguments,
    reason = "one convolution and its epilogue"
)]
pub(crate) fn conv_f32(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    epilogue: Option<Epilogue<'_>>,
) -> KernelResult {
    if g.n == 0 || g.cout == 0 || g.oh == 0 || g.ow == 0 {
        return Ok(());
    }
    if g.cin_g == 1 && g.groups == g.cin {
        return depthwise(ctx, g, x, w, bias, y, os, epilogue);
    }
    let pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
    let in_merges = g.ih == 1 || g.is[2] == g.iw * g.is[3];
    let out_merges = g.oh == 1 || os[2] == g.ow * os[3];
    if pointwise && in_merges && out_merges {
        return pointwise_conv(ctx, g, x, w, bias, y, os, epilogue);
    }
    im2col_conv(ctx, g, x, w, bias, y, os, epilogue)
}

/// The product of one group's output channels from `c0` on: with the epilogue of those
/// channels, if any.
#[allow(clippy::too_many_arguments, reason = "a product and its epilogue")]
fn group_gemm(
    ctx: &KernelContext<'_>,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    c0: usize,
) -> KernelResult {
    sgemm_epilogue(ctx, 1.0, a, b, beta, c, epilogue.map(|e| e.rows_from(c0)))
}

/// Fills channels `c0..c0+count` of image `n` (rows `oy0..oy0+rows`) with their bias,
/// or zeros.
#[allow(clippy::too_many_arguments, reason = "a band of one output tensor")]
fn fill_bias(
    g: &Geom,
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    n: usize,
    c0: usize,
    count: usize,
    oy0: usize,
    rows: usize,
) {
    for c in c0..c0 + count {
        let b = bias.map_or(0.0, |b| b[c]);
        for oy in oy0..oy0 + rows {
            let base = n * os[0] + c * os[1] + oy * os[2];
            if os[3] == 1 {
                y[base..base + g.ow].fill(b);
            } else {
                for ox in 0..g.ow {
                    y[base + ox * os[3]] = b;
                }
            }
        }
    }
}

/// The weights of group `grp` as a `[cout_g, cin_g*kh*kw]` matrix, if their (ci, ky, kx)
/// dims are laid out as one row-major run (true for contiguous weights).
fn weight_matrix<'w>(g: &Geom, w: &'w [f32], grp: usize) -> Option<Mat<'w, f32>> {
    let ws = g.ws;
    let kx_ok = true;
    let ky_ok = g.kh == 1 || ws[2] == g.kw * ws[3];
    let ci_ok = g.cin_g == 1 || ws[1] == g.kh * g.kw * ws[3];
    (kx_ok && ky_ok && ci_ok).then(|| Mat {
        data: w.get(grp * g.cout_g * ws[0]..).unwrap_or(&[]),
        rows: g.cout_g,
        cols: g.cin_g * g.kh * g.kw,
        rs: ws[0],
        cs: ws[3],
    })
}

/// Copies group `grp`'s weights into `buf` as a row-major `[cout_g, cin_g*kh*kw]` matrix.
fn pack_weights(g: &Geom, w: &[f32], grp: usize, buf: &mut [f32]) {
    let ws = g.ws;
    let mut k = 0;
    for co in grp * g.cout_g..(grp + 1) * g.cout_g {
        for ci in 0..g.cin_g {
            for ky in 0..g.kh {
                for kx in 0..g.kw {
                    buf[k] = w[co * ws[0] + ci * ws[1] + ky * ws[2] + kx * ws[3]];
                    k += 1;
                }
            }
        }
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "one convolution and its epilogue"
)]
fn pointwise_conv(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    epilogue: Option<Epilogue<'_>>,
) -> KernelResult {
    let hw = g.oh * g.ow;
    for n in 0..g.n {
        for grp in 0..g.groups {
            let c0 = grp * g.cout_g;
            // With a bias the gemm accumulates onto it; without, it overwrites (beta = 0).
            let beta = if bias.is_some() {
                fill_bias(g, bias, y, os, n, c0, g.cout_g, 0, g.oh);
                1.0
            } else {
                0.0
            };
            let a = Mat {
                data: w.get(c0 * g.ws[0]..).unwrap_or(&[]),
                rows: g.cout_g,
                cols: g.cin_g,
                rs: g.ws[0],
                cs: g.ws[1],
            };
            let xoff = n * g.is[0] + grp * g.cin_g * g.is[1];
            let b = Mat {
                data: x.get(xoff..).unwrap_or(&[]),
                rows: g.cin_g,
                cols: hw,
                rs: g.is[1],
                cs: g.is[3],
            };
            let yoff = (n * os[0] + c0 * os[1]).min(y.len());
            let c = MatMut {
                data: &mut y[yoff..],
                rows: g.cout_g,
                cols: hw,
                rs: os[1],
                cs: os[3],
            };
            group_gemm(ctx, a, b, beta, c, epilogue, c0)?;
        }
    }
    Ok(())
}

#[allow(
    clippy::too_many_arguments,
    reason = "one convolution and its epilogue"
)]
fn im2col_conv(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    epilogue: Option<Epilogue<'_>>,
) -> KernelResult {
    let kdim = g.cin_g * g.kh * g.kw;
    let band = (COL_BUDGET / (kdim * g.ow).max(1)).clamp(1, g.oh);
    let col = ctx.alloc_temp::<f32>(kdim * band * g.ow)?;
    // Weights whose (ci, ky, kx) dims are not one row-major run (e.g. channels-last
    // weights) are repacked per group.
    let mut packed = match weight_matrix(g, w, 0) {
        Some(_) => None,
        None => Some(ctx.alloc_temp::<f32>(g.cout_g * kdim)?),
    };
    let out_merges = os[2] == g.ow * os[3];
    for grp in 0..g.groups {
        let c0 = grp * g.cout_g;
        if let Some(buf) = packed.as_deref_mut() {
            pack_weights(g, w, grp, buf);
        }
        for n in 0..g.n {
            let mut oy0 = 0;
            while oy0 < g.oh {
                let rows = band.min(g.oh - oy0);
                let npix = rows * g.ow;
                let col = &mut col[..kdim * npix];
                im2col(g, x, n, grp, oy0, rows, col);
                let beta = if bias.is_some() {
                    fill_bias(g, bias, y, os, n, c0, g.cout_g, oy0, rows);
                    1.0
                } else {
                    0.0
                };
                let a = match (&packed, weight_matrix(g, w, grp)) {
                    (Some(buf), _) => Mat::row_major(buf, g.cout_g, kdim),
                    (None, Some(m)) => m,
                    (None, None) => unreachable_matrix(),
                };
                // One gemm per band if the band's pixels form one strided run in the
                // output, else one per output row.
                let per = if out_merges || rows == 1 { rows } else { 1 };
                let mut r = 0;
                while r < rows {
                    let pix = per * g.ow;
                    let b = Mat {
                        data: &col[r * g.ow..],
                        rows: kdim,
                        cols: pix,
                        rs: npix,
                        cs: 1,
                    };
                    let yoff = (n * os[0] + c0 * os[1] + (oy0 + r) * os[2]).min(y.len());
                    let c = MatMut {
                        data: &mut y[yoff..],
                        rows: g.cout_g,
                        cols: pix,
                        rs: os[1],
                        cs: os[3],
                    };
                    group_gemm(ctx, a, b, beta, c, epilogue, c0)?;
                    r += per;
                }
                oy0 += rows;
            }
        }
    }
    Ok(())
}

/// An empty matrix; `weight_matrix` is total over groups once it succeeded for group 0,
/// so this is never reached, but returning an empty view keeps the code panic-free (the
/// gemm then rejects the shape).
fn unreachable_matrix() -> Mat<'static, f32> {
    Mat {
        data: &[],
        rows: 0,
        cols: 0,
        rs: 0,
        cs: 0,
    }
}

/// Writes the im2col matrix of image `n`, group `grp`, output rows `oy0..oy0+rows`:
/// row `(ci, ky, kx)` holds, for each output pixel of the band, the input value that tap
/// reads (zero in the padding).
fn im2col(g: &Geom, x: &[f32], n: usize, grp: usize, oy0: usize, rows: usize, col: &mut [f32]) {
    let npix = rows * g.ow;
    let is = g.is;
    let mut r = 0;
    for cig in 0..g.cin_g {
        let cbase = n * is[0] + (grp * g.cin_g + cig) * is[1];
        for ky in 0..g.kh {
            for kx in 0..g.kw {
                let dst = &mut col[r * npix..(r + 1) * npix];
                r += 1;
                let (lo, hi) = Geom::valid_range(g.ow, g.iw, g.sw, kx * g.dw, g.pw);
                for (band_row, seg) in dst.chunks_exact_mut(g.ow).enumerate() {
                    let oy = oy0 + band_row;
                    let iy = (oy * g.sh + ky * g.dh) as isize - g.ph as isize;
                    if iy < 0 || iy as usize >= g.ih || lo >= hi {
                        seg.fill(0.0);
                        continue;
                    }
                    let rbase = cbase + iy as usize * is[2];
                    seg[..lo].fill(0.0);
                    seg[hi..].fill(0.0);
                    // First input column read: lo*sw + kx*dw - pw (non-negative by `lo`).
                    let ix0 = lo * g.sw + kx * g.dw - g.pw;
                    if g.sw == 1 && is[3] == 1 {
                        let s = rbase + ix0;
                        seg[lo..hi].copy_from_slice(&x[s..s + (hi - lo)]);
                    } else {
                        for (k, d) in seg[lo..hi].iter_mut().enumerate() {
                            *d = x[rbase + (ix0 + k * g.sw) * is[3]];
                        }
                    }
                }
            }
        }
    }
}
