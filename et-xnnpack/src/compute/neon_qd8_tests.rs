extern crate std;
use std::{format, vec, vec::Vec};

use super::super::qd8_gemm::{pack, weight_bytes};
use super::*;

use crate::compute::test_bytes_in as bytes;

/// The aarch64 kernels this CPU runs: the plain NEON one always, `sdot` with dotprod.
fn kernels() -> Vec<DotKernel> {
    let mut kernels = vec![DotKernel::Neon];
    if arm_dot() >= ArmDot::DotProd {
        kernels.push(DotKernel::NeonDot);
    }
    kernels
}

#[test]
fn every_kernel_gives_the_portable_kernels_bits() {
    // (n, k, block, weight range): per-channel int8 weights of odd sizes (partial quads
    // and channel groups), long rows, all -128 weights, and 4-bit weights in blocks.
    let cases = [
        (1, 1, 1, (-128, 127)),
        (2, 7, 7, (-128, 127)),
        (19, 45, 45, (-128, 127)),
        (16, 1027, 1027, (-128, 127)),
        (35, 260, 260, (-128, -128)),
        (17, 64, 32, (-8, 7)),
        (49, 384, 128, (-8, 7)),
        (5, 96, 32, (-8, -8)),
    ];
    for (n, k, block, (lo, hi)) in cases {
        let w = bytes(n * k, (n + 3 * k) as u32, lo, hi);
        let blocks = k / block;
        let mut weights = vec![0i8; weight_bytes(n, k)];
        let mut sums = vec![0i32; padded(n) * blocks];
        let mut scales = vec![0f32; padded(n) * blocks];
        pack(
            (n, k, block),
            |c, i| w[c * k + i],
            |c, b| 0.0007 * (1 + (c + b) % 9) as f32,
            &mut weights,
            &mut sums,
            &mut scales,
        );
        let bias: Vec<f32> = (0..padded(n)).map(|c| c as f32 * 0.375 - 2.0).collect();
        let rows = [
            (bytes(k, k as u32, -128, 127), 0.03, 5),
            (vec![-128i8; k], 0.5, 127),
            (vec![127i8; k], 0.25, -128),
        ];
        for (x, row_scale, zero_point) in &rows {
            let gemm = |kernel| Qd8Gemm {
                n,
                k,
                block,
                weights: &weights,
                sums: &sums,
                scales: &scales,
                bias: &bias,
                kernel,
            };
            let mut want = vec![f32::NAN; n];
            gemm(DotKernel::Portable).row_portable(x, *row_scale, *zero_point, &mut want);
            for kernel in kernels() {
                let mut got = vec![f32::NAN; n + 2];
                gemm(kernel).row(x, *row_scale, *zero_point, &mut got);
                let label = format!("{kernel:?} n {n} k {k} block {block} zp {zero_point}");
                assert_eq!(
                    got[..n].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{label}"
                );
                assert!(got[n..].iter().all(|v| v.is_nan()), "{label}: wrote past n");
            }
        }
    }
}

#[test]
fn detection_picks_sdot_exactly_with_dotprod() {
    let want = if arm_dot() >= ArmDot::DotProd {
        DotKernel::NeonDot
    } else {
        DotKernel::Neon
    };
    assert_eq!(DotKernel::detect(8), want);
    assert_eq!(DotKernel::detect(4), want);
}
