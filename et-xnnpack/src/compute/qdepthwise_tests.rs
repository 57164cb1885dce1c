//! The int8 depthwise kernels (AVX2, NEON and portable) against the direct loop of the
//! convolution tests.

extern crate std;

use std::{format, vec, vec::Vec};

use super::super::depthwise::tests::window;
use super::super::qconv::tests::{biases, reference, scales, ALL};
use super::*;
use crate::compute::test_bytes as bytes;

fn check_depthwise(w: Window, channels_in: usize, multiplier: usize, zp: i8, range: (f32, f32)) {
    let cout = channels_in * multiplier;
    let x = bytes(w.batch * w.in_h * w.in_w * channels_in, 4);
    let filter = bytes(w.kernel_h * w.kernel_w * cout, 5);
    let bias = biases(cout, 6);
    let scales: Vec<f32> = scales(cout).iter().map(|s| s * 8.0).collect();
    let requant = Requant::new(0.05, -9, range.0, range.1);
    let want = reference(
        &w,
        &x,
        channels_in,
        cout,
        i32::from(zp),
        &bias,
        &scales,
        requant,
        |o, kh, kw, _| i32::from(filter[(kh * w.kernel_w + kw) * cout + o]),
        1,
        |o, _| o / multiplier,
    );
    let mut acc = vec![0i32; cout];
    // Every packing this CPU runs a kernel for (`run` falls back to the portable loop,
    // or NEON's, when a kernel does not take the window).
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut packings: Vec<(&str, Vec<i16>, Vec<i32>)> = vec![("unpacked", vec![], vec![])];
    #[cfg(target_arch = "x86_64")]
    {
        let taps = w.kernel_h * w.kernel_w;
        if crate::compute::cpu::avx2_fma() {
            let mut packed = vec![0i16; super::avx2::interleaved_len(cout, taps)];
            super::avx2::interleave(&filter, cout, taps, &mut packed);
            packings.push(("avx2", packed, vec![]));
        }
        if crate::compute::cpu::vnni() == Some(crate::compute::cpu::Vnni::Avx512) {
            let mut packed = vec![0i32; super::avx512::packed_len(cout, taps)];
            let shape = (cout, taps);
            super::avx512::pack(&filter, &bias, &scales, zp, shape, &mut packed);
            packings.push(("avx512", vec![], packed));
        }
    }
    for (name, avx2, avx512) in &packings {
        let packed = match *name {
            "avx2" => Packed::Avx2(avx2),
            "avx512" => Packed::Avx512(avx512),
            _ => Packed::None,
        };
        let depthwise = QDepthwise {
            window: &w,
            channels_in,
            multiplier,
            x_zero_point: zp,
            filter: &filter,
            packed,
            bias: &bias,
            scales: &scales,
            requant,
        };
        // In three bands of rows, as a split step runs it.
        let mut out = vec![0i8; want.len()];
        let (all, per_row) = (w.out_rows(), w.out_w * channels_in * multiplier);
        for cut in [0, all / 3, all * 2 / 3, all].windows(2) {
            let band = &mut out[cut[0] * per_row..cut[1] * per_row];
            depthwise.run(&x, cut[0]..cut[1], band, &mut acc);
        }
        let label = format!("{name} {w:?} channels {channels_in} x{multiplier} zp {zp}");
        assert_eq!(out, want, "{label}");
        assert!(out.iter().any(|&v| v != out[0]), "{label}");
        // The portable loop too (`run` takes a SIMD kernel where it can).
        let mut portable = vec![0i8; want.len()];
        depthwise.run_with(&x, 0..w.out_rows(), &mut portable, &mut acc);
        assert_eq!(portable, want, "portable {label}");
    }
}

#[test]
fn depthwise_matches_the_reference() {
    let same = window(1, (6, 7), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]);
    let strided = window(2, (7, 6), (3, 3), (2, 2), (1, 1), [1, 1, 1, 1]);
    for zp in [-128, 127, 0, 13] {
        check_depthwise(same, 19, 1, zp, ALL);
        check_depthwise(same, 32, 1, zp, (0.0, 6.0));
        check_depthwise(strided, 5, 1, zp, (0.0, 6.0));
    }
    check_depthwise(strided, 3, 2, -50, ALL);
    let odd = window(1, (5, 4), (2, 3), (1, 2), (2, 1), [0, 1, 2, 1]);
    check_depthwise(odd, 7, 3, 99, ALL);
    // Whole 16-channel blocks, an 8-channel block and a tail of 3; a 5x5 kernel whose
    // padding leaves border pixels a few taps; a 7x7 kernel past the SIMD kernels' tap
    // limit (the portable loop).
    let wide = window(2, (9, 8), (5, 5), (2, 1), (1, 1), [2, 2, 2, 2]);
    for zp in [-128, 127] {
        check_depthwise(wide, 27, 1, zp, ALL);
        check_depthwise(same, 40, 1, zp, (0.0, 6.0));
        check_depthwise(odd, 8, 1, zp, ALL);
    }
    // Around the AVX-512 kernel's 32-channel blocks: one short block, one whole, one and
    // a half (as mv2's 144), and several with a short tail.
    for channels in [31, 33, 48, 144, 97] {
        check_depthwise(strided, channels, 1, -128, (0.0, 6.0));
        check_depthwise(same, channels, 1, 77, ALL);
    }
    let large = window(1, (8, 9), (7, 7), (1, 1), (1, 1), [3, 3, 3, 3]);
    check_depthwise(large, 24, 1, -3, ALL);
}
