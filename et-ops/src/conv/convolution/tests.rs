use et_runtime::AllDtypes;
extern crate std;
use super::*;
use et_runtime::{Arena, ShapeDynamism, TensorBuf};
use std::vec;
use std::vec::Vec;

fn rand_tensor(sizes: &[usize], order: &[u8], seed: &mut u64) -> TensorBuf {
    let mut t =
        TensorBuf::with_layout(ScalarType::Float, sizes, order, ShapeDynamism::Static).unwrap();
    for v in t.data_mut::<f32>().unwrap() {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *v = ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5;
    }
    t
}

/// Logical (row-major) values of a tensor, whatever its dim order.
fn logical(t: &Tensor) -> Vec<f32> {
    let d = t.data::<f32>().unwrap();
    let (sz, st) = (t.sizes(), t.strides());
    let mut out = Vec::new();
    let mut idx = vec![0usize; sz.len()];
    for _ in 0..t.numel() {
        out.push(d[idx.iter().zip(st).map(|(i, s)| i * s).sum::<usize>()]);
        for k in (0..sz.len()).rev() {
            idx[k] += 1;
            if idx[k] < sz[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

struct Case {
    x: &'static [usize],
    w: &'static [usize],
    stride: &'static [i64],
    pad: &'static [i64],
    dil: &'static [i64],
    groups: i64,
    bias: bool,
    channels_last: bool,
}

/// The f32 fast paths agree with the reference loop on every path and layout.
#[test]
fn fast_paths_match_reference() {
    let cases = [
        // pointwise, batch 2, bias
        Case {
            x: &[2, 8, 5, 7],
            w: &[6, 8, 1, 1],
            stride: &[1, 1],
            pad: &[0, 0],
            dil: &[1, 1],
            groups: 1,
            bias: true,
            channels_last: false,
        },
        // pointwise grouped, channels-last
        Case {
            x: &[1, 8, 4, 4],
            w: &[6, 4, 1, 1],
            stride: &[1],
            pad: &[0],
            dil: &[1],
            groups: 2,
            bias: false,
            channels_last: true,
        },
        // pointwise strided -> im2col
        Case {
            x: &[1, 4, 7, 7],
            w: &[5, 4, 1, 1],
            stride: &[2, 2],
            pad: &[0, 0],
            dil: &[1, 1],
            groups: 1,
            bias: true,
            channels_last: false,
        },
        // 3x3 general, padding, stride 2
        Case {
            x: &[2, 3, 9, 8],
            w: &[7, 3, 3, 3],
            stride: &[2, 2],
            pad: &[1, 1],
            dil: &[1, 1],
            groups: 1,
            bias: true,
            channels_last: false,
        },
        // 3x3 dilated, asymmetric params, channels-last
        Case {
            x: &[1, 4, 9, 10],
            w: &[4, 2, 3, 2],
            stride: &[1, 2],
            pad: &[2, 1],
            dil: &[2, 1],
            groups: 2,
            bias: true,
            channels_last: true,
        },
        // depthwise 3x3 stride 1 / 2, with and without padding
        Case {
            x: &[2, 5, 8, 9],
            w: &[5, 1, 3, 3],
            stride: &[1, 1],
            pad: &[1, 1],
            dil: &[1, 1],
            groups: 5,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 4, 9, 9],
            w: &[4, 1, 3, 3],
            stride: &[2, 2],
            pad: &[1, 1],
            dil: &[1, 1],
            groups: 4,
            bias: false,
            channels_last: false,
        },
        Case {
            x: &[1, 3, 5, 4],
            w: &[3, 1, 3, 3],
            stride: &[1, 1],
            pad: &[0, 0],
            dil: &[1, 1],
            groups: 3,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 3, 2, 2],
            w: &[3, 1, 3, 3],
            stride: &[1, 1],
            pad: &[2, 2],
            dil: &[1, 1],
            groups: 3,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 3, 8, 8],
            w: &[3, 1, 3, 3],
            stride: &[2, 2],
            pad: &[1, 1],
            dil: &[1, 1],
            groups: 3,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 2, 7, 10],
            w: &[2, 1, 3, 3],
            stride: &[2, 2],
            pad: &[0, 0],
            dil: &[1, 1],
            groups: 2,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 2, 6, 9],
            w: &[2, 1, 3, 3],
            stride: &[1, 2],
            pad: &[2, 1],
            dil: &[1, 1],
            groups: 2,
            bias: false,
            channels_last: false,
        },
        Case {
            x: &[1, 2, 6, 3],
            w: &[2, 1, 3, 3],
            stride: &[2, 2],
            pad: &[1, 2],
            dil: &[1, 1],
            groups: 2,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 2, 9, 9],
            w: &[2, 1, 3, 3],
            stride: &[1, 1],
            pad: &[2, 2],
            dil: &[2, 2],
            groups: 2,
            bias: true,
            channels_last: false,
        },
        // depthwise with a channel multiplier and a 5x5 kernel, and channels-last
        Case {
            x: &[1, 2, 7, 6],
            w: &[6, 1, 5, 5],
            stride: &[1, 1],
            pad: &[2, 2],
            dil: &[1, 1],
            groups: 2,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 4, 6, 6],
            w: &[4, 1, 3, 3],
            stride: &[1, 1],
            pad: &[1, 1],
            dil: &[1, 1],
            groups: 4,
            bias: true,
            channels_last: true,
        },
        // 1-d
        Case {
            x: &[2, 3, 11],
            w: &[4, 3, 3],
            stride: &[2],
            pad: &[1],
            dil: &[1],
            groups: 1,
            bias: true,
            channels_last: false,
        },
        Case {
            x: &[1, 4, 6],
            w: &[4, 1, 3],
            stride: &[1],
            pad: &[1],
            dil: &[1],
            groups: 4,
            bias: false,
            channels_last: false,
        },
    ];
    let mut seed = 3u64;
    let mut scratch = vec![0u8; 8 << 20];
    for (ci, c) in cases.iter().enumerate() {
        let nd = c.x.len();
        let order: &[u8] = match (nd, c.channels_last) {
            (4, true) => &[0, 2, 3, 1],
            (4, false) => &[0, 1, 2, 3],
            _ => &[0, 1, 2],
        };
        let x = rand_tensor(c.x, order, &mut seed);
        let w = rand_tensor(
            c.w,
            if nd == 4 { &[0, 1, 2, 3] } else { &[0, 1, 2] },
            &mut seed,
        );
        let b = rand_tensor(&[c.w[0]], &[0], &mut seed);
        let bias = c.bias.then_some(&*b);
        let g = Geom::new(&x, &w, bias, c.stride, c.pad, c.dil, false, &[0], c.groups).unwrap();
        let osz: Vec<usize> = if nd == 4 {
            vec![g.n, g.cout, g.oh, g.ow]
        } else {
            vec![g.n, g.cout, g.ow]
        };
        let mut fast =
            TensorBuf::with_layout(ScalarType::Float, &osz, order, ShapeDynamism::Static).unwrap();
        let mut slow = TensorBuf::zeros(ScalarType::Float, &osz).unwrap();
        {
            let arena = Arena::new(&mut scratch);
            let ctx = KernelContext::new(&arena);
            convolution_out::<AllDtypes>(
                &ctx,
                &x,
                &w,
                bias,
                c.stride,
                c.pad,
                c.dil,
                false,
                &[0],
                c.groups,
                &mut fast,
            )
            .unwrap();
        }
        let os = strides4(&slow);
        let bd = bias.map(|b| b.data::<f32>().unwrap());
        conv_direct(
            &g,
            x.data::<f32>().unwrap(),
            w.data::<f32>().unwrap(),
            bd,
            slow.data_mut::<f32>().unwrap(),
            os,
        )
        .unwrap();
        let (f, s) = (logical(&fast), logical(&slow));
        for (i, (a, b)) in f.iter().zip(&s).enumerate() {
            assert!((a - b).abs() < 1e-5, "case {ci} element {i}: {a} vs {b}");
        }
    }
}

#[test]
fn transposed_and_float64() {
    let mut scratch = vec![0u8; 1 << 16];
    let arena = Arena::new(&mut scratch);
    let ctx = KernelContext::new(&arena);
    // 1 -> 1 channel, 1-d transposed conv, stride 2, kernel [1, 2]: out len (2-1)*2+2 = 4.
    let x = TensorBuf::from_slice(&[1, 1, 2], &[1.0f64, 10.0]).unwrap();
    let w = TensorBuf::from_slice(&[1, 1, 2], &[1.0f64, 2.0]).unwrap();
    let mut out = TensorBuf::zeros(ScalarType::Double, &[1, 1, 4]).unwrap();
    convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[2],
        &[0],
        &[1],
        true,
        &[0],
        1,
        &mut out,
    )
    .unwrap();
    assert_eq!(out.data::<f64>().unwrap(), &[1.0, 2.0, 10.0, 20.0]);
    // Same as f32 through the direct path, with output padding 1.
    let x = TensorBuf::from_slice(&[1, 1, 2], &[1.0f32, 10.0]).unwrap();
    let w = TensorBuf::from_slice(&[1, 1, 2], &[1.0f32, 2.0]).unwrap();
    let mut out = TensorBuf::zeros(ScalarType::Float, &[1, 1, 5]).unwrap();
    convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[2],
        &[0],
        &[1],
        true,
        &[1],
        1,
        &mut out,
    )
    .unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[1.0, 2.0, 10.0, 20.0, 0.0]);
}

#[test]
fn invalid_arguments() {
    let mut scratch = vec![0u8; 1 << 16];
    let arena = Arena::new(&mut scratch);
    let ctx = KernelContext::new(&arena);
    let x = TensorBuf::zeros(ScalarType::Float, &[1, 4, 5, 5]).unwrap();
    let w = TensorBuf::zeros(ScalarType::Float, &[2, 3, 3, 3]).unwrap();
    let mut out = TensorBuf::zeros(ScalarType::Float, &[1, 2, 3, 3]).unwrap();
    // Channel mismatch.
    assert!(convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[1],
        &[0],
        &[1],
        false,
        &[0],
        1,
        &mut out
    )
    .is_err());
    let w = TensorBuf::zeros(ScalarType::Float, &[2, 4, 7, 7]).unwrap();
    // Kernel larger than the input.
    assert!(convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[1],
        &[0],
        &[1],
        false,
        &[0],
        1,
        &mut out
    )
    .is_err());
    let w = TensorBuf::zeros(ScalarType::Float, &[2, 4, 3, 3]).unwrap();
    // Zero stride, bad groups, wrong out shape, wrong bias.
    assert!(convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[0],
        &[0],
        &[1],
        false,
        &[0],
        1,
        &mut out
    )
    .is_err());
    assert!(convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[1],
        &[0],
        &[1],
        false,
        &[0],
        0,
        &mut out
    )
    .is_err());
    assert!(convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[1],
        &[1],
        &[1],
        false,
        &[0],
        1,
        &mut out
    )
    .is_err());
    let b = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
    assert!(convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        Some(&b),
        &[1],
        &[0],
        &[1],
        false,
        &[0],
        1,
        &mut out
    )
    .is_err());
    convolution_out::<AllDtypes>(
        &ctx,
        &x,
        &w,
        None,
        &[1],
        &[0],
        &[1],
        false,
        &[0],
        1,
        &mut out,
    )
    .unwrap();
}

/// Split convolutions (depthwise by planes, gemm paths by output channels) give the
/// unsplit result bit for bit.
#[test]
fn split_convolutions_match_the_whole() {
    use crate::util::test_pool::Scoped;
    // input, weight, stride, padding, groups
    type Case = (&'static [usize], &'static [usize], i64, i64, i64);
    let cases: [Case; 5] = [
        (&[2, 32, 20, 20], &[32, 1, 3, 3], 1, 1, 32),
        (&[1, 48, 29, 29], &[48, 1, 3, 3], 2, 1, 48),
        (&[1, 24, 9, 9], &[24, 1, 5, 5], 1, 2, 24),
        (&[1, 64, 28, 28], &[96, 64, 1, 1], 1, 0, 1),
        (&[2, 8, 30, 30], &[40, 8, 3, 3], 2, 1, 1),
    ];
    let mut seed = 9u64;
    let mut scratch = vec![0u8; 16 << 20];
    for (xs, ws, s, p, g) in cases {
        let order: &[u8] = &[0, 1, 2, 3];
        let x = rand_tensor(xs, order, &mut seed);
        let w = rand_tensor(ws, order, &mut seed);
        let b = rand_tensor(&[ws[0]], &[0], &mut seed);
        let geo = Geom::new(&x, &w, Some(&b), &[s], &[p], &[1], false, &[0], g).unwrap();
        let mut outs = Vec::new();
        for workers in [1, 2, 3] {
            let pool = Scoped(workers);
            let mut out =
                TensorBuf::zeros(ScalarType::Float, &[geo.n, geo.cout, geo.oh, geo.ow]).unwrap();
            let arena = Arena::new(&mut scratch);
            let ctx = KernelContext::new(&arena).with_parallel(Some(&pool));
            convolution_out::<AllDtypes>(
                &ctx,
                &x,
                &w,
                Some(&b),
                &[s],
                &[p],
                &[1],
                false,
                &[0],
                g,
                &mut out,
            )
            .unwrap();
            outs.push(out.data::<f32>().unwrap().to_vec());
        }
        for o in &outs[1..] {
            let same = o
                .iter()
                .zip(&outs[0])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{xs:?} {ws:?}");
        }
    }
}
