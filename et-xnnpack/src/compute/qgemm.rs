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

#[cfg(target_arch = "x86_64")]
#[cfg(target_arch = "x86_64")]
use super::requant::requant8;
use super::requant::Requant;
use crate::plain::cast_mut;

/// Rows per tile.
pub(crate) const MR: usize = 4;
/// Rows per tile of the AVX-512 VNNI kernel (`QGemm::tile_avx512`).
pub(crate) const MR_AVX512: usize = 8;
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

/// Int16s of `n` channels of `k` packed weights (either packing: quads of bytes take no
/// more room than pairs of int16s... of half the bytes, so the pair size bounds both).
pub(crate) fn packed_len(n: usize, k: usize) -> usize {
    padded(n) * pairs(k) * 2
}

/// Groups of 4 int8s per row of `k` (the VNNI packing).
pub(crate) fn quads(k: usize) -> usize {
    k.div_ceil(4)
}

/// Whether a VNNI kernel may run (AVX-VNNI or AVX-512 VNNI: see [`super::cpu::vnni`]),
/// or on aarch64 an `sdot` one (the same packing: see `neon_qgemm`).
pub(crate) fn vnni_available() -> bool {
    super::cpu::vnni().is_some() || super::cpu::arm_dotprod()
}

/// Packs `[n][k]` int8 weights for the VNNI kernels into the bytes of `out`: per
/// group of 4 inputs, channel `j`'s 4 bytes at `(j / 8) * 32 + (j % 8) * 4` of a
/// 64-byte block, zero past `n` and `k`; and adds `-128 * sum(w)` to each channel's bias,
/// because that kernel reads the rows as `x + 128` (unsigned).
pub(crate) fn pack_quads(
    n: usize,
    k: usize,
    weight: impl Fn(usize, usize) -> i8,
    out: &mut [i16],
    bias: &mut [i32],
) {
    let kq = quads(k);
    let bytes = cast_mut::<i16, i8>(out);
    let w = |c: usize, i: usize| if c < n && i < k { weight(c, i) } else { 0 };
    for (block, dst) in bytes.chunks_exact_mut(kq * 4 * NR).enumerate() {
        for q in 0..kq {
            for j in 0..NR {
                let c = block * NR + j;
                for e in 0..4 {
                    dst[q * 4 * NR + (j / 8) * 32 + (j % 8) * 4 + e] = w(c, 4 * q + e);
                }
            }
        }
    }
    for (c, b) in bias.iter_mut().enumerate().take(n) {
        let sum: i32 = (0..k).map(|i| i32::from(weight(c, i))).sum();
        *b = b.wrapping_sub(sum.wrapping_mul(128));
    }
}

/// Packs a convolution's weights, `groups` groups of `n` channels of `k` int8s
/// (`weight(c, i)`, `c` counting over all groups), each group after the previous one
/// (`packed_len(n, k)` int16s of `packed` each, see [`QGemm::group`]); for the VNNI
/// kernels (`vnni`) by [`pack_quads`], else by [`pack`]. Folds `-x_zero_point * sum(w)`
/// into each channel's bias in `bias` (`padded(n)` entries per group, each group's
/// biases at the start of its own), so that the GEMM multiplies the stored int8s.
pub(crate) fn pack_groups(
    (groups, n, k): (usize, usize, usize),
    weight: impl Fn(usize, usize) -> i8,
    x_zero_point: i32,
    vnni: bool,
    packed: &mut [i16],
    bias: &mut [i32],
) {
    let (len, channels) = (packed_len(n, k), padded(n));
    for g in 0..groups {
        let weight = |c: usize, i: usize| weight(g * n + c, i);
        let bias = &mut bias[g * channels..(g + 1) * channels];
        for (c, b) in bias.iter_mut().enumerate().take(n) {
            let sum: i32 = (0..k).map(|i| i32::from(weight(c, i))).sum();
            *b = b.wrapping_sub(x_zero_point.wrapping_mul(sum));
        }
        let packed = &mut packed[g * len..(g + 1) * len];
        if vnni {
            pack_quads(n, k, weight, packed, bias);
        } else {
            pack(n, k, weight, packed);
        }
    }
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
    /// Packed by [`pack_quads`] for the VNNI kernels (or aarch64's `sdot`/`usdot`
    /// ones: only when [`vnni_available`]), else by [`pack`].
    pub(crate) vnni: bool,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) packed: &'a [i16],
    pub(crate) bias: &'a [i32],
    pub(crate) scales: &'a [f32],
    pub(crate) requant: Requant,
}

impl<'a> QGemm<'a> {
    /// The product restricted to output channels `channels`, which start at a whole
    /// block of [`NR`] (the unit threads split a single row by): the packed blocks,
    /// bias and scales are contiguous per block. `None` if the range does not start at
    /// a block or lies outside `n`.
    pub(crate) fn channels(&self, channels: core::ops::Range<usize>) -> Option<QGemm<'a>> {
        if !channels.start.is_multiple_of(NR) || channels.end > self.n || channels.is_empty() {
            return None;
        }
        let per_block = if self.vnni {
            quads(self.k) * 2 * NR
        } else {
            pairs(self.k) * 2 * NR
        };
        let first = (channels.start / NR).checked_mul(per_block)?;
        Some(QGemm {
            n: channels.len(),
            packed: self.packed.get(first..)?,
            bias: self.bias.get(channels.start..)?,
            scales: self.scales.get(channels.start..)?,
            ..*self
        })
    }

    /// Group `g`'s product in a grouped convolution, whose groups are packed one after
    /// another: `packed_len(n, k)` int16s and `padded(n)` biases and scales each (`n`
    /// the channels of one group). Group 0 of a convolution of one group is itself.
    pub(crate) fn group(&self, g: usize) -> QGemm<'a> {
        let (packed, channels) = (packed_len(self.n, self.k), padded(self.n));
        QGemm {
            packed: &self.packed[g * packed..],
            bias: &self.bias[g * channels..],
            scales: &self.scales[g * channels..],
            ..*self
        }
    }
}

impl QGemm<'_> {
    /// The int16s of one row in the tile buffer [`tile`](Self::tile) reads.
    pub(crate) fn row_len(&self) -> usize {
        if self.vnni {
            quads(self.k) * 2
        } else {
            pairs(self.k) * 2
        }
    }

    /// Fills one row of the tile buffer (`row_len()` int16s) from `k` int8s: widened to
    /// int16 pairs, or for the VNNI kernels as bytes `x + 128` (unsigned), the tail
    /// meeting zero weights.
    #[inline(always)]
    pub(crate) fn fill_row(&self, src: &[i8], dst: &mut [i16]) {
        if !self.vnni {
            return widen(src, dst);
        }
        let bytes = cast_mut::<i16, i8>(dst);
        for (d, &v) in bytes.iter_mut().zip(src) {
            *d = v ^ i8::MIN;
        }
        for d in bytes.iter_mut().skip(src.len()) {
            *d = 0;
        }
    }

    /// Computes `count` (at most [`MR`]) output rows: row `r` of `rows` (rows of
    /// `row_len()` int16s filled by `fill_row`, [`MR`] of them) into `out[r * n..][..n]`.
    /// Rows past `count` are read but not stored, so they must be initialized (any
    /// values).
    pub(crate) fn tile(&self, rows: &[i16], count: usize, out: &mut [i8], avx2: bool) {
        assert!(
            rows.len() >= MR * self.row_len()
                && out.len() >= count * self.n
                && count <= MR
                && self.packed.len() >= packed_len(self.n, self.k)
                && self.bias.len() >= padded(self.n)
                && self.scales.len() >= padded(self.n)
        );
        #[cfg(target_arch = "x86_64")]
        if self.vnni {
            // `vnni` is only set when `vnni_available()`, and each kernel runs where
            // `cpu::vnni` found its encoding; the slice lengths the kernel's raw reads
            // rely on are asserted above.
            match super::cpu::vnni() {
                // SAFETY: see above.
                Some(super::cpu::Vnni::Avx512) => unsafe { self.tile_avx512vnni(rows, count, out) },
                // SAFETY: see above (`vnni_available()` with no AVX-512 VNNI is AVX-VNNI).
                _ => unsafe { self.tile_avxvnni(rows, count, out) },
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the caller checked AVX2 (`avx2` is `avx2_fma_available()`); the
            // slice lengths the kernel's raw reads rely on are asserted above.
            unsafe { self.tile_avx2(rows, count, out) };
            return;
        }
        // The NEON kernels take either packing (the quad one is only chosen with dotprod).
        #[cfg(target_arch = "aarch64")]
        if !self.vnni || super::cpu::arm_dotprod() {
            return self.tile_neon(rows, count, out, super::cpu::arm_dot());
        }
        let _ = avx2;
        self.tile_portable(rows, count, out);
    }

    pub(crate) fn tile_portable(&self, rows: &[i16], count: usize, out: &mut [i8]) {
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
    /// The CPU must support AVX-VNNI and AVX2; the lengths asserted in
    /// [`tile`](Self::tile) hold.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,avxvnni")]
    unsafe fn tile_avxvnni(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.tile_vnni::<super::cpu::AvxVnni>(rows, count, out) }
    }

    /// # Safety
    /// The CPU must support AVX-512F, VL and VNNI (the OS saving their state) and AVX2;
    /// the lengths asserted in [`tile`](Self::tile) hold.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512vnni")]
    unsafe fn tile_avx512vnni(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.tile_vnni::<super::cpu::Avx512Vnni>(rows, count, out) }
    }

    /// The VNNI kernel, inlined into each encoding's wrapper: `vpdpbusd` multiplies 4
    /// unsigned row bytes by 4 weight bytes and adds the 4 products to an int32 lane,
    /// exactly (no saturation).
    ///
    /// # Safety
    /// The CPU must support what `D` uses and AVX2; the lengths asserted in
    /// [`tile`](Self::tile) hold.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn tile_vnni<D: super::cpu::Dot4>(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        let kq = quads(self.k);
        let n = self.n;
        let x = rows.as_ptr().cast::<i8>();
        // SAFETY: the features `D` needs (the caller's contract). `packed` holds
        // `padded(n) / NR` blocks of `kq * 4 * NR` bytes (within `packed_len`), `rows` `MR`
        // rows of `kq * 4` bytes, `bias` and `scales` `padded(n)` entries (asserted in
        // `tile`): every pointer read below is inside those.
        unsafe {
            for block in 0..padded(n) / NR {
                let w = self.packed.as_ptr().cast::<i8>().add(block * kq * 4 * NR);
                let mut acc = [[_mm256_setzero_si256(); 2]; MR];
                for q in 0..kq {
                    let w0 = _mm256_loadu_si256(w.add(q * 4 * NR).cast());
                    let w1 = _mm256_loadu_si256(w.add(q * 4 * NR + 32).cast());
                    for (r, acc) in acc.iter_mut().enumerate() {
                        // One group of 4 row bytes, as the int32 to broadcast.
                        let quad = x.add((r * kq + q) * 4).cast::<i32>().read_unaligned();
                        let xb = _mm256_set1_epi32(quad);
                        acc[0] = D::dot4(acc[0], xb, w0);
                        acc[1] = D::dot4(acc[1], xb, w1);
                    }
                }
                self.store(block, &acc, count, out);
            }
        }
    }

    /// Adds the bias to the accumulators of channel block `block`, requantizes them and
    /// stores the `count` rows' valid channels.
    ///
    /// Not a `target_feature` function so that it can be inlined (always) into the AVX2
    /// kernels, whose accumulators then stay in registers; only they call it.
    ///
    /// # Safety
    /// The CPU must support AVX2; `bias` and `scales` hold `padded(n)` entries.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn store(&self, block: usize, acc: &[[__m256i; 2]; MR], count: usize, out: &mut [i8]) {
        let n = self.n;
        let c0 = block * NR;
        let valid = (n - c0).min(NR);
        // SAFETY: AVX2 (the caller's contract) for every intrinsic; the loads read channels
        // `c0..c0 + 16` with `c0 + 16 <= padded(n)`, within `bias` and `scales` (the
        // caller's contract); the stores write 16 bytes into a slice or array of 16.
        unsafe {
            let lo = _mm256_set1_ps(self.requant.lo);
            let hi = _mm256_set1_ps(self.requant.hi);
            let zp = _mm256_set1_epi32(self.requant.zero_point);
            let bias = [
                _mm256_loadu_si256(self.bias.as_ptr().add(c0).cast()),
                _mm256_loadu_si256(self.bias.as_ptr().add(c0 + 8).cast()),
            ];
            let scale = [
                _mm256_loadu_ps(self.scales.as_ptr().add(c0)),
                _mm256_loadu_ps(self.scales.as_ptr().add(c0 + 8)),
            ];
            for (r, acc) in acc.iter().enumerate().take(count) {
                let q0 = requant8(_mm256_add_epi32(acc[0], bias[0]), scale[0], lo, hi, zp);
                let q1 = requant8(_mm256_add_epi32(acc[1], bias[1]), scale[1], lo, hi, zp);
                // Within int8 after the clamp; the permute undoes packs' lane interleave.
                let q = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8);
                let q = _mm_packs_epi16(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
                let dst = &mut out[r * n + c0..r * n + c0 + valid];
                if valid == NR {
                    _mm_storeu_si128(dst.as_mut_ptr().cast(), q);
                } else {
                    let mut bytes = [0i8; NR];
                    _mm_storeu_si128(bytes.as_mut_ptr().cast(), q);
                    dst.copy_from_slice(&bytes[..valid]);
                }
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
        let x = rows.as_ptr();
        // SAFETY: AVX2 is available (the caller's contract). `packed` holds
        // `padded(n) / NR` blocks of `kp * 2 * NR` int16s, `rows` `MR * kp` pairs of int16s, `bias`
        // and `scales` `padded(n)` entries (asserted in `tile`): every pointer read below
        // (block `block < padded(n) / NR`, pair `p < kp`, row `r < MR`, channels
        // `c0..c0 + 16` with `c0 + 16 <= padded(n)`) is inside those; `store` writes
        // through slices.
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
                self.store(block, &acc, count, out);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[path = "qgemm_avx512.rs"]
mod avx512;

#[cfg(test)]
mod tests {
    extern crate std;
    use std::{format, vec, vec::Vec};

    use super::*;

    use crate::compute::test_bytes as bytes;

    #[test]
    fn tiles_match_a_plain_dot_product() {
        let avx2 = cfg!(target_arch = "x86_64") && et_ops::gemm::avx2_fma_available();
        let requant = Requant::new(0.03, -7, 0.0, f32::INFINITY);
        for (n, k) in [(1, 1), (7, 3), (16, 32), (33, 27), (24, 95)] {
            let w = bytes(n * k, n as u32);
            let bias: Vec<i32> = (0..padded(n) as i32).map(|c| c * 37 - 300).collect();
            let scales: Vec<f32> = (0..padded(n))
                .map(|c| 0.0002 * (1 + c % 5) as f32)
                .collect();
            let x = bytes(MR * k, 9);
            let want = |count: usize| -> Vec<i8> {
                (0..count * n)
                    .map(|i| {
                        let (r, c) = (i / n, i % n);
                        let dot: i32 = (0..k)
                            .map(|j| i32::from(x[r * k + j]) * i32::from(w[c * k + j]))
                            .sum();
                        requant.apply(bias[c] + dot, scales[c])
                    })
                    .collect()
            };
            // The int16-pair packing (portable and AVX2), and the VNNI one where the
            // CPU has it.
            let mut kernels = vec![(false, false)];
            if avx2 {
                kernels.push((false, true));
            }
            if vnni_available() {
                kernels.push((true, true));
            }
            for (vnni, use_avx2) in kernels {
                let mut packed = vec![0i16; packed_len(n, k)];
                let mut gemm_bias = bias.clone();
                if vnni {
                    pack_quads(n, k, |c, i| w[c * k + i], &mut packed, &mut gemm_bias);
                } else {
                    pack(n, k, |c, i| w[c * k + i], &mut packed);
                }
                let g = QGemm {
                    vnni,
                    k,
                    n,
                    packed: &packed,
                    bias: &gemm_bias,
                    scales: &scales,
                    requant,
                };
                let mut rows = vec![0x3333i16; MR * g.row_len()];
                for r in 0..MR {
                    let len = g.row_len();
                    g.fill_row(&x[r * k..(r + 1) * k], &mut rows[r * len..(r + 1) * len]);
                }
                for count in [MR, 1, 3] {
                    let mut out = vec![0x55i8; MR * n];
                    g.tile(&rows, count, &mut out, use_avx2);
                    let label = format!("vnni {vnni} avx2 {use_avx2} n {n} k {k} count {count}");
                    assert_eq!(&out[..count * n], &want(count)[..], "{label}");
                    // Rows past `count` are left alone.
                    assert!(out[count * n..].iter().all(|&v| v == 0x55), "{label}");
                }
            }
        }
    }
}
