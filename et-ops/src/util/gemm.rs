//! The matrix-multiply core: `C = alpha * A * B + beta * C` over strided matrices.
//!
//! [`sgemm`] is the f32 path every compute-heavy kernel funnels into (`mm`, `bmm`,
//! `addmm`, pointwise and im2col convolutions). It is the classic blocked design: A is
//! packed into `MC x KC` blocks of `MR`-high row panels (zero-padded), B is consumed in
//! `KC x NC` blocks of `NR`-wide column panels, and a register-tiled micro-kernel computes
//! one `MR x NR` tile of C per call.
//!
//! - B: a row-major B (the activations of an NCHW pointwise conv, im2col columns) is read
//!   in place, one strided `KC x NR` panel per call, which stays in L1 while it meets
//!   every A panel; only a partial last panel is copied (zero-padded). Other layouts are
//!   packed whole, so transposes and channels-last views cost one packing pass.
//! - C: full tiles of a row-contiguous C are merged straight from the accumulator
//!   registers (`alpha`, `beta` applied there); edge tiles and column-strided C go through
//!   a scratch tile. Edge tiles run a kernel instantiation with just enough rows and
//!   vectors, so a 64 x 196 product does not pay for 72 x 224.
//!
//! Micro-kernels, the widest the CPU supports (checked once with `cpuid`, including the
//! OS's `XCR0` state bits; the portable one everywhere else):
//! - portable: plain arrays the compiler vectorizes for the build's baseline (SSE2 on
//!   x86-64: a 6x8 tile in 12 xmm accumulators; NEON on aarch64);
//! - AVX2 + FMA: 6x16 tiles in 12 ymm accumulators;
//! - AVX-512F: 12x32 tiles in 24 zmm accumulators.
//!
//! FMA rounds once per multiply-add, so the SIMD paths can differ from the portable one in
//! the last bits (as PyTorch's own BLAS backends differ from each other).
//!
//! Measured on this project's x86-64 machine (best of many runs, `bench_sgemm`), GFLOP/s
//! portable / AVX2 / AVX-512: 256^3 32 / 102 / 159; mv2's pointwise shapes (Cout x HW x
//! Cin) 24x3136x144 31 / 87 / 132, 192x784x32 32 / 95 / 147, 1280x49x320 27 / 76 / 88.
//! The `matrixmultiply` crate (0.3.11) was measured on the same shapes: built `no_std`
//! (default features off), as et-ops must be, it has no run-time CPU detection and runs
//! its SSE2 kernels at 26-32 GFLOP/s, 3-4x slower than this module; only with `std`
//! (run-time dispatch, unavailable to a `no_std` crate) is it on par with the AVX-512 path
//! here (within about 10% either way per shape). So no dependency.
//!
//! `beta == 0` means C is write-only, as in BLAS: NaN or garbage in C does not leak into
//! the result. Scratch: packing buffers come from the kernel context; at most
//! `(MC + NC) * KC` floats, and for small problems only what the padded operands need
//! (see [`sgemm_scratch_bytes`]).
//!
//! Other dtypes use [`gemm_ref`], a straightforward loop accumulating in f64.

use et_runtime::{KernelContext, KernelError, KernelResult};

use super::element::Num;

/// A read-only strided matrix: element `(i, j)` is `data[i * rs + j * cs]`.
#[derive(Clone, Copy, Debug)]
pub struct Mat<'a, T> {
    /// The elements (at least up to the last addressed one).
    pub data: &'a [T],
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Element step between rows.
    pub rs: usize,
    /// Element step between columns.
    pub cs: usize,
}

/// A writable strided matrix, laid out as [`Mat`].
#[derive(Debug)]
pub struct MatMut<'a, T> {
    /// The elements.
    pub data: &'a mut [T],
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Element step between rows.
    pub rs: usize,
    /// Element step between columns.
    pub cs: usize,
}

impl<'a, T> Mat<'a, T> {
    /// A row-major `rows x cols` matrix over `data`.
    pub fn row_major(data: &'a [T], rows: usize, cols: usize) -> Self {
        Mat {
            data,
            rows,
            cols,
            rs: cols,
            cs: 1,
        }
    }

    /// The transpose (a view: strides swapped).
    pub fn t(self) -> Self {
        Mat {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
        }
    }
}

impl<'a, T> MatMut<'a, T> {
    /// A row-major `rows x cols` matrix over `data`.
    pub fn row_major(data: &'a mut [T], rows: usize, cols: usize) -> Self {
        MatMut {
            data,
            rows,
            cols,
            rs: cols,
            cs: 1,
        }
    }
}

/// True if every addressed element of a `rows x cols` matrix with these strides lies in
/// `0..len` (an empty matrix addresses nothing).
fn fits(len: usize, rows: usize, cols: usize, rs: usize, cs: usize) -> bool {
    if rows == 0 || cols == 0 {
        return true;
    }
    let last = (rows - 1)
        .checked_mul(rs)
        .and_then(|r| (cols - 1).checked_mul(cs).and_then(|c| r.checked_add(c)));
    matches!(last, Some(l) if l < len)
}

fn check_shapes<T>(a: &Mat<'_, T>, b: &Mat<'_, T>, c: &MatMut<'_, T>) -> KernelResult {
    if a.rows != c.rows || b.cols != c.cols || a.cols != b.rows {
        return Err(KernelError::invalid(
            "matrix shapes do not match for a product",
        ));
    }
    if !fits(a.data.len(), a.rows, a.cols, a.rs, a.cs)
        || !fits(b.data.len(), b.rows, b.cols, b.rs, b.cs)
        || !fits(c.data.len(), c.rows, c.cols, c.rs, c.cs)
    {
        return Err(KernelError::invalid("matrix view exceeds its data"));
    }
    Ok(())
}

/// `C = alpha * A * B + beta * C` for any element type, accumulating in f64 and rounding
/// once per element. `beta == 0` ignores C's contents.
pub fn gemm_ref<T: Num>(
    alpha: f64,
    a: Mat<'_, T>,
    b: Mat<'_, T>,
    beta: f64,
    c: MatMut<'_, T>,
) -> KernelResult {
    check_shapes(&a, &b, &c)?;
    for i in 0..c.rows {
        for j in 0..c.cols {
            let mut acc = 0.0f64;
            for p in 0..a.cols {
                acc += a.data[i * a.rs + p * a.cs].to_f64() * b.data[p * b.rs + j * b.cs].to_f64();
            }
            let slot = &mut c.data[i * c.rs + j * c.cs];
            let prev = if beta == 0.0 {
                0.0
            } else {
                beta * slot.to_f64()
            };
            *slot = T::from_f64(alpha * acc + prev);
        }
    }
    Ok(())
}

/// Block sizes of one micro-kernel family.
#[derive(Clone, Copy)]
struct Blocking {
    mc: usize,
    kc: usize,
    nc: usize,
}

const KC: usize = 256;

/// Portable tile: 6 rows x 8 columns (12 SSE2 accumulators).
const P_MR: usize = 6;
const P_NR: usize = 8;
const P_BLOCK: Blocking = Blocking {
    mc: 120,
    kc: KC,
    nc: 2048,
};

/// AVX2 tile: 6 rows x 16 columns (12 ymm accumulators).
#[cfg(target_arch = "x86_64")]
const X_MR: usize = 6;
#[cfg(target_arch = "x86_64")]
const X_NR: usize = 16;
#[cfg(target_arch = "x86_64")]
const X_BLOCK: Blocking = Blocking {
    mc: 120,
    kc: KC,
    nc: 2048,
};

/// AVX-512 tile: 12 rows x 32 columns (24 zmm accumulators).
#[cfg(target_arch = "x86_64")]
const Z_MR: usize = 12;
#[cfg(target_arch = "x86_64")]
const Z_NR: usize = 32;
#[cfg(target_arch = "x86_64")]
const Z_BLOCK: Blocking = Blocking {
    mc: 120,
    kc: KC,
    nc: 2048,
};

/// The micro-kernel families, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Portable,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code, reason = "x86-64 only"))]
    Avx2,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code, reason = "x86-64 only"))]
    Avx512,
}

/// The widest level this machine runs.
fn detected_level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        x86::level()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Level::Portable
    }
}

/// Scratch bytes [`sgemm`] needs for an `m x n x k` product (the packing buffers), an
/// upper bound for either micro-kernel.
pub fn sgemm_scratch_bytes(m: usize, n: usize, k: usize) -> usize {
    let kc = k.min(KC);
    let mc = round_up(m, 12).min(120);
    let nc = round_up(n, 32).min(2048);
    (mc * kc + kc * nc) * 4 + 64
}

#[inline(always)]
fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

/// `C = alpha * A * B + beta * C` in f32 (see the module docs).
pub fn sgemm(
    ctx: &KernelContext<'_>,
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
) -> KernelResult {
    sgemm_impl(ctx, alpha, a, b, beta, c, detected_level())
}

fn sgemm_impl(
    ctx: &KernelContext<'_>,
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    level: Level,
) -> KernelResult {
    check_shapes(&a, &b, &c)?;
    let (m, n, k) = (c.rows, c.cols, a.cols);
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        scale(c, beta);
        return Ok(());
    }
    #[cfg(target_arch = "x86_64")]
    if level == Level::Avx512 {
        let (ap, bp) = alloc_packs(ctx, m, n, k, Z_MR, Z_NR, Z_BLOCK)?;
        // SAFETY: `level` is at most what `detected_level` found with cpuid: the CPU
        // supports AVX-512F (and AVX2, FMA) and the OS saves the zmm and opmask state.
        unsafe { x86::sgemm_avx512(alpha, a, b, beta, c, ap, bp) };
        return Ok(());
    }
    #[cfg(target_arch = "x86_64")]
    if level >= Level::Avx2 {
        let (ap, bp) = alloc_packs(ctx, m, n, k, X_MR, X_NR, X_BLOCK)?;
        // SAFETY: `level` is at most what `detected_level` found with cpuid: the CPU
        // supports AVX2 and FMA and the OS saves the ymm registers (OSXSAVE + XCR0).
        unsafe { x86::sgemm_avx2(alpha, a, b, beta, c, ap, bp) };
        return Ok(());
    }
    let _ = level; // only x86-64 has wider kernels
    let (ap, bp) = alloc_packs(ctx, m, n, k, P_MR, P_NR, P_BLOCK)?;
    blocked::<P_MR, P_NR>(
        alpha,
        a,
        b,
        beta,
        c,
        ap,
        bp,
        P_BLOCK,
        |a, b, ldb, _, _, out| ukr_portable::<P_MR, P_NR>(a, b, ldb, out),
        pack_rows_portable::<P_MR>,
    );
    Ok(())
}

/// True when this x86-64 CPU (and OS) supports AVX2 and FMA, checked once with `cpuid`;
/// always false on other architectures. Kernels with their own `#[target_feature]` loops
/// (depthwise convolution) use it to pick the wider instantiation.
#[inline]
pub fn avx2_fma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::has_avx2_fma()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn alloc_packs<'c>(
    ctx: &'c KernelContext<'_>,
    m: usize,
    n: usize,
    k: usize,
    mr: usize,
    nr: usize,
    blk: Blocking,
) -> KernelResult<(&'c mut [f32], &'c mut [f32])> {
    let kc = k.min(blk.kc);
    let mc = round_up(m, mr).min(blk.mc);
    let nc = round_up(n, nr).min(blk.nc);
    let ap = ctx.alloc_temp::<f32>(mc * kc)?;
    let bp = ctx.alloc_temp::<f32>(kc * nc)?;
    Ok((ap, bp))
}

/// `C = beta * C`, with `beta == 0` writing zeros (not `0 * C`, which keeps NaN).
fn scale(c: MatMut<'_, f32>, beta: f32) {
    for i in 0..c.rows {
        for j in 0..c.cols {
            let s = &mut c.data[i * c.rs + j * c.cs];
            *s = if beta == 0.0 { 0.0 } else { beta * *s };
        }
    }
}

/// The blocked driver, generic over the tile shape and micro-kernel; inlined into each
/// target-feature entry point so packing and write-back get the same instruction set.
#[inline(always)]
#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
fn blocked<const MR: usize, const NR: usize>(
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
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
                pack_b::<NR>(b, pc, kc, jc, nc, bp)
            } else if nc % NR != 0 {
                pack_b::<NR>(b, pc, kc, jc + full * NR, nc % NR, bp)
            } else {
                &[]
            };
            // The first k-block applies beta; later ones accumulate.
            let (beta_eff, first) = if pc == 0 { (beta, true) } else { (1.0, false) };
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
                        let panel = bpack.get(q * kc..(q + 1) * kc).unwrap_or(&[]);
                        (panel.as_flattened(), NR)
                    };
                    for (ip, apanel) in apack.chunks_exact(kc).enumerate() {
                        let i0 = ip * MR;
                        let mr = (mc - i0).min(MR);
                        let off = (ic + i0) * c.rs + (jc + j0) * c.cs;
                        if mr == MR && nr == NR && c.cs == 1 {
                            // A full tile of row-contiguous C: the kernel merges it
                            // straight from its registers.
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
                                },
                            );
                        } else {
                            ukr(apanel, bpanel, ldb, mr, nr, Out::Tile(&mut tile));
                            store_tile(
                                &tile, cdata, off, c.rs, c.cs, mr, nr, alpha, beta_eff, first,
                            );
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

/// Packs rows `i0..i0+mc`, columns `p0..p0+kc` of A into `MR`-row panels: panel `q`
/// holds, for each `p`, the `MR` values of column `p` (rows past `mc` are zero).
#[inline(always)]
fn pack_a<'p, const MR: usize>(
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
fn pack_rows_portable<const MR: usize>(srcs: &[&[f32]; MR], panel: &mut [[f32; MR]]) {
    for (p, dst) in panel.iter_mut().enumerate() {
        for (d, src) in dst.iter_mut().zip(srcs) {
            *d = src[p];
        }
    }
}

/// Packs rows `p0..p0+kc`, columns `j0..j0+nc` of B into `NR`-column panels: panel `q`
/// holds, for each `p`, the `NR` values of row `p` (columns past `nc` are zero).
#[inline(always)]
fn pack_b<'p, const NR: usize>(
    b: Mat<'_, f32>,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    buf: &'p mut [f32],
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

/// Writes the valid `mr x nr` corner of a tile into C: `C = alpha * T + beta * C` on the
/// first k-block (`beta == 0`: C not read), `C += alpha * T` afterwards.
#[inline(always)]
#[allow(
    clippy::too_many_arguments,
    reason = "hot inner helper; a struct would not help"
)]
fn store_tile<const MR: usize, const NR: usize>(
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
enum Out<'t, const MR: usize, const NR: usize> {
    /// Into a scratch tile (edge tiles, column-strided C); the driver merges it into C.
    Tile(&'t mut [[f32; NR]; MR]),
    /// Straight into a full tile of C whose rows are contiguous: row `i` is
    /// `c[i * rs..i * rs + NR]`, and `C = alpha * T + beta * C` (`beta == 0`: C is not
    /// read).
    C {
        c: &'t mut [f32],
        rs: usize,
        alpha: f32,
        beta: f32,
    },
}

/// Merges a computed tile into a full row-contiguous C tile (see [`Out::C`]).
#[inline(always)]
fn merge_full<const MR: usize, const NR: usize>(
    t: &[[f32; NR]; MR],
    c: &mut [f32],
    rs: usize,
    alpha: f32,
    beta: f32,
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
    }
}

/// The portable micro-kernel: `T = sum_p a[p] (outer) b[p]` over one packed A panel and
/// one packed B panel. Written on fixed-size arrays so the compiler keeps the tile in
/// vector registers.
#[inline(always)]
fn ukr_portable<const MR: usize, const NR: usize>(
    a: &[[f32; MR]],
    b: &[f32],
    ldb: usize,
    out: Out<'_, MR, NR>,
) {
    let mut t = [[0.0f32; NR]; MR];
    for (av, brow) in a.iter().zip(b.chunks(ldb)) {
        let Some(bv) = brow.first_chunk::<NR>() else {
            break;
        };
        for i in 0..MR {
            let x = av[i];
            for j in 0..NR {
                t[i][j] += x * bv[j];
            }
        }
    }
    match out {
        Out::Tile(dst) => *dst = t,
        Out::C { c, rs, alpha, beta } => merge_full(&t, c, rs, alpha, beta),
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{blocked, Mat, MatMut, Out, X_BLOCK, X_MR, X_NR, Z_BLOCK, Z_MR, Z_NR};
    use core::arch::x86_64::*;
    use core::sync::atomic::{AtomicU8, Ordering};

    /// The widest micro-kernel this CPU and OS support: 0 not yet checked, 1 portable,
    /// 2 AVX2 + FMA, 3 AVX-512F (checked once with `cpuid`, then cached).
    static LEVEL: AtomicU8 = AtomicU8::new(0);

    /// The detected [`Level`](super::Level).
    #[inline]
    pub(super) fn level() -> super::Level {
        use super::Level;
        let l = match LEVEL.load(Ordering::Relaxed) {
            0 => {
                let l = detect();
                LEVEL.store(l, Ordering::Relaxed);
                l
            }
            l => l,
        };
        match l {
            3 => Level::Avx512,
            2 => Level::Avx2,
            _ => Level::Portable,
        }
    }

    /// True if the CPU and OS support AVX2 and FMA.
    #[inline]
    pub(super) fn has_avx2_fma() -> bool {
        cfg!(all(target_feature = "avx2", target_feature = "fma")) || level() >= super::Level::Avx2
    }

    #[cold]
    fn detect() -> u8 {
        let leaf1 = __cpuid(1);
        let fma = leaf1.ecx & (1 << 12) != 0;
        let osxsave = leaf1.ecx & (1 << 27) != 0;
        let avx = leaf1.ecx & (1 << 28) != 0;
        if !(fma && osxsave && avx) || __get_cpuid_max(0).0 < 7 {
            return 1;
        }
        let leaf7 = __cpuid_count(7, 0);
        let avx2 = leaf7.ebx & (1 << 5) != 0;
        let avx512f = leaf7.ebx & (1 << 16) != 0;
        // SAFETY: OSXSAVE is set, so XGETBV is available; `xcr0` only executes it.
        let xcr0 = unsafe { xcr0() };
        // The OS must save xmm and ymm state (bits 1, 2) for AVX, and additionally the
        // opmask and the upper zmm halves and registers (bits 5, 6, 7) for AVX-512.
        let ymm = xcr0 & 0b110 == 0b110;
        let zmm = xcr0 & 0b1110_0110 == 0b1110_0110;
        match (avx2 && ymm, avx512f && zmm) {
            (true, true) => 3,
            (true, false) => 2,
            _ => 1,
        }
    }

    #[target_feature(enable = "xsave")]
    unsafe fn xcr0() -> u64 {
        // SAFETY: the caller checked OSXSAVE, so XGETBV with ecx = 0 is defined.
        unsafe { _xgetbv(0) }
    }

    /// The blocked driver compiled for AVX2 + FMA with 6x16 micro-kernels.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn sgemm_avx2(
        alpha: f32,
        a: Mat<'_, f32>,
        b: Mat<'_, f32>,
        beta: f32,
        c: MatMut<'_, f32>,
        ap: &mut [f32],
        bp: &mut [f32],
    ) {
        blocked::<X_MR, X_NR>(
            alpha,
            a,
            b,
            beta,
            c,
            ap,
            bp,
            X_BLOCK,
            |a, b, ldb, mr, nr, out| {
                // Edge tiles run a kernel with just enough rows (2, 4, 6) and vectors (1, 2).
                match (mr.div_ceil(2), nr > 8) {
                    (3, true) => ukr_y::<6, 2>(a, b, ldb, out),
                    (3, false) => ukr_y::<6, 1>(a, b, ldb, out),
                    (2, true) => ukr_y::<4, 2>(a, b, ldb, out),
                    (2, false) => ukr_y::<4, 1>(a, b, ldb, out),
                    (_, true) => ukr_y::<2, 2>(a, b, ldb, out),
                    (_, false) => ukr_y::<2, 1>(a, b, ldb, out),
                }
            },
            |srcs, panel| pack_rows_t::<X_MR>(srcs, panel),
        );
    }

    /// The blocked driver compiled for AVX-512F with 12x32 micro-kernels.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) fn sgemm_avx512(
        alpha: f32,
        a: Mat<'_, f32>,
        b: Mat<'_, f32>,
        beta: f32,
        c: MatMut<'_, f32>,
        ap: &mut [f32],
        bp: &mut [f32],
    ) {
        blocked::<Z_MR, Z_NR>(
            alpha,
            a,
            b,
            beta,
            c,
            ap,
            bp,
            Z_BLOCK,
            |a, b, ldb, mr, nr, out| {
                // Edge tiles run a kernel with just enough rows (4, 8, 12) and vectors (1, 2).
                match (mr.div_ceil(4), nr > 16) {
                    (3, true) => ukr_z::<12, 2>(a, b, ldb, out),
                    (3, false) => ukr_z::<12, 1>(a, b, ldb, out),
                    (2, true) => ukr_z::<8, 2>(a, b, ldb, out),
                    (2, false) => ukr_z::<8, 1>(a, b, ldb, out),
                    (_, true) => ukr_z::<4, 2>(a, b, ldb, out),
                    (_, false) => ukr_z::<4, 1>(a, b, ldb, out),
                }
            },
            |srcs, panel| pack_rows_t::<Z_MR>(srcs, panel),
        );
    }

    /// The first `ME` rows and `8 * NV` columns of a 6x16 tile: per step, `NV` 8-wide
    /// loads of B, `ME` broadcasts of A, `ME * NV` FMAs into ymm accumulators.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn ukr_y<const ME: usize, const NV: usize>(
        a: &[[f32; X_MR]],
        b: &[f32],
        ldb: usize,
        out: Out<'_, X_MR, X_NR>,
    ) {
        let mut c = [[_mm256_setzero_ps(); NV]; ME];
        for (av, brow) in a.iter().zip(b.chunks(ldb)) {
            let Some(bv) = brow.first_chunk::<X_NR>() else {
                break;
            };
            let bb: [__m256; NV] = core::array::from_fn(|v| load8(bv, v));
            for i in 0..ME {
                let x = _mm256_set1_ps(av[i]);
                for v in 0..NV {
                    c[i][v] = _mm256_fmadd_ps(x, bb[v], c[i][v]);
                }
            }
        }
        match out {
            Out::Tile(tile) => {
                for (row, acc) in tile.iter_mut().zip(&c) {
                    for (v, &x) in acc.iter().enumerate() {
                        store8(row, v, x);
                    }
                }
            }
            Out::C {
                c: dst,
                rs,
                alpha,
                beta,
            } => {
                let (va, vb) = (_mm256_set1_ps(alpha), _mm256_set1_ps(beta));
                for (i, acc) in c.iter().enumerate() {
                    let Some(row) = dst
                        .get_mut(i * rs..i * rs + X_NR)
                        .and_then(|r| <&mut [f32; X_NR]>::try_from(r).ok())
                    else {
                        return;
                    };
                    for (v, &x) in acc.iter().enumerate() {
                        let mut r = _mm256_mul_ps(va, x);
                        if beta != 0.0 {
                            r = _mm256_fmadd_ps(vb, load8(row, v), r);
                        }
                        store8(row, v, r);
                    }
                }
            }
        }
    }

    /// The first `ME` rows and `16 * NV` columns of a 12x32 tile: per step, `NV` 16-wide
    /// loads of B, `ME` broadcasts of A (folded into the FMAs), `ME * NV` FMAs into zmm
    /// accumulators (24 for the full tile).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn ukr_z<const ME: usize, const NV: usize>(
        a: &[[f32; Z_MR]],
        b: &[f32],
        ldb: usize,
        out: Out<'_, Z_MR, Z_NR>,
    ) {
        let mut c = [[_mm512_setzero_ps(); NV]; ME];
        for (av, brow) in a.iter().zip(b.chunks(ldb)) {
            let Some(bv) = brow.first_chunk::<Z_NR>() else {
                break;
            };
            let bb: [__m512; NV] = core::array::from_fn(|v| load16(bv, v));
            for i in 0..ME {
                let x = _mm512_set1_ps(av[i]);
                for v in 0..NV {
                    c[i][v] = _mm512_fmadd_ps(x, bb[v], c[i][v]);
                }
            }
        }
        match out {
            Out::Tile(tile) => {
                for (row, acc) in tile.iter_mut().zip(&c) {
                    for (v, &x) in acc.iter().enumerate() {
                        store16(row, v, x);
                    }
                }
            }
            Out::C {
                c: dst,
                rs,
                alpha,
                beta,
            } => {
                let (va, vb) = (_mm512_set1_ps(alpha), _mm512_set1_ps(beta));
                for (i, acc) in c.iter().enumerate() {
                    let Some(row) = dst
                        .get_mut(i * rs..i * rs + Z_NR)
                        .and_then(|r| <&mut [f32; Z_NR]>::try_from(r).ok())
                    else {
                        return;
                    };
                    for (v, &x) in acc.iter().enumerate() {
                        let mut r = _mm512_mul_ps(va, x);
                        if beta != 0.0 {
                            r = _mm512_fmadd_ps(vb, load16(row, v), r);
                        }
                        store16(row, v, r);
                    }
                }
            }
        }
    }

    /// Packs a full A panel from its `MR` row slices (see `pack_rows_portable`): 4 rows x
    /// 8 columns at a time are loaded as four 8-wide vectors and transposed in registers
    /// into eight 4-wide column pieces, instead of gathering one element at a time.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn pack_rows_t<const MR: usize>(srcs: &[&[f32]; MR], panel: &mut [[f32; MR]]) {
        let kc = panel.len();
        let groups = MR / 4;
        let mut p = 0;
        while p + 8 <= kc {
            let (Some(cols), true) = (
                panel.get_mut(p..p + 8),
                srcs.iter().all(|s| s.len() >= p + 8),
            ) else {
                break;
            };
            for g in 0..groups {
                let row = |i: usize| -> __m256 {
                    let r: &[f32; 8] = srcs[4 * g + i][p..].first_chunk().unwrap_or(&[0.0; 8]);
                    // SAFETY: `r` refers to 8 contiguous f32s.
                    unsafe { _mm256_loadu_ps(r.as_ptr()) }
                };
                let (a, b, c, d) = (row(0), row(1), row(2), row(3));
                let (t0, t1) = (_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
                let (t2, t3) = (_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
                // u[j] holds column j (low half) and column j + 4 (high half) of the rows.
                let u = [
                    _mm256_shuffle_ps::<0x44>(t0, t2),
                    _mm256_shuffle_ps::<0xEE>(t0, t2),
                    _mm256_shuffle_ps::<0x44>(t1, t3),
                    _mm256_shuffle_ps::<0xEE>(t1, t3),
                ];
                for (j, &v) in u.iter().enumerate() {
                    store4(&mut cols[j], 4 * g, _mm256_castps256_ps128(v));
                    store4(&mut cols[j + 4], 4 * g, _mm256_extractf128_ps::<1>(v));
                }
            }
            for r in groups * 4..MR {
                for (j, col) in cols.iter_mut().enumerate() {
                    col[r] = srcs[r][p + j];
                }
            }
            p += 8;
        }
        for (q, col) in panel.iter_mut().enumerate().skip(p) {
            for (d, src) in col.iter_mut().zip(srcs) {
                *d = src[q];
            }
        }
    }

    /// Stores 4 floats at `col[at..at + 4]` (nothing if out of range).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn store4<const MR: usize>(col: &mut [f32; MR], at: usize, x: __m128) {
        if let Some(dst) = col
            .get_mut(at..at + 4)
            .and_then(|d| <&mut [f32; 4]>::try_from(d).ok())
        {
            // SAFETY: `dst` refers to 4 contiguous, exclusively borrowed f32s.
            unsafe { _mm_storeu_ps(dst.as_mut_ptr(), x) }
        }
    }

    /// Loads floats `8 * v .. 8 * v + 8` of a 16-float row (`v` is 0 or 1).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn load8(row: &[f32; 16], v: usize) -> __m256 {
        let half: &[f32; 8] = if v == 0 {
            row.first_chunk().unwrap_or(&[0.0; 8])
        } else {
            row.last_chunk().unwrap_or(&[0.0; 8])
        };
        // SAFETY: `half` refers to 8 contiguous f32s; the unaligned load reads them.
        unsafe { _mm256_loadu_ps(half.as_ptr()) }
    }

    /// Stores 8 floats at `8 * v` of a 16-float row (`v` is 0 or 1).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn store8(row: &mut [f32; 16], v: usize, x: __m256) {
        let half: Option<&mut [f32; 8]> = if v == 0 {
            row.first_chunk_mut()
        } else {
            row.last_chunk_mut()
        };
        if let Some(half) = half {
            // SAFETY: `half` refers to 8 contiguous, exclusively borrowed f32s.
            unsafe { _mm256_storeu_ps(half.as_mut_ptr(), x) }
        }
    }

    /// Loads floats `16 * v .. 16 * v + 16` of a 32-float row (`v` is 0 or 1).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn load16(row: &[f32; 32], v: usize) -> __m512 {
        let half: &[f32; 16] = if v == 0 {
            row.first_chunk().unwrap_or(&[0.0; 16])
        } else {
            row.last_chunk().unwrap_or(&[0.0; 16])
        };
        // SAFETY: `half` refers to 16 contiguous f32s; the unaligned load reads them.
        unsafe { _mm512_loadu_ps(half.as_ptr()) }
    }

    /// Stores 16 floats at `16 * v` of a 32-float row (`v` is 0 or 1).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn store16(row: &mut [f32; 32], v: usize, x: __m512) {
        let half: Option<&mut [f32; 16]> = if v == 0 {
            row.first_chunk_mut()
        } else {
            row.last_chunk_mut()
        };
        if let Some(half) = half {
            // SAFETY: `half` refers to 16 contiguous, exclusively borrowed f32s.
            unsafe { _mm512_storeu_ps(half.as_mut_ptr(), x) }
        }
    }
}

/// Element types with a matrix product: f32 takes [`sgemm`], the other floats
/// [`gemm_ref`]. Generic kernels call `T::gemm` inside their dtype switch.
pub trait GemmElem: Num {
    /// `C = alpha * A * B + beta * C` (`beta == 0`: C is not read).
    fn gemm(
        ctx: &KernelContext<'_>,
        alpha: f64,
        a: Mat<'_, Self>,
        b: Mat<'_, Self>,
        beta: f64,
        c: MatMut<'_, Self>,
    ) -> KernelResult;
}

impl GemmElem for f32 {
    #[inline]
    fn gemm(
        ctx: &KernelContext<'_>,
        alpha: f64,
        a: Mat<'_, f32>,
        b: Mat<'_, f32>,
        beta: f64,
        c: MatMut<'_, f32>,
    ) -> KernelResult {
        sgemm(ctx, alpha as f32, a, b, beta as f32, c)
    }
}

macro_rules! gemm_by_reference {
    ($($t:ty),*) => {$(
        impl GemmElem for $t {
            #[inline]
            fn gemm(
                _ctx: &KernelContext<'_>,
                alpha: f64,
                a: Mat<'_, $t>,
                b: Mat<'_, $t>,
                beta: f64,
                c: MatMut<'_, $t>,
            ) -> KernelResult {
                gemm_ref(alpha, a, b, beta, c)
            }
        }
    )*};
}

gemm_by_reference!(f64, et_runtime::f16, et_runtime::bf16);

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::Arena;
    use std::vec;
    use std::vec::Vec;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }

    fn reference(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
        let mut c = vec![0.0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                for p in 0..k {
                    c[i * n + j] += a[i * k + p] as f64 * b[p * n + j] as f64;
                }
            }
        }
        c
    }

    #[test]
    fn matches_reference_many_shapes() {
        for level in [Level::Portable, Level::Avx2, Level::Avx512] {
            if level <= detected_level() {
                check_shapes_against_reference(level);
            }
        }
    }

    fn check_shapes_against_reference(simd: Level) {
        let mut scratch = vec![0u8; 8 << 20];
        let mut seed = 7u64;
        for &(m, n, k) in &[
            (1, 1, 1),
            (3, 4, 5),
            (6, 16, 7),
            (7, 17, 300),
            (13, 1, 9),
            (1, 33, 2),
            (130, 70, 513),
            (5, 2100, 3),
        ] {
            let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
            let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
            let r = reference(m, n, k, &a, &b);
            // Row-major C with beta = 0 over NaN garbage: NaN must not leak.
            let mut c = vec![f32::NAN; m * n];
            {
                let arena = Arena::new(&mut scratch);
                let ctx = KernelContext::new(&arena);
                sgemm_impl(
                    &ctx,
                    1.0,
                    Mat::row_major(&a, m, k),
                    Mat::row_major(&b, k, n),
                    0.0,
                    MatMut::row_major(&mut c, m, n),
                    simd,
                )
                .unwrap();
            }
            for (x, y) in c.iter().zip(&r) {
                assert!(
                    (*x as f64 - y).abs() < 1e-4 * (1.0 + y.abs()),
                    "{m}x{n}x{k}: {x} vs {y}"
                );
            }
            // Row-major C with alpha and beta (the direct-store path of full tiles).
            let mut cb = vec![1.0f32; m * n];
            {
                let arena = Arena::new(&mut scratch);
                let ctx = KernelContext::new(&arena);
                sgemm_impl(
                    &ctx,
                    2.0,
                    Mat::row_major(&a, m, k),
                    Mat::row_major(&b, k, n),
                    0.5,
                    MatMut::row_major(&mut cb, m, n),
                    simd,
                )
                .unwrap();
            }
            for (x, y) in cb.iter().zip(&r) {
                let want = 2.0 * y + 0.5;
                assert!(
                    (*x as f64 - want).abs() < 2e-4 * (1.0 + want.abs()),
                    "{x} vs {want}"
                );
            }
            // Transposed operands (column-major views) and a column-major C with beta.
            let at: Vec<f32> = (0..m * k).map(|i| a[(i % m) * k + i / m]).collect();
            let bt: Vec<f32> = (0..k * n).map(|i| b[(i % k) * n + i / k]).collect();
            let mut ct = vec![1.0f32; m * n];
            {
                let arena = Arena::new(&mut scratch);
                let ctx = KernelContext::new(&arena);
                sgemm_impl(
                    &ctx,
                    2.0,
                    Mat {
                        data: &at,
                        rows: m,
                        cols: k,
                        rs: 1,
                        cs: m,
                    },
                    Mat {
                        data: &bt,
                        rows: k,
                        cols: n,
                        rs: 1,
                        cs: k,
                    },
                    0.5,
                    MatMut {
                        data: &mut ct,
                        rows: m,
                        cols: n,
                        rs: 1,
                        cs: m,
                    },
                    simd,
                )
                .unwrap();
            }
            for i in 0..m {
                for j in 0..n {
                    let want = 2.0 * r[i * n + j] + 0.5;
                    let got = ct[j * m + i] as f64;
                    assert!(
                        (got - want).abs() < 2e-4 * (1.0 + want.abs()),
                        "{got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn k_zero_scales_c() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let mut c = vec![2.0f32, f32::NAN];
        sgemm(
            &ctx,
            1.0,
            Mat::row_major(&[], 1, 0),
            Mat::row_major(&[], 0, 2),
            0.0,
            MatMut::row_major(&mut c, 1, 2),
        )
        .unwrap();
        assert_eq!(c, [0.0, 0.0]);
        let mut c = vec![2.0f32, 4.0];
        sgemm(
            &ctx,
            1.0,
            Mat::row_major(&[], 1, 0),
            Mat::row_major(&[], 0, 2),
            3.0,
            MatMut::row_major(&mut c, 1, 2),
        )
        .unwrap();
        assert_eq!(c, [6.0, 12.0]);
    }

    #[test]
    fn rejects_bad_views() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let a = [1.0f32; 4];
        let mut c = [0.0f32; 4];
        let bad = Mat {
            data: &a,
            rows: 2,
            cols: 3,
            rs: 3,
            cs: 1,
        };
        assert!(sgemm(
            &ctx,
            1.0,
            bad,
            Mat::row_major(&a, 3, 1),
            0.0,
            MatMut::row_major(&mut c, 2, 1)
        )
        .is_err());
        assert!(sgemm(
            &ctx,
            1.0,
            Mat::row_major(&a, 2, 2),
            Mat::row_major(&a, 1, 4),
            0.0,
            MatMut::row_major(&mut c, 2, 2)
        )
        .is_err());
    }

    #[test]
    fn generic_reference_f64() {
        let a = [1.0f64, 2.0, 3.0, 4.0];
        let b = [5.0f64, 6.0, 7.0, 8.0];
        let mut c = [1.0f64; 4];
        gemm_ref(
            1.0,
            Mat::row_major(&a, 2, 2),
            Mat::row_major(&b, 2, 2),
            1.0,
            MatMut::row_major(&mut c, 2, 2),
        )
        .unwrap();
        assert_eq!(c, [20.0, 23.0, 44.0, 51.0]);
    }

    /// Timing harness: `cargo test -p et-ops --release -- --ignored --nocapture bench_sgemm`.
    #[test]
    #[ignore]
    fn bench_sgemm() {
        for level in [Level::Portable, Level::Avx2, Level::Avx512] {
            if level <= detected_level() {
                bench(level);
            }
        }
    }

    fn bench(simd: Level) {
        let mut scratch = vec![0u8; 16 << 20];
        let mut seed = 1u64;
        // mv2-like shapes: (Cout, H*W, Cin) of pointwise convs, and a square one.
        for &(m, n, k) in &[
            (96, 12544, 16),
            (24, 3136, 144),
            (144, 3136, 24),
            (192, 784, 32),
            (64, 196, 384),
            (384, 196, 64),
            (960, 49, 160),
            (1280, 49, 320),
            (256, 256, 256),
        ] {
            let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
            let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
            let mut c = vec![0.0f32; m * n];
            let iters = (2_000_000_000 / (m * n * k)).clamp(3, 200);
            let mut best = f64::MAX;
            for _ in 0..iters {
                let arena = Arena::new(&mut scratch);
                let ctx = KernelContext::new(&arena);
                let t = std::time::Instant::now();
                sgemm_impl(
                    &ctx,
                    1.0,
                    Mat::row_major(&a, m, k),
                    Mat::row_major(&b, k, n),
                    0.0,
                    MatMut::row_major(&mut c, m, n),
                    simd,
                )
                .unwrap();
                best = best.min(t.elapsed().as_secs_f64());
            }
            let gflops = 2.0 * (m * n * k) as f64 / best / 1e9;
            std::println!(
                "sgemm {simd:?} {m}x{n}x{k}: {:.1} us, {gflops:.1} GFLOP/s",
                best * 1e6
            );
        }
    }
}
