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
//! - AVX-512F: 12x32 tiles in 24 zmm accumulators;
//! - NEON (aarch64, always present there): 12x8 tiles in 24 q-register accumulators.
//!
//! FMA rounds once per multiply-add, so the SIMD paths can differ from the portable one in
//! the last bits (as PyTorch's own BLAS backends differ from each other).
//! [`sgemm_in_order`] is the product of a plain loop instead, every product rounded and
//! summed in order (`bmm`, for decomposed attention; see `in_order.rs`).
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
//! With more than one worker in the context, a product large enough splits into blocks
//! of C's rows (or, for a one-row C, columns), one task each (`split.rs`). Every element
//! is still summed in the same order, so with `alpha == 1` and `beta` 0 or 1 (every
//! convolution, `mm`, `bmm`, `linear`) the result is the same bit for bit however the
//! product is split; other `alpha`/`beta` may round the final scaling differently in the
//! last bit at the blocks' edges.
//!
//! `beta == 0` means C is write-only, as in BLAS: NaN or garbage in C does not leak into
//! the result. Scratch: packing buffers come from the kernel context; at most
//! `(MC + NC) * KC` floats, and for small problems only what the padded operands need
//! (see [`sgemm_scratch_bytes`]).
//!
//! Other dtypes use [`gemm_ref`], a straightforward loop accumulating in f64 (floats) or
//! wrapping i64 (integers).

use et_runtime::{KernelContext, KernelError, KernelResult, Scalar};

use super::element::Dot;

mod blocked;
mod elem;
mod epilogue;
mod gemv;
mod in_order;
#[cfg(target_arch = "aarch64")]
mod neon;
mod pack;
mod portable;
mod split;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests;

use blocked::{blocked, merge_full, Out};
pub use elem::GemmElem;
pub(crate) use epilogue::Epilogue;
#[cfg(feature = "fusion")]
pub use epilogue::RowEpilogue;
pub use in_order::sgemm_in_order;
use pack::{pack_a, pack_b, pack_rows_portable};
use portable::ukr_portable;

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
}

impl<'a, T> MatMut<'a, T> {
    /// A row-major `rows x cols` matrix over `data`.
    #[cfg(test)]
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

/// `C = alpha * A * B + beta * C` for any element type, accumulating as [`Dot`] says
/// (floats in f64, rounding once per element; integers wrapping, as PyTorch's integer
/// matmul). `beta == 0` ignores C's contents.
pub fn gemm_ref<T: Dot>(
    alpha: Scalar,
    a: Mat<'_, T>,
    b: Mat<'_, T>,
    beta: Scalar,
    c: MatMut<'_, T>,
) -> KernelResult {
    check_shapes(&a, &b, &c)?;
    let skip_c = beta.to_f64() == 0.0;
    let (alpha, beta) = (T::scalar(alpha), T::scalar(beta));
    for i in 0..c.rows {
        for j in 0..c.cols {
            let mut acc = T::ACC_ZERO;
            for p in 0..a.cols {
                acc = T::mul_add(
                    acc,
                    a.data[i * a.rs + p * a.cs],
                    b.data[p * b.rs + j * b.cs],
                );
            }
            let slot = &mut c.data[i * c.rs + j * c.cs];
            let prev = if skip_c {
                T::ACC_ZERO
            } else {
                T::mul(beta, slot.widen())
            };
            *slot = T::narrow(T::add(T::mul(alpha, acc), prev));
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

/// NEON tile: 12 rows x 8 columns (24 q-register accumulators). `MR` divides 12 and `NR`
/// divides 32, so [`sgemm_scratch_bytes`]'s bound holds for it too.
#[cfg(target_arch = "aarch64")]
const N_MR: usize = 12;
#[cfg(target_arch = "aarch64")]
const N_NR: usize = 8;
#[cfg(target_arch = "aarch64")]
const N_BLOCK: Blocking = Blocking {
    mc: 120,
    kc: KC,
    nc: 2048,
};

/// The micro-kernel families, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    #[cfg_attr(
        target_arch = "aarch64",
        allow(
            dead_code,
            reason = "NEON is always present; tests run the portable kernel"
        )
    )]
    Portable,
    #[cfg(target_arch = "aarch64")]
    Neon,
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
    #[cfg(target_arch = "aarch64")]
    {
        Level::Neon
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Level::Portable
    }
}

/// Every level, narrowest first (tests run those up to [`detected_level`]).
#[cfg(test)]
const LEVELS: &[Level] = &[
    Level::Portable,
    #[cfg(target_arch = "aarch64")]
    Level::Neon,
    Level::Avx2,
    Level::Avx512,
];

/// Scratch bytes [`sgemm`] takes from its context for an `m x n x k` product (the two
/// packing buffers and their alignment), an upper bound for every micro-kernel.
pub fn sgemm_scratch_bytes(m: usize, n: usize, k: usize) -> usize {
    let kc = k.min(KC);
    // Capped before rounding (the same result, as the caps are multiples): sizes read
    // from an untrusted payload cannot overflow here.
    let mc = round_up(m.min(120), 12);
    let nc = round_up(n.min(2048), 32);
    (mc * kc + kc * nc) * 4 + 2 * 16
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
    sgemm_impl(ctx, alpha, a, b, beta, c, None, detected_level(), false)
}

/// [`sgemm`], then `epilogue` on every row of C, applied to each tile as it is stored (so
/// C is written once). Fails if the epilogue has fewer rows than C.
#[cfg(feature = "fusion")]
pub fn sgemm_with_epilogue(
    ctx: &KernelContext<'_>,
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: RowEpilogue<'_>,
) -> KernelResult {
    sgemm_epilogue(ctx, alpha, a, b, beta, c, Some(epilogue))
}

/// [`sgemm`] with an epilogue if any (see [`Epilogue`]).
pub(crate) fn sgemm_epilogue(
    ctx: &KernelContext<'_>,
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
) -> KernelResult {
    if epilogue.is_some_and(|e| e.rows() < c.rows) {
        return Err(KernelError::invalid(
            "a product's epilogue has fewer rows than its output",
        ));
    }
    sgemm_impl(ctx, alpha, a, b, beta, c, epilogue, detected_level(), false)
}

#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
fn sgemm_impl(
    ctx: &KernelContext<'_>,
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    level: Level,
    in_order: bool,
) -> KernelResult {
    check_shapes(&a, &b, &c)?;
    let (m, n, k) = (c.rows, c.cols, a.cols);
    if m == 0 || n == 0 {
        return Ok(());
    }
    let mut c = c;
    if k == 0 {
        scale(&mut c, beta);
    } else if in_order || !gemv::row_times_columns(ctx, alpha, &a, &b, beta, &mut c) {
        let (ap, bp) = alloc_packs(ctx, m, n, k, level)?;
        if let Some(plan) = split::plan(ctx.workers(), &c, k, level) {
            return split::sgemm_split(ctx, plan, alpha, a, b, beta, c, epilogue, level, ap, bp);
        }
        run_blocked(alpha, a, b, beta, c, epilogue, level, ap, bp);
        return Ok(());
    }
    // The paths above that write C whole, in one pass of their own.
    if let Some(e) = epilogue {
        e.apply_all(&mut c);
    }
    Ok(())
}

/// The tile (`MR`, `NR`) and blocking of `level`'s micro-kernel.
fn tiling(level: Level) -> (usize, usize, Blocking) {
    match level {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => (Z_MR, Z_NR, Z_BLOCK),
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => (X_MR, X_NR, X_BLOCK),
        #[cfg(target_arch = "aarch64")]
        Level::Neon => (N_MR, N_NR, N_BLOCK),
        _ => (P_MR, P_NR, P_BLOCK),
    }
}

/// Runs the blocked product with `level`'s micro-kernels, packing into `ap` and `bp`
/// (from [`alloc_packs`] for at least this product's size). Shapes are checked.
#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
fn run_blocked(
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    level: Level,
    ap: &mut [f32],
    bp: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if level == Level::Avx512 {
        // SAFETY: `level` is at most what `detected_level` found with cpuid: the CPU
        // supports AVX-512F (and AVX2, FMA) and the OS saves the zmm and opmask state.
        unsafe { x86::sgemm_avx512(alpha, a, b, beta, c, epilogue, ap, bp) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if level >= Level::Avx2 {
        // SAFETY: `level` is at most what `detected_level` found with cpuid: the CPU
        // supports AVX2 and FMA and the OS saves the ymm registers (OSXSAVE + XCR0).
        unsafe { x86::sgemm_avx2(alpha, a, b, beta, c, epilogue, ap, bp) };
        return;
    }
    #[cfg(target_arch = "aarch64")]
    if level == Level::Neon {
        // SAFETY: NEON is part of the aarch64 baseline (every aarch64 target Rust
        // supports has it), all the target-feature function requires.
        unsafe { neon::sgemm_neon(alpha, a, b, beta, c, epilogue, ap, bp) };
        return;
    }
    let _ = level; // the portable kernel serves every level below
    blocked::<P_MR, P_NR>(
        alpha,
        a,
        b,
        beta,
        c,
        epilogue,
        ap,
        bp,
        P_BLOCK,
        |a, b, ldb, _, _, out| ukr_portable::<P_MR, P_NR>(a, b, ldb, out),
        pack_rows_portable::<P_MR>,
    );
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

/// True when this x86-64 CPU (and OS: opmask and zmm state) supports AVX-512F, checked
/// once with `cpuid`; always false on other architectures. Kernels with their own
/// AVX-512 `#[target_feature]` loops check it before further AVX-512 extensions.
#[inline]
pub fn avx512f_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::level() == Level::Avx512
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The packing buffers of an `m x n x k` product at `level`, from the context's scratch.
fn alloc_packs<'c>(
    ctx: &'c KernelContext<'_>,
    m: usize,
    n: usize,
    k: usize,
    level: Level,
) -> KernelResult<(&'c mut [f32], &'c mut [f32])> {
    let (mr, nr, blk) = tiling(level);
    let kc = k.min(blk.kc);
    let mc = round_up(m, mr).min(blk.mc);
    let nc = round_up(n, nr).min(blk.nc);
    let ap = ctx.alloc_temp::<f32>(mc * kc)?;
    let bp = ctx.alloc_temp::<f32>(kc * nc)?;
    Ok((ap, bp))
}

/// `C = beta * C`, with `beta == 0` writing zeros (not `0 * C`, which keeps NaN).
fn scale(c: &mut MatMut<'_, f32>, beta: f32) {
    for i in 0..c.rows {
        for j in 0..c.cols {
            let s = &mut c.data[i * c.rs + j * c.cs];
            *s = if beta == 0.0 { 0.0 } else { beta * *s };
        }
    }
}
