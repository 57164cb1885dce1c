//! An int8 GEMM for the quantized convolutions: up to [`MR`] rows (output pixels) of `k`
//! int8s times `n` output channels of packed int8 weights, with the bias and the fp32
//! requantization fused in the store.
//!
//! Rows and weights are widened to int16 pairs (`k` rounded up to even, the odd tail
//! zero): a pair of one row (broadcast) times the pairs of 8 channels is one `vpmaddwd`,
//! which multiplies and adds the pair into 8 int32 lanes exactly. The weights are packed
//! at init in blocks of [`NR`] channels: for each pair index, channel `j`'s pair at
//! int16 `(j / 8) * 16 + (j % 8) * 2` (so each block is two vectors per pair), channels
//! past `n` zero.

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::requant::Requant;

/// Rows per tile.
pub(crate) const MR: usize = 4;
/// Channels per packed block.
pub(crate) const NR: usize = 16;

/// Pairs per row of `k`.
pub(crate) fn pairs(k: usize) -> usize {
    k.div_ceil(2)
}

/// Channels rounded up to whole blocks (the length of the bias and scales the GEMM
/// reads).
pub(crate) fn padded(n: usize) -> usize {
    n.div_ceil(NR) * NR
}

/// Int16s of `n` channels of `k` packed weights.
pub(crate) fn packed_len(n: usize, k: usize) -> usize {
    padded(n) * pairs(k) * 2
}

/// Packs `[n][k]` int8 weights (`weight(c, i)`) into `out` (`packed_len(n, k)` int16s).
pub(crate) fn pack(n: usize, k: usize, weight: impl Fn(usize, usize) -> i8, out: &mut [i16]) {
    let kp = pairs(k);
    let w = |c: usize, i: usize| {
        if c < n && i < k {
            i16::from(weight(c, i))
        } else {
            0
        }
    };
    for (block, dst) in out.chunks_exact_mut(kp * 2 * NR).enumerate() {
        for p in 0..kp {
            for j in 0..NR {
                let c = block * NR + j;
                let at = p * 2 * NR + (j / 8) * 16 + (j % 8) * 2;
                dst[at] = w(c, 2 * p);
                dst[at + 1] = w(c, 2 * p + 1);
            }
        }
    }
}

/// Widens a row of int8s to int16s, the odd tail paired with 0 (`dst` holds
/// `2 * pairs(src.len())`).
#[inline(always)]
pub(crate) fn widen(src: &[i8], dst: &mut [i16]) {
    for (d, &v) in dst.iter_mut().zip(src) {
        *d = i16::from(v);
    }
    if src.len() % 2 == 1 {
        dst[src.len()] = 0;
    }
}

/// The GEMM of one convolution: packed weights, the bias (with the input zero point
/// folded in) and the requantization scale of each (padded) channel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QGemm<'a> {
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) packed: &'a [i16],
    pub(crate) bias: &'a [i32],
    pub(crate) scales: &'a [f32],
    pub(crate) requant: Requant,
}

impl QGemm<'_> {
    /// Computes `count` (at most [`MR`]) output rows: row `r` of `rows` (rows of
    /// `2 * pairs(k)` widened int8s, [`MR`] of them) into `out[r * n..][..n]`. Rows past
    /// `count` are read but not stored, so they must be initialized (any values).
    pub(crate) fn tile(&self, rows: &[i16], count: usize, out: &mut [i8], avx2: bool) {
        let kp = pairs(self.k);
        assert!(
            rows.len() >= MR * kp * 2
                && out.len() >= count * self.n
                && count <= MR
                && self.packed.len() >= packed_len(self.n, self.k)
                && self.bias.len() >= padded(self.n)
                && self.scales.len() >= padded(self.n)
        );
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the caller checked AVX2 (`avx2` is `avx2_fma_available()`); the
            // slice lengths the kernel's raw reads rely on are asserted above.
            unsafe { self.tile_avx2(rows, count, out) };
            return;
        }
        let _ = avx2;
        self.tile_portable(rows, count, out);
    }

    fn tile_portable(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        let kp = pairs(self.k);
        for r in 0..count {
            let row = &rows[r * kp * 2..(r + 1) * kp * 2];
            for c in 0..self.n {
                let (block, j) = (c / NR, c % NR);
                let w = &self.packed[block * kp * 2 * NR..];
                let mut acc = self.bias[c];
                for (p, x) in row.chunks_exact(2).enumerate() {
                    let at = p * 2 * NR + (j / 8) * 16 + (j % 8) * 2;
                    acc = acc
                        .wrapping_add(i32::from(x[0]) * i32::from(w[at]))
                        .wrapping_add(i32::from(x[1]) * i32::from(w[at + 1]));
                }
                out[r * self.n + c] = self.requant.apply(acc, self.scales[c]);
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX2; the lengths asserted in [`tile`](Self::tile) hold.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile_avx2(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        let kp = pairs(self.k);
        let n = self.n;
        let lo = _mm256_set1_ps(self.requant.lo);
        let hi = _mm256_set1_ps(self.requant.hi);
        let zp = _mm256_set1_epi32(self.requant.zero_point);
        let x = rows.as_ptr();
        // SAFETY: AVX2 is available (the caller's contract). `packed` holds
        // `padded(n) / NR` blocks of `kp * 2 * NR` int16s, `rows` `MR * kp` pairs of int16s, `bias`
        // and `scales` `padded(n)` entries (asserted in `tile`): every pointer read below
        // (block `block < padded(n) / NR`, pair `p < kp`, row `r < MR`, channels
        // `c0..c0 + 16` with `c0 + 16 <= padded(n)`) is inside those; the stores go to a
        // local array and to `out` through slices.
        unsafe {
            for block in 0..padded(n) / NR {
                let w = self.packed.as_ptr().add(block * kp * 2 * NR);
                let mut acc = [[_mm256_setzero_si256(); 2]; MR];
                for p in 0..kp {
                    let w0 = _mm256_loadu_si256(w.add(p * 2 * NR).cast());
                    let w1 = _mm256_loadu_si256(w.add(p * 2 * NR + 16).cast());
                    for (r, acc) in acc.iter_mut().enumerate() {
                        // One pair of int16s, as the int32 to broadcast.
                        let pair = x.add((r * kp + p) * 2).cast::<i32>().read_unaligned();
                        let xb = _mm256_set1_epi32(pair);
                        acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(xb, w0));
                        acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(xb, w1));
                    }
                }
                let c0 = block * NR;
                let bias = [
                    _mm256_loadu_si256(self.bias.as_ptr().add(c0).cast()),
                    _mm256_loadu_si256(self.bias.as_ptr().add(c0 + 8).cast()),
                ];
                let scale = [
                    _mm256_loadu_ps(self.scales.as_ptr().add(c0)),
                    _mm256_loadu_ps(self.scales.as_ptr().add(c0 + 8)),
                ];
                let valid = (n - c0).min(NR);
                for (r, acc) in acc.iter().enumerate().take(count) {
                    let mut q = [0i32; NR];
                    for h in 0..2 {
                        // Requant::apply on 8 lanes: scale, clamp, round half to even (the
                        // default rounding mode of the conversion), add the zero point.
                        let v = _mm256_cvtepi32_ps(_mm256_add_epi32(acc[h], bias[h]));
                        let v = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v, scale[h]), lo), hi);
                        let v = _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
                        _mm256_storeu_si256(q.as_mut_ptr().add(h * 8).cast(), v);
                    }
                    let dst = &mut out[r * n + c0..r * n + c0 + valid];
                    for (d, &v) in dst.iter_mut().zip(&q) {
                        // In int8: the clamp kept `v - zero_point` within the int8 range.
                        *d = v as i8;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::{vec, vec::Vec};

    use super::*;

    fn bytes(len: usize, seed: u32) -> Vec<i8> {
        let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(3);
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 24) as u8 as i8
            })
            .collect()
    }

    #[test]
    fn tiles_match_a_plain_dot_product() {
        let avx2 = cfg!(target_arch = "x86_64") && et_ops::gemm::avx2_fma_available();
        let requant = Requant::new(0.03, -7, 0.0, f32::INFINITY);
        for (n, k) in [(1, 1), (7, 3), (16, 32), (33, 27), (24, 95)] {
            let w = bytes(n * k, n as u32);
            let mut packed = vec![0i16; packed_len(n, k)];
            pack(n, k, |c, i| w[c * k + i], &mut packed);
            let bias: Vec<i32> = (0..padded(n) as i32).map(|c| c * 37 - 300).collect();
            let scales: Vec<f32> = (0..padded(n))
                .map(|c| 0.0002 * (1 + c % 5) as f32)
                .collect();
            let g = QGemm {
                k,
                n,
                packed: &packed,
                bias: &bias,
                scales: &scales,
                requant,
            };
            let x = bytes(MR * k, 9);
            let mut rows = vec![0i16; MR * pairs(k) * 2];
            for r in 0..MR {
                widen(&x[r * k..(r + 1) * k], &mut rows[r * pairs(k) * 2..]);
            }
            for count in [MR, 1, 3] {
                let want: Vec<i8> = (0..count * n)
                    .map(|i| {
                        let (r, c) = (i / n, i % n);
                        let dot: i32 = (0..k)
                            .map(|j| i32::from(x[r * k + j]) * i32::from(w[c * k + j]))
                            .sum();
                        requant.apply(bias[c] + dot, scales[c])
                    })
                    .collect();
                for use_avx2 in [false, avx2] {
                    let mut out = vec![0x55i8; MR * n];
                    g.tile(&rows, count, &mut out, use_avx2);
                    assert_eq!(&out[..count * n], &want[..], "n {n} k {k} count {count}");
                    // Rows past `count` are left alone.
                    assert!(out[count * n..].iter().all(|&v| v == 0x55));
                }
            }
        }
    }
}
