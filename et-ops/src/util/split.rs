//! Splitting a kernel's output into bands for the context's pool.
//!
//! Memory-bound kernels (elementwise maps, normalizations, copies) split the simplest
//! way: the output's flat storage in contiguous bands, one per worker, each band
//! computed from the same positions of the inputs. Every element is computed exactly as
//! in a single-threaded call, so results are bit for bit the same.

use et_runtime::KernelContext;

/// Fewer elements than this stay on one thread. Between the kernels of a network the
/// pool's workers are still spinning, so handing one a band costs well under a
/// microsecond, less than half of a 16K-element pass; at 64K, mv2's batch norms on 7x7
/// and 14x14 planes ran on one thread (1.43x on two threads against 1.6x at 16K, `etch
/// run --profile --threads 2`).
pub const SPLIT_MIN_ELEMENTS: usize = 1 << 14;

/// The most bands one call makes (the bands live on the stack).
const MAX_BANDS: usize = 16;

/// Calls `f(start, band)` for bands of `out` that together cover it, each band starting
/// at element `start` and holding a whole number of `unit`s (`unit` >= 1, e.g. one
/// plane). On the context's pool when it has more than one worker and `out` has at least
/// `min_len` elements; otherwise once, for all of `out`, on the calling thread.
pub fn for_each_band<T: Send>(
    ctx: &KernelContext<'_>,
    out: &mut [T],
    unit: usize,
    min_len: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let workers = ctx.workers().min(MAX_BANDS);
    let unit = unit.max(1);
    let units = out.len() / unit;
    if workers <= 1 || out.len() < min_len || units < 2 {
        f(0, out);
        return;
    }
    let bands = workers.min(units);
    let per_band = units.div_ceil(bands) * unit;
    let mut items: [Option<(usize, &mut [T])>; MAX_BANDS] = Default::default();
    let mut rest = out;
    let mut start = 0;
    let mut n = 0;
    while !rest.is_empty() {
        let take = per_band.min(rest.len());
        let (band, tail) = rest.split_at_mut(take);
        items[n] = Some((start, band));
        start += take;
        rest = tail;
        n += 1;
    }
    ctx.parallel_each(&mut items[..n], |_, item| {
        if let Some((start, band)) = item.take() {
            f(start, band);
        }
    });
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::util::test_pool::Scoped;
    use et_runtime::Arena;

    #[test]
    fn bands_cover_the_output_once_in_whole_units() {
        for workers in [1, 2, 3] {
            let mut scratch = std::vec![0u8; 64];
            let arena = Arena::new(&mut scratch);
            let pool = Scoped(workers);
            let ctx = &KernelContext::new(&arena).with_parallel(Some(&pool));
            {
                for (len, unit) in [(0, 1), (5, 1), (1000, 7), (1 << 17, 64), (100_003, 1)] {
                    let mut out = std::vec![0u32; len];
                    for_each_band(ctx, &mut out, unit, 8, |start, band| {
                        assert!(
                            start % unit == 0
                                && (band.len() % unit == 0 || start + band.len() == len)
                        );
                        for (i, v) in band.iter_mut().enumerate() {
                            *v += (start + i) as u32 + 1;
                        }
                    });
                    assert!(
                        out.iter().enumerate().all(|(i, &v)| v == i as u32 + 1),
                        "{len} {unit}"
                    );
                }
            }
        }
    }
}

/// Kernels that split their work give the single-threaded result bit for bit.
#[cfg(test)]
mod kernel_tests {
    extern crate std;
    use crate::util::test_pool::Scoped;
    use et_runtime::{AllDtypes, Arena, KernelContext, Scalar, ScalarType, TensorBuf};
    use std::vec::Vec;

    /// Deterministic values in [-2, 2).
    fn values(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| {
                ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32 / (1u32 << 22) as f32 - 2.0
            })
            .collect()
    }

    /// Runs `f` without a pool, then with pools of 2 and 3 workers, and compares the
    /// out tensors' bytes.
    fn same_with_pools(shape: &[usize], f: impl Fn(&KernelContext<'_>, &mut TensorBuf)) {
        let mut scratch = std::vec![0u8; 1 << 16];
        let run = |workers: usize, scratch: &mut [u8]| {
            let arena = Arena::new(scratch);
            let pool = Scoped(workers);
            let ctx = KernelContext::new(&arena).with_parallel((workers > 1).then_some(&pool as _));
            let mut out = TensorBuf::zeros(ScalarType::Float, shape).unwrap();
            f(&ctx, &mut out);
            out.bytes().unwrap().to_vec()
        };
        let serial = run(1, &mut scratch);
        for workers in [2, 3] {
            assert!(serial == run(workers, &mut scratch), "{workers} workers");
        }
    }

    #[test]
    fn elementwise_maps() {
        let n = 3 * super::SPLIT_MIN_ELEMENTS + 17;
        let a = TensorBuf::from_slice(&[n], &values(n)).unwrap();
        let b = TensorBuf::from_slice(&[n], &values(n + 5)[5..]).unwrap();
        same_with_pools(&[n], |ctx, out| {
            crate::activation::hardtanh::hardtanh_out::<AllDtypes>(
                ctx,
                &a,
                Scalar::Double(-1.0),
                Scalar::Double(1.5),
                out,
            )
            .unwrap()
        });
        same_with_pools(&[n], |ctx, out| {
            crate::binary::add::add_out::<AllDtypes>(ctx, &a, &b, Scalar::Double(0.5), out).unwrap()
        });
    }

    #[test]
    fn batch_norm_planes() {
        let shape = [2, 5, 90, 91];
        let n: usize = shape.iter().product();
        let x = TensorBuf::from_slice(&shape, &values(n)).unwrap();
        let stat = |k: usize| TensorBuf::from_slice(&[5], &values(5 + k)[k..]).unwrap();
        let var = TensorBuf::from_slice(&[5], &[0.5f32, 1.0, 2.0, 0.25, 3.0]).unwrap();
        same_with_pools(&shape, |ctx, out| {
            let mut m = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
            let mut r = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
            crate::norm::batch_norm::batch_norm_no_training_out::<AllDtypes>(
                ctx,
                &x,
                Some(&stat(1)),
                Some(&stat(2)),
                &stat(3),
                &var,
                0.1,
                1e-5,
                out,
                &mut m,
                &mut r,
            )
            .unwrap()
        });
    }

    #[test]
    fn matrix_transpose() {
        let (rows, cols) = (301, 517);
        let v = values(rows * cols);
        let x = TensorBuf::from_slice(&[rows, cols], &v).unwrap();
        same_with_pools(&[cols, rows], |ctx, out| {
            crate::shape::permute_copy::permute_copy_out(ctx, &x, &[1, 0], out).unwrap();
            let o = out.data::<f32>().unwrap();
            assert!((0..rows * cols).all(|i| o[(i % cols) * rows + i / cols] == v[i]));
        });
    }
}
