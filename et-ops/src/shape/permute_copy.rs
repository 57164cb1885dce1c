//! Materialized permutation of dims.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor};

use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out = self.permute(dims)`, materialized: output dim `i` is input dim `dims[i]`.
#[kernel("aten::permute_copy.out")]
pub fn permute_copy_out(
    _ctx: &KernelContext<'_>,
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
    copy_view(out, &sizes[..n], input, &strides[..n], 0)
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
