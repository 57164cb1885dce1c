extern crate std;
use std::{format, vec, vec::Vec};

use super::*;

use crate::compute::test_bytes_in as bytes;

/// The FullyConnected of one row, written from its definition on unpacked `[n][k]`
/// weights, in XNNPACK's float order.
#[allow(
    clippy::too_many_arguments,
    reason = "the definition's inputs, spelled out"
)]
fn reference(
    x: &[i8],
    w: &[i8],
    scales: &[f32],
    bias: &[f32],
    (n, k, block): (usize, usize, usize),
    row_scale: f32,
    zero_point: i32,
) -> Vec<f32> {
    let blocks = k / block;
    (0..n)
        .map(|c| {
            let dot = |b: usize| -> f32 {
                (b * block..(b + 1) * block)
                    .map(|i| (i32::from(x[i]) - zero_point) * i32::from(w[c * k + i]))
                    .sum::<i32>() as f32
            };
            let value = if blocks == 1 {
                dot(0) * row_scale * scales[c]
            } else {
                (0..blocks).fold(0.0f32, |acc, b| acc + dot(b) * scales[c * blocks + b]) * row_scale
            };
            value + bias[c]
        })
        .collect()
}

fn kernels(weight_bits: u32) -> Vec<DotKernel> {
    let mut kernels = vec![DotKernel::Portable];
    let best = DotKernel::detect(weight_bits);
    if best != DotKernel::Portable {
        kernels.push(best);
    }
    // AVX2 is also exercised on CPUs with VNNI, for 4-bit weights.
    if weight_bits == 4 && best != DotKernel::Avx2 && et_ops::gemm::avx2_fma_available() {
        kernels.push(DotKernel::Avx2);
    }
    kernels
}

#[test]
fn every_kernel_gives_the_definitions_bits() {
    // (n, k, block, weight bits): per-channel int8 weights of odd sizes (a partial
    // quad, a partial channel group) and 4-bit weights in blocks of 32 and 64.
    let cases = [
        (1, 1, 1, 8),
        (5, 3, 3, 8),
        (17, 30, 30, 8),
        (40, 67, 67, 8),
        (16, 32, 32, 4),
        (33, 64, 32, 4),
        (70, 256, 64, 4),
        (3, 96, 32, 4),
    ];
    for (n, k, block, bits) in cases {
        let (lo, hi) = if bits == 4 { (-8, 7) } else { (-128, 127) };
        let w = bytes(n * k, n as u32 + k as u32, lo, hi);
        let blocks = k / block;
        let scales: Vec<f32> = (0..n * blocks)
            .map(|i| 0.001 * (1 + i % 7) as f32)
            .collect();
        let bias: Vec<f32> = (0..n).map(|c| c as f32 * 0.25 - 3.0).collect();
        let mut weights = vec![0i8; weight_bytes(n, k)];
        let mut sums = vec![0i32; padded(n) * blocks];
        let mut packed_scales = vec![0f32; padded(n) * blocks];
        pack(
            (n, k, block),
            |c, i| w[c * k + i],
            |c, b| scales[c * blocks + b],
            &mut weights,
            &mut sums,
            &mut packed_scales,
        );
        let mut padded_bias = vec![0f32; padded(n)];
        padded_bias[..n].copy_from_slice(&bias);
        // Extreme rows too: all -128 and all 127 with an extreme zero point.
        let rows = [
            (bytes(k, 3, -128, 127), 0.02, -3),
            (vec![-128i8; k], 0.5, 127),
            (vec![127i8; k], 0.125, -128),
        ];
        for kernel in kernels(bits) {
            let gemm = Qd8Gemm {
                n,
                k,
                block,
                weights: &weights,
                sums: &sums,
                scales: &packed_scales,
                bias: &padded_bias,
                kernel,
            };
            for (x, row_scale, zero_point) in &rows {
                let want = reference(
                    x,
                    &w,
                    &scales,
                    &bias,
                    (n, k, block),
                    *row_scale,
                    *zero_point,
                );
                let mut out = vec![f32::NAN; n + 3];
                gemm.row(x, *row_scale, *zero_point, &mut out);
                let label = format!("{kernel:?} n {n} k {k} block {block} zp {zero_point}");
                let (got, past) = out.split_at(n);
                assert_eq!(
                    got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{label}"
                );
                assert!(past.iter().all(|v| v.is_nan()), "{label}: wrote past n");
                // Split at each group boundary, as threads split one row: the same bits.
                for cut in (NR..n).step_by(NR) {
                    let mut parts = vec![f32::NAN; n];
                    let (head, tail) = parts.split_at_mut(cut);
                    for (range, y) in [(0..cut, head), (cut..n, tail)] {
                        let part = gemm.channels(range).expect("whole groups");
                        part.row(x, *row_scale, *zero_point, y);
                    }
                    assert_eq!(
                        parts.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        "{label} cut {cut}"
                    );
                }
                assert!(gemm.channels(1..n).is_none(), "{label}");
            }
        }
    }
}

#[test]
fn packing_pads_channels_and_inputs_with_zero_weights() {
    let (n, k) = (3, 5);
    let mut weights = vec![1i8; weight_bytes(n, k)];
    let mut sums = vec![0i32; padded(n)];
    let mut scales = vec![0f32; padded(n)];
    pack(
        (n, k, k),
        |c, i| (c * 10 + i) as i8,
        |c, _| c as f32,
        &mut weights,
        &mut sums,
        &mut scales,
    );
    // Channel 1's second quad: input 4, then padding.
    assert_eq!(&weights[4 * NR + 4..4 * NR + 8], &[14, 0, 0, 0]);
    // A padded channel is all zero.
    assert!(weights
        .chunks_exact(4)
        .skip(3)
        .step_by(NR)
        .all(|q| q == [0; 4]));
    assert_eq!(&sums[..4], &[10, 60, 110, 0]);
    assert_eq!(&scales[..4], &[0.0, 1.0, 2.0, 0.0]);
}
