//! An f32 matrix product over weights packed once at init, as XNNPACK runs its
//! pointwise convolutions: rows of the input read in place (no copy of A), the weights in
//! panels of [`NR`] output channels (`[n / NR][k][NR]`, zero past `n`), each output tile
//! started from the bias and clamped as it is stored. Nothing is packed per call, so a
//! step needs no scratch and its rows can be cut into bands for threads freely.
//!
//! Every kernel adds the products of one output in the same order (`k` ascending, from
//! the bias); the vector kernels fuse each multiply-add (as XNNPACK's do) and so give the
//! same bits, the portable one rounds the product first (a software fused multiply-add
//! would cost more than it is worth where there is no hardware one). Each output depends
//! on its row alone, so bands of rows on any number of threads give the same bits.

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Output channels per packed panel.
pub(crate) const NR: usize = 16;

/// Channels rounded up to whole panels (saturating: sizes from a payload may be anything
/// before they are checked).
pub(crate) fn padded(n: usize) -> usize {
    n.div_ceil(NR).saturating_mul(NR)
}

/// Floats of `n` channels of `k` packed weights (saturating).
pub(crate) fn packed_len(n: usize, k: usize) -> usize {
    padded(n).saturating_mul(k)
}

/// Packs `weight(c, i)` (`n` channels of `k`) into panels (`packed_len(n, k)` floats).
pub(crate) fn pack(n: usize, k: usize, weight: impl Fn(usize, usize) -> f32, out: &mut [f32]) {
    for (p, panel) in out.chunks_exact_mut(k.max(1) * NR).enumerate() {
        for (i, row) in panel.chunks_exact_mut(NR).enumerate() {
            for (j, w) in row.iter_mut().enumerate() {
                let c = p * NR + j;
                *w = if c < n { weight(c, i) } else { 0.0 };
            }
        }
    }
}

/// How the tiles are computed on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    target_arch = "aarch64",
    allow(
        dead_code,
        reason = "aarch64 always takes `Neon`; the tests run `Portable` too"
    )
)]
pub(crate) enum Isa {
    Portable,
    Avx2,
    Avx512,
    /// aarch64's baseline (`compute/fgemm_neon.rs`).
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl Isa {
    #[cfg(target_arch = "aarch64")]
    pub(crate) fn detect() -> Isa {
        Isa::Neon
    }

    #[cfg(not(target_arch = "aarch64"))]
    pub(crate) fn detect() -> Isa {
        if et_ops::gemm::avx512f_available() {
            Isa::Avx512
        } else if et_ops::gemm::avx2_fma_available() {
            Isa::Avx2
        } else {
            Isa::Portable
        }
    }
}

/// A product with packed weights: `out[r][c] = clamp(bias[c] + sum_i a[r][i] * w[c][i])`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PackedGemm<'a> {
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// `packed_len(n, k)` floats from [`pack`].
    pub(crate) panels: &'a [f32],
    /// `padded(n)` floats (zero without a bias).
    pub(crate) bias: &'a [f32],
    pub(crate) min: f32,
    pub(crate) max: f32,
    pub(crate) isa: Isa,
}

impl PackedGemm<'_> {
    /// The `rows` rows of `a` (`k` floats each, contiguous) times the weights into `out`
    /// (`n` floats a row).
    pub(crate) fn rows(&self, a: &[f32], rows: usize, out: &mut [f32]) {
        let (n, k) = (self.n, self.k);
        assert!(
            a.len() >= rows * k
                && out.len() >= rows * n
                && self.panels.len() >= packed_len(n, k)
                && self.bias.len() >= padded(n)
        );
        #[cfg(target_arch = "x86_64")]
        match self.isa {
            // SAFETY: `Isa::detect` chose the kernel where the CPU (and OS) has its
            // features; the lengths its reads rely on are asserted above.
            Isa::Avx512 => return unsafe { self.rows_avx512(a, rows, out) },
            // SAFETY: as above.
            Isa::Avx2 => return unsafe { self.rows_avx2(a, rows, out) },
            Isa::Portable => {}
        }
        #[cfg(target_arch = "aarch64")]
        if self.isa == Isa::Neon {
            // SAFETY: NEON is aarch64's baseline; the lengths its reads rely on are
            // asserted above.
            return unsafe { neon::rows(self, a, rows, out) };
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let _ = self.isa; // no vector kernels for this target
        self.rows_portable(a, rows, out);
    }

    fn rows_portable(&self, a: &[f32], rows: usize, out: &mut [f32]) {
        let (n, k) = (self.n, self.k);
        for r in 0..rows {
            let x = &a[r * k..(r + 1) * k];
            for p in 0..padded(n) / NR {
                let panel = &self.panels[p * k * NR..(p + 1) * k * NR];
                let mut acc = [0.0f32; NR];
                acc.copy_from_slice(&self.bias[p * NR..(p + 1) * NR]);
                for (&v, w) in x.iter().zip(panel.chunks_exact(NR)) {
                    for (acc, &w) in acc.iter_mut().zip(w) {
                        *acc += v * w;
                    }
                }
                let c0 = p * NR;
                let valid = (n - c0).min(NR);
                for (y, &v) in out[r * n + c0..r * n + c0 + valid].iter_mut().zip(&acc) {
                    *y = v.max(self.min).min(self.max);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl PackedGemm<'_> {
    /// # Safety
    /// The CPU has AVX-512F (the OS saving its state); the lengths asserted in
    /// [`rows`](Self::rows) hold.
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn rows_avx512(&self, a: &[f32], rows: usize, out: &mut [f32]) {
        const MR: usize = 8;
        // Tiles of as even a size as `MR` allows (49 rows: seven of 7, not six of 8 and
        // one of 1): a tile's rows are its independent multiply-add chains, and under
        // five the FMA latency, not their number, sets the tile's time.
        let tiles = rows.div_ceil(MR);
        let mut r = 0;
        for t in 0..tiles {
            let count = rows / tiles + usize::from(t < rows % tiles);
            // SAFETY: AVX-512F (this function's contract); rows `r..r + count` are within
            // `rows` (the counts add up to `rows`, each at most `MR`).
            unsafe {
                match count {
                    8 => self.tile512::<8>(a, r, out),
                    7 => self.tile512::<7>(a, r, out),
                    6 => self.tile512::<6>(a, r, out),
                    5 => self.tile512::<5>(a, r, out),
                    4 => self.tile512::<4>(a, r, out),
                    3 => self.tile512::<3>(a, r, out),
                    2 => self.tile512::<2>(a, r, out),
                    _ => self.tile512::<1>(a, r, out),
                }
            }
            r += count;
        }
        debug_assert_eq!(r, rows);
    }

    /// Rows `r0..r0 + R` against every panel, one 16-lane accumulator per row and panel.
    /// Fewer than four rows take `NP` panels at once, so that the tile still has several
    /// independent multiply-add chains (a single row, as a fully connected node's batch
    /// of one, would otherwise wait on each FMA's latency).
    ///
    /// # Safety
    /// AVX-512F; rows `r0..r0 + R` exist in `a` and `out`; the asserted lengths hold.
    #[inline(always)]
    unsafe fn tile512<const R: usize>(&self, a: &[f32], r0: usize, out: &mut [f32]) {
        let panels = padded(self.n) / NR;
        let mut p = 0;
        // SAFETY: AVX-512F and the rows as this function's contract says; panels
        // `p..p + NP` are below `panels`.
        unsafe {
            if R < 4 {
                const NP: usize = 4;
                while p + NP <= panels {
                    self.block512::<R, NP>(a, r0, p, out);
                    p += NP;
                }
            }
            while p < panels {
                self.block512::<R, 1>(a, r0, p, out);
                p += 1;
            }
        }
    }

    /// Rows `r0..r0 + R` against panels `p0..p0 + NP`.
    ///
    /// # Safety
    /// AVX-512F; rows `r0..r0 + R` exist in `a` and `out`; `p0 + NP <= padded(n) / NR`;
    /// the asserted lengths hold.
    #[inline(always)]
    unsafe fn block512<const R: usize, const NP: usize>(
        &self,
        a: &[f32],
        r0: usize,
        p0: usize,
        out: &mut [f32],
    ) {
        let (n, k) = (self.n, self.k);
        // SAFETY: AVX-512F (the caller's contract). Row `r0 + r < rows` reads `k` floats
        // of `a` at `(r0 + r) * k`; panel `p < padded(n) / NR` reads `k * NR` floats at
        // `p * k * NR`, within `packed_len(n, k)`; the bias `NR` floats at `p * NR`
        // within `padded(n)`; the store writes the `valid` channels of the row inside
        // `out` (a masked store).
        unsafe {
            let lo = _mm512_set1_ps(self.min);
            let hi = _mm512_set1_ps(self.max);
            let x = a.as_ptr().add(r0 * k);
            let w: [*const f32; NP] =
                core::array::from_fn(|j| self.panels.as_ptr().add((p0 + j) * k * NR));
            let bias: [__m512; NP] =
                core::array::from_fn(|j| _mm512_loadu_ps(self.bias.as_ptr().add((p0 + j) * NR)));
            let mut acc = [bias; R];
            for i in 0..k {
                let wv: [__m512; NP] = core::array::from_fn(|j| _mm512_loadu_ps(w[j].add(i * NR)));
                for (r, acc) in acc.iter_mut().enumerate() {
                    let xv = _mm512_set1_ps(*x.add(r * k + i));
                    for (acc, &wv) in acc.iter_mut().zip(&wv) {
                        *acc = _mm512_fmadd_ps(xv, wv, *acc);
                    }
                }
            }
            for (j, p) in (p0..p0 + NP).enumerate() {
                let c0 = p * NR;
                let valid = (n - c0).min(NR);
                let mask: __mmask16 = if valid == NR { !0 } else { (1u16 << valid) - 1 };
                for (r, acc) in acc.iter().enumerate() {
                    let v = _mm512_min_ps(_mm512_max_ps(acc[j], lo), hi);
                    let dst = out.as_mut_ptr().add((r0 + r) * n + c0);
                    _mm512_mask_storeu_ps(dst, mask, v);
                }
            }
        }
    }

    /// # Safety
    /// The CPU has AVX2 and FMA; the lengths asserted in [`rows`](Self::rows) hold.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_avx2(&self, a: &[f32], rows: usize, out: &mut [f32]) {
        const MR: usize = 6;
        // Tiles as even as `MR` allows, as in `rows_avx512`.
        let tiles = rows.div_ceil(MR);
        let mut r = 0;
        for t in 0..tiles {
            let count = rows / tiles + usize::from(t < rows % tiles);
            // SAFETY: AVX2 and FMA (this function's contract); rows `r..r + count` are
            // within `rows` (the counts add up to `rows`, each at most `MR`).
            unsafe {
                match count {
                    6 => self.tile256::<6>(a, r, out),
                    5 => self.tile256::<5>(a, r, out),
                    4 => self.tile256::<4>(a, r, out),
                    3 => self.tile256::<3>(a, r, out),
                    2 => self.tile256::<2>(a, r, out),
                    _ => self.tile256::<1>(a, r, out),
                }
            }
            r += count;
        }
        debug_assert_eq!(r, rows);
    }

    /// Rows `r0..r0 + R` against every panel, two 8-lane accumulators per row.
    ///
    /// # Safety
    /// AVX2 and FMA; rows `r0..r0 + R` exist in `a` and `out`; the asserted lengths hold.
    #[inline(always)]
    unsafe fn tile256<const R: usize>(&self, a: &[f32], r0: usize, out: &mut [f32]) {
        let (n, k) = (self.n, self.k);
        // SAFETY: as in `tile512`, with two 8-float halves per panel row; a partial
        // panel is stored through a local array.
        unsafe {
            let lo = _mm256_set1_ps(self.min);
            let hi = _mm256_set1_ps(self.max);
            let x = a.as_ptr().add(r0 * k);
            for p in 0..padded(n) / NR {
                let w = self.panels.as_ptr().add(p * k * NR);
                let bias = [
                    _mm256_loadu_ps(self.bias.as_ptr().add(p * NR)),
                    _mm256_loadu_ps(self.bias.as_ptr().add(p * NR + 8)),
                ];
                let mut acc = [bias; R];
                for i in 0..k {
                    let w0 = _mm256_loadu_ps(w.add(i * NR));
                    let w1 = _mm256_loadu_ps(w.add(i * NR + 8));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let v = _mm256_set1_ps(*x.add(r * k + i));
                        acc[0] = _mm256_fmadd_ps(v, w0, acc[0]);
                        acc[1] = _mm256_fmadd_ps(v, w1, acc[1]);
                    }
                }
                let c0 = p * NR;
                let valid = (n - c0).min(NR);
                for (r, acc) in acc.into_iter().enumerate() {
                    let mut lanes = [0.0f32; NR];
                    for (h, acc) in acc.into_iter().enumerate() {
                        let v = _mm256_min_ps(_mm256_max_ps(acc, lo), hi);
                        _mm256_storeu_ps(lanes.as_mut_ptr().add(8 * h), v);
                    }
                    let row = (r0 + r) * n + c0;
                    out[row..row + valid].copy_from_slice(&lanes[..valid]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::{format, vec, vec::Vec};

    use super::*;

    fn floats(len: usize, seed: u32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(11);
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / (1 << 24) as f32 - 0.5
            })
            .collect()
    }

    #[test]
    fn vector_kernels_give_the_fused_reference_bits_and_portable_is_close() {
        let mut isas = vec![Isa::Portable];
        if et_ops::gemm::avx2_fma_available() {
            isas.push(Isa::Avx2);
        }
        if et_ops::gemm::avx512f_available() {
            isas.push(Isa::Avx512);
        }
        #[cfg(target_arch = "aarch64")]
        isas.push(Isa::Neon);
        for (rows, n, k) in [
            (1, 1, 1),
            (7, 16, 3),
            (13, 33, 20),
            (9, 5, 64),
            (20, 40, 17),
            (49, 20, 9),
            (196, 17, 5),
            // One to three rows over panels in fours and a remainder.
            (1, 100, 33),
            (2, 130, 7),
            (3, 64, 5),
        ] {
            let a = floats(rows * k, 1 + n as u32);
            let w = floats(n * k, 2 + k as u32);
            let bias: Vec<f32> = (0..padded(n))
                .map(|c| if c < n { c as f32 * 0.01 - 0.1 } else { 0.0 })
                .collect();
            let mut panels = vec![f32::NAN; packed_len(n, k)];
            pack(n, k, |c, i| w[c * k + i], &mut panels);
            let (min, max) = (-0.4, 0.6);
            let want: Vec<f32> = (0..rows * n)
                .map(|at| {
                    let (r, c) = (at / n, at % n);
                    let dot = (0..k).fold(bias[c], |acc, i| {
                        libm::fmaf(a[r * k + i], w[c * k + i], acc)
                    });
                    dot.max(min).min(max)
                })
                .collect();
            for isa in &isas {
                let g = PackedGemm {
                    n,
                    k,
                    panels: &panels,
                    bias: &bias,
                    min,
                    max,
                    isa: *isa,
                };
                let mut out = vec![f32::NAN; rows * n + 1];
                g.rows(&a, rows, &mut out);
                let label = format!("{isa:?} rows {rows} n {n} k {k}");
                assert!(out[rows * n].is_nan(), "{label}: wrote past the output");
                if *isa == Isa::Portable {
                    for (g, e) in out.iter().zip(&want) {
                        assert!(
                            (g - e).abs() <= 1e-6 * (1.0 + e.abs() * k as f32),
                            "{label}"
                        );
                    }
                } else {
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&out[..rows * n]), bits(&want), "{label}");
                }
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
#[path = "fgemm_neon.rs"]
mod neon;
