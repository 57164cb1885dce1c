extern crate std;
use std::{vec, vec::Vec};

use super::*;

use crate::compute::test_bytes_in as bytes;

/// The packing written from its definition (the module docs) with a call per weight
/// (`weight(c, i)` in `-8..=7`): the reference `pack_xnnpack` is checked against.
fn pack(
    (n, k, block): (usize, usize, usize),
    weight: impl Fn(usize, usize) -> i8,
    scale: impl Fn(usize, usize) -> u16,
    weights: &mut [u8],
    scales: &mut [u16],
    ksums: &mut [f32],
) {
    let (octs, blocks) = (k / 8, k / block);
    for (t, tile) in weights.chunks_exact_mut(octs * OCT_BYTES).enumerate() {
        for (o, oct) in tile.chunks_exact_mut(OCT_BYTES).enumerate() {
            for (j, lane) in oct.chunks_exact_mut(4).enumerate() {
                let c = t * TILE + j;
                for (e, byte) in lane.iter_mut().enumerate() {
                    let nibble = |i: usize| if c < n { weight(c, i) as u8 & 0x0f } else { 0 };
                    *byte = nibble(8 * o + e) | nibble(8 * o + 4 + e) << 4;
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
            (0..blocks).fold(0.0f32, |acc, b| {
                let sum: i32 = (b * block..(b + 1) * block)
                    .map(|i| i32::from(weight(c, i)))
                    .sum();
                acc + sum as f32 * bf16(scale(c, b))
            })
        } else {
            0.0
        };
    }
}

/// A layer's packed arrays, owned.
struct Packed {
    dims: (usize, usize, usize),
    weights: Vec<u8>,
    scales: Vec<u16>,
    ksums: Vec<f32>,
    bias: Vec<f32>,
}

impl Packed {
    fn gemm(&self, kernel: DotKernel) -> Qb4Gemm<'_> {
        let (n, k, block) = self.dims;
        Qb4Gemm {
            n,
            k,
            block,
            weights: &self.weights,
            scales: &self.scales,
            ksums: &self.ksums,
            bias: &self.bias,
            kernel,
        }
    }
}

/// A layer's operands on unpacked `[n][k]` weights.
struct Layer {
    n: usize,
    k: usize,
    block: usize,
    weights: Vec<i8>,
    /// bfloat16 bits per channel and block.
    scales: Vec<u16>,
    bias: Vec<f32>,
}

impl Layer {
    fn new((n, k, block): (usize, usize, usize), seed: u32) -> Layer {
        let blocks = k / block;
        let scales = bytes(n * blocks, seed + 1, 1, 120)
            .iter()
            // Scales of a trained layer's magnitude (around 1e-3), as bfloat16.
            .map(|&s| ((f32::from(s) * 2e-5).to_bits() >> 16) as u16)
            .collect();
        Layer {
            n,
            k,
            block,
            weights: bytes(n * k, seed, -8, 7),
            scales,
            bias: bytes(n, seed + 2, -100, 100)
                .iter()
                .map(|&b| f32::from(b) / 64.0)
                .collect(),
        }
    }

    fn packed(&self) -> Packed {
        let (n, k, block) = (self.n, self.k, self.block);
        let blocks = k / block;
        let mut weights = vec![0u8; weight_bytes(n, k)];
        let mut scales = vec![0u16; scale_count(n, k, block)];
        let mut ksums = vec![0.0f32; padded(n)];
        pack(
            (n, k, block),
            |c, i| self.weights[c * k + i],
            |c, b| self.scales[c * blocks + b],
            &mut weights,
            &mut scales,
            &mut ksums,
        );
        let mut bias = self.bias.clone();
        bias.resize(padded(n), 0.0);
        Packed {
            dims: (n, k, block),
            weights,
            scales,
            ksums,
            bias,
        }
    }

    /// The module's arithmetic, written from its definition on the unpacked weights.
    fn definition(&self, x: &[i8], (row_scale, zp): (f32, i32)) -> Vec<f32> {
        let (k, block) = (self.k, self.block);
        let blocks = k / block;
        (0..self.n)
            .map(|c| {
                let w = &self.weights[c * k..(c + 1) * k];
                let scale = |b: usize| bf16(self.scales[c * blocks + b]);
                let ksum = (0..blocks).fold(0.0f32, |acc, b| {
                    let sum: i32 = w[b * block..(b + 1) * block]
                        .iter()
                        .map(|&v| i32::from(v))
                        .sum();
                    acc + sum as f32 * scale(b)
                });
                let mut acc = -((zp + 128) as f32) * ksum;
                for b in 0..blocks {
                    let dot: i32 = (b * block..(b + 1) * block)
                        .map(|i| (i32::from(x[i]) + 128) * i32::from(w[i]))
                        .sum();
                    acc += dot as f32 * scale(b);
                }
                acc * row_scale + self.bias[c]
            })
            .collect()
    }

    /// The exact value, in f64.
    fn exact(&self, x: &[i8], (row_scale, zp): (f32, i32)) -> Vec<f64> {
        let (k, block) = (self.k, self.block);
        (0..self.n)
            .map(|c| {
                let sum: f64 = (0..k)
                    .map(|i| {
                        let scale = f64::from(bf16(self.scales[c * (k / block) + i / block]));
                        f64::from(i32::from(x[i]) - zp) * f64::from(self.weights[c * k + i]) * scale
                    })
                    .sum();
                sum * f64::from(row_scale) + f64::from(self.bias[c])
            })
            .collect()
    }
}

/// The kernels this CPU runs: the portable one, the one `detect` picks, and AVX2's
/// where VNNI is picked over it.
fn kernels() -> Vec<DotKernel> {
    let mut kernels = vec![DotKernel::Portable];
    let best = DotKernel::detect(4);
    if best != DotKernel::Portable && !kernels.contains(&best) {
        kernels.push(best);
    }
    #[cfg(target_arch = "x86_64")]
    if best != DotKernel::Avx2 && et_ops::gemm::avx2_fma_available() {
        kernels.push(DotKernel::Avx2);
    }
    kernels
}

fn row_params(r: usize) -> (f32, i32) {
    (0.011 + r as f32 * 0.002, [0, -3, 17, -128, 127][r % 5])
}

#[test]
fn every_kernel_gives_the_definitions_bits_within_the_exact_values_tolerance() {
    // (n, k, block): a partial tile, several tiles, blocks of 32 to a whole row.
    let cases = [
        (1, 32, 32),
        (5, 64, 32),
        (33, 96, 32),
        (64, 256, 64),
        (70, 128, 128),
        (48, 512, 32),
    ];
    for (case, &(n, k, block)) in cases.iter().enumerate() {
        let layer = Layer::new((n, k, block), 7 * case as u32);
        let packed = layer.packed();
        // 1 to 7 rows: every multi-row tile height and its remainders.
        for m in [1, 2, 3, 4, 5, 7] {
            let x = bytes(m * k, 100 + case as u32, -128, 127);
            for kernel in kernels() {
                let gemm = packed.gemm(kernel);
                let mut out = vec![f32::NAN; m * n];
                let columns = Columns::new(&mut out, m, n).unwrap();
                let rows = Rows {
                    data: &x,
                    m,
                    params: &row_params,
                };
                gemm.product(
                    rows,
                    0..n,
                    Clamp {
                        min: f32::NEG_INFINITY,
                        max: f32::INFINITY,
                    },
                    &columns,
                );
                for r in 0..m {
                    let row = &x[r * k..(r + 1) * k];
                    let want = layer.definition(row, row_params(r));
                    let got = &out[r * n..(r + 1) * n];
                    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        bits(got),
                        bits(&want),
                        "{kernel:?} n={n} k={k} block={block} m={m} row {r}"
                    );
                    // The float steps stay close to the exact value: the zero point's
                    // correction through `ksum` cancels, leaving a few roundings of the
                    // larger terms.
                    for (c, (&g, e)) in got.iter().zip(layer.exact(row, row_params(r))).enumerate()
                    {
                        let scale = 1e-5 * (1.0 + e.abs());
                        assert!(
                            (f64::from(g) - e).abs() <= scale,
                            "{kernel:?} {n}x{k} row {r} ch {c}: {g} vs {e}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bands_of_channels_give_the_bits_of_one_call_and_clamp() {
    let (n, k, block, m) = (100, 128, 32, 3);
    let layer = Layer::new((n, k, block), 3);
    let packed = layer.packed();
    let x = bytes(m * k, 9, -128, 127);
    let clamp = Clamp {
        min: -0.5,
        max: 0.25,
    };
    for kernel in kernels() {
        let gemm = packed.gemm(kernel);
        let rows = Rows {
            data: &x,
            m,
            params: &row_params,
        };
        let mut whole = vec![0.0f32; m * n];
        gemm.product(rows, 0..n, clamp, &Columns::new(&mut whole, m, n).unwrap());
        let mut banded = vec![0.0f32; m * n];
        let columns = Columns::new(&mut banded, m, n).unwrap();
        for band in [0..32, 32..96, 96..100] {
            gemm.product(rows, band, clamp, &columns);
        }
        assert_eq!(whole, banded, "{kernel:?}");
        assert!(
            whole.iter().all(|v| (-0.5..=0.25).contains(v)),
            "{kernel:?}"
        );
        let reached = whole.contains(&-0.5) && whole.contains(&0.25);
        assert!(
            reached,
            "{kernel:?}: the clamp's bounds are never reached: {whole:?}"
        );
    }
}

#[test]
fn packing_xnnpacks_layout_gives_the_generic_packing() {
    for (n, k, block) in [(1, 32, 32), (33, 96, 32), (70, 128, 64)] {
        let layer = Layer::new((n, k, block), 11);
        let packed = layer.packed();
        // XNNPACK's bytes: two inputs a byte, the even one low, as `w + 8`.
        let raw: Vec<u8> = layer
            .weights
            .chunks_exact(2)
            .map(|pair| (pair[0] + 8) as u8 | ((pair[1] + 8) as u8) << 4)
            .collect();
        let mut fast = (
            vec![0u8; packed.weights.len()],
            vec![0u16; packed.scales.len()],
            vec![0f32; packed.ksums.len()],
        );
        let blocks = k / block;
        pack_xnnpack(
            (n, k, block),
            &raw,
            |c, b| layer.scales[c * blocks + b],
            &mut fast.0,
            &mut fast.1,
            &mut fast.2,
        );
        assert_eq!(fast.0, packed.weights, "{n}x{k}");
        assert_eq!(fast.1, packed.scales, "{n}x{k}");
        assert_eq!(fast.2, packed.ksums, "{n}x{k}");
    }
}

#[test]
fn sizes_that_overflow_saturate_and_unsupported_blocks_are_refused() {
    assert_eq!(padded(usize::MAX), usize::MAX);
    assert!(supported(64, 32) && supported(4096, 4096));
    assert!(
        !supported(48, 16) && !supported(96, 64) && !supported(0, 0) && !supported(65_536, 65_536)
    );
}

/// The best time of `repeats` products of `m` seeded rows by an `[n][k]` layer on this
/// CPU's best kernel, and the bytes of its packed weights and scales.
fn best_time((n, k, block, m): (usize, usize, usize, usize), repeats: usize) -> (f64, usize) {
    let layer = Layer::new((n, k, block), 1);
    let packed = layer.packed();
    let x = bytes(m * k, 5, -128, 127);
    let gemm = packed.gemm(DotKernel::detect(4));
    let mut out = vec![0.0f32; m * n];
    let columns = Columns::new(&mut out, m, n).unwrap();
    let rows = Rows {
        data: &x,
        m,
        params: &row_params,
    };
    let clamp = Clamp {
        min: f32::NEG_INFINITY,
        max: f32::INFINITY,
    };
    let best = (0..repeats)
        .map(|_| {
            let t = std::time::Instant::now();
            gemm.product(rows, 0..n, clamp, &columns);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min);
    (best, packed.weights.len() + 2 * packed.scales.len())
}

/// The read rate of a decode-sized product (`cargo test --release -p et-xnnpack
/// qb4_gemm::tests::decode_read_rate -- --ignored --nocapture`): the packed bytes
/// streamed per second, to compare with the machine's memory bandwidth (the last shape
/// does not fit a cache).
#[test]
#[ignore = "a measurement, not a check"]
fn decode_read_rate() {
    let kernel = DotKernel::detect(4);
    for (n, k) in [
        (32_000, 768),
        (2048, 768),
        (768, 2048),
        (32_000, 288),
        (65_536, 4096),
    ] {
        let (best, bytes) = best_time((n, k, 32, 1), 50);
        let rate = bytes as f64 / best / 1e9;
        std::println!(
            "{kernel:?} n={n} k={k}: {:.1} us, {rate:.1} GB/s",
            best * 1e6
        );
    }
}

/// The multiply-add rate of a prompt-sized product (`cargo test --release -p et-xnnpack
/// qb4_gemm::tests::prefill_rate -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement, not a check"]
fn prefill_rate() {
    let (n, k, m) = (2048, 768, 128);
    let (best, _) = best_time((n, k, 32, m), 20);
    let rate = (m * n * k) as f64 / best / 1e9;
    let kernel = DotKernel::detect(4);
    std::println!(
        "{kernel:?} {m}x{n}x{k}: {:.1} us, {rate:.1} GMAC/s",
        best * 1e6
    );
}
