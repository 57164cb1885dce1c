//! The product of a dynamically quantized FullyConnected: rows of qdint8 (int8 with a
//! scale and zero point per row) times int8 weights with a float scale per block of `k`
//! (per channel: one block of all of `k`; 4-bit weights: XNNPACK's blocks of a
//! multiple of 32), fp32 out. The LLM decode loop is made of these.
//!
//! The weights are packed at init in groups of [`NR`] channels: for each group of 4
//! inputs (a "quad"), channel `j`'s 4 weights at bytes `j * 4..j * 4 + 4` of a 64-byte
//! row, zero past `n` and `k`. One quad of the input, broadcast, then meets 16
//! channels' quads in two vectors: `vpdpbusd` (AVX-VNNI or AVX-512 VNNI) multiplies the
//! 4 unsigned input bytes by the 4 signed weight bytes of each lane and adds the 4
//! products to the lane's int32, exactly. The input is read as `x + 128` (so that it is
//! unsigned), and each block's integer sum is corrected by `(zero_point + 128)` times
//! the block's weight sum, computed at init. AVX2 without VNNI does the same with
//! `vpmaddubsw` + `vpmaddwd`, which is exact only while a pair of products fits in an
//! int16: true for 4-bit weights (`2 * 255 * 8`), not for int8 ones, which take the
//! portable loop there.
//!
//! Every kernel turns a block's integer sum into floats in XNNPACK's order (per
//! channel: times the row's scale, then the channel's; per block: each block's sum
//! times its scale, added up, then times the row's scale), so all of them give the same
//! bits.

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Channels per packed group.
pub(crate) const NR: usize = 16;

/// How the products are computed on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DotKernel {
    /// Plain Rust over the packed layout, any CPU.
    Portable,
    /// `vpmaddubsw` + `vpmaddwd`: 4-bit weights only.
    Avx2,
    /// `vpdpbusd` in its VEX encoding (AVX-VNNI).
    AvxVnni,
    /// `vpdpbusd` in its EVEX encoding on 256-bit vectors (AVX-512 VNNI + VL).
    Avx512Vnni,
    /// aarch64's `sdot` (dotprod): see `neon_qd8`.
    #[cfg(target_arch = "aarch64")]
    NeonDot,
    /// aarch64 without dotprod: NEON's `smull` + `sadalp`.
    #[cfg(target_arch = "aarch64")]
    Neon,
}

/// aarch64's kernel, which serves any weight width: `sdot` with dotprod, else the plain
/// NEON one (`neon_qd8`). An `Option` so [`DotKernel::detect`] keeps one shape on every
/// architecture.
#[cfg(target_arch = "aarch64")]
fn arm_kernel() -> Option<DotKernel> {
    Some(if super::cpu::arm_dot() >= super::cpu::ArmDot::DotProd {
        DotKernel::NeonDot
    } else {
        DotKernel::Neon
    })
}

impl DotKernel {
    /// The fastest kernel this CPU has for weights of at most `weight_bits` bits.
    pub(crate) fn detect(weight_bits: u32) -> DotKernel {
        #[cfg(target_arch = "aarch64")]
        if let Some(kernel) = arm_kernel() {
            return kernel;
        }
        match super::cpu::vnni() {
            Some(super::cpu::Vnni::Avx512) => DotKernel::Avx512Vnni,
            Some(super::cpu::Vnni::Avx) => DotKernel::AvxVnni,
            None if weight_bits <= 4 && et_ops::gemm::avx2_fma_available() => DotKernel::Avx2,
            None => DotKernel::Portable,
        }
    }
}

/// Groups of 4 inputs per row of `k`.
pub(crate) fn quads(k: usize) -> usize {
    k.div_ceil(4)
}

/// Channels rounded up to whole groups (saturating: sizes read from a payload may be
/// anything before they are checked).
pub(crate) fn padded(n: usize) -> usize {
    n.div_ceil(NR).saturating_mul(NR)
}

/// The packed weight bytes of `n` channels of `k` (saturating).
pub(crate) fn weight_bytes(n: usize, k: usize) -> usize {
    padded(n).saturating_mul(quads(k)).saturating_mul(4)
}

/// Packs `[n][k]` weights (`weight(c, i)`) in blocks of `block` inputs with their scales
/// (`scale(c, b)`): the weights into `weights` ([`weight_bytes`]), and per group, block
/// and channel the block's weight sum into `sums` and its scale into `scales` (each
/// `padded(n) * k / block` entries), zero past `n`.
pub(crate) fn pack(
    (n, k, block): (usize, usize, usize),
    weight: impl Fn(usize, usize) -> i8,
    scale: impl Fn(usize, usize) -> f32,
    weights: &mut [i8],
    sums: &mut [i32],
    scales: &mut [f32],
) {
    let (kq, blocks) = (quads(k), k / block);
    for (g, group) in weights.chunks_exact_mut(kq * 4 * NR).enumerate() {
        for (q, row) in group.chunks_exact_mut(4 * NR).enumerate() {
            for (j, lane) in row.chunks_exact_mut(4).enumerate() {
                let c = g * NR + j;
                for (e, w) in lane.iter_mut().enumerate() {
                    let i = 4 * q + e;
                    *w = if c < n && i < k { weight(c, i) } else { 0 };
                }
            }
        }
    }
    for c in 0..n {
        let (g, j) = (c / NR, c % NR);
        for b in 0..blocks {
            let at = (g * blocks + b) * NR + j;
            sums[at] = (b * block..(b + 1) * block)
                .map(|i| i32::from(weight(c, i)))
                .sum();
            scales[at] = scale(c, b);
        }
    }
}

/// A packed FullyConnected's weights, with the layout of [`pack`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Qd8Gemm<'a> {
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// Inputs per scale; divides `k`, and is a multiple of 4 when `k / block > 1`.
    pub(crate) block: usize,
    pub(crate) weights: &'a [i8],
    pub(crate) sums: &'a [i32],
    pub(crate) scales: &'a [f32],
    /// `padded(n)` floats (zero without a bias).
    pub(crate) bias: &'a [f32],
    pub(crate) kernel: DotKernel,
}

impl<'a> Qd8Gemm<'a> {
    fn blocks(&self) -> usize {
        self.k / self.block
    }

    /// The product restricted to output channels `channels`, which start at a whole
    /// group of [`NR`] (the unit threads split a single row by): every packed array
    /// keeps its groups contiguous. `None` if the range does not start at a group or lies
    /// outside `n`.
    pub(crate) fn channels(&self, channels: core::ops::Range<usize>) -> Option<Qd8Gemm<'a>> {
        if !channels.start.is_multiple_of(NR) || channels.end > self.n || channels.is_empty() {
            return None;
        }
        let group = channels.start / NR;
        let per_group = quads(self.k).checked_mul(4 * NR)?;
        Some(Qd8Gemm {
            n: channels.len(),
            weights: self.weights.get(group.checked_mul(per_group)?..)?,
            sums: self.sums.get(group * self.blocks() * NR..)?,
            scales: self.scales.get(group * self.blocks() * NR..)?,
            bias: self.bias.get(channels.start..)?,
            ..*self
        })
    }

    /// One output row: `out[c]` (for `c < n`) is the FullyConnected of `x` (`k` int8s
    /// quantized with `row_scale` and `zero_point`) with channel `c`, plus its bias.
    pub(crate) fn row(&self, x: &[i8], row_scale: f32, zero_point: i32, out: &mut [f32]) {
        let (n, k, blocks) = (self.n, self.k, self.blocks());
        assert!(
            x.len() >= k
                && out.len() >= n
                && (blocks == 1 || self.block.is_multiple_of(4))
                && self.weights.len() >= weight_bytes(n, k)
                && self.sums.len() >= padded(n) * blocks
                && self.scales.len() >= padded(n) * blocks
                && self.bias.len() >= padded(n)
        );
        #[cfg(target_arch = "x86_64")]
        {
            // Each kernel is chosen by `DotKernel::detect` only where the CPU has its
            // features (and `Avx2` only for 4-bit weights, whose pairs of products fit an
            // int16); the lengths the kernels' reads rely on are asserted above.
            match self.kernel {
                // SAFETY: see above.
                DotKernel::Avx512Vnni => unsafe {
                    return self.row_avx512vnni(x, row_scale, zero_point, out);
                },
                // SAFETY: see above.
                DotKernel::AvxVnni => unsafe {
                    return self.row_avxvnni(x, row_scale, zero_point, out);
                },
                // SAFETY: see above.
                DotKernel::Avx2 => unsafe {
                    return self.row_avx2(x, row_scale, zero_point, out);
                },
                DotKernel::Portable => {}
            }
        }
        #[cfg(target_arch = "aarch64")]
        if self.kernel != DotKernel::Portable {
            return self.row_neon(x, row_scale, zero_point, out);
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let _ = self.kernel; // no vector kernels on this architecture
        self.row_portable(x, row_scale, zero_point, out)
    }

    pub(crate) fn row_portable(&self, x: &[i8], row_scale: f32, zero_point: i32, out: &mut [f32]) {
        let (k, block, blocks, kq) = (self.k, self.block, self.blocks(), quads(self.k));
        for (c, y) in out.iter_mut().enumerate().take(self.n) {
            let (g, j) = (c / NR, c % NR);
            let group = &self.weights[g * kq * 4 * NR..];
            let weight = |i: usize| group[(i / 4) * 4 * NR + j * 4 + i % 4];
            let mut acc = 0.0f32;
            let mut single = 0.0f32;
            for b in 0..blocks {
                let span = b * block..((b + 1) * block).min(k);
                let dot = span.fold(0i32, |dot, i| {
                    dot.wrapping_add(i32::from(x[i]) * i32::from(weight(i)))
                });
                let at = (g * blocks + b) * NR + j;
                let dot = dot.wrapping_sub(zero_point.wrapping_mul(self.sums[at])) as f32;
                if blocks == 1 {
                    single = dot * row_scale * self.scales[at];
                } else {
                    acc += dot * self.scales[at];
                }
            }
            let value = if blocks == 1 { single } else { acc * row_scale };
            *y = value + self.bias[c];
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::cpu::{Avx2Nibbles, Avx512Vnni, AvxVnni, Dot4};
    use super::*;

    impl Qd8Gemm<'_> {
        /// # Safety
        /// The CPU has AVX2 and FMA; the weights are 4-bit; the lengths asserted in
        /// [`row`](Qd8Gemm::row) hold.
        #[target_feature(enable = "avx2,fma")]
        pub(super) unsafe fn row_avx2(&self, x: &[i8], rs: f32, zp: i32, out: &mut [f32]) {
            // SAFETY: forwarded from this function's contract.
            unsafe { self.row_simd::<Avx2Nibbles>(x, rs, zp, out) }
        }

        /// # Safety
        /// The CPU has AVX-VNNI and AVX2; the lengths asserted in [`row`](Qd8Gemm::row)
        /// hold.
        #[target_feature(enable = "avx2,fma,avxvnni")]
        pub(super) unsafe fn row_avxvnni(&self, x: &[i8], rs: f32, zp: i32, out: &mut [f32]) {
            // SAFETY: forwarded from this function's contract.
            unsafe { self.row_simd::<AvxVnni>(x, rs, zp, out) }
        }

        /// # Safety
        /// The CPU has AVX-512F, VL and VNNI (and the OS saves their state); the
        /// lengths asserted in [`row`](Qd8Gemm::row) hold.
        #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512vnni")]
        pub(super) unsafe fn row_avx512vnni(&self, x: &[i8], rs: f32, zp: i32, out: &mut [f32]) {
            // SAFETY: forwarded from this function's contract.
            unsafe { self.row_simd::<Avx512Vnni>(x, rs, zp, out) }
        }

        /// The kernel body, inlined into each `target_feature` wrapper above.
        ///
        /// # Safety
        /// The CPU has what `D` and AVX2 use; the lengths asserted in
        /// [`row`](Qd8Gemm::row) hold.
        #[inline(always)]
        unsafe fn row_simd<D: Dot4>(
            &self,
            x: &[i8],
            row_scale: f32,
            zero_point: i32,
            out: &mut [f32],
        ) {
            let (n, k, block, blocks, kq) =
                (self.n, self.k, self.block, self.blocks(), quads(self.k));
            // A block's quads; with one block, all of them (the last maybe partial).
            let block_quads = if blocks == 1 { kq } else { block / 4 };
            let whole_quads = k / 4;
            // The quad at `q` of `x` as `x + 128`: whole quads read directly, the tail
            // (one block only) padded with bytes that meet zero weights.
            let quad = |q: usize| -> i32 {
                let bits = if q < whole_quads {
                    // SAFETY: `4 * q + 4 <= k <= x.len()`.
                    unsafe { x.as_ptr().add(4 * q).cast::<i32>().read_unaligned() }
                } else {
                    let mut tail = [0u8; 4];
                    for (t, &v) in tail.iter_mut().zip(&x[4 * q..k]) {
                        *t = v as u8;
                    }
                    i32::from_le_bytes(tail)
                };
                bits ^ 0x8080_8080u32 as i32
            };
            let correction = zero_point.wrapping_add(128);
            // SAFETY: the features `D` and AVX2 need (the caller's contract). Group `g <
            // padded(n) / NR` reads `kq * 64` weight bytes at `g * kq * 64`, within
            // `weight_bytes(n, k)`; block entries `(g * blocks + b) * NR + 0..16` are
            // within `padded(n) * blocks`; the bias `g * NR + 0..16` within `padded(n)`
            // (all asserted in `row`). Stores go to a local array.
            unsafe {
                let rs = _mm256_set1_ps(row_scale);
                let corr = _mm256_set1_epi32(correction);
                for g in 0..padded(n) / NR {
                    let w = self.weights.as_ptr().add(g * kq * 4 * NR);
                    let mut acc = [_mm256_setzero_ps(); 2];
                    for b in 0..blocks {
                        let mut dot = [_mm256_setzero_si256(); 2];
                        for q in b * block_quads..(b + 1) * block_quads {
                            let xb = _mm256_set1_epi32(quad(q));
                            let wq = w.add(q * 4 * NR);
                            dot[0] = D::dot4(dot[0], xb, _mm256_loadu_si256(wq.cast()));
                            dot[1] = D::dot4(dot[1], xb, _mm256_loadu_si256(wq.add(32).cast()));
                        }
                        let at = (g * blocks + b) * NR;
                        for (h, (acc, dot)) in acc.iter_mut().zip(dot).enumerate() {
                            let sums =
                                _mm256_loadu_si256(self.sums.as_ptr().add(at + 8 * h).cast());
                            let fixed = _mm256_sub_epi32(dot, _mm256_mullo_epi32(corr, sums));
                            let d = _mm256_cvtepi32_ps(fixed);
                            let scale = _mm256_loadu_ps(self.scales.as_ptr().add(at + 8 * h));
                            *acc = if blocks == 1 {
                                _mm256_mul_ps(_mm256_mul_ps(d, rs), scale)
                            } else {
                                _mm256_add_ps(*acc, _mm256_mul_ps(d, scale))
                            };
                        }
                    }
                    let mut lanes = [0.0f32; NR];
                    for (h, acc) in acc.into_iter().enumerate() {
                        let v = if blocks == 1 {
                            acc
                        } else {
                            _mm256_mul_ps(acc, rs)
                        };
                        let bias = _mm256_loadu_ps(self.bias.as_ptr().add(g * NR + 8 * h));
                        _mm256_storeu_ps(lanes.as_mut_ptr().add(8 * h), _mm256_add_ps(v, bias));
                    }
                    let c0 = g * NR;
                    let valid = (n - c0).min(NR);
                    out[c0..c0 + valid].copy_from_slice(&lanes[..valid]);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "qd8_gemm_tests.rs"]
mod tests;
