//! Strided slice along one dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out = self[.., start:end:step, ..]` along `dim`, with Python slice clamping: negative
/// bounds count from the end, out-of-range bounds clamp, an empty range gives an empty
/// dim. `step` must be positive.
#[kernel("aten::slice_copy.Tensor_out")]
pub fn slice_copy_tensor_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "cannot slice a zero-dimensional tensor",
        ));
    }
    let d = normalize_dim(dim, n)?;
    if step <= 0 {
        return Err(KernelError::invalid("slice step must be positive"));
    }
    let size = input.size(d) as i64;
    let clamp = |v: i64| {
        let v = if v < 0 { v.saturating_add(size) } else { v };
        v.clamp(0, size)
    };
    let s = clamp(start.unwrap_or(0));
    let e = clamp(end.unwrap_or(i64::MAX)).max(s);
    // Ceiling division without overflow (`step` may be huge); `0 <= s <= e <= size`.
    let len = if e == s { 0 } else { (e - s - 1) / step + 1 };
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    sizes[d] = len as usize;
    let mut strides = istrides(input)?;
    let offset = s as usize * input.strides()[d];
    strides[d] = strides[d]
        .checked_mul(step as isize)
        .ok_or(KernelError::invalid("slice step overflows"))?;
    copy_view(out, &sizes[..n], input, &strides[..n], offset)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn slices() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let v: std::vec::Vec<f32> = (0..18).map(|i| i as f32).collect();
        let x = TensorBuf::from_slice(&[3, 6], &v).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[3, 2]).unwrap();
        slice_copy_tensor_out(&ctx, &x, 1, Some(1), Some(4), 2, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1., 3., 7., 9., 13., 15.]);
        slice_copy_tensor_out(&ctx, &x, -1, Some(-2), None, 1, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[4., 5., 10., 11., 16., 17.]);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 6]).unwrap();
        slice_copy_tensor_out(&ctx, &x, 0, Some(2), Some(100), 1, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &v[12..]);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[0, 6]).unwrap();
        slice_copy_tensor_out(&ctx, &x, 0, Some(2), Some(1), 1, &mut o).unwrap();
        assert!(slice_copy_tensor_out(&ctx, &x, 0, None, None, 0, &mut o).is_err());
    }
}
