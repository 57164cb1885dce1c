//! Packing of A and B blocks into micro-kernel panels.

use super::Mat;

/// Packs rows `i0..i0+mc`, columns `p0..p0+kc` of A into `MR`-row panels: panel `q`
/// holds, for each `p`, the `MR` values of column `p` (rows past `mc` are zero).
#[inline(always)]
pub(super) fn pack_a<'p, const MR: usize>(
    a: Mat<'_, f32>,
    i0: usize,
    mc: usize,
    p0: usize,
    kc: usize,
    buf: &'p mut [f32],
    pack_rows: &impl Fn(&[&[f32]; MR], &mut [[f32; MR]]),
) -> &'p [[f32; MR]] {
    let panels = mc.div_ceil(MR);
    let (chunks, _) = buf.as_chunks_mut::<MR>();
    let out = &mut chunks[..panels * kc];
    for (q, panel) in out.chunks_exact_mut(kc).enumerate() {
        let r0 = i0 + q * MR;
        let rows = (mc - q * MR).min(MR);
        if a.cs == 1 && rows == MR {
            // Row-major A, full panel: walk the MR rows side by side so every panel
            // entry is written once, in order.
            let srcs: [&[f32]; MR] = core::array::from_fn(|r| {
                let start = (r0 + r) * a.rs + p0;
                &a.data[start..start + kc]
            });
            pack_rows(&srcs, panel);
        } else if a.cs == 1 {
            // Row-major A, partial panel: read each row contiguously.
            for r in 0..MR {
                if r < rows {
                    let start = (r0 + r) * a.rs + p0;
                    let src = &a.data[start..start + kc];
                    for (dst, &v) in panel.iter_mut().zip(src) {
                        dst[r] = v;
                    }
                } else {
                    for dst in panel.iter_mut() {
                        dst[r] = 0.0;
                    }
                }
            }
        } else {
            for (p, dst) in panel.iter_mut().enumerate() {
                let base = (p0 + p) * a.cs;
                for (r, d) in dst.iter_mut().enumerate() {
                    *d = if r < rows {
                        a.data[base + (r0 + r) * a.rs]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
    // Stored as `[panel][p][r]`; panels are `kc` rows of `[f32; MR]`.
    out
}

/// Packs a full A panel from its `MR` row slices (each `panel.len()` long): entry `p` of
/// the panel holds column `p` of the rows. The portable version; x86 paths transpose
/// 4x8 blocks in registers instead.
#[inline(always)]
pub(super) fn pack_rows_portable<const MR: usize>(srcs: &[&[f32]; MR], panel: &mut [[f32; MR]]) {
    for (p, dst) in panel.iter_mut().enumerate() {
        for (d, src) in dst.iter_mut().zip(srcs) {
            *d = src[p];
        }
    }
}

/// Packs rows `p0..p0+kc`, columns `j0..j0+nc` of B into `NR`-column panels: panel `q`
/// holds, for each `p`, the `NR` values of row `p` (columns past `nc` are zero).
/// `pack_cols` builds a full panel of a column-major B from its `NR` column slices (the
/// transpose `pack_a` makes of `MR` rows).
#[inline(always)]
pub(super) fn pack_b<'p, const NR: usize>(
    b: Mat<'_, f32>,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    buf: &'p mut [f32],
    pack_cols: &impl Fn(&[&[f32]; NR], &mut [[f32; NR]]),
) -> &'p [[f32; NR]] {
    let panels = nc.div_ceil(NR);
    let (chunks, _) = buf.as_chunks_mut::<NR>();
    let out = &mut chunks[..panels * kc];
    for (q, panel) in out.chunks_exact_mut(kc).enumerate() {
        let c0 = j0 + q * NR;
        let cols = (nc - q * NR).min(NR);
        if b.cs == 1 && cols == NR {
            for (p, dst) in panel.iter_mut().enumerate() {
                let start = (p0 + p) * b.rs + c0;
                dst.copy_from_slice(&b.data[start..start + NR]);
            }
        } else if b.rs == 1 && cols == NR {
            // Column-major B (a transposed weight read in place, `method::views` in
            // et-runtime), full panel: the `NR` columns are contiguous, so the panel is
            // their transpose, built as `pack_a` builds a row-major A panel.
            let srcs: [&[f32]; NR] = core::array::from_fn(|j| {
                let start = (c0 + j) * b.cs + p0;
                &b.data[start..start + kc]
            });
            pack_cols(&srcs, panel);
            // (A partial last panel, a few columns, takes the general path below.)
        } else {
            for (p, dst) in panel.iter_mut().enumerate() {
                let base = (p0 + p) * b.rs;
                for (j, d) in dst.iter_mut().enumerate() {
                    *d = if j < cols {
                        b.data[base + (c0 + j) * b.cs]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
    out
}
