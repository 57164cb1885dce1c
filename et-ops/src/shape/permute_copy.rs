//! Materialized permutation of dims.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor};

use crate::util::layout::{copy_view, istrides, normalize_dim, transpose_bytes};

/// `out = self.permute(dims)`, materialized: output dim `i` is input dim `dims[i]`.
#[kernel("aten::permute_copy.out")]
pub fn permute_copy_out(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    dims: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if dims.len() != n {
        return Err(KernelError::invalid(
            "permute dims must name every dim once",
        ));
    }
    let in_strides = istrides(input)?;
    let mut sizes = [0usize; et_runtime::MAX_DIM];
    let mut strides = [0isize; et_runtime::MAX_DIM];
    let mut seen = 0u32;
    for (i, &d) in dims.iter().enumerate() {
        let d = normalize_dim(d, n)?;
        if seen & (1 << d) != 0 {
            return Err(KernelError::invalid(
                "permute dims must name every dim once",
            ));
        }
        seen |= 1 << d;
        sizes[i] = input.size(d);
        strides[i] = in_strides[d];
    }
    // A leading group of dims moved behind the rest, contiguous on both sides, with a
    // pool to split it over: a 2-D transpose by bands of output rows. On one thread the
    // strided walk below transposes in the same tiles, and builds without the feature
    // `parallel` leave this path out.
    if ctx.workers() > 1 && input.is_contiguous() && out.dtype() == input.dtype() {
        if let Some(k) = leading_group_moved_back(dims, n) {
            out.resize(&sizes[..n])?;
            if out.is_contiguous() {
                let a: usize = input.sizes()[..k].iter().product();
                let b: usize = input.sizes()[k..].iter().product();
                let elem = input.dtype().element_size();
                return transpose_bytes(ctx, input.bytes()?, out.bytes_mut()?, elem, a, b);
            }
        }
    }
    copy_view(out, &sizes[..n], input, &strides[..n], 0)
}

/// `Some(k)` when `dims` is `[k, k + 1, .., n - 1, 0, .., k - 1]` with `0 < k < n`: the
/// first `k` dims moved behind the rest.
fn leading_group_moved_back(dims: &[i64], n: usize) -> Option<usize> {
    let k = normalize_dim(*dims.first()?, n).ok()?;
    let moved = dims
        .iter()
        .enumerate()
        .all(|(i, &d)| normalize_dim(d, n).is_ok_and(|d| d == (k + i) % n));
    (k > 0 && moved).then_some(k)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn transposes_and_permutes() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[0f32, 1., 2., 3., 4., 5.]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[3, 2]).unwrap();
        permute_copy_out(&ctx, &x, &[1, 0], &mut out).unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[0., 3., 1., 4., 2., 5.]);

        let v: std::vec::Vec<i64> = (0..24).collect();
        let x = TensorBuf::from_slice(&[2, 3, 4], &v).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Long, &[4, 2, 3]).unwrap();
        permute_copy_out(&ctx, &x, &[-1, 0, 1], &mut out).unwrap();
        let o = out.data::<i64>().unwrap();
        for a in 0..4 {
            for b in 0..2 {
                for c in 0..3 {
                    assert_eq!(o[a * 6 + b * 3 + c], (b * 12 + c * 4 + a) as i64);
                }
            }
        }
        let mut bad = TensorBuf::zeros(ScalarType::Long, &[4, 2, 3]).unwrap();
        assert!(permute_copy_out(&ctx, &x, &[0, 0, 1], &mut bad).is_err());
        let mut wrong = TensorBuf::zeros(ScalarType::Long, &[2, 4, 3]).unwrap();
        assert!(permute_copy_out(&ctx, &x, &[2, 0, 1], &mut wrong).is_err());
    }

    /// Group swaps take the tiled transpose (split over a pool, any element width) and
    /// agree with the definition.
    #[test]
    fn group_swaps_transpose_in_tiles() {
        use crate::util::test_pool::Scoped;
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        for workers in [1, 4] {
            let pool = Scoped(workers);
            let ctx = KernelContext::new(&arena).with_parallel(Some(&pool));
            let (a, b) = (400usize, 301usize);
            let v: std::vec::Vec<f32> = (0..a * b).map(|i| i as f32).collect();
            let x = TensorBuf::from_slice(&[a, b], &v).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Float, &[b, a]).unwrap();
            permute_copy_out(&ctx, &x, &[1, 0], &mut out).unwrap();
            let o = out.data::<f32>().unwrap();
            for j in 0..b {
                for i in 0..a {
                    assert_eq!(o[j * a + i], (i * b + j) as f32);
                }
            }
            // [2, 3, 5] -> dims [2, 0, 1] (the last dim moved first), 8-byte elements.
            let v: std::vec::Vec<i64> = (0..30).collect();
            let x = TensorBuf::from_slice(&[2, 3, 5], &v).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Long, &[5, 2, 3]).unwrap();
            permute_copy_out(&ctx, &x, &[-1, 0, 1], &mut out).unwrap();
            let o = out.data::<i64>().unwrap();
            for c in 0..5 {
                for r in 0..6 {
                    assert_eq!(o[c * 6 + r], (r * 5 + c) as i64);
                }
            }
        }
    }
}
