//! One-row products against a B stored by columns: `A` is `1 x k` and each column of B is
//! contiguous, so every output is the dot product of two contiguous vectors and B is read
//! once, straight through. This is `nn.Linear` on one sample once its weight, an `[n, k]`
//! constant, is read through a transposed view (et-runtime's load-time constant views):
//! the blocked path would first pack that B into panels, which for one row of A is all of
//! the work.

use super::{Mat, MatMut};
use crate::util::split::for_each_band;
use et_runtime::KernelContext;

/// Lanes of the dot product: independent partial sums the compiler keeps in vector
/// registers (four 4-wide ones on a baseline x86-64 build).
const LANES: usize = 16;

/// `C = alpha * A * B + beta * C` when `A` has one row and both `A`'s row and B's columns
/// are contiguous; returns false, touching nothing, for any other operands. `beta == 0`
/// ignores C's contents.
///
/// Shapes must have been checked (`check_shapes`, which `sgemm` runs first): that check
/// is this path's validation. It puts A's row, every column of B and every output inside
/// their data, so no index below can fail.
///
/// On the context's pool a contiguous C splits into bands of columns, one per worker
/// (mv2's classifier, 1000 x 1280: 181 -> 95 us with two threads, `etch run --profile
/// --threads 2`); every output is the same dot product wherever it runs.
pub(super) fn row_times_columns(
    ctx: &KernelContext<'_>,
    alpha: f32,
    a: &Mat<'_, f32>,
    b: &Mat<'_, f32>,
    beta: f32,
    c: &mut MatMut<'_, f32>,
) -> bool {
    let (k, n) = (a.cols, c.cols);
    if c.rows != 1 || b.rs != 1 || (a.cs != 1 && k > 1) {
        return false;
    }
    let row = &a.data[..k];
    let column = |j: usize, out: &mut f32| {
        let d = alpha * dot(row, &b.data[j * b.cs..j * b.cs + k]);
        *out = if beta == 0.0 { d } else { d + beta * *out };
    };
    if c.cs == 1 {
        // Contiguous outputs split into bands of columns, one per worker: each band reads
        // its own columns of B, which is all of the traffic.
        for_each_band(
            ctx,
            &mut c.data[..n],
            1,
            SPLIT_MIN_WEIGHTS / k.max(1),
            |j0, band| {
                for (j, out) in (j0..).zip(band) {
                    column(j, out);
                }
            },
        );
    } else {
        for j in 0..n {
            column(j, &mut c.data[j * c.cs]);
        }
    }
    true
}

/// Fewer weights than this (`n * k` of B) stay on one thread: below it, waking a
/// worker costs more than the half of the pass over B it would take.
const SPLIT_MIN_WEIGHTS: usize = 1 << 18;

/// `x . y` over their common length, in [`LANES`] partial sums.
fn dot(x: &[f32], y: &[f32]) -> f32 {
    let (xs, x_rest) = x.as_chunks::<LANES>();
    let (ys, y_rest) = y.as_chunks::<LANES>();
    let mut acc = [0f32; LANES];
    for (xc, yc) in xs.iter().zip(ys) {
        for l in 0..LANES {
            acc[l] += xc[l] * yc[l];
        }
    }
    for half in [8, 4, 2, 1] {
        for l in 0..half {
            acc[l] += acc[l + half];
        }
    }
    let mut sum = acc[0];
    for (p, q) in x_rest.iter().zip(y_rest) {
        sum += p * q;
    }
    sum
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::util::test_pool::Scoped;
    use et_runtime::Arena;
    use std::vec::Vec;

    /// `f` with a kernel context whose pool has `workers` threads.
    fn with_ctx<R>(workers: usize, f: impl FnOnce(&KernelContext<'_>) -> R) -> R {
        let mut scratch = [0u8; 64];
        let arena = Arena::new(&mut scratch);
        let pool = Scoped(workers);
        f(&KernelContext::new(&arena).with_parallel(Some(&pool)))
    }

    /// A `rows x cols` matrix stored by columns.
    fn by_columns(data: &[f32], rows: usize, cols: usize) -> Mat<'_, f32> {
        Mat {
            data,
            rows,
            cols,
            rs: 1,
            cs: rows,
        }
    }

    /// A one-row output whose elements lie `cs` apart.
    fn one_row(data: &mut [f32], cols: usize, cs: usize) -> MatMut<'_, f32> {
        let rs = data.len();
        MatMut {
            data,
            rows: 1,
            cols,
            rs,
            cs,
        }
    }

    /// Against a plain f64 sum: every length around the lane count, alpha, beta, a
    /// strided C, and operands the path must leave to the blocked product.
    #[test]
    fn one_row_against_columns_matches_a_plain_product() {
        with_ctx(1, one_row_cases);
    }

    fn one_row_cases(ctx: &KernelContext<'_>) {
        for k in [1usize, 7, 15, 16, 17, 33, 100] {
            let n = 5;
            let row: Vec<f32> = (0..k).map(|p| (p as f32 * 0.37).sin()).collect();
            // B stored by columns: column j is `cols[j * k..(j + 1) * k]`.
            let cols: Vec<f32> = (0..n * k).map(|i| (i as f32 * 0.11).cos()).collect();
            let mut c = [1.0f32; 10];
            let a = Mat::row_major(&row, 1, k);
            let b = by_columns(&cols, k, n);
            assert!(row_times_columns(
                ctx,
                2.0,
                &a,
                &b,
                0.5,
                &mut one_row(&mut c, n, 2)
            ));
            for j in 0..n {
                let want: f64 = (0..k)
                    .map(|p| f64::from(row[p]) * f64::from(cols[j * k + p]))
                    .sum::<f64>()
                    * 2.0
                    + 0.5;
                let got = f64::from(c[2 * j]);
                assert!(
                    (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "k {k} j {j}"
                );
                assert_eq!(c[2 * j + 1], 1.0, "between the strided outputs");
            }
        }
        // beta == 0 ignores C, NaN included.
        let (row, col) = ([1.0f32, 2.0], [3.0f32, 4.0]);
        let a = Mat::row_major(&row, 1, 2);
        let b = by_columns(&col, 2, 1);
        let mut c = [f32::NAN];
        assert!(row_times_columns(
            ctx,
            1.0,
            &a,
            &b,
            0.0,
            &mut one_row(&mut c, 1, 1)
        ));
        assert_eq!(c, [11.0]);
        // Two rows of A, or a row-major B: not this path.
        let two = [1.0f32; 4];
        let mut c = [0.0f32; 2];
        let mut two_rows = MatMut {
            data: &mut c,
            rows: 2,
            cols: 1,
            rs: 1,
            cs: 1,
        };
        assert!(!row_times_columns(
            ctx,
            1.0,
            &Mat::row_major(&two, 2, 2),
            &b,
            0.0,
            &mut two_rows
        ));
        let mut c = [0.0f32; 2];
        let by_rows = Mat::row_major(&two, 2, 2);
        assert!(!row_times_columns(
            ctx,
            1.0,
            &a,
            &by_rows,
            0.0,
            &mut one_row(&mut c, 2, 1)
        ));
    }

    /// Split over workers (a product past the split threshold), every output has the bits
    /// of the single-thread product: each is one dot product, whichever thread runs it.
    #[test]
    fn split_columns_give_the_single_thread_bits() {
        let (k, n) = (300, 1001);
        assert!(n * k >= SPLIT_MIN_WEIGHTS);
        let row: Vec<f32> = (0..k).map(|p| (p as f32 * 0.37).sin()).collect();
        let cols: Vec<f32> = (0..n * k).map(|i| (i as f32 * 0.011).cos()).collect();
        let product = |workers| {
            let mut c: Vec<f32> = (0..n).map(|j| j as f32).collect();
            with_ctx(workers, |ctx| {
                let (a, b) = (Mat::row_major(&row, 1, k), by_columns(&cols, k, n));
                assert!(row_times_columns(
                    ctx,
                    1.5,
                    &a,
                    &b,
                    0.25,
                    &mut one_row(&mut c, n, 1)
                ));
            });
            c
        };
        let one: Vec<u32> = product(1).iter().map(|v| v.to_bits()).collect();
        for workers in [2, 3] {
            let split: Vec<u32> = product(workers).iter().map(|v| v.to_bits()).collect();
            assert_eq!(split, one, "{workers} workers");
        }
    }
}
