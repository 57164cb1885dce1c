//! The direct convolution against a loop over every output, channel, tap and input
//! channel.

extern crate std;

use std::{vec, vec::Vec};

use super::*;
use crate::compute::depthwise::tests::{values, window};

fn reference(d: &Direct<'_>) -> Vec<f32> {
    let w = d.window;
    let (cin, cout) = (d.cin, d.cout);
    let mut out = vec![0.0; w.batch * w.out_h * w.out_w * cout];
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                for co in 0..cout {
                    let mut a = d.bias.map_or(0.0, |b| b[co]);
                    for kh in 0..w.kernel_h {
                        for kw in 0..w.kernel_w {
                            let (Some(ih), Some(iw)) = (w.in_row(oh, kh), w.in_col(ow, kw)) else {
                                continue;
                            };
                            for ci in 0..cin {
                                let x = d.x[((n * w.in_h + ih) * w.in_w + iw) * cin + ci];
                                let f = d.filter[((kh * w.kernel_w + kw) * cin + ci) * cout + co];
                                a += x * f;
                            }
                        }
                    }
                    let at = ((n * w.out_h + oh) * w.out_w + ow) * cout + co;
                    out[at] = a.max(d.clamp.min).min(d.clamp.max);
                }
            }
        }
    }
    out
}

/// A way to run the convolution into an output.
type RunFn<'k> = dyn Fn(&Direct<'_>, &mut [f32]) + 'k;

fn check(w: Window, cin: usize, cout: usize, bias: bool, clamp: (f32, f32)) {
    let x = values(w.batch * w.in_h * w.in_w * cin, 4);
    let filter = values(w.kernel_h * w.kernel_w * cin * cout, 5);
    let b = values(cout, 6);
    let d = Direct {
        window: &w,
        cin,
        cout,
        x: &x,
        filter: &filter,
        bias: bias.then_some(&b[..]),
        clamp: Clamp {
            min: clamp.0,
            max: clamp.1,
        },
    };
    let want = reference(&d);
    // The dispatched kernel (AVX2 where the CPU has it), in three bands of rows as a
    // split step runs it, and the portable build of it, whole.
    let run = |d: &Direct<'_>, out: &mut [f32]| {
        let (rows, per_row) = (d.window.out_rows(), d.window.out_w * d.cout);
        for cut in [0, rows / 3, rows * 2 / 3, rows].windows(2) {
            d.run(cut[0]..cut[1], &mut out[cut[0] * per_row..cut[1] * per_row]);
        }
    };
    let portable = |d: &Direct<'_>, out: &mut [f32]| d.rows(Portable, 0..d.window.out_rows(), out);
    // The AVX2 kernel too where the dispatch takes AVX-512's.
    #[cfg(target_arch = "x86_64")]
    let avx2 = |d: &Direct<'_>, out: &mut [f32]| {
        let k = crate::compute::sweep::Avx2::detect().expect("AVX2 under AVX-512F");
        // SAFETY: `detect` found AVX2 and FMA.
        unsafe { d.run_avx2(k, 0..d.window.out_rows(), out) };
    };
    #[cfg(target_arch = "x86_64")]
    let avx2 = avx512::Avx512::detect().map(|_| ("avx2", &avx2 as &RunFn));
    #[cfg(not(target_arch = "x86_64"))]
    let avx2: Option<(&str, &RunFn)> = None;
    let kernels: [(&str, &RunFn); 2] = [("run", &run), ("portable", &portable)];
    let mut fused = Vec::new();
    for (name, f) in kernels.into_iter().chain(avx2) {
        // A sentinel past the end: the kernel must not write beyond the output.
        let mut got = vec![f32::NAN; want.len() + 1];
        f(&d, &mut got);
        assert!(got[want.len()].is_nan(), "{name} wrote past the output");
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - e).abs() <= 1e-5 * (1.0 + e.abs()),
                "{name} {w:?} {cin} -> {cout} channels: output {i} is {g}, expected {e}"
            );
        }
        if name != "portable" {
            // The channels of whole blocks of 16 (AVX2 adds the rest one at a time).
            let blocks = cout - cout % 16;
            let bits = got[..want.len()].chunks(cout).flat_map(|px| &px[..blocks]);
            fused.push(bits.map(|v| v.to_bits()).collect::<Vec<_>>());
        }
    }
    // The vector kernels (AVX-512 and AVX2 here) add in one order: the same bits.
    assert!(
        fused.windows(2).all(|f| f[0] == f[1]),
        "{w:?} {cin} -> {cout}"
    );
}

const NONE: (f32, f32) = (f32::NEG_INFINITY, f32::INFINITY);
const RELU6: (f32, f32) = (0.0, 6.0);

#[test]
fn first_layer_stride_2_odd_output_channels() {
    for cout in [1, 16, 21, 32, 40] {
        // "Same" padding for stride 2 on an even input: only bottom and right.
        check(
            window(1, (10, 12), (3, 3), (2, 2), (1, 1), [0, 1, 1, 0]),
            3,
            cout,
            true,
            RELU6,
        );
        check(
            window(2, (9, 11), (3, 3), (2, 2), (1, 1), [1, 1, 1, 1]),
            3,
            cout,
            false,
            NONE,
        );
    }
}

#[test]
fn channel_counts_dilation_and_uneven_windows() {
    for cin in 1..=MAX_CIN {
        check(
            window(1, (8, 13), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]),
            cin,
            17,
            true,
            NONE,
        );
        check(
            window(1, (9, 9), (5, 3), (1, 2), (2, 1), [4, 0, 2, 3]),
            cin,
            32,
            true,
            RELU6,
        );
    }
    check(
        window(1, (7, 6), (2, 4), (3, 1), (1, 2), [1, 3, 0, 2]),
        2,
        48,
        false,
        (-0.3, 0.3),
    );
}

#[test]
fn inputs_smaller_than_the_window() {
    check(
        window(1, (1, 1), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]),
        3,
        16,
        true,
        RELU6,
    );
    check(
        window(1, (1, 2), (3, 3), (1, 1), (1, 1), [3, 3, 3, 3]),
        3,
        19,
        true,
        NONE,
    );
}
