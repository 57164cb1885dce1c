extern crate std;
use super::*;
use et_runtime::Arena;
use std::vec;
use std::vec::Vec;

fn lcg(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
}

fn reference(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
    let mut c = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                c[i * n + j] += a[i * k + p] as f64 * b[p * n + j] as f64;
            }
        }
    }
    c
}

#[test]
fn matches_reference_many_shapes() {
    for &level in LEVELS {
        if level <= detected_level() {
            check_shapes_against_reference(level);
        }
    }
}

fn check_shapes_against_reference(simd: Level) {
    let mut scratch = vec![0u8; 8 << 20];
    let mut seed = 7u64;
    for &(m, n, k) in &[
        (1, 1, 1),
        (3, 4, 5),
        (6, 16, 7),
        (7, 17, 300),
        (13, 1, 9),
        (1, 33, 2),
        (130, 70, 513),
        (5, 2100, 3),
    ] {
        let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
        let r = reference(m, n, k, &a, &b);
        // Row-major C with beta = 0 over NaN garbage: NaN must not leak.
        let mut c = vec![f32::NAN; m * n];
        {
            let arena = Arena::new(&mut scratch);
            let ctx = KernelContext::new(&arena);
            sgemm_impl(
                &ctx,
                1.0,
                Mat::row_major(&a, m, k),
                Mat::row_major(&b, k, n),
                0.0,
                MatMut::row_major(&mut c, m, n),
                None,
                simd,
                false,
            )
            .unwrap();
        }
        for (x, y) in c.iter().zip(&r) {
            assert!(
                (*x as f64 - y).abs() < 1e-4 * (1.0 + y.abs()),
                "{m}x{n}x{k}: {x} vs {y}"
            );
        }
        // Row-major C with alpha and beta (the direct-store path of full tiles).
        let mut cb = vec![1.0f32; m * n];
        {
            let arena = Arena::new(&mut scratch);
            let ctx = KernelContext::new(&arena);
            sgemm_impl(
                &ctx,
                2.0,
                Mat::row_major(&a, m, k),
                Mat::row_major(&b, k, n),
                0.5,
                MatMut::row_major(&mut cb, m, n),
                None,
                simd,
                false,
            )
            .unwrap();
        }
        for (x, y) in cb.iter().zip(&r) {
            let want = 2.0 * y + 0.5;
            assert!(
                (*x as f64 - want).abs() < 2e-4 * (1.0 + want.abs()),
                "{x} vs {want}"
            );
        }
        // Transposed operands (column-major views) and a column-major C with beta.
        let at: Vec<f32> = (0..m * k).map(|i| a[(i % m) * k + i / m]).collect();
        let bt: Vec<f32> = (0..k * n).map(|i| b[(i % k) * n + i / k]).collect();
        let mut ct = vec![1.0f32; m * n];
        {
            let arena = Arena::new(&mut scratch);
            let ctx = KernelContext::new(&arena);
            sgemm_impl(
                &ctx,
                2.0,
                Mat {
                    data: &at,
                    rows: m,
                    cols: k,
                    rs: 1,
                    cs: m,
                },
                Mat {
                    data: &bt,
                    rows: k,
                    cols: n,
                    rs: 1,
                    cs: k,
                },
                0.5,
                MatMut {
                    data: &mut ct,
                    rows: m,
                    cols: n,
                    rs: 1,
                    cs: m,
                },
                None,
                simd,
                false,
            )
            .unwrap();
        }
        for i in 0..m {
            for j in 0..n {
                let want = 2.0 * r[i * n + j] + 0.5;
                let got = ct[j * m + i] as f64;
                assert!(
                    (got - want).abs() < 2e-4 * (1.0 + want.abs()),
                    "{got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn k_zero_scales_c() {
    let mut scratch = vec![0u8; 1 << 12];
    let arena = Arena::new(&mut scratch);
    let ctx = KernelContext::new(&arena);
    let mut c = vec![2.0f32, f32::NAN];
    sgemm(
        &ctx,
        1.0,
        Mat::row_major(&[], 1, 0),
        Mat::row_major(&[], 0, 2),
        0.0,
        MatMut::row_major(&mut c, 1, 2),
    )
    .unwrap();
    assert_eq!(c, [0.0, 0.0]);
    let mut c = vec![2.0f32, 4.0];
    sgemm(
        &ctx,
        1.0,
        Mat::row_major(&[], 1, 0),
        Mat::row_major(&[], 0, 2),
        3.0,
        MatMut::row_major(&mut c, 1, 2),
    )
    .unwrap();
    assert_eq!(c, [6.0, 12.0]);
}

#[test]
fn rejects_bad_views() {
    let mut scratch = vec![0u8; 1 << 12];
    let arena = Arena::new(&mut scratch);
    let ctx = KernelContext::new(&arena);
    let a = [1.0f32; 4];
    let mut c = [0.0f32; 4];
    let bad = Mat {
        data: &a,
        rows: 2,
        cols: 3,
        rs: 3,
        cs: 1,
    };
    assert!(sgemm(
        &ctx,
        1.0,
        bad,
        Mat::row_major(&a, 3, 1),
        0.0,
        MatMut::row_major(&mut c, 2, 1)
    )
    .is_err());
    assert!(sgemm(
        &ctx,
        1.0,
        Mat::row_major(&a, 2, 2),
        Mat::row_major(&a, 1, 4),
        0.0,
        MatMut::row_major(&mut c, 2, 2)
    )
    .is_err());
}

#[test]
fn generic_reference_f64() {
    let a = [1.0f64, 2.0, 3.0, 4.0];
    let b = [5.0f64, 6.0, 7.0, 8.0];
    let mut c = [1.0f64; 4];
    gemm_ref(
        Scalar::Int(1),
        Mat::row_major(&a, 2, 2),
        Mat::row_major(&b, 2, 2),
        Scalar::Int(1),
        MatMut::row_major(&mut c, 2, 2),
    )
    .unwrap();
    assert_eq!(c, [20.0, 23.0, 44.0, 51.0]);
}

#[test]
fn generic_reference_integers_wrap() {
    // [[100, 2], [3, 4]] @ [[3, 0], [1, 1]] = [[302, 2], [13, 4]]; 2 * C + 1 * that.
    let a = [100i8, 2, 3, 4];
    let b = [3i8, 0, 1, 1];
    let mut c = [1i8, -1, 0, 127];
    gemm_ref(
        Scalar::Int(1),
        Mat::row_major(&a, 2, 2),
        Mat::row_major(&b, 2, 2),
        Scalar::Int(2),
        MatMut::row_major(&mut c, 2, 2),
    )
    .unwrap();
    // 304 wraps to 48 and 258 to 2, as PyTorch's int8 addmm gives.
    assert_eq!(c, [48, 0, 13, 2]);
}

/// Timing harness: `cargo test -p et-ops --release -- --ignored --nocapture bench_sgemm`.
#[test]
#[ignore]
fn bench_sgemm() {
    for &level in LEVELS {
        if level <= detected_level() {
            bench(level);
        }
    }
}

fn bench(simd: Level) {
    let mut scratch = vec![0u8; 16 << 20];
    let mut seed = 1u64;
    // mv2-like shapes: (Cout, H*W, Cin) of pointwise convs, and a square one.
    for &(m, n, k) in &[
        (96, 12544, 16),
        (24, 3136, 144),
        (144, 3136, 24),
        (192, 784, 32),
        (64, 196, 384),
        (384, 196, 64),
        (960, 49, 160),
        (1280, 49, 320),
        (256, 256, 256),
    ] {
        let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
        let mut c = vec![0.0f32; m * n];
        let iters = (2_000_000_000 / (m * n * k)).clamp(3, 200);
        let mut best = f64::MAX;
        for _ in 0..iters {
            let arena = Arena::new(&mut scratch);
            let ctx = KernelContext::new(&arena);
            let t = std::time::Instant::now();
            sgemm_impl(
                &ctx,
                1.0,
                Mat::row_major(&a, m, k),
                Mat::row_major(&b, k, n),
                0.0,
                MatMut::row_major(&mut c, m, n),
                None,
                simd,
                false,
            )
            .unwrap();
            best = best.min(t.elapsed().as_secs_f64());
        }
        let gflops = 2.0 * (m * n * k) as f64 / best / 1e9;
        std::println!(
            "sgemm {simd:?} {m}x{n}x{k}: {:.1} us, {gflops:.1} GFLOP/s",
            best * 1e6
        );
    }
}

use crate::util::test_pool::Scoped;

/// Split products (row blocks, column blocks of a one-row or column-major C) equal the
/// whole product bit for bit with alpha 1 and beta 0 or 1, at every level.
#[test]
fn split_products_match_the_whole() {
    let mut seed = 11u64;
    let mut scratch = vec![0u8; 16 << 20];
    for &level in LEVELS {
        if level > detected_level() {
            continue;
        }
        // (m, n, k, column-major C)
        for &(m, n, k, col_major) in &[
            (96, 300, 64, false),
            (16, 3136, 32, false),
            (1, 4000, 300, false),
            (200, 50, 300, true),
            (37, 1000, 300, false),
        ] {
            let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
            let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
            let c0: Vec<f32> = (0..m * n).map(|_| lcg(&mut seed)).collect();
            let (rs, cs) = if col_major { (1, m) } else { (n, 1) };
            for (alpha, beta) in [(1.0, 0.0), (1.0, 1.0), (2.0, 0.5)] {
                let mut outs = Vec::new();
                for workers in [1, 2, 3, 4] {
                    let pool = Scoped(workers);
                    let mut c = c0.clone();
                    let arena = Arena::new(&mut scratch);
                    let ctx = KernelContext::new(&arena).with_parallel(Some(&pool));
                    let view = MatMut {
                        data: &mut c,
                        rows: m,
                        cols: n,
                        rs,
                        cs,
                    };
                    let (ra, rb) = (Mat::row_major(&a, m, k), Mat::row_major(&b, k, n));
                    assert_eq!(
                        split::plan(workers, &view, k, level).is_some(),
                        workers > 1,
                        "{m}x{n}x{k} on {workers}"
                    );
                    sgemm_impl(&ctx, alpha, ra, rb, beta, view, None, level, false).unwrap();
                    outs.push(c);
                }
                for (w, c) in outs.iter().enumerate().skip(1) {
                    for (i, (x, y)) in c.iter().zip(&outs[0]).enumerate() {
                        if alpha == 1.0 {
                            assert_eq!(x.to_bits(), y.to_bits(), "{m}x{n}x{k} {w}: {i}");
                        } else {
                            assert!((x - y).abs() <= 1e-6 * (1.0 + y.abs()), "{x} vs {y}");
                        }
                    }
                }
            }
        }
    }
}

/// Too little scratch for the blocks' own buffers: the product runs whole.
#[test]
fn split_without_scratch_runs_whole() {
    let (m, n, k) = (64, 512, 64);
    let mut seed = 5u64;
    let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
    let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
    let r = reference(m, n, k, &a, &b);
    let mut scratch = vec![0u8; sgemm_scratch_bytes(m, n, k)];
    let mut c = vec![0.0f32; m * n];
    let pool = Scoped(2);
    let arena = Arena::new(&mut scratch);
    let ctx = KernelContext::new(&arena).with_parallel(Some(&pool));
    sgemm(
        &ctx,
        1.0,
        Mat::row_major(&a, m, k),
        Mat::row_major(&b, k, n),
        0.0,
        MatMut::row_major(&mut c, m, n),
    )
    .unwrap();
    for (x, y) in c.iter().zip(&r) {
        assert!((*x as f64 - y).abs() < 1e-4 * (1.0 + y.abs()), "{x} vs {y}");
    }
}

/// A column-major B (a transposed weight read in place) gives the same bits as the same
/// matrix row-major: its panels are packed from contiguous columns (four at a time
/// through the 4x4 register transpose on x86-64, the rows and columns left over by the
/// general path), then multiplied as before. Shapes cover partial panels and several k
/// blocks. A one-row product takes the dot-product path instead (`gemv`), which sums in
/// another order: within f32 rounding.
#[test]
fn column_major_b_matches_row_major_bit_for_bit() {
    let mut scratch = vec![0u8; 8 << 20];
    let mut seed = 11u64;
    for &level in LEVELS {
        if level > detected_level() {
            continue;
        }
        for &(m, n, k) in &[(1, 1000, 1280), (8, 37, 300), (13, 64, 513), (2, 5, 3)] {
            let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
            let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
            // `bt` holds B column-major: B[p][j] is `bt[j * k + p]`.
            let mut bt = vec![0.0f32; k * n];
            for p in 0..k {
                for j in 0..n {
                    bt[j * k + p] = b[p * n + j];
                }
            }
            let col_major = Mat {
                data: &bt,
                rows: k,
                cols: n,
                rs: 1,
                cs: k,
            };
            let mut run = |b: Mat<'_, f32>| {
                let mut c = vec![0.5f32; m * n];
                let arena = Arena::new(&mut scratch);
                let ctx = KernelContext::new(&arena);
                let a = Mat::row_major(&a, m, k);
                let out = MatMut::row_major(&mut c, m, n);
                sgemm_impl(&ctx, 1.0, a, b, 1.0, out, None, level, false).unwrap();
                c
            };
            let want = run(Mat::row_major(&b, k, n));
            let got = run(col_major);
            let same = want.iter().zip(&got).all(|(w, g)| {
                if m == 1 {
                    (w - g).abs() <= 1e-5 * (k as f32) * w.abs().max(1.0)
                } else {
                    w.to_bits() == g.to_bits()
                }
            });
            assert!(same, "{level:?} {m}x{n}x{k}");
        }
    }
}

/// Every aarch64 CPU takes the NEON level (it is in the baseline), so the fixture tests
/// run under QEMU exercise it.
#[cfg(target_arch = "aarch64")]
#[test]
fn aarch64_takes_the_neon_level() {
    assert_eq!(detected_level(), Level::Neon);
    assert_eq!(tiling(Level::Neon).0, N_MR);
}

/// A product with a row epilogue equals the product followed by the epilogue's scalar
/// map, bit for bit at every level (full tiles map in the micro-kernel's registers, edge
/// tiles after the scratch merge): including the sign of zero (a zero scale on a negative
/// value gives -0.0, which a zero lower bound keeps) and values past both bounds.
#[cfg(feature = "fusion")]
#[test]
fn epilogue_in_registers_matches_the_scalar_map() {
    let mut scratch = vec![0u8; 8 << 20];
    let mut seed = 5u64;
    let (m, n, k) = (29, 37, 19);
    let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
    let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
    let scale: Vec<f32> = (0..m).map(|i| [0.0, 1.5, -2.0, 40.0][i % 4]).collect();
    let shift: Vec<f32> = (0..m).map(|i| [-0.0, 0.25, 0.1, -0.5][i % 4]).collect();
    let (lo, hi) = (0.0, 6.0);
    let epilogue = RowEpilogue::new(&scale, &shift, lo, hi).unwrap();
    for &level in LEVELS {
        if level > detected_level() {
            continue;
        }
        let run = |epilogue: Option<Epilogue<'_>>, scratch: &mut [u8]| {
            let mut c = vec![0.0f32; m * n];
            let arena = Arena::new(scratch);
            let ctx = KernelContext::new(&arena);
            let (am, bm) = (Mat::row_major(&a, m, k), Mat::row_major(&b, k, n));
            let cm = MatMut::row_major(&mut c, m, n);
            sgemm_impl(&ctx, 1.0, am, bm, 0.0, cm, epilogue, level, false).unwrap();
            c
        };
        let fused = run(Some(epilogue), &mut scratch);
        let plain = run(None, &mut scratch);
        let mut negative_zeros = 0;
        for (idx, (&f, &p)) in fused.iter().zip(&plain).enumerate() {
            let i = idx / n;
            let want = RowEpilogue::one(p, scale[i], shift[i], lo, hi);
            assert_eq!(
                f.to_bits(),
                want.to_bits(),
                "{level:?} at ({i}, {})",
                idx % n
            );
            negative_zeros += usize::from(f.to_bits() == (-0.0f32).to_bits());
        }
        assert!(negative_zeros > 0, "the case must produce -0.0");
    }
}
