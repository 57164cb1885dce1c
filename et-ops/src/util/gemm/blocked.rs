//! The blocked driver and the write-back of computed tiles into C.

use super::epilogue::TileMap;
use super::{pack_a, pack_b, Blocking, Epilogue, Mat, MatMut};

/// The blocked driver, generic over the tile shape and micro-kernel; inlined into each
/// target-feature entry point so packing and write-back get the same instruction set.
#[inline(always)]
#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
pub(super) fn blocked<const MR: usize, const NR: usize>(
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    ap: &mut [f32],
    bp: &mut [f32],
    blk: Blocking,
    ukr: impl Fn(&[[f32; MR]], &[f32], usize, usize, usize, Out<'_, MR, NR>),
    pack_rows: impl Fn(&[&[f32]; MR], &mut [[f32; MR]]),
) {
    let (m, n, k) = (c.rows, c.cols, a.cols);
    let cdata = c.data;
    let mut tile = [[0.0f32; NR]; MR];
    let mut jc = 0;
    while jc < n {
        let nc = (n - jc).min(blk.nc);
        let mut pc = 0;
        while pc < k {
            let kc = (k - pc).min(blk.kc);
            // Row-major B is read in place, one `kc x NR` strided panel per micro-kernel
            // call (it stays in L1 across the A panels); only a partial last panel is
            // packed (zero-padded). Other layouts are packed whole.
            let direct = b.cs == 1 && b.rs >= NR;
            let full = nc / NR;
            let bpack = if !direct {
                pack_b(&b, pc, kc, jc, nc, NR, bp)
            } else if nc % NR != 0 {
                pack_b(&b, pc, kc, jc + full * NR, nc % NR, NR, bp)
            } else {
                &[]
            };
            // The first k-block applies beta; later ones accumulate. The last one's tiles
            // are final: the epilogue maps each as it is stored (full tiles in the
            // micro-kernel's registers, edge tiles right after the scratch tile's merge).
            let (beta_eff, first) = if pc == 0 { (beta, true) } else { (1.0, false) };
            let finish = epilogue.filter(|_| pc + kc == k);
            let mut ic = 0;
            while ic < m {
                let mc = (m - ic).min(blk.mc);
                let apack = pack_a::<MR>(a, ic, mc, pc, kc, ap, &pack_rows);
                for jp in 0..nc.div_ceil(NR) {
                    let j0 = jp * NR;
                    let nr = (nc - j0).min(NR);
                    let (bpanel, ldb): (&[f32], usize) = if direct && nr == NR {
                        let start = pc * b.rs + jc + j0;
                        let end = start + (kc - 1) * b.rs + NR;
                        (b.data.get(start..end).unwrap_or(&[]), b.rs)
                    } else {
                        let q = if direct { 0 } else { jp };
                        let panel = bpack.get(q * kc * NR..(q + 1) * kc * NR);
                        (panel.unwrap_or(&[]), NR)
                    };
                    for (ip, apanel) in apack.chunks_exact(kc).enumerate() {
                        let i0 = ip * MR;
                        let mr = (mc - i0).min(MR);
                        let off = (ic + i0) * c.rs + (jc + j0) * c.cs;
                        if mr == MR && nr == NR && c.cs == 1 {
                            // A full tile of row-contiguous C: the kernel merges it
                            // straight from its registers, and maps it there if final.
                            let beta = if first { beta_eff } else { 1.0 };
                            let dst = cdata.get_mut(off..).unwrap_or_default();
                            ukr(
                                apanel,
                                bpanel,
                                ldb,
                                MR,
                                NR,
                                Out::C {
                                    c: dst,
                                    rs: c.rs,
                                    alpha,
                                    beta,
                                    map: finish.as_ref().and_then(|e| e.tile_map(ic + i0)),
                                },
                            );
                        } else {
                            ukr(apanel, bpanel, ldb, mr, nr, Out::Tile(&mut tile));
                            store_tile(
                                &tile, cdata, off, c.rs, c.cs, mr, nr, alpha, beta_eff, first,
                            );
                            if let Some(e) = &finish {
                                e.apply_tile(cdata, off, c.rs, c.cs, ic + i0, mr, nr);
                            }
                        }
                    }
                }
                ic += mc;
            }
            pc += kc;
        }
        jc += nc;
    }
}

/// Writes the valid `mr x nr` corner of a tile into C: `C = alpha * T + beta * C` on the
/// first k-block (`beta == 0`: C not read), `C += alpha * T` afterwards.
#[inline(always)]
#[allow(
    clippy::too_many_arguments,
    reason = "hot inner helper; a struct would not help"
)]
pub(super) fn store_tile<const MR: usize, const NR: usize>(
    t: &[[f32; NR]; MR],
    c: &mut [f32],
    off: usize,
    rs: usize,
    cs: usize,
    mr: usize,
    nr: usize,
    alpha: f32,
    beta: f32,
    first: bool,
) {
    let overwrite = first && beta == 0.0;
    let scale_c = if first { beta } else { 1.0 };
    for (i, trow) in t.iter().enumerate().take(mr) {
        let base = off + i * rs;
        if cs == 1 {
            let row = &mut c[base..base + nr];
            let trow = &trow[..nr];
            if overwrite {
                for (d, &v) in row.iter_mut().zip(trow) {
                    *d = alpha * v;
                }
            } else if scale_c == 1.0 && alpha == 1.0 {
                for (d, &v) in row.iter_mut().zip(trow) {
                    *d += v;
                }
            } else {
                for (d, &v) in row.iter_mut().zip(trow) {
                    *d = alpha * v + scale_c * *d;
                }
            }
        } else {
            for (j, &v) in trow.iter().enumerate().take(nr) {
                let d = &mut c[base + j * cs];
                *d = if overwrite {
                    alpha * v
                } else {
                    alpha * v + scale_c * *d
                };
            }
        }
    }
}

/// Where a micro-kernel puts its `MR x NR` tile.
pub(super) enum Out<'t, const MR: usize, const NR: usize> {
    /// Into a scratch tile (edge tiles, column-strided C); the driver merges it into C.
    Tile(&'t mut [[f32; NR]; MR]),
    /// Straight into a full tile of C whose rows are contiguous: row `i` is
    /// `c[i * rs..i * rs + NR]`, and `C = alpha * T + beta * C` (`beta == 0`: C is not
    /// read), then mapped by `map` if any (the final k-block of a product with an
    /// epilogue).
    C {
        c: &'t mut [f32],
        rs: usize,
        alpha: f32,
        beta: f32,
        map: Option<TileMap<'t, MR>>,
    },
}

/// Merges a computed tile into a full row-contiguous C tile (see [`Out::C`]).
#[inline(always)]
pub(super) fn merge_full<const MR: usize, const NR: usize>(
    t: &[[f32; NR]; MR],
    c: &mut [f32],
    rs: usize,
    alpha: f32,
    beta: f32,
    map: Option<TileMap<'_, MR>>,
) {
    for (i, trow) in t.iter().enumerate() {
        let Some(row) = c.get_mut(i * rs..i * rs + NR) else {
            return;
        };
        if beta == 0.0 {
            for (d, &v) in row.iter_mut().zip(trow) {
                *d = alpha * v;
            }
        } else {
            for (d, &v) in row.iter_mut().zip(trow) {
                *d = alpha * v + beta * *d;
            }
        }
        if let Some(m) = &map {
            for d in row {
                *d = m.one(i, *d);
            }
        }
    }
}
