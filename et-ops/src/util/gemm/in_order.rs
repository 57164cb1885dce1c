//! Products whose every element is summed in order with each product rounded: the
//! arithmetic of a plain `sum += a[i][p] * b[p][j]` loop, as in ExecuTorch's portable
//! `bmm`.
//!
//! [`sgemm`](super::sgemm) lets the micro-kernels fuse each multiply-add (one rounding
//! instead of two) and sums one-row products in interleaved partial sums. Both are at
//! least as accurate, yet they land elsewhere in the last bits, and a decomposed
//! attention amplifies that: the scores `q @ k^T` go through `softmax`, where a last-bit
//! change of a large score moves the result by more than float32's tolerances.
//! PyTorch's math decomposition of `scaled_dot_product_attention` (what the exporter
//! writes) is specified by those plain loops, and ExecuTorch's runtime evaluates it so.
//!
//! For an inner dimension up to the blocking's `KC` (256), each element of C is exactly
//! `(((0 + a0 b0) + a1 b1) + ...)` in float32, bit for bit ExecuTorch's portable `bmm`;
//! longer sums add each `KC` block's sum to C, as [`sgemm`](super::sgemm) does. The tiles
//! are the portable ones, which never fuse (Rust does not contract `a * b + c`): about a
//! third of the AVX2 tiles' rate on large products, and little of any execute, as `bmm`
//! is a small share of the models that call it (attention scores, a few percent of a
//! transformer block's time). SIMD tiles without FMAs would cost a second copy of the
//! blocked driver in every binary that multiplies matrices.

use et_runtime::{KernelContext, KernelResult};

use super::{sgemm_impl, Level, Mat, MatMut};

/// `C = A * B`, every element summed in k order with each product rounded (see the
/// module docs). Splits over the context's workers like [`sgemm`](super::sgemm), with
/// the same sums.
pub fn sgemm_in_order(
    ctx: &KernelContext<'_>,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    c: MatMut<'_, f32>,
) -> KernelResult {
    sgemm_impl(ctx, 1.0, a, b, 0.0, c, None, Level::Portable, true)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::util::test_pool::Scoped;
    use et_runtime::Arena;
    use std::vec;
    use std::vec::Vec;

    /// Values whose products and sums round in most steps: large, signed, not dyadic.
    fn values(seed: &mut u64, len: usize) -> Vec<f32> {
        (0..len)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((*seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 18.3
            })
            .collect()
    }

    /// The in-order product equals the plain loop bit for bit, for any shape (one-row
    /// products included, which `sgemm` sums in partial sums), any B layout and any number
    /// of workers.
    #[test]
    fn equals_the_plain_loop_bit_for_bit() {
        let mut seed = 5u64;
        let mut scratch = vec![0u8; 4 << 20];
        for &(m, n, k) in &[
            (1, 40, 64),
            (3, 6, 8),
            (13, 17, 5),
            (50, 33, 256),
            (7, 100, 1),
        ] {
            let a = values(&mut seed, m * k);
            let b = values(&mut seed, k * n);
            let mut plain = vec![0f32; m * n];
            for i in 0..m {
                for j in 0..n {
                    let mut sum = 0f32;
                    for p in 0..k {
                        sum += a[i * k + p] * b[p * n + j];
                    }
                    plain[i * n + j] = sum;
                }
            }
            // B row-major, and the same B stored by columns (a transposed view).
            let b_t: Vec<f32> = (0..k * n).map(|x| b[(x % k) * n + x / k]).collect();
            let layouts = [
                Mat::row_major(&b, k, n),
                Mat {
                    data: &b_t,
                    rows: k,
                    cols: n,
                    rs: 1,
                    cs: k,
                },
            ];
            for bm in layouts {
                for workers in [1, 2] {
                    let pool = Scoped(workers);
                    let arena = Arena::new(&mut scratch);
                    let ctx = KernelContext::new(&arena).with_parallel(Some(&pool));
                    let mut c = vec![f32::NAN; m * n];
                    let am = Mat::row_major(&a, m, k);
                    let cm = MatMut::row_major(&mut c, m, n);
                    sgemm_in_order(&ctx, am, bm, cm).unwrap();
                    for (x, (got, want)) in c.iter().zip(&plain).enumerate() {
                        assert_eq!(got.to_bits(), want.to_bits(), "{m}x{n}x{k} at {x}");
                    }
                }
            }
        }
    }
}
