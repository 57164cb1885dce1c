//! The int8 GEMM's AVX-512 VNNI kernel: tiles of [`ROWS`] rows times 32 channels (two
//! of the packed 16-channel blocks, one 512-bit accumulator each per row), for the
//! packing of [`pack_quads`](super::pack_quads), whose 16 channels of one group of 4
//! inputs are 64 contiguous bytes: one vector.
//!
//! Rows are read where they lie: either the tile buffer `fill_row` wrote (already
//! offset to unsigned) or, for a pointwise convolution, the input pixels themselves,
//! offset in the register (`XOR`) as they are broadcast. That saves the copy of every
//! input row and lets each weight vector serve eight rows.

use core::arch::x86_64::*;

use super::{padded, quads, QGemm, MR_AVX512 as ROWS, NR};

impl QGemm<'_> {
    /// Computes `count` (at most [`ROWS`]) output rows into `out[r * n..][..n]`, row `r`
    /// reading `quads(k) * 4` bytes at `rows[r]`: unsigned bytes (`x + 128`) or, with
    /// `XOR`, the int8 inputs themselves. Rows past `count` are read but not stored, so
    /// they must point to readable rows too (any).
    ///
    /// # Safety
    /// The CPU must support AVX-512F, BW, VL and VNNI (the OS saving their state); `self`
    /// is packed for VNNI; each `rows[r]` points to `quads(k) * 4` readable bytes.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(crate) unsafe fn tile_avx512<const XOR: bool>(
        &self,
        rows: &[*const i8; ROWS],
        count: usize,
        out: &mut [i8],
    ) {
        assert!(
            self.vnni
                && count <= ROWS
                && out.len() >= count * self.n
                && self.packed.len() >= super::packed_len(self.n, self.k)
                && self.bias.len() >= padded(self.n)
                && self.scales.len() >= padded(self.n)
        );
        // SAFETY: AVX-512 VNNI and the rows' lengths (the caller's contract); the
        // packing's, bias' and scales' lengths asserted above.
        unsafe {
            match count {
                0 => {}
                1 => self.tile_rows::<1, XOR>(rows, count, out),
                2 => self.tile_rows::<2, XOR>(rows, count, out),
                3 | 4 => self.tile_rows::<4, XOR>(rows, count, out),
                _ => self.tile_rows::<ROWS, XOR>(rows, count, out),
            }
        }
    }

    /// The tile on its first `R` rows (at least `count`): a tile of few rows (a fully
    /// connected node's single row, the last pixels of a band) does not compute eight.
    ///
    /// # Safety
    /// As [`tile_avx512`](Self::tile_avx512)'s, with the lengths it asserts.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
    #[inline]
    unsafe fn tile_rows<const R: usize, const XOR: bool>(
        &self,
        rows: &[*const i8; ROWS],
        count: usize,
        out: &mut [i8],
    ) {
        let rows: &[*const i8; R] = rows.first_chunk().expect("R is at most ROWS");
        let blocks = padded(self.n) / NR;
        let mut block = 0;
        // SAFETY: forwarded from this function's contract; blocks `block..block + B`
        // are among `padded(n)`'s.
        unsafe {
            while block + 2 <= blocks {
                self.blocks::<R, 2, XOR>(rows, count, block, out);
                block += 2;
            }
            if block < blocks {
                self.blocks::<R, 1, XOR>(rows, count, block, out);
            }
        }
    }

    /// `B` packed blocks from `block` of the tile's `R` rows.
    ///
    /// # Safety
    /// As [`tile_avx512`](Self::tile_avx512)'s, with `block + B` at most the blocks of
    /// `padded(n)` and the lengths it asserts.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
    #[inline]
    unsafe fn blocks<const R: usize, const B: usize, const XOR: bool>(
        &self,
        rows: &[*const i8; R],
        count: usize,
        block: usize,
        out: &mut [i8],
    ) {
        let kq = quads(self.k);
        let packed = self.packed.as_ptr().cast::<i8>();
        // Flips each byte's top bit: `x + 128` as an unsigned byte.
        let sign = _mm512_set1_epi8(i8::MIN);
        let mut acc = [[_mm512_setzero_si512(); B]; R];
        // SAFETY: block `block + b` (`b < B`) holds `kq` vectors of 64 bytes inside
        // `packed`, and each row `kq * 4` bytes (the caller's contract).
        unsafe {
            let weights: [*const i8; B] =
                core::array::from_fn(|b| packed.add((block + b) * kq * 4 * NR));
            for q in 0..kq {
                let w: [__m512i; B] =
                    core::array::from_fn(|b| _mm512_loadu_si512(weights[b].add(q * 64).cast()));
                for (acc, row) in acc.iter_mut().zip(rows) {
                    // One group of 4 row bytes, as the int32 to broadcast.
                    let quad = row.add(q * 4).cast::<i32>().read_unaligned();
                    let mut x = _mm512_set1_epi32(quad);
                    if XOR {
                        x = _mm512_xor_si512(x, sign);
                    }
                    for (acc, &w) in acc.iter_mut().zip(&w) {
                        *acc = _mm512_dpbusd_epi32(*acc, x, w);
                    }
                }
            }
            for b in 0..B {
                self.store16(block + b, &acc, b, count, out);
            }
        }
    }

    /// Adds the bias to accumulator `b` of each of the `count` rows (channel block
    /// `block`), requantizes and stores the valid channels.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, BW and VL; `block` is one of `padded(n)`'s, whose
    /// bias and scales `self` holds; `out` holds `count * n` bytes.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn store16<const R: usize, const B: usize>(
        &self,
        block: usize,
        acc: &[[__m512i; B]; R],
        b: usize,
        count: usize,
        out: &mut [i8],
    ) {
        let n = self.n;
        let c0 = block * NR;
        let valid = (n - c0).min(NR);
        let mask: __mmask16 = if valid == NR { !0 } else { (1 << valid) - 1 };
        let r = &self.requant;
        let (lo, hi) = (_mm512_set1_ps(r.lo), _mm512_set1_ps(r.hi));
        let zp = _mm512_set1_epi32(r.zero_point);
        // SAFETY: channels `c0..c0 + 16` lie inside the padded bias and scales; each
        // store writes the `valid` channels of row `r < count` inside `out` (the caller's
        // contract).
        unsafe {
            let bias = _mm512_loadu_si512(self.bias.as_ptr().add(c0).cast());
            let scale = _mm512_loadu_ps(self.scales.as_ptr().add(c0));
            for (row, acc) in acc.iter().enumerate().take(count) {
                let v = _mm512_cvtepi32_ps(_mm512_add_epi32(acc[b], bias));
                let v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v, scale), lo), hi);
                // Within int8 after the clamp: the saturating narrowing changes nothing.
                let q = _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), zp));
                _mm_mask_storeu_epi8(out.as_mut_ptr().add(row * n + c0), mask, q);
            }
        }
    }
}
