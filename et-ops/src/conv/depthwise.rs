//! f32 depthwise convolution (one input channel per group): a direct loop per channel
//! plane, with 3x3 stride-1/2 planes going through a zero-padded, phase-split copy so
//! every tap is one long vector loop. Called from [`fast`](super::fast).

use et_runtime::{KernelContext, KernelResult};

use super::geom::Geom;
#[cfg(target_arch = "x86_64")]
use crate::util::gemm::avx2_fma_available;
use crate::util::gemm::Epilogue;

/// Depthwise convolution (`cin_g == 1`; `cout_g` output channels per input channel),
/// each output row mapped by `epilogue` (row `c`: channel `c`) as soon as it is final.
#[allow(
    clippy::too_many_arguments,
    reason = "one convolution and its epilogue"
)]
pub(super) fn depthwise(
    ctx: &KernelContext<'_>,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    epilogue: Option<Epilogue<'_>>,
) -> KernelResult {
    let rows_contiguous = g.is[3] == 1 && os[3] == 1;
    if !rows_contiguous || g.kh * g.kw > MAX_TAPS {
        for n in 0..g.n {
            for co in 0..g.cout {
                let ci = co / g.cout_g;
                let b = bias.map_or(0.0, |b| b[co]);
                let (xb, yb) = (n * g.is[0] + ci * g.is[1], n * os[0] + co * os[1]);
                let rows = Rows {
                    stride: os[2],
                    epilogue,
                    channel: co,
                };
                depthwise_strided(g, x, w, b, y, os, xb, yb, co * g.ws[0], rows);
            }
        }
        return Ok(());
    }
    let planes = g.n * g.cout;
    let mut flats: [Option<Phases<'_>>; MAX_PARTS] = Default::default();
    flats[0] = Phases::alloc(ctx, g)?;
    let mut parts = split_parts(ctx.workers(), g, os);
    let chunk = planes.div_ceil(parts);
    parts = planes.div_ceil(chunk);
    // Each task gets a run of whole planes (its own slice of `y`) and its own phase
    // buffers, taken here: the scratch arena is not shared between threads. Without
    // scratch for them, the convolution runs whole.
    for flat in flats.iter_mut().take(parts).skip(1) {
        match Phases::alloc(ctx, g) {
            Ok(f) => *flat = f,
            Err(_) => parts = 1,
        }
    }
    if parts < 2 {
        run_planes(
            g,
            x,
            w,
            bias,
            y,
            os,
            flats[0].as_mut(),
            (0, planes),
            epilogue,
        );
        return Ok(());
    }
    let mut items: [Option<PlaneBlock<'_>>; MAX_PARTS] = Default::default();
    let mut rest = y;
    for (p, (item, flat)) in items.iter_mut().zip(&mut flats).take(parts).enumerate() {
        let first = p * chunk;
        let end = (first + chunk).min(planes);
        let take = if p + 1 == parts {
            rest.len()
        } else {
            ((end - first) * os[1]).min(rest.len())
        };
        let (piece, tail) = core::mem::take(&mut rest).split_at_mut(take);
        rest = tail;
        *item = Some(PlaneBlock {
            y: piece,
            flat: flat.take(),
            planes: (first, end),
        });
    }
    ctx.parallel_each(&mut items[..parts], |_, item| {
        if let Some(mut b) = item.take() {
            run_planes(g, x, w, bias, b.y, os, b.flat.as_mut(), b.planes, epilogue);
        }
    });
    Ok(())
}

/// The least work (multiply-adds) worth a task.
const MIN_MACS_PER_PART: usize = 1 << 16;

/// The most blocks one convolution is cut into.
const MAX_PARTS: usize = 16;

/// Into how many runs of planes to cut the convolution: 1 (run whole) unless the
/// context has workers, the work is large enough, and the output planes `(n, c)` lie one
/// after the other in memory (so each run is its own slice of `y`).
fn split_parts(workers: usize, g: &Geom, os: [usize; 4]) -> usize {
    let planes = g.n * g.cout;
    if workers < 2 || planes < 2 {
        return 1;
    }
    let plane_extent = (g.oh - 1) * os[2] + (g.ow - 1) * os[3] + 1;
    let linear = (g.n == 1 || os[0] == g.cout * os[1]) && os[1] >= plane_extent;
    if !linear {
        return 1;
    }
    let macs = planes
        .saturating_mul(g.oh * g.ow)
        .saturating_mul(g.kh * g.kw);
    workers
        .min(macs / MIN_MACS_PER_PART)
        .min(MAX_PARTS)
        .min(planes)
        .max(1)
}

/// One task of a split convolution: output planes `planes.0..planes.1`, whose slice of
/// the output `y` starts at the first of them.
struct PlaneBlock<'a> {
    y: &'a mut [f32],
    flat: Option<Phases<'a>>,
    planes: (usize, usize),
}

/// Output planes `planes.0..planes.1` (numbered `n * cout + c`) with unit-stride rows;
/// `y` starts at the first of them.
#[allow(clippy::too_many_arguments, reason = "one block of one convolution")]
fn run_planes(
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    flat: Option<&mut Phases<'_>>,
    planes: (usize, usize),
    epilogue: Option<Epilogue<'_>>,
) {
    // On aarch64 the baseline build is the NEON path: the tap loops below vectorize to
    // 4-wide NEON multiply-adds (the 3x3 planes' nine-tap sum is hand-written, in
    // depthwise_neon.rs), and there is no wider vector to recompile them for.
    #[cfg(target_arch = "x86_64")]
    if avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 and FMA (checked by `avx2_fma_available`), all the
        // target-feature function requires.
        unsafe { depthwise_planes_avx2(g, x, w, bias, y, os, flat, planes, epilogue) };
        return;
    }
    depthwise_planes(g, x, w, bias, y, os, flat, planes, epilogue);
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

impl<'a> Phases<'a> {
    /// The phase buffers for `g` from the context's scratch, if `g` takes the phase
    /// layout.
    fn alloc(ctx: &'a KernelContext<'_>, g: &Geom) -> KernelResult<Option<Self>> {
        let Some(geo) = Self::geometry(g) else {
            return Ok(None);
        };
        let src = ctx.alloc_temp::<f32>(geo.src_len())?;
        // Padding cells stay zero: each plane only overwrites the interior.
        src.fill(0.0);
        let acc = ctx.alloc_temp::<f32>(g.oh * geo.wp)?;
        Ok(Some(Phases { geo, src, acc }))
    }

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
#[allow(clippy::too_many_arguments, reason = "one block of one convolution")]
fn depthwise_planes_avx2(
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    flat: Option<&mut Phases<'_>>,
    planes: (usize, usize),
    epilogue: Option<Epilogue<'_>>,
) {
    depthwise_planes(g, x, w, bias, y, os, flat, planes, epilogue);
}

/// Output planes `planes.0..planes.1` (numbered `n * cout + c`) of a depthwise conv with
/// unit-stride rows (NCHW); `y` starts at the first of them (at the whole output when
/// the first is 0, else the planes lie one after the other). Inlined into the AVX2
/// instantiation.
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "one block of one convolution")]
fn depthwise_planes(
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    os: [usize; 4],
    mut flat: Option<&mut Phases<'_>>,
    planes: (usize, usize),
    epilogue: Option<Epilogue<'_>>,
) {
    let mut taps = [0.0f32; MAX_TAPS];
    let origin = planes.0 * os[1];
    for q in planes.0..planes.1 {
        let (n, co) = (q / g.cout, q % g.cout);
        {
            let ci = co / g.cout_g;
            let b = bias.map_or(0.0, |b| b[co]);
            let xb = n * g.is[0] + ci * g.is[1];
            let yb = n * os[0] + co * os[1] - origin;
            let wb = co * g.ws[0];
            for ky in 0..g.kh {
                for kx in 0..g.kw {
                    taps[ky * g.kw + kx] = w[wb + ky * g.ws[2] + kx * g.ws[3]];
                }
            }
            let taps = &taps[..g.kh * g.kw];
            let rows = Rows {
                stride: os[2],
                epilogue,
                channel: co,
            };
            match flat.as_deref_mut() {
                Some(ph) => dw3x3_flat(g, &x[xb..], &mut y[yb..], rows, taps, b, ph),
                None => depthwise_plane(g, &x[xb..], &mut y[yb..], rows, taps, b),
            }
        }
    }
}

/// How one output plane's rows are written: their stride in the output, and the
/// epilogue of their channel, applied to each row once it is final.
#[derive(Clone, Copy)]
struct Rows<'e> {
    stride: usize,
    epilogue: Option<Epilogue<'e>>,
    channel: usize,
}

impl Rows<'_> {
    #[inline(always)]
    fn finish(&self, row: &mut [f32]) {
        if let Some(e) = &self.epilogue {
            e.apply(self.channel, row);
        }
    }
}

/// One 3x3 plane through the phase layout (see [`PhaseGeom`]). `x` and `y` start at the
/// plane.
#[inline(always)]
fn dw3x3_flat(
    g: &Geom,
    x: &[f32],
    y: &mut [f32],
    rows: Rows<'_>,
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
    let yrs = rows.stride;
    for oy in 0..g.oh {
        let row = &mut y[oy * yrs..oy * yrs + g.ow];
        let sums = &acc[oy * wp..oy * wp + g.ow];
        match &rows.epilogue {
            // Mapped on the way out of the accumulator: one pass, not a copy and a map.
            Some(e) => e.apply_from(rows.channel, sums, row),
            None => row.copy_from_slice(sums),
        }
    }
}

/// `out[i] = b + sum_k t[k] * s[k][i]` over nine slices at least `out.len()` long.
#[inline(always)]
fn fused9(out: &mut [f32], s: [&[f32]; 9], t: &[f32; 9], b: f32) {
    #[cfg(target_arch = "aarch64")]
    neon::fused9(out, s, t, b);
    #[cfg(not(target_arch = "aarch64"))]
    fused9_portable(out, s, t, b);
}

/// [`fused9`] in plain Rust, which the compiler vectorizes for the build's target.
#[inline(always)]
fn fused9_portable(out: &mut [f32], s: [&[f32]; 9], t: &[f32; 9], b: f32) {
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
fn depthwise_plane(g: &Geom, x: &[f32], y: &mut [f32], rows: Rows<'_>, taps: &[f32], b: f32) {
    let xrs = g.is[2];
    let yrs = rows.stride;
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
        rows.finish(yrow);
    }
}

/// Depthwise conv of one output channel through arbitrary strides (channels-last and
/// other layouts), each output mapped by `rows`' epilogue as it is stored.
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
    rows: Rows<'_>,
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
            let out = &mut y[yb + oy * os[2] + ox * os[3]];
            *out = acc;
            // Mapped as it is stored (a one-element row: the values are strided).
            rows.finish(core::slice::from_mut(out));
        }
    }
}

#[cfg(target_arch = "aarch64")]
#[path = "depthwise_neon.rs"]
mod neon;
