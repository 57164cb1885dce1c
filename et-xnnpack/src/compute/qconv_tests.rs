//! The int8 convolution kernels against a direct loop over every output, channel and tap
//! that subtracts the zero point from in-bounds taps and skips the others.

extern crate std;

use std::{vec, vec::Vec};

use super::super::depthwise::tests::window;
use super::super::qgemm::{pack_groups, packed_len, padded, vnni_available, NR};
use super::super::requant::Requant;
use super::*;

/// Deterministic int8s covering the whole range.
use crate::compute::test_bytes as bytes;

/// Deterministic int32 biases in [-2^14, 2^14).
pub(crate) fn biases(len: usize, seed: u32) -> Vec<i32> {
    bytes(len * 2, seed)
        .chunks_exact(2)
        .map(|p| i32::from(p[0]) * 128 + i32::from(p[1]))
        .collect()
}

/// `[cout][kh][kw][group_in]` weights (or `[kh][kw][cout]` for depthwise) applied to
/// every tap of output channel `o`, in group `g`, reading input channel `ci(o, j)` for
/// the `j`-th of the tap's channels.
#[allow(clippy::too_many_arguments, reason = "test geometry, spelled out")]
pub(crate) fn reference(
    w: &Window,
    x: &[i8],
    cin: usize,
    cout: usize,
    zp: i32,
    bias: &[i32],
    scales: &[f32],
    requant: Requant,
    weight: impl Fn(usize, usize, usize, usize) -> i32,
    taps_in: usize,
    ci: impl Fn(usize, usize) -> usize,
) -> Vec<i8> {
    let mut out = vec![0i8; w.batch * w.out_h * w.out_w * cout];
    let mut at = 0;
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                for o in 0..cout {
                    let mut acc = bias[o];
                    for kh in 0..w.kernel_h {
                        for kw in 0..w.kernel_w {
                            let ih =
                                (oh * w.stride_h + kh * w.dilation_h) as isize - w.pad_top as isize;
                            let iw = (ow * w.stride_w + kw * w.dilation_w) as isize
                                - w.pad_left as isize;
                            if ih < 0 || iw < 0 || ih >= w.in_h as isize || iw >= w.in_w as isize {
                                continue;
                            }
                            let px = ((n * w.in_h + ih as usize) * w.in_w + iw as usize) * cin;
                            for j in 0..taps_in {
                                let v = i32::from(x[px + ci(o, j)]) - zp;
                                acc += v * weight(o, kh, kw, j);
                            }
                        }
                    }
                    out[at] = requant.apply(acc, scales[o]);
                    at += 1;
                }
            }
        }
    }
    out
}

pub(crate) fn scales(n: usize) -> Vec<f32> {
    (0..n).map(|i| 0.0004 + 0.00007 * (i % 11) as f32).collect()
}

fn check_conv(
    w: Window,
    groups: usize,
    group_in: usize,
    group_out: usize,
    zp: i8,
    range: (f32, f32),
) {
    let (cin, cout) = (groups * group_in, groups * group_out);
    let k = w.kernel_h * w.kernel_w * group_in;
    let x = bytes(w.batch * w.in_h * w.in_w * cin, 1);
    let weights = bytes(cout * k, 2);
    let bias = biases(cout, 3);
    let scales = scales(cout);
    let requant = Requant::new(0.05, 3, range.0, range.1);
    let want = reference(
        &w,
        &x,
        cin,
        cout,
        i32::from(zp),
        &bias,
        &scales,
        requant,
        |o, kh, kw, j| i32::from(weights[o * k + (kh * w.kernel_w + kw) * group_in + j]),
        group_in,
        |o, j| (o / group_out) * group_in + j,
    );
    // The GEMM as `prepare_dense` packs it: each group's channels padded to whole
    // blocks (their biases zero-point-folded and scales too), in int16 pairs and, where
    // the CPU has a kernel for it, in VNNI quads.
    let channels = padded(group_out);
    let spread = |values: &[i32]| {
        let mut out = vec![0; groups * channels];
        for (g, v) in values.chunks_exact(group_out).enumerate() {
            out[g * channels..][..group_out].copy_from_slice(v);
        }
        out
    };
    let mut padded_scales = vec![0.0; groups * channels];
    for (g, v) in scales.chunks_exact(group_out).enumerate() {
        padded_scales[g * channels..][..group_out].copy_from_slice(v);
    }
    let mut layouts = vec![false];
    if vnni_available() {
        layouts.push(true);
    }
    let (rows, patch) = QConv::scratch_words(k, if groups > 1 { group_out } else { 0 });
    let mut rows = vec![0i16; rows * 2];
    let mut patch = vec![0i8; patch * 4];
    for vnni in layouts {
        let mut packed = vec![0i16; groups * packed_len(group_out, k)];
        let mut folded = spread(&bias);
        let weight = |o: usize, i: usize| weights[o * k + i];
        let geometry = (groups, group_out, k);
        pack_groups(
            geometry,
            weight,
            i32::from(zp),
            vnni,
            &mut packed,
            &mut folded,
        );
        let gemm = QGemm {
            vnni,
            k,
            n: group_out,
            packed: &packed,
            bias: &folded,
            scales: &padded_scales,
            requant,
        };
        let mut out = vec![0i8; want.len()];
        let conv = QConv {
            gemm,
            window: &w,
            groups,
            group_in,
            group_out,
            x_zero_point: zp,
        };
        // In three bands of pixels, as a split step runs it.
        let (all, per_pixel) = (w.out_rows() * w.out_w, groups * group_out);
        for cut in [0, all / 3, all * 2 / 3, all].windows(2) {
            let band = &mut out[cut[0] * per_pixel..cut[1] * per_pixel];
            conv.run(&x, cut[0]..cut[1], band, &mut rows, &mut patch);
        }
        let path = if vnni { "vnni gemm" } else { "gemm" };
        assert_eq!(
            out, want,
            "{path} {w:?} groups {groups} in {group_in} out {group_out} zp {zp}"
        );
        // Not all saturated: the test sees the arithmetic.
        assert!(out.iter().any(|&v| v != out[0]));
        // One pixel (a fully connected row), as threads split it: by blocks of output
        // channels, each a product of its part of the weights.
        if (all, groups) == (1, 1) {
            let mut by_channels = vec![0i8; cout];
            for first in (0..cout).step_by(2 * NR) {
                let band = first..(first + 2 * NR).min(cout);
                let Some(part) = gemm.channels(band.clone()) else {
                    panic!("{path}: channels {band:?} of {cout}");
                };
                let part = QConv {
                    gemm: part,
                    group_out: band.len(),
                    ..conv
                };
                part.run(&x, 0..1, &mut by_channels[band], &mut rows, &mut patch);
            }
            assert_eq!(
                by_channels, want,
                "{path} by channels: in {group_in} out {cout}"
            );
        }
    }
}

pub(crate) const ALL: (f32, f32) = (f32::NEG_INFINITY, f32::INFINITY);

#[test]
fn pointwise_conv_matches_the_reference() {
    let w = window(2, (3, 5), (1, 1), (1, 1), (1, 1), [0; 4]);
    for zp in [-128, 0, 127, 5] {
        check_conv(w, 1, 13, 7, zp, ALL);
    }
    check_conv(w, 1, 40, 33, -7, (0.0, 6.0));
    // Whole groups of 4 inputs (the AVX-512 kernel reads such pixels in place), with
    // an odd count of 16-channel blocks, a short block, and two pairs of blocks.
    for (cin, cout) in [(16, 24), (24, 144), (8, 64)] {
        check_conv(w, 1, cin, cout, -128, (0.0, 6.0));
        check_conv(w, 1, cin, cout, 17, ALL);
    }
    // Bands of one pixel (a fully connected node's single row) and of four.
    for pixels in [(1, 1), (3, 4)] {
        let w = window(1, pixels, (1, 1), (1, 1), (1, 1), [0; 4]);
        check_conv(w, 1, 32, 40, 9, ALL);
    }
    // A one-pixel product cut into four blocks of channels, the last short.
    check_conv(
        window(1, (1, 1), (1, 1), (1, 1), (1, 1), [0; 4]),
        1,
        20,
        100,
        -3,
        ALL,
    );
}

#[test]
fn padded_strided_and_grouped_convs_match_the_reference() {
    // 3x3 stride 2, padding 1 each side (MobileNet's first layer), odd channels.
    let w = window(1, (7, 6), (3, 3), (2, 2), (1, 1), [1, 1, 1, 1]);
    for zp in [-128, 127, -3] {
        check_conv(w, 1, 3, 5, zp, ALL);
    }
    check_conv(w, 1, 3, 9, 11, (0.0, 6.0));
    // Asymmetric padding, dilation, groups.
    let w = window(2, (6, 5), (2, 3), (1, 2), (2, 1), [0, 2, 1, 1]);
    check_conv(w, 3, 2, 3, -100, ALL);
    // One group: a dilated window (a copy per tap), and taps of more than 16 bytes.
    let w = window(1, (6, 7), (3, 3), (1, 1), (2, 2), [2, 1, 2, 1]);
    check_conv(w, 1, 5, 7, -9, ALL);
    let w = window(1, (5, 5), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]);
    check_conv(w, 1, 24, 20, 33, ALL);
    // A 1x1 with stride 2 gathers instead of reading pixels in place.
    let w = window(1, (5, 5), (1, 1), (2, 2), (1, 1), [0; 4]);
    check_conv(w, 1, 9, 4, 60, ALL);
}

#[test]
fn grouped_convs_run_group_by_group_through_the_gemm() {
    // RegNet's: groups of 8 channels, 3x3, stride 2 and 1, padding 1.
    let w = window(2, (9, 8), (3, 3), (2, 2), (1, 1), [1, 1, 1, 1]);
    check_conv(w, 6, 8, 8, -5, ALL);
    let w = window(1, (7, 7), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]);
    check_conv(w, 13, 8, 8, 21, (0.0, 6.0));
    // Channels per group that are no multiple of 8 (the bytewise tail), more outputs
    // per group than a block, and a pointwise grouped convolution (it gathers).
    check_conv(w, 3, 5, 20, -128, ALL);
    let w = window(1, (4, 6), (1, 1), (1, 1), (1, 1), [0; 4]);
    check_conv(w, 4, 12, 3, 7, ALL);
    // A window of more taps than a tile finds once (8x8): found per group.
    let w = window(1, (9, 9), (8, 8), (1, 1), (1, 1), [3, 4, 3, 4]);
    check_conv(w, 2, 3, 5, -40, ALL);
}
