//! Materialized permutation of dims.

use et_runtime::kernel;
use et_runtime::{Error, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::layout::{check_same_dtype, copy_view, istrides, normalize_dim};
use crate::util::split::{for_each_band, SPLIT_MIN_ELEMENTS};

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
    if n == 2
        && dims_are_transpose(dims)
        && input.numel() >= SPLIT_MIN_ELEMENTS
        && ctx.workers() > 1
    {
        check_same_dtype(out, input)?;
        out.resize(&sizes[..2])?;
        if input.is_contiguous() && out.is_contiguous() {
            return transpose_split(ctx, input, out);
        }
    }
    copy_view(out, &sizes[..n], input, &strides[..n], 0)
}

fn dims_are_transpose(dims: &[i64]) -> bool {
    matches!(dims, [1, 0] | [-1, 0] | [1, -2] | [-1, -2])
}

/// A contiguous matrix transpose split over the pool: bands of whole `out` rows, each
/// copied in square tiles so that both matrices are read and written in cache-line runs.
/// Classifier weights are transposed this way in every execute (mobilenet_v2's 1000 x
/// 1280 `permute_copy` before `addmm`), and the copy is bound by memory bandwidth, which
/// one core alone does not saturate.
fn transpose_split(ctx: &KernelContext<'_>, input: &Tensor, out: &mut Tensor) -> KernelResult {
    let (rows, cols) = (input.size(0), input.size(1));
    let elem = input.dtype().element_size();
    let src = input.bytes()?;
    let dst = out.bytes_mut()?;
    match elem {
        1 => transpose_bands::<1>(ctx, src, dst, rows, cols),
        2 => transpose_bands::<2>(ctx, src, dst, rows, cols),
        4 => transpose_bands::<4>(ctx, src, dst, rows, cols),
        8 => transpose_bands::<8>(ctx, src, dst, rows, cols),
        _ => Err(KernelError::unsupported(
            "element size not supported for copies",
        )),
    }
}

fn transpose_bands<const W: usize>(
    ctx: &KernelContext<'_>,
    src: &[u8],
    dst: &mut [u8],
    rows: usize,
    cols: usize,
) -> KernelResult {
    const TILE: usize = 16;
    let src = src.as_chunks::<W>().0;
    let dst = dst.as_chunks_mut::<W>().0;
    let total = rows * cols;
    if src.len() < total || dst.len() < total {
        return Err(KernelError::new(Error::Internal, "transpose out of bounds"));
    }
    // `out` is `cols x rows`: out[o][r] = in[r][o]; a band is a run of whole out rows.
    for_each_band(ctx, &mut dst[..total], rows * TILE, 0, |start, band| {
        let o_begin = start / rows;
        let o_count = band.len() / rows;
        let mut o0 = 0;
        while o0 < o_count {
            let h = (o_count - o0).min(TILE);
            let mut r0 = 0;
            while r0 < rows {
                let w = (rows - r0).min(TILE);
                for r in r0..r0 + w {
                    let row = &src[r * cols + o_begin + o0..][..h];
                    for (k, v) in row.iter().enumerate() {
                        band[(o0 + k) * rows + r] = *v;
                    }
                }
                r0 += w;
            }
            o0 += h;
        }
    });
    Ok(())
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
}
