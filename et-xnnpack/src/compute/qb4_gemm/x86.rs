//! x86-64 kernels of [`Qb4Gemm`]: AVX-512 VNNI on whole 64-byte halves of a tile (16
//! channels a vector, up to 4 rows sharing each unpacked weight vector), and 256-bit
//! kernels for AVX-VNNI and plain AVX2, one row at a time.

use core::arch::x86_64::*;
use core::ops::Range;

use super::{DotKernel, Qb4Gemm, Rows, OCT_BYTES, TILE};

impl Qb4Gemm<'_> {
    /// [`tile`](Qb4Gemm::tile) on the x86 kernel `detect` chose.
    pub(super) fn tile_x86(
        &self,
        x: Rows<'_>,
        rows: Range<usize>,
        tile: usize,
        y: &mut [[f32; TILE]],
    ) {
        // Each kernel is chosen by `DotKernel::detect` only where the CPU has its
        // features; `product` asserted the lengths the kernels read (whole tiles of
        // packed weights and scales, `m` rows of `k` inputs, `k` a multiple of 32).
        match (self.kernel, rows.len()) {
            // SAFETY: see above.
            (DotKernel::Avx512Vnni, 4) => unsafe { self.tile_avx512::<4>(x, rows.start, tile, y) },
            // SAFETY: see above.
            (DotKernel::Avx512Vnni, 3) => unsafe { self.tile_avx512::<3>(x, rows.start, tile, y) },
            // SAFETY: see above.
            (DotKernel::Avx512Vnni, 2) => unsafe { self.tile_avx512::<2>(x, rows.start, tile, y) },
            // SAFETY: see above.
            (DotKernel::Avx512Vnni, _) => unsafe { self.tile_avx512::<1>(x, rows.start, tile, y) },
            (DotKernel::AvxVnni, _) => {
                for (r, y) in rows.zip(y) {
                    // SAFETY: see above.
                    unsafe { self.row_avxvnni(x, r, tile, y) }
                }
            }
            (_, _) => {
                for (r, y) in rows.zip(y) {
                    // SAFETY: see above (`Avx2` is the only other x86 kernel).
                    unsafe { self.row_avx2(x, r, tile, y) }
                }
            }
        }
    }

    /// Rows `first..first + MR` of tile `tile`.
    ///
    /// # Safety
    /// The CPU has AVX-512F, BW and VNNI; the lengths `product` asserts hold and
    /// `first + MR <= x.m`.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vnni")]
    unsafe fn tile_avx512<const MR: usize>(
        &self,
        x: Rows<'_>,
        first: usize,
        tile: usize,
        y: &mut [[f32; TILE]],
    ) {
        let (k, blocks, octs_per_block) = (self.k, self.blocks(), self.block / 8);
        let c0 = tile * TILE;
        // SAFETY: the tile's `k / 8` octs of weights, `blocks` rows of scales and
        // `TILE` ksums and biases lie within the packed arrays, and rows `first..first +
        // MR` of `k` inputs within `x` (`product`'s assertions); every input read is at
        // `8 * oct + 0..8 < k`. Stores go to `y`, which holds `MR` tiles.
        unsafe {
            let weights = self.weights.as_ptr().add(tile * (k / 8) * OCT_BYTES);
            let scales = self.scales.as_ptr().add(tile * blocks * TILE);
            let high = _mm512_set1_epi8(0xf0u8 as i8);
            let unsign = _mm512_set1_epi32(0x8080_8080u32 as i32);
            let ksum = |h: usize| {
                _mm512_mul_ps(
                    _mm512_loadu_ps(self.ksums.as_ptr().add(c0 + 16 * h)),
                    _mm512_set1_ps(16.0),
                )
            };
            let ksums = [ksum(0), ksum(1)];
            let mut acc = [[_mm512_setzero_ps(); 2]; MR];
            let mut rows = [x.data.as_ptr(); MR];
            let mut row_scales = [0.0f32; MR];
            for (r, ((acc, row), row_scale)) in acc
                .iter_mut()
                .zip(&mut rows)
                .zip(&mut row_scales)
                .enumerate()
            {
                let (scale, zp) = (x.params)(first + r);
                *row = x.data.as_ptr().add((first + r) * k);
                *row_scale = scale / 16.0;
                let correction = _mm512_set1_ps(-(zp.wrapping_add(128) as f32));
                *acc = [
                    _mm512_mul_ps(correction, ksums[0]),
                    _mm512_mul_ps(correction, ksums[1]),
                ];
            }
            for b in 0..blocks {
                let mut dot = [[_mm512_setzero_si512(); 2]; MR];
                for o in b * octs_per_block..(b + 1) * octs_per_block {
                    let w = weights.add(o * OCT_BYTES);
                    let (v0, v1) = (
                        _mm512_loadu_si512(w.cast()),
                        _mm512_loadu_si512(w.add(64).cast()),
                    );
                    let lo = [
                        _mm512_and_si512(_mm512_slli_epi16(v0, 4), high),
                        _mm512_and_si512(_mm512_slli_epi16(v1, 4), high),
                    ];
                    let hi = [_mm512_and_si512(v0, high), _mm512_and_si512(v1, high)];
                    for (dot, row) in dot.iter_mut().zip(&rows) {
                        let quad = |at: usize| {
                            let bits = row.add(at).cast::<i32>().read_unaligned();
                            _mm512_xor_si512(_mm512_set1_epi32(bits), unsign)
                        };
                        let (xl, xh) = (quad(8 * o), quad(8 * o + 4));
                        for h in 0..2 {
                            dot[h] = _mm512_dpbusd_epi32(dot[h], xl, lo[h]);
                            dot[h] = _mm512_dpbusd_epi32(dot[h], xh, hi[h]);
                        }
                    }
                }
                let scale = |h: usize| {
                    let bits = _mm256_loadu_si256(scales.add(b * TILE + 16 * h).cast());
                    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16))
                };
                let s = [scale(0), scale(1)];
                for (acc, dot) in acc.iter_mut().zip(&dot) {
                    for h in 0..2 {
                        acc[h] =
                            _mm512_add_ps(acc[h], _mm512_mul_ps(_mm512_cvtepi32_ps(dot[h]), s[h]));
                    }
                }
            }
            for ((acc, y), row_scale) in acc.iter().zip(y.iter_mut()).zip(row_scales) {
                for (h, &acc) in acc.iter().enumerate() {
                    let bias = _mm512_loadu_ps(self.bias.as_ptr().add(c0 + 16 * h));
                    let v = _mm512_add_ps(_mm512_mul_ps(acc, _mm512_set1_ps(row_scale)), bias);
                    _mm512_storeu_ps(y.as_mut_ptr().add(16 * h), v);
                }
            }
        }
    }

    /// # Safety
    /// The CPU has AVX-VNNI and AVX2; the lengths `product` asserts hold and `r < x.m`.
    #[target_feature(enable = "avx2,fma,avxvnni")]
    unsafe fn row_avxvnni(&self, x: Rows<'_>, r: usize, tile: usize, y: &mut [f32; TILE]) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.row_256::<AvxVnniNibbles>(x, r, tile, y) }
    }

    /// # Safety
    /// The CPU has AVX2 and FMA; the lengths `product` asserts hold and `r < x.m`.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn row_avx2(&self, x: Rows<'_>, r: usize, tile: usize, y: &mut [f32; TILE]) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.row_256::<Avx2Nibbles>(x, r, tile, y) }
    }

    /// Row `r` of tile `tile` on 256-bit vectors, a half (16 channels) at a time.
    ///
    /// # Safety
    /// The CPU has what `N` uses and AVX2; the lengths `product` asserts hold, `r < x.m`.
    #[inline(always)]
    unsafe fn row_256<N: Nibbles>(&self, x: Rows<'_>, r: usize, tile: usize, y: &mut [f32; TILE]) {
        let (k, blocks, octs_per_block) = (self.k, self.blocks(), self.block / 8);
        let c0 = tile * TILE;
        let (row_scale, zp) = (x.params)(r);
        // SAFETY: as in `tile_avx512`, for one row and 256-bit quarters of each half.
        unsafe {
            let weights = self.weights.as_ptr().add(tile * (k / 8) * OCT_BYTES);
            let scales = self.scales.as_ptr().add(tile * blocks * TILE);
            let row = x.data.as_ptr().add(r * k);
            let unsign = _mm256_set1_epi32(0x8080_8080u32 as i32);
            let correction = _mm256_set1_ps(-(zp.wrapping_add(128) as f32) * N::FACTOR);
            let row_scale = _mm256_set1_ps(row_scale / N::FACTOR);
            for h in 0..2 {
                let at = |q: usize| c0 + 16 * h + 8 * q;
                let mut acc = [0, 1].map(|q| {
                    _mm256_mul_ps(correction, _mm256_loadu_ps(self.ksums.as_ptr().add(at(q))))
                });
                for b in 0..blocks {
                    let mut dot = [_mm256_setzero_si256(); 2];
                    for o in b * octs_per_block..(b + 1) * octs_per_block {
                        let quad = |at: usize| {
                            let bits = row.add(at).cast::<i32>().read_unaligned();
                            _mm256_xor_si256(_mm256_set1_epi32(bits), unsign)
                        };
                        let (xl, xh) = (quad(8 * o), quad(8 * o + 4));
                        let w = weights.add(o * OCT_BYTES + 64 * h);
                        for (q, dot) in dot.iter_mut().enumerate() {
                            let (lo, hi) = N::unpack(_mm256_loadu_si256(w.add(32 * q).cast()));
                            *dot = N::dot(N::dot(*dot, xl, lo), xh, hi);
                        }
                    }
                    for (q, (acc, dot)) in acc.iter_mut().zip(dot).enumerate() {
                        let bits = _mm_loadu_si128(scales.add(b * TILE + 16 * h + 8 * q).cast());
                        let s =
                            _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
                        *acc = _mm256_add_ps(*acc, _mm256_mul_ps(_mm256_cvtepi32_ps(dot), s));
                    }
                }
                for (q, acc) in acc.into_iter().enumerate() {
                    let bias = _mm256_loadu_ps(self.bias.as_ptr().add(at(q)));
                    let v = _mm256_add_ps(_mm256_mul_ps(acc, row_scale), bias);
                    _mm256_storeu_ps(y.as_mut_ptr().add(16 * h + 8 * q), v);
                }
            }
        }
    }
}

/// How a 256-bit kernel turns packed nibbles into signed bytes and multiplies them by
/// 4 unsigned input bytes per int32 lane.
trait Nibbles {
    /// The weights' factor in the unpacked bytes (the integer sums carry it too).
    const FACTOR: f32;
    /// The low and the high nibbles of each byte of `v`, as signed bytes.
    ///
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn unpack(v: __m256i) -> (__m256i, __m256i);
    /// # Safety
    /// The CPU has what the implementation uses.
    unsafe fn dot(acc: __m256i, x: __m256i, w: __m256i) -> __m256i;
}

/// `vpdpbusd` (AVX-VNNI) on `16 * w`, as the AVX-512 kernel does.
struct AvxVnniNibbles;
impl Nibbles for AvxVnniNibbles {
    const FACTOR: f32 = 16.0;
    #[inline(always)]
    unsafe fn unpack(v: __m256i) -> (__m256i, __m256i) {
        // SAFETY: AVX2 (the caller's contract); registers only.
        unsafe {
            let high = _mm256_set1_epi8(0xf0u8 as i8);
            (
                _mm256_and_si256(_mm256_slli_epi16(v, 4), high),
                _mm256_and_si256(v, high),
            )
        }
    }
    #[inline(always)]
    unsafe fn dot(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
        // SAFETY: AVX-VNNI (the caller's contract).
        unsafe { _mm256_dpbusd_avx_epi32(acc, x, w) }
    }
}

/// `vpmaddubsw` + `vpmaddwd`: a pair of products must fit an int16, so the weights stay
/// `w` (sign-extended from their nibbles): `2 * 255 * 8` fits, `2 * 255 * 128` would not.
struct Avx2Nibbles;
impl Nibbles for Avx2Nibbles {
    const FACTOR: f32 = 1.0;
    #[inline(always)]
    unsafe fn unpack(v: __m256i) -> (__m256i, __m256i) {
        // SAFETY: AVX2 (the caller's contract); registers only. `(n ^ 8) - 8`
        // sign-extends a 4-bit two's complement `n`.
        unsafe {
            let (low, sign) = (_mm256_set1_epi8(0x0f), _mm256_set1_epi8(0x08));
            let extend = |n: __m256i| _mm256_sub_epi8(_mm256_xor_si256(n, sign), sign);
            (
                extend(_mm256_and_si256(v, low)),
                extend(_mm256_and_si256(_mm256_srli_epi16(v, 4), low)),
            )
        }
    }
    #[inline(always)]
    unsafe fn dot(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
        // SAFETY: AVX2 (the caller's contract); exact for `|w| <= 8` (see above).
        unsafe {
            let pairs = _mm256_maddubs_epi16(x, w);
            _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
        }
    }
}
