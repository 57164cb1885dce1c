//! The product of a dynamically quantized FullyConnected with 4-bit weights (XNNPACK's
//! qd8 x qb4w, ExecuTorch's `8da4w` linears): rows of qdint8 (int8 with a scale and zero
//! point per row) times signed 4-bit weights with a bfloat16 scale per block of inputs,
//! fp32 out. An LLM's decode step is a chain of these with one row, and reads every
//! weight once: its speed is the speed at which the weights stream from memory, so the
//! packing keeps them at half a byte each.
//!
//! # Packing
//!
//! [`pack_xnnpack`] packs output channels in tiles of [`TILE`] (zero past `n`). For each group of 8
//! inputs (an "oct") a tile has 128 bytes: two halves of 16 channels, channel `j`'s 4
//! bytes at `4 * j` of its half; byte `e` holds input `8 * oct + e` in its low nibble
//! and input `8 * oct + 4 + e` in its high nibble, as two's complement. One 64-byte
//! half is a 512-bit vector of 16 channels (four 128-bit NEON vectors of 4), and a
//! shift and a mask turn it into two vectors of `16 * w` as signed bytes, ready for a
//! 4-byte dot product with a broadcast group of 4 inputs. Per tile and block the 32
//! channels' scales follow as bfloat16 (how ExecuTorch stores them: no rounding), and
//! per channel a float `ksum` and the bias.
//!
//! # Arithmetic
//!
//! Every kernel computes, for row `x` (scale `row_scale`, zero point `zp`) and channel
//! `c` with blocks `b` of inputs (`w` as signed values):
//!
//! ```text
//! D(b)  = sum over i in b of (x[i] + 128) * w[c][i]            (exact in i32)
//! acc   = -(zp + 128) * ksum[c]                                (ksum[c] = sum over b of
//!                                                               scale(b) * sum(w[c] in b))
//! acc   = acc + D(b) * scale(b)        for each block in order (multiply, then add)
//! y     = acc * row_scale + bias[c]
//! ```
//!
//! `x + 128` makes the input unsigned for x86's `vpdpbusd` (unsigned times signed), and
//! the zero point's correction, a constant per channel times one per row, moves into
//! `ksum` as XNNPACK's packing does, so no per-block weight sums are streamed. The
//! kernels that multiply `16 * w` get `16 * D(b)` and scale `ksum` by 16 and
//! `row_scale` by 1/16: scaling by a power of two commutes with every rounding, so the
//! results have the same bits as the definition.

use core::ops::Range;

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86;

use super::clamp::Clamp;
use super::qd8_gemm::DotKernel;

/// Output channels per packed tile.
pub(crate) const TILE: usize = 32;
/// Bytes of one oct of a tile.
const OCT_BYTES: usize = TILE * 4;
/// The largest block the kernels take: `16 * D(b)` must fit an i32.
const MAX_BLOCK: usize = 32_768;

/// Whether the kernels take `k` inputs in blocks of `block` (XNNPACK's condition on
/// blockwise weights: a multiple of 32 dividing `k`).
pub(crate) fn supported(k: usize, block: usize) -> bool {
    block > 0 && block.is_multiple_of(32) && block <= MAX_BLOCK && k.is_multiple_of(block)
}

/// Channels rounded up to whole tiles (saturating: sizes read from a payload may be
/// anything before they are checked).
pub(crate) fn padded(n: usize) -> usize {
    n.div_ceil(TILE).saturating_mul(TILE)
}

/// The packed weight bytes of `n` channels of `k` inputs (saturating).
pub(crate) fn weight_bytes(n: usize, k: usize) -> usize {
    padded(n).saturating_mul(k / 2)
}

/// The packed scales of `n` channels of `k` inputs in blocks of `block` (saturating).
pub(crate) fn scale_count(n: usize, k: usize, block: usize) -> usize {
    padded(n).saturating_mul(k / block.max(1))
}

/// `bits` as a bfloat16's float.
fn bf16(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// Packs `[n][k]` 4-bit weights and their bfloat16 block scales (`scale(c, b)`) into
/// `weights` ([`weight_bytes`]), `scales` ([`scale_count`]) and `ksums`
/// ([`padded`]`(n)`), zero past `n`; `(k, block)` must be [`supported`]. The weights come
/// in XNNPACK's own 4-bit layout, `raw`: `[n][k]` nibbles, two per byte with
/// the even input in the low nibble, zero point 8 (`w + 8`). A byte shuffle per group of
/// 8 inputs instead of a call per weight: a large model's load time is mostly this.
pub(crate) fn pack_xnnpack(
    (n, k, block): (usize, usize, usize),
    raw: &[u8],
    scale: impl Fn(usize, usize) -> u16,
    weights: &mut [u8],
    scales: &mut [u16],
    ksums: &mut [f32],
) {
    let (octs, blocks) = (k / 8, k / block);
    let row = |c: usize| &raw[c * k / 2..(c + 1) * k / 2];
    for (t, tile) in weights.chunks_exact_mut(octs * OCT_BYTES).enumerate() {
        for j in (0..TILE).take_while(|j| t * TILE + j < n) {
            let src = row(t * TILE + j);
            for (o, oct) in tile.chunks_exact_mut(OCT_BYTES).enumerate() {
                // Nibble `i` of `bits` is input `8 * o + i` as `w + 8`; `^ 8` makes it
                // `w`'s two's complement.
                let bits = u32::from_le_bytes([
                    src[4 * o],
                    src[4 * o + 1],
                    src[4 * o + 2],
                    src[4 * o + 3],
                ]) ^ 0x8888_8888;
                let nibble = |i: u32| ((bits >> (4 * i)) & 0x0f) as u8;
                for (e, byte) in oct[4 * j..4 * j + 4].iter_mut().enumerate() {
                    *byte = nibble(e as u32) | nibble(e as u32 + 4) << 4;
                }
            }
        }
    }
    for (t, tile) in scales.chunks_exact_mut(blocks * TILE).enumerate() {
        for (b, row) in tile.chunks_exact_mut(TILE).enumerate() {
            for (j, s) in row.iter_mut().enumerate() {
                let c = t * TILE + j;
                *s = if c < n { scale(c, b) } else { 0 };
            }
        }
    }
    for (c, ksum) in ksums.iter_mut().enumerate() {
        *ksum = if c < n {
            let src = row(c);
            (0..blocks).fold(0.0f32, |acc, b| {
                let bytes = &src[b * block / 2..(b + 1) * block / 2];
                let unsigned: i32 = bytes
                    .iter()
                    .map(|&v| i32::from(v & 0x0f) + i32::from(v >> 4))
                    .sum();
                let sum = unsigned - 8 * block as i32;
                acc + sum as f32 * bf16(scale(c, b))
            })
        } else {
            0.0
        };
    }
}

/// A packed FullyConnected's weights, with the layout of [`pack_xnnpack`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Qb4Gemm<'a> {
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// Inputs per scale: `(k, block)` is [`supported`].
    pub(crate) block: usize,
    pub(crate) weights: &'a [u8],
    pub(crate) scales: &'a [u16],
    /// `padded(n)` floats each.
    pub(crate) ksums: &'a [f32],
    pub(crate) bias: &'a [f32],
    pub(crate) kernel: DotKernel,
}

/// The rows of a product: `m` rows of `k` int8s, each with its scale and zero point.
#[derive(Clone, Copy)]
pub(crate) struct Rows<'x> {
    pub(crate) data: &'x [i8],
    pub(crate) m: usize,
    /// Row `r`'s scale and zero point.
    pub(crate) params: &'x (dyn Fn(usize) -> (f32, i32) + Sync),
}

/// An `[m][ld]` output that bands of channels write in parallel, each its own columns.
pub(crate) struct Columns<'o> {
    ptr: *mut f32,
    rows: usize,
    ld: usize,
    _out: core::marker::PhantomData<&'o mut [f32]>,
}

// SAFETY: a `Columns` is only written through `row_part`, whose callers write disjoint
// columns; the floats themselves are plain data.
unsafe impl Send for Columns<'_> {}
// SAFETY: as above.
unsafe impl Sync for Columns<'_> {}

impl<'o> Columns<'o> {
    /// The first `rows * ld` floats of `out`, as rows of `ld`; `None` if `out` is shorter.
    pub(crate) fn new(out: &'o mut [f32], rows: usize, ld: usize) -> Option<Columns<'o>> {
        (out.len() >= rows.checked_mul(ld)?).then_some(Columns {
            ptr: out.as_mut_ptr(),
            rows,
            ld,
            _out: core::marker::PhantomData,
        })
    }

    /// Columns `cols` of row `r`.
    ///
    /// # Safety
    /// No other live slice from this `Columns` overlaps these columns of this row.
    #[allow(
        clippy::mut_from_ref,
        reason = "bands of channels write disjoint columns of one output"
    )]
    unsafe fn row_part(&self, r: usize, cols: Range<usize>) -> &mut [f32] {
        assert!(r < self.rows && cols.start <= cols.end && cols.end <= self.ld);
        // SAFETY: in bounds (asserted; `new` checked `rows * ld` floats), and not
        // aliased (the caller's contract).
        unsafe {
            core::slice::from_raw_parts_mut(self.ptr.add(r * self.ld + cols.start), cols.len())
        }
    }
}

impl Qb4Gemm<'_> {
    fn blocks(&self) -> usize {
        self.k / self.block
    }

    /// Writes channels `channels` (which start at a whole tile) of every row into `out`
    /// (rows of `n`), clamped. Bands of channels that do not overlap may run at once on
    /// one `out`.
    pub(crate) fn product(
        &self,
        x: Rows<'_>,
        channels: Range<usize>,
        clamp: Clamp,
        out: &Columns<'_>,
    ) {
        let (n, k) = (self.n, self.k);
        assert!(
            supported(k, self.block)
                && x.data.len() >= x.m * k
                && out.rows >= x.m
                && out.ld >= n
                && channels.start.is_multiple_of(TILE)
                && channels.end <= n
                && self.weights.len() >= weight_bytes(n, k)
                && self.scales.len() >= scale_count(n, k, self.block)
                && self.ksums.len() >= padded(n)
                && self.bias.len() >= padded(n)
        );
        for tile in channels.start / TILE..channels.end.div_ceil(TILE) {
            let cols = tile * TILE..((tile + 1) * TILE).min(channels.end);
            let mut first = 0;
            while first < x.m {
                let rows = (x.m - first).min(4);
                let mut y = [[0.0f32; TILE]; 4];
                self.tile(x, first..first + rows, tile, &mut y[..rows]);
                for (r, y) in (first..).zip(&mut y[..rows]) {
                    let y = &mut y[..cols.len()];
                    clamp.apply(y);
                    // SAFETY: this call writes only `channels` (the caller's bands do
                    // not overlap), and each tile's columns once.
                    unsafe { out.row_part(r, cols.clone()) }.copy_from_slice(y);
                }
                first += rows;
            }
        }
    }

    /// Tile `tile` of rows `rows` (at most 4) into `y`, unclamped.
    fn tile(&self, x: Rows<'_>, rows: Range<usize>, tile: usize, y: &mut [[f32; TILE]]) {
        #[cfg(target_arch = "x86_64")]
        if self.kernel != DotKernel::Portable {
            return self.tile_x86(x, rows, tile, y);
        }
        #[cfg(target_arch = "aarch64")]
        if self.kernel == DotKernel::NeonDot {
            return self.tile_neon(x, rows, tile, y);
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let _ = self.kernel; // no vector kernels on this architecture
        self.tile_portable(x, rows, tile, y)
    }

    /// The definition, over the packed layout, on any CPU.
    fn tile_portable(&self, x: Rows<'_>, rows: Range<usize>, tile: usize, y: &mut [[f32; TILE]]) {
        let (k, block, blocks) = (self.k, self.block, self.blocks());
        let weights = &self.weights[tile * (k / 8) * OCT_BYTES..];
        let scales = &self.scales[tile * blocks * TILE..];
        for (r, y) in rows.zip(y) {
            let row = &x.data[r * k..(r + 1) * k];
            let (row_scale, zp) = (x.params)(r);
            for (j, y) in y.iter_mut().enumerate() {
                let c = tile * TILE + j;
                let mut acc = -(zp.wrapping_add(128) as f32) * self.ksums[c];
                for b in 0..blocks {
                    let mut dot = 0i32;
                    for o in b * block / 8..(b + 1) * block / 8 {
                        let lane = &weights[o * OCT_BYTES + 4 * j..][..4];
                        for (e, &byte) in lane.iter().enumerate() {
                            let (lo, hi) = ((byte << 4) as i8 >> 4, byte as i8 >> 4);
                            dot += (i32::from(row[8 * o + e]) + 128) * i32::from(lo);
                            dot += (i32::from(row[8 * o + 4 + e]) + 128) * i32::from(hi);
                        }
                    }
                    acc += dot as f32 * bf16(scales[b * TILE + j]);
                }
                *y = acc * row_scale + self.bias[c];
            }
        }
    }
}
