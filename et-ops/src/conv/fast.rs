//! f32 convolution paths (non-transposed):
//!
//! - **pointwise** (1x1, stride 1, no padding): for each image and group the conv is one
//!   gemm, `Y[cout_g, h*w] = W[cout_g, cin_g] * X[cin_g, h*w]`, read straight from the
//!   tensors through their strides (NCHW and NHWC alike), no copy;
//! - **depthwise** (one input channel per group): a direct loop per channel plane; rows
//!   are contiguous in NCHW, so each kernel tap is one vectorizable multiply-add over
//!   the valid span of an output row, and 3x3 stride-1 interiors fuse all nine taps per
//!   output element;
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

use super::geom::Geom;
use crate::util::gemm::{avx2_fma_available, sgemm, Mat, MatMut};

/// The most floats one im2col band may take (16 MiB).
pub(crate) const COL_BUDGET: usize = 4 << 20;

/// Runs a non-transposed f32 convolution. `os` are the output's (n, c, h, w) strides.
pub(crate) fn conv_f32(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
) -> KernelResult {
    if g.n == 0 || g.cout == 0 || g.oh == 0 || g.ow == 0 {
        return Ok(());
    }
    if g.cin_g == 1 && g.groups == g.cin {
        return depthwise(ctx, g, x, w, bias, y, os);
    }
    let pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
    let in_merges = g.ih == 1 || g.is[2] == g.iw * g.is[3];
    let out_merges = g.oh == 1 || os[2] == g.ow * os[3];
    if pointwise && in_merges && out_merges {
        return pointwise_conv(ctx, g, x, w, bias, y, os);
    }
    im2col_conv(ctx, g, x, w, bias, y, os)
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

fn pointwise_conv(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
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
            sgemm(ctx, 1.0, a, b, beta, c)?;
        }
    }
    Ok(())
}

fn im2col_conv(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
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
                    sgemm(ctx, 1.0, a, b, beta, c)?;
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

/// Depthwise convolution (`cin_g == 1`; `cout_g` output channels per input channel).
fn depthwise(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
) -> KernelResult {
    let rows_contiguous = g.is[3] == 1 && os[3] == 1;
    if !rows_contiguous || g.kh * g.kw > MAX_TAPS {
        for n in 0..g.n {
            for co in 0..g.cout {
                let ci = co / g.cout_g;
                let b = bias.map_or(0.0, |b| b[co]);
                let (xb, yb) = (n * g.is[0] + ci * g.is[1], n * os[0] + co * os[1]);
                depthwise_strided(g, x, w, b, y, os, xb, yb, co * g.ws[0]);
            }
        }
        return Ok(());
    }
    let mut flat = match Phases::geometry(g) {
        Some(geo) => {
            let src = ctx.alloc_temp::<f32>(geo.src_len())?;
            // Padding cells stay zero: each plane only overwrites the interior.
            src.fill(0.0);
            let acc = ctx.alloc_temp::<f32>(g.oh * geo.wp)?;
            Some(Phases { geo, src, acc })
        }
        None => None,
    };
    if avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 and FMA (checked by `avx2_fma_available`), all the
        // target-feature function requires.
        unsafe { depthwise_planes_avx2(g, x, w, bias, y, os, flat.as_mut()) };
    } else {
        depthwise_planes(g, x, w, bias, y, os, flat.as_mut());
    }
    Ok(())
}

const MAX_TAPS: usize = 64;

/// Layout of the zero-padded, phase-split copy of one input plane used by 3x3
/// depthwise convs with stride 1 or 2.
///
/// With stride `s`, padded input pixel `(r, c)` goes to phase `(r % s, c % s)` at
/// `(r / s, c / s)`; each phase is `hp` rows of `wp` floats. Tap `(ky, kx)` of output
/// `(oy, ox)` then reads phase `(ky % s, kx % s)` at `(oy + ky / s, ox + kx / s)`, so for
/// the whole plane laid out with row pitch `wp`, every tap is one contiguous slice at a
/// fixed offset: the nine-tap sum runs as one long vector loop over `oh * wp` outputs
/// (the `wp - ow` extra columns per row are computed and dropped), however narrow the
/// plane. This is what makes the 14x14 and 7x7 planes of mobile networks fast.
#[derive(Clone, Copy)]
struct PhaseGeom {
    s: usize,
    hp: usize,
    wp: usize,
}

impl PhaseGeom {
    fn src_len(&self) -> usize {
        self.s * self.s * self.hp * self.wp
    }
}

struct Phases<'a> {
    geo: PhaseGeom,
    src: &'a mut [f32],
    acc: &'a mut [f32],
}

impl Phases<'_> {
    /// The phase layout for `g`, if it is a 3x3, undilated conv with equal strides 1 or 2.
    fn geometry(g: &Geom) -> Option<PhaseGeom> {
        let ok = g.kh == 3 && g.kw == 3 && g.dh == 1 && g.dw == 1 && g.sh == g.sw && g.sh <= 2;
        if !ok {
            return None;
        }
        let s = g.sh;
        let (hpad, wpad) = (g.ih + 2 * g.ph, g.iw + 2 * g.pw);
        let wp = wpad.div_ceil(s);
        // Enough rows for every input row and for the reads of the last output row
        // (two rows down, plus up to two columns into the row after: one guard row).
        let hp = hpad.div_ceil(s).max(g.oh + 2 / s) + 1;
        Some(PhaseGeom { s, hp, wp })
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn depthwise_planes_avx2(
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    flat: Option<&mut Phases<'_>>,
) {
    depthwise_planes(g, x, w, bias, y, os, flat);
}

#[cfg(not(target_arch = "x86_64"))]
fn depthwise_planes_avx2(
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    flat: Option<&mut Phases<'_>>,
) {
    depthwise_planes(g, x, w, bias, y, os, flat);
}

/// Every channel plane of a depthwise conv with unit-stride rows (NCHW); inlined into
/// the AVX2 instantiation.
#[inline(always)]
fn depthwise_planes(
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    mut flat: Option<&mut Phases<'_>>,
) {
    let mut taps = [0.0f32; MAX_TAPS];
    for n in 0..g.n {
        for co in 0..g.cout {
            let ci = co / g.cout_g;
            let b = bias.map_or(0.0, |b| b[co]);
            let xb = n * g.is[0] + ci * g.is[1];
            let yb = n * os[0] + co * os[1];
            let wb = co * g.ws[0];
            for ky in 0..g.kh {
                for kx in 0..g.kw {
                    taps[ky * g.kw + kx] = w[wb + ky * g.ws[2] + kx * g.ws[3]];
                }
            }
            let taps = &taps[..g.kh * g.kw];
            match flat.as_deref_mut() {
                Some(ph) => dw3x3_flat(g, &x[xb..], &mut y[yb..], os[2], taps, b, ph),
                None => depthwise_plane(g, &x[xb..], &mut y[yb..], os[2], taps, b),
            }
        }
    }
}

/// One 3x3 plane through the phase layout (see [`PhaseGeom`]). `x` and `y` start at the
/// plane; `yrs` is the output row stride.
#[inline(always)]
fn dw3x3_flat(
    g: &Geom,
    x: &[f32],
    y: &mut [f32],
    yrs: usize,
    taps: &[f32],
    b: f32,
    ph: &mut Phases<'_>,
) {
    let PhaseGeom { s, hp, wp } = ph.geo;
    let plane = hp * wp;
    let xrs = g.is[2];
    // Scatter the input plane into its phases (interior only; padding stays zero).
    for r in 0..g.ih {
        let xrow = &x[r * xrs..r * xrs + g.iw];
        let pr = r + g.ph;
        if s == 1 {
            let d = pr * wp + g.pw;
            ph.src[d..d + g.iw].copy_from_slice(xrow);
        } else {
            // Even input columns land in phase `pw % 2` from column `pw / 2`, odd ones in
            // the other phase from `(pw + 1) / 2`.
            let (a, i) = (pr % 2, pr / 2);
            let (ne, no) = (g.iw.div_ceil(2), g.iw / 2);
            let row_of = |b: usize| ((a * 2 + b) * hp + i) * wp;
            let (pe, po) = (g.pw % 2, 1 - g.pw % 2);
            let (se, so) = (row_of(pe) + g.pw / 2, row_of(po) + g.pw.div_ceil(2));
            let (lo_idx, hi_idx, lo_is_even) = if se < so {
                (se, so, true)
            } else {
                (so, se, false)
            };
            let (head, tail) = ph.src.split_at_mut(hi_idx);
            let (de, dodd) = if lo_is_even {
                (&mut head[lo_idx..lo_idx + ne], &mut tail[..no])
            } else {
                (&mut tail[..ne], &mut head[lo_idx..lo_idx + no])
            };
            for ((pair, e), o) in xrow.chunks_exact(2).zip(de.iter_mut()).zip(dodd.iter_mut()) {
                *e = pair[0];
                *o = pair[1];
            }
            if ne > no {
                de[ne - 1] = xrow[g.iw - 1];
            }
        }
    }
    let n = g.oh * wp;
    let src = &*ph.src;
    let tap = |ky: usize, kx: usize| -> &[f32] {
        let phase = (ky % s) * s + kx % s;
        let off = phase * plane + (ky / s) * wp + kx / s;
        &src[off..off + n]
    };
    let t: [f32; 9] = core::array::from_fn(|i| taps[i]);
    let acc = &mut ph.acc[..n];
    fused9(
        acc,
        [
            tap(0, 0),
            tap(0, 1),
            tap(0, 2),
            tap(1, 0),
            tap(1, 1),
            tap(1, 2),
            tap(2, 0),
            tap(2, 1),
            tap(2, 2),
        ],
        &t,
        b,
    );
    for oy in 0..g.oh {
        y[oy * yrs..oy * yrs + g.ow].copy_from_slice(&acc[oy * wp..oy * wp + g.ow]);
    }
}

/// `out[i] = b + sum_k t[k] * s[k][i]` over nine slices at least `out.len()` long.
#[inline(always)]
fn fused9(out: &mut [f32], s: [&[f32]; 9], t: &[f32; 9], b: f32) {
    let n = out.len();
    let [s0, s1, s2, s3, s4, s5, s6, s7, s8] = s.map(|x| &x[..n]);
    for i in 0..n {
        out[i] = b
            + t[0] * s0[i]
            + t[1] * s1[i]
            + t[2] * s2[i]
            + t[3] * s3[i]
            + t[4] * s4[i]
            + t[5] * s5[i]
            + t[6] * s6[i]
            + t[7] * s7[i]
            + t[8] * s8[i];
    }
}

/// One channel plane with unit-stride rows, any kernel: each tap is one multiply-add
/// pass over the valid span of the output row. `x` and `y` start at the plane.
#[inline(always)]
fn depthwise_plane(g: &Geom, x: &[f32], y: &mut [f32], yrs: usize, taps: &[f32], b: f32) {
    let xrs = g.is[2];
    for oy in 0..g.oh {
        let yrow = &mut y[oy * yrs..oy * yrs + g.ow];
        let iy0 = (oy * g.sh) as isize - g.ph as isize;
        yrow.fill(b);
        for ky in 0..g.kh {
            let iy = iy0 + (ky * g.dh) as isize;
            if iy < 0 || iy as usize >= g.ih {
                continue;
            }
            let xrow = &x[iy as usize * xrs..iy as usize * xrs + g.iw];
            for kx in 0..g.kw {
                let t = taps[ky * g.kw + kx];
                let (lo, hi) = Geom::valid_range(g.ow, g.iw, g.sw, kx * g.dw, g.pw);
                if lo >= hi {
                    continue;
                }
                let ix0 = lo * g.sw + kx * g.dw - g.pw;
                if g.sw == 1 {
                    for (d, &v) in yrow[lo..hi].iter_mut().zip(&xrow[ix0..ix0 + (hi - lo)]) {
                        *d += t * v;
                    }
                } else {
                    for (k, d) in yrow[lo..hi].iter_mut().enumerate() {
                        *d += t * xrow[ix0 + k * g.sw];
                    }
                }
            }
        }
    }
}

/// Depthwise conv of one output channel through arbitrary strides (channels-last and
/// other layouts).
#[allow(clippy::too_many_arguments, reason = "one channel of one image")]
fn depthwise_strided(
    g: &Geom,
    x: &[f32],
    w: &[f32],
    b: f32,
    y: &mut [f32],
    os: [usize; 4],
    xb: usize,
    yb: usize,
    wb: usize,
) {
    for oy in 0..g.oh {
        for ox in 0..g.ow {
            let mut acc = b;
            for ky in 0..g.kh {
                let iy = (oy * g.sh + ky * g.dh) as isize - g.ph as isize;
                if iy < 0 || iy as usize >= g.ih {
                    continue;
                }
                for kx in 0..g.kw {
                    let ix = (ox * g.sw + kx * g.dw) as isize - g.pw as isize;
                    if ix < 0 || ix as usize >= g.iw {
                        continue;
                    }
                    acc += w[wb + ky * g.ws[2] + kx * g.ws[3]]
                        * x[xb + iy as usize * g.is[2] + ix as usize * g.is[3]];
                }
            }
            y[yb + oy * os[2] + ox * os[3]] = acc;
        }
    }
}
