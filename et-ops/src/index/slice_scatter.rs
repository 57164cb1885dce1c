//! `aten::slice_scatter.out`: embed a tensor in a strided slice of a dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, copy_same_shape, istrides, normalize_dim, Walk};

/// `out = self.slice_scatter(src, dim, start, end, step)`: a copy of `self` whose slice
/// `out[.., start:end:step, ..]` along `dim` is `src` (which must have that slice's sizes
/// and `self`'s dtype). Bounds follow Python slicing (negative counts from the end,
/// out-of-range clamps); `step` must be positive.
#[kernel("aten::slice_scatter.out")]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn slice_scatter_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    src: &Tensor,
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    check_same_dtype(input, src)?;
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
    let len = if e == s { 0 } else { (e - s - 1) / step + 1 };
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    sizes[d] = len as usize;
    if src.sizes() != &sizes[..n] {
        return Err(KernelError::invalid(
            "slice_scatter src must have the slice's sizes",
        ));
    }
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    let mut dst = istrides(out)?;
    let base = s as usize * dst[d] as usize;
    dst[d] = dst[d]
        .checked_mul(step as isize)
        .ok_or(KernelError::invalid("slice step overflows"))?;
    let ss = istrides(src)?;
    let walk = Walk::copy(&sizes[..n], &dst[..n], &ss[..n])?;
    let elem = src.dtype().element_size();
    walk.move_bytes(elem, out.bytes_mut()?, base, src.bytes()?, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn embeds_a_strided_slice() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[5], &[0i32; 5]).unwrap();
            let src = TensorBuf::from_slice(&[2], &[7i32, 8]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[5]).unwrap();
            slice_scatter_out(ctx, &x, &src, 0, Some(1), None, 2, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[0, 7, 0, 8, 0]);
            slice_scatter_out(ctx, &x, &src, -1, Some(-2), Some(100), 1, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[0, 0, 0, 7, 8]);
            assert!(slice_scatter_out(ctx, &x, &src, 0, None, None, 1, &mut o).is_err());
        });
    }
}
