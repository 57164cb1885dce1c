//! Each fused kernel gives the bits of the calls it replaces (convolution, batch norm,
//! activation), on every convolution path, on one thread and split over workers.

extern crate std;

use std::vec;
use std::vec::Vec;

use et_runtime::{AllDtypes, Arena, KernelContext, Scalar, ScalarType, ShapeDynamism, TensorBuf};

use super::convolution_batch_norm::convolution_batch_norm_out;
use super::convolution_batch_norm_hardtanh::convolution_batch_norm_hardtanh_out;
use super::convolution_batch_norm_relu::convolution_batch_norm_relu_out;
use crate::activation::hardtanh::hardtanh_out;
use crate::activation::relu::relu_out;
use crate::conv::convolution::convolution_out;
use crate::norm::batch_norm::batch_norm_no_training_out;
use crate::util::test_pool::Scoped;

fn filled(sizes: &[usize], order: &[u8], seed: &mut u64, lo: f32, span: f32) -> TensorBuf {
    let mut t =
        TensorBuf::with_layout(ScalarType::Float, sizes, order, ShapeDynamism::Static).unwrap();
    for v in t.data_mut::<f32>().unwrap() {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *v = lo + span * ((*seed >> 40) as f32 / (1u64 << 24) as f32);
    }
    t
}

fn zeros(sizes: &[usize]) -> TensorBuf {
    TensorBuf::zeros(ScalarType::Float, sizes).unwrap()
}

/// A convolution's shapes and arguments; which path it takes is in its name.
struct Case {
    name: &'static str,
    x: &'static [usize],
    w: &'static [usize],
    stride: [i64; 2],
    pad: [i64; 2],
    groups: i64,
    channels_last: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "pointwise",
        x: &[1, 24, 9, 11],
        w: &[40, 24, 1, 1],
        stride: [1, 1],
        pad: [0, 0],
        groups: 1,
        channels_last: false,
    },
    Case {
        name: "pointwise, channels-last",
        x: &[2, 16, 5, 7],
        w: &[12, 16, 1, 1],
        stride: [1, 1],
        pad: [0, 0],
        groups: 1,
        channels_last: true,
    },
    Case {
        name: "depthwise 3x3 stride 1",
        x: &[1, 32, 14, 14],
        w: &[32, 1, 3, 3],
        stride: [1, 1],
        pad: [1, 1],
        groups: 32,
        channels_last: false,
    },
    Case {
        name: "depthwise 3x3 stride 2",
        x: &[1, 16, 15, 15],
        w: &[16, 1, 3, 3],
        stride: [2, 2],
        pad: [1, 1],
        groups: 16,
        channels_last: false,
    },
    Case {
        name: "depthwise 5x5",
        x: &[1, 8, 12, 10],
        w: &[8, 1, 5, 5],
        stride: [1, 1],
        pad: [2, 2],
        groups: 8,
        channels_last: false,
    },
    Case {
        name: "depthwise, channels-last",
        x: &[1, 8, 6, 6],
        w: &[8, 1, 3, 3],
        stride: [1, 1],
        pad: [1, 1],
        groups: 8,
        channels_last: true,
    },
    Case {
        name: "im2col 3x3 stride 2",
        x: &[1, 3, 33, 31],
        w: &[32, 3, 3, 3],
        stride: [2, 2],
        pad: [1, 1],
        groups: 1,
        channels_last: false,
    },
    // Large enough to split over two workers (the gemm by rows, the depthwise by planes).
    Case {
        name: "pointwise, split",
        x: &[1, 64, 32, 32],
        w: &[96, 64, 1, 1],
        stride: [1, 1],
        pad: [0, 0],
        groups: 1,
        channels_last: false,
    },
    Case {
        name: "depthwise, split",
        x: &[1, 64, 32, 32],
        w: &[64, 1, 3, 3],
        stride: [1, 1],
        pad: [1, 1],
        groups: 64,
        channels_last: false,
    },
    Case {
        name: "grouped",
        x: &[1, 12, 8, 8],
        w: &[18, 4, 3, 3],
        stride: [1, 1],
        pad: [1, 1],
        groups: 3,
        channels_last: false,
    },
];

/// Which activation follows the batch norm.
#[derive(Clone, Copy, Debug)]
enum Activation {
    None,
    Hardtanh(Scalar, Scalar),
    Relu,
}

/// The output of the three separate kernels, and of the fused one, on `workers` threads.
fn both(case: &Case, act: Activation, bias: bool, affine: bool, workers: usize) -> [Vec<f32>; 2] {
    let seed = &mut 7u64;
    let order: &[u8] = if case.channels_last {
        &[0, 2, 3, 1]
    } else {
        &[0, 1, 2, 3]
    };
    let x = filled(case.x, order, seed, -1.0, 2.0);
    let w = filled(case.w, &[0, 1, 2, 3], seed, -0.5, 1.0);
    let cout = case.w[0];
    let b = filled(&[cout], &[0], seed, -0.2, 0.4);
    let bn_w = filled(&[cout], &[0], seed, 0.5, 1.0);
    let bn_b = filled(&[cout], &[0], seed, -0.5, 1.0);
    let mean = filled(&[cout], &[0], seed, -0.3, 0.6);
    let var = filled(&[cout], &[0], seed, 0.1, 2.0);
    let bias = bias.then_some(&*b);
    let (bn_w, bn_b) = if affine {
        (Some(&*bn_w), Some(&*bn_b))
    } else {
        (None, None)
    };
    let (stride, pad, dil, no_pad) = (
        &case.stride[..],
        &case.pad[..],
        &[1i64, 1][..],
        &[0i64, 0][..],
    );
    let eps = 1e-5;

    let mut scratch = vec![0u8; 8 << 20];
    let arena = Arena::new(&mut scratch);
    let pool = Scoped(workers);
    let ctx = KernelContext::new(&arena).with_parallel(Some(&pool));

    // Shapes come from the kernels' own resizing; the outs start as any 4-d tensor.
    let oh = (case.x[2] + 2 * case.pad[0] as usize - case.w[2]) / case.stride[0] as usize + 1;
    let ow = (case.x[3] + 2 * case.pad[1] as usize - case.w[3]) / case.stride[1] as usize + 1;
    let shape = [case.x[0], cout, oh, ow];
    let mut conv = zeros(&shape);
    convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        bias,
        stride,
        pad,
        dil,
        false,
        no_pad,
        case.groups,
        &mut conv,
    )
    .unwrap();
    let mut normed = zeros(&shape);
    let (mut m, mut r) = (zeros(&[0]), zeros(&[0]));
    batch_norm_no_training_out::<AllDtypes>(
        &ctx,
        &conv,
        bn_w,
        bn_b,
        &mean,
        &var,
        0.1,
        eps,
        &mut normed,
        &mut m,
        &mut r,
    )
    .unwrap();
    let mut separate = zeros(&shape);
    let mut fused = zeros(&shape);
    match act {
        Activation::None => {
            separate = normed;
            convolution_batch_norm_out(
                &ctx,
                &x,
                &w,
                bias,
                stride,
                pad,
                dil,
                false,
                no_pad,
                case.groups,
                bn_w,
                bn_b,
                &mean,
                &var,
                eps,
                &mut fused,
            )
            .unwrap();
        }
        Activation::Hardtanh(lo, hi) => {
            hardtanh_out::<AllDtypes>(&ctx, &normed, lo, hi, &mut separate).unwrap();
            convolution_batch_norm_hardtanh_out(
                &ctx,
                &x,
                &w,
                bias,
                stride,
                pad,
                dil,
                false,
                no_pad,
                case.groups,
                bn_w,
                bn_b,
                &mean,
                &var,
                eps,
                lo,
                hi,
                &mut fused,
            )
            .unwrap();
        }
        Activation::Relu => {
            relu_out::<AllDtypes>(&ctx, &normed, &mut separate).unwrap();
            convolution_batch_norm_relu_out(
                &ctx,
                &x,
                &w,
                bias,
                stride,
                pad,
                dil,
                false,
                no_pad,
                case.groups,
                bn_w,
                bn_b,
                &mean,
                &var,
                eps,
                &mut fused,
            )
            .unwrap();
        }
    }
    assert_eq!(fused.sizes(), separate.sizes(), "{}", case.name);
    [
        separate.data::<f32>().unwrap().to_vec(),
        fused.data::<f32>().unwrap().to_vec(),
    ]
}

#[test]
fn fused_calls_give_the_separate_calls_bits() {
    let acts = [
        Activation::None,
        Activation::Hardtanh(Scalar::Int(0), Scalar::Int(6)),
        Activation::Hardtanh(Scalar::Double(-0.25), Scalar::Double(0.5)),
        Activation::Relu,
    ];
    for case in CASES {
        for act in acts {
            for (bias, affine) in [(true, true), (false, true), (true, false)] {
                for workers in [1, 2] {
                    let [separate, fused] = both(case, act, bias, affine, workers);
                    let differ = separate
                        .iter()
                        .zip(&fused)
                        .filter(|(a, b)| a.to_bits() != b.to_bits())
                        .count();
                    assert_eq!(
                        differ, 0,
                        "{} {act:?} bias {bias} affine {affine} workers {workers}: {differ} of {} values differ",
                        case.name,
                        separate.len()
                    );
                }
            }
        }
    }
}

/// The activation really clamps (so the test above compares something).
#[test]
fn clamps_apply() {
    let [_, fused] = both(
        &CASES[0],
        Activation::Hardtanh(Scalar::Double(-0.25), Scalar::Double(0.5)),
        true,
        true,
        1,
    );
    assert!(fused.iter().all(|&v| (-0.25..=0.5).contains(&v)));
    assert!(fused.contains(&-0.25) && fused.contains(&0.5));
}

/// A NaN bound makes every element NaN, as `hardtanh` does.
#[test]
fn nan_bound_gives_nan() {
    let [separate, fused] = both(
        &CASES[0],
        Activation::Hardtanh(Scalar::Double(f64::NAN), Scalar::Int(6)),
        true,
        true,
        1,
    );
    assert!(separate.iter().all(|v| v.is_nan()));
    assert!(fused.iter().all(|v| v.is_nan()));
}
