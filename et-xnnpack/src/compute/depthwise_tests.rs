//! The depthwise kernel against a direct loop over every output, channel and tap.

extern crate std;

use std::{vec, vec::Vec};

use super::*;

/// A window over `[batch, in_h, in_w, _]` with padding `[top, right, bottom, left]`.
#[allow(clippy::too_many_arguments, reason = "test geometry, spelled out")]
pub(crate) fn window(
    batch: usize,
    (in_h, in_w): (usize, usize),
    (kernel_h, kernel_w): (usize, usize),
    (stride_h, stride_w): (usize, usize),
    (dilation_h, dilation_w): (usize, usize),
    [top, right, bottom, left]: [usize; 4],
) -> Window {
    let out = |size: usize, pad: usize, k: usize, d: usize, s: usize| {
        (size + pad - ((k - 1) * d + 1)) / s + 1
    };
    Window {
        batch,
        in_h,
        in_w,
        out_h: out(in_h, top + bottom, kernel_h, dilation_h, stride_h),
        out_w: out(in_w, left + right, kernel_w, dilation_w, stride_w),
        kernel_h,
        kernel_w,
        stride_h,
        stride_w,
        dilation_h,
        dilation_w,
        pad_top: top,
        pad_left: left,
    }
}

/// Deterministic values in [-1, 1).
pub(crate) fn values(len: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

fn reference(d: &Depthwise<'_>) -> Vec<f32> {
    let w = d.window;
    let c = d.channels;
    let mut out = vec![0.0; w.batch * w.out_h * w.out_w * c];
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                for ch in 0..c {
                    let mut a = d.bias.map_or(0.0, |b| b[ch]);
                    for kh in 0..w.kernel_h {
                        for kw in 0..w.kernel_w {
                            let ih =
                                (oh * w.stride_h + kh * w.dilation_h) as isize - w.pad_top as isize;
                            let iw = (ow * w.stride_w + kw * w.dilation_w) as isize
                                - w.pad_left as isize;
                            if ih < 0 || iw < 0 || ih >= w.in_h as isize || iw >= w.in_w as isize {
                                continue;
                            }
                            let (ih, iw) = (ih as usize, iw as usize);
                            a += d.x[((n * w.in_h + ih) * w.in_w + iw) * c + ch]
                                * d.filter[(kh * w.kernel_w + kw) * c + ch];
                        }
                    }
                    out[((n * w.out_h + oh) * w.out_w + ow) * c + ch] =
                        a.max(d.clamp.min).min(d.clamp.max);
                }
            }
        }
    }
    out
}

fn check(w: Window, channels: usize, bias: bool, clamp: (f32, f32)) {
    let x = values(w.batch * w.in_h * w.in_w * channels, 1);
    let filter = values(w.kernel_h * w.kernel_w * channels, 2);
    let b = values(channels, 3);
    let d = Depthwise {
        window: &w,
        channels,
        x: &x,
        filter: &filter,
        bias: bias.then_some(&b[..]),
        clamp: Clamp {
            min: clamp.0,
            max: clamp.1,
        },
        packed: None,
    };
    let want = reference(&d);
    // The dispatched kernel (AVX2 where the CPU has it), in three bands of rows as a
    // split step runs it, and the portable build of it, whole.
    let run = |d: &Depthwise<'_>, out: &mut [f32]| {
        let (rows, per_row) = (d.window.out_rows(), d.window.out_w * d.channels);
        for cut in [0, rows / 3, rows * 2 / 3, rows].windows(2) {
            d.run(cut[0]..cut[1], &mut out[cut[0] * per_row..cut[1] * per_row]);
        }
    };
    let portable =
        |d: &Depthwise<'_>, out: &mut [f32]| d.rows(Portable, 0..d.window.out_rows(), out);
    // The AVX-512 kernel, from its packing, where the CPU has it and it takes the window.
    #[cfg(target_arch = "x86_64")]
    let packed = avx512::fits(&w).then(|| {
        let taps = w.kernel_h * w.kernel_w;
        let mut packed = vec![f32::NAN; avx512::packed_len(channels, taps)];
        avx512::pack(channels, taps, &filter, d.bias, &mut packed);
        packed
    });
    #[cfg(target_arch = "x86_64")]
    let avx512 = |d: &Depthwise<'_>, out: &mut [f32]| {
        let d = Depthwise {
            packed: packed.as_deref(),
            ..*d
        };
        run(&d, out)
    };
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(unused_mut, reason = "the AVX-512 kernel is x86-64's")
    )]
    let mut kernels = vec![
        ("run", &run as &dyn Fn(&Depthwise<'_>, &mut [f32])),
        ("portable", &portable),
    ];
    #[cfg(target_arch = "x86_64")]
    if packed.is_some() && et_ops::gemm::avx512f_available() {
        kernels.push(("avx512", &avx512));
    }
    for (name, f) in kernels {
        // A sentinel past the end: the kernel must not write beyond the output.
        let mut got = vec![f32::NAN; want.len() + 1];
        f(&d, &mut got);
        assert!(got[want.len()].is_nan(), "{name} wrote past the output");
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - e).abs() <= 1e-5 * (1.0 + e.abs()),
                "{name} {w:?} channels {channels}: output {i} is {g}, expected {e}"
            );
        }
    }
}

const NONE: (f32, f32) = (f32::NEG_INFINITY, f32::INFINITY);
const RELU6: (f32, f32) = (0.0, 6.0);

#[test]
fn stride_1_padded_3x3_odd_channels() {
    for channels in [1, 5, 16, 17, 35, 48] {
        let w = window(1, (7, 9), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]);
        check(w, channels, true, NONE);
        check(w, channels, false, (-0.5, 0.5));
    }
    // Interiors of 3 (no group), 4 and 5 (narrow groups), 6 (one group) and 14 pixels.
    for in_w in [5, 6, 7, 8, 16] {
        let w = window(1, (4, in_w), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]);
        check(w, 32, true, RELU6);
    }
}

#[test]
fn stride_2_asymmetric_padding_and_batch() {
    for channels in [3, 16, 33] {
        // TensorFlow-style "same" padding for stride 2: nothing on top and left.
        check(
            window(2, (8, 11), (3, 3), (2, 2), (1, 1), [0, 1, 1, 0]),
            channels,
            true,
            RELU6,
        );
        check(
            window(2, (9, 10), (3, 3), (2, 2), (1, 1), [1, 1, 1, 1]),
            channels,
            true,
            RELU6,
        );
        check(
            window(1, (6, 13), (3, 3), (2, 1), (1, 1), [1, 0, 2, 1]),
            channels,
            true,
            RELU6,
        );
    }
}

#[test]
fn larger_dilated_and_uneven_windows() {
    check(
        window(1, (11, 12), (5, 5), (1, 1), (2, 2), [4, 4, 4, 4]),
        19,
        true,
        RELU6,
    );
    check(
        window(1, (5, 14), (1, 3), (1, 2), (1, 3), [0, 2, 0, 3]),
        32,
        true,
        NONE,
    );
    check(
        window(1, (6, 6), (3, 2), (3, 1), (1, 1), [2, 0, 0, 1]),
        20,
        false,
        NONE,
    );
}

#[test]
fn inputs_smaller_than_the_window() {
    // Every pixel is a border pixel; some windows are all padding (bias only).
    check(
        window(1, (1, 1), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]),
        18,
        true,
        RELU6,
    );
    check(
        window(1, (1, 2), (3, 3), (1, 1), (1, 1), [3, 3, 3, 3]),
        18,
        true,
        RELU6,
    );
    check(
        window(1, (2, 3), (5, 5), (1, 1), (1, 1), [3, 3, 3, 3]),
        17,
        true,
        NONE,
    );
}

/// Windows the AVX-512 kernel takes, with channel counts on either side of its 16-lane
/// blocks, padding on every side, both strides, tap rows dilated and batches.
#[test]
fn avx512_windows_with_partial_blocks() {
    for channels in [1, 7, 16, 21, 32, 45] {
        for (kernel, pad) in [(3, [1, 1, 1, 1]), (5, [2, 2, 2, 2]), (3, [0, 2, 1, 3])] {
            for stride in [1, 2] {
                // Interiors of 0 to 21 pixels: groups of 8 and 4 and single pixels.
                for in_w in [2, 6, 9, 13, 24] {
                    let w = window(
                        2,
                        (5, in_w),
                        (kernel, kernel),
                        (stride, stride),
                        (1, 1),
                        pad,
                    );
                    check(w, channels, true, RELU6);
                }
            }
        }
    }
    // Dilated and strided tap rows, a 5x3 and a 1x3 window, no bias.
    check(
        window(1, (9, 17), (3, 3), (2, 1), (2, 1), [2, 1, 2, 1]),
        35,
        false,
        NONE,
    );
    check(
        window(3, (7, 19), (5, 3), (1, 2), (1, 1), [2, 1, 2, 1]),
        24,
        true,
        NONE,
    );
    check(
        window(1, (4, 11), (1, 3), (1, 1), (1, 1), [0, 1, 0, 1]),
        17,
        true,
        (-0.25, 0.25),
    );
}
