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

/// Packs rows `p0..p0+kc`, columns `j0..j0+nc` of B into `nr`-column panels, returned
/// flat: panel `q` is `kc * nr` floats, entry `(p, j)` at `p * nr + j` (columns past `nc`
/// are zero). Shapes are checked.
///
/// One routine for every layout and micro-kernel width, out of line: B is packed once
/// per `kc x nc` block and then read by every A panel, so a call costs little next to
/// the products, and a runtime `nr` keeps one copy of the code instead of one per
/// driver. A row-major B is mostly read in place (`blocked`); what comes here is a
/// partial last panel or an unusual layout. A column-major B (a transposed weight read in
/// place, the constant-view rewrite rule (`linalg::constant_view`)) has contiguous columns: on x86-64, four at a
/// time are transposed in registers rather than gathered one element at a time.
#[inline(never)]
pub(super) fn pack_b<'p>(
    b: &Mat<'_, f32>,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    nr: usize,
    buf: &'p mut [f32],
) -> &'p [f32] {
    let panels = nc.div_ceil(nr);
    let out = &mut buf[..panels * kc * nr];
    for (q, panel) in out.chunks_exact_mut(kc * nr).enumerate() {
        let c0 = j0 + q * nr;
        let cols = (nc - q * nr).min(nr);
        // Rows `0..kc / 4 * 4` of columns `0..done` are written by the transposes.
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut, reason = "x86-64 only"))]
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if b.rs == 1 {
            while done + 4 <= cols {
                // SAFETY: SSE is part of x86-64's baseline: every x86-64 CPU has it.
                unsafe { transpose4(b.data, (c0 + done) * b.cs + p0, b.cs, kc, panel, done, nr) };
                done += 4;
            }
        }
        for p in 0..kc {
            let from = if p < kc / 4 * 4 { done } else { 0 };
            let base = (p0 + p) * b.rs + c0 * b.cs;
            let row = &mut panel[p * nr..(p + 1) * nr];
            if b.cs == 1 {
                row[from..cols].copy_from_slice(&b.data[base + from..base + cols]);
            } else {
                for (j, d) in row[..cols].iter_mut().enumerate().skip(from) {
                    *d = b.data[base + j * b.cs];
                }
            }
            row[cols..].fill(0.0);
        }
    }
    out
}

/// Copies rows `0..kc / 4 * 4` of four contiguous columns (column `i` is
/// `src[start + i * cs..][..kc]`) into columns `j..j + 4` of a panel whose rows are `nr`
/// apart, a 4x4 block at a time transposed in SSE registers (x86-64's baseline). Out of
/// line: inlined, it made `pack_b` twice as large.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse")]
#[inline(never)]
#[allow(
    clippy::too_many_arguments,
    reason = "the one caller's locals; a struct would not help"
)]
fn transpose4(
    src: &[f32],
    start: usize,
    cs: usize,
    kc: usize,
    panel: &mut [f32],
    j: usize,
    nr: usize,
) {
    use core::arch::x86_64::*;
    let rows = kc / 4 * 4;
    if rows == 0 {
        return;
    }
    // One check for the whole block (checked shapes always pass it): the end of the last
    // column's rows read, and of the last panel row written.
    assert!(start + 3 * cs + rows <= src.len() && (rows - 1) * nr + j + 4 <= panel.len());
    let (s, d) = (src.as_ptr(), panel.as_mut_ptr());
    for p in (0..rows).step_by(4) {
        // SAFETY: column `i < 4` is read at `start + i * cs + p..+ 4`, which ends at most
        // at `start + 3 * cs + rows <= src.len()` (asserted above); the loads are
        // unaligned.
        let (a, b, c, e) = unsafe {
            let col = s.add(start + p);
            (
                _mm_loadu_ps(col),
                _mm_loadu_ps(col.add(cs)),
                _mm_loadu_ps(col.add(2 * cs)),
                _mm_loadu_ps(col.add(3 * cs)),
            )
        };
        let (t0, t1) = (_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));
        let (t2, t3) = (_mm_unpacklo_ps(c, e), _mm_unpackhi_ps(c, e));
        // SAFETY: panel row `p + i < rows` is written at `(p + i) * nr + j..+ 4`, which
        // ends at most at `(rows - 1) * nr + j + 4 <= panel.len()` (asserted above), and
        // `panel` is exclusively borrowed; the stores are unaligned. Row `p + i` gets
        // element `p + i` of each column.
        unsafe {
            let row = d.add(p * nr + j);
            _mm_storeu_ps(row, _mm_movelh_ps(t0, t2));
            _mm_storeu_ps(row.add(nr), _mm_movehl_ps(t2, t0));
            _mm_storeu_ps(row.add(2 * nr), _mm_movelh_ps(t1, t3));
            _mm_storeu_ps(row.add(3 * nr), _mm_movehl_ps(t3, t1));
        }
    }
}
