extern crate std;
use std::{format, vec, vec::Vec};

use super::super::qgemm::{pack, pack_quads, packed_len};
use super::super::requant::Requant;
use super::*;

use crate::compute::test_bytes as bytes;

/// Runs one packing of `w` (`[n][k]`) on rows `x` (`[MR][k]`) with `level`'s kernels (or
/// the portable kernel), `count` rows.
#[allow(clippy::too_many_arguments, reason = "one GEMM's inputs")]
fn run(
    (n, k): (usize, usize),
    w: &[i8],
    x: &[i8],
    bias: &[i32],
    scales: &[f32],
    requant: Requant,
    (quads, level): (bool, Option<ArmDot>),
    count: usize,
) -> Vec<i8> {
    let mut packed = vec![0i16; packed_len(n, k)];
    let mut gemm_bias = bias.to_vec();
    if quads {
        pack_quads(n, k, |c, i| w[c * k + i], &mut packed, &mut gemm_bias);
    } else {
        pack(n, k, |c, i| w[c * k + i], &mut packed);
    }
    let g = QGemm {
        vnni: quads,
        k,
        n,
        packed: &packed,
        bias: &gemm_bias,
        scales,
        requant,
    };
    let len = g.row_len();
    let mut rows = vec![0x2b2bi16; MR * len];
    for r in 0..MR {
        g.fill_row(&x[r * k..(r + 1) * k], &mut rows[r * len..(r + 1) * len]);
    }
    let mut out = vec![0x55i8; MR * n];
    match level {
        Some(level) => g.tile_neon(&rows, count, &mut out, level),
        None => g.tile_portable(&rows, count, &mut out),
    }
    assert!(
        out[count * n..].iter().all(|&v| v == 0x55),
        "rows past count written"
    );
    out
}

#[test]
fn every_level_gives_the_portable_kernels_bytes() {
    // Odd `k` (a partial pair and quad), partial channel blocks, long sums, and the
    // extremes: every byte -128, or rows at 127 against weights at -128.
    /// (channels, inputs, every row byte and weight set to these, else random).
    type Case = (usize, usize, Option<(i8, i8)>);
    let cases: [Case; 9] = [
        (1, 1, None),
        (3, 5, None),
        (16, 4, None),
        (17, 31, None),
        (40, 7, None),
        (24, 96, None),
        (33, 1003, None),
        (19, 515, Some((-128, -128))),
        (9, 77, Some((127, -128))),
    ];
    // (output scale, zero point, float bounds): the int8 range, a relu6-like clamp.
    let requants = [
        Requant::new(0.05, -7, f32::NEG_INFINITY, f32::INFINITY),
        Requant::new(0.02, -128, 0.0, 6.0),
    ];
    let levels: Vec<ArmDot> = ArmDot::available().collect();
    assert!(levels.contains(&ArmDot::Neon));
    for (n, k, fill) in cases {
        let (w, x) = match fill {
            Some((xv, wv)) => (vec![wv; n * k], vec![xv; MR * k]),
            None => (bytes(n * k, (n * k) as u32), bytes(MR * k, k as u32)),
        };
        let bias: Vec<i32> = (0..padded(n) as i32).map(|c| c * 911 - 5000).collect();
        // Scales spread over three decades, so that some outputs clamp and some round.
        let scales: Vec<f32> = (0..padded(n))
            .map(|c| 1e-5 * (1 + c % 7) as f32 * if c % 3 == 0 { 10.0 } else { 1.0 })
            .collect();
        for requant in requants {
            for count in [MR, 1, 3] {
                let gemm = |packing| run((n, k), &w, &x, &bias, &scales, requant, packing, count);
                let want = gemm((false, None));
                for &level in &levels {
                    for quads in [false, true] {
                        if quads && level < ArmDot::DotProd {
                            continue;
                        }
                        let label = format!("{level:?} quads {quads} n {n} k {k} count {count}");
                        assert_eq!(gemm((quads, Some(level))), want, "{label}");
                    }
                }
            }
        }
    }
}

/// Prints the level this CPU runs, so that CI logs show which kernels ran under each
/// emulated CPU; with `ETCH_EXPECT_ARM_DOT` set (`Neon`, `DotProd` or `I8mm`: the
/// aarch64 test script sets it per QEMU CPU model) the detection must find that level.
#[test]
fn detects_the_expected_level() {
    let level = super::super::cpu::arm_dot();
    std::println!(
        "aarch64 int8 level: {level:?} ({:?})",
        super::super::cpu::int8_kernels()
    );
    if let Ok(want) = std::env::var("ETCH_EXPECT_ARM_DOT") {
        assert_eq!(format!("{level:?}"), want);
    }
    // The quad packing is chosen exactly when `sdot` is there.
    assert_eq!(
        super::super::qgemm::vnni_available(),
        level >= ArmDot::DotProd
    );
}
