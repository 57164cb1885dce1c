//! `aten::tril.out`: the lower triangle of (a batch of) matrices.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor};

use crate::util::layout::{check_same_dtype, copy_same_shape, istrides, Walk};

/// `out = self.tril(diagonal)`: elements `[.., i, j]` with `j - i <= diagonal` are kept,
/// the others are zero, over the last two dims (earlier dims are a batch). A positive
/// `diagonal` keeps diagonals above the main one, a negative one drops some below.
#[kernel("aten::tril.out")]
pub fn tril_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    diagonal: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if n < 2 {
        return Err(KernelError::invalid("tril needs at least 2 dims"));
    }
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    let (rows, cols) = (input.size(n - 2), input.size(n - 1));
    let os = istrides(out)?;
    let (row_stride, col_stride) = (out.strides()[n - 2], out.strides()[n - 1]);
    let elem = out.dtype().element_size();
    let len = out.numel();
    let batch = Walk::new(&input.sizes()[..n - 2], [&os[..n - 2]])?;
    let bytes = out.bytes_mut()?;
    // Zero bits are zero in every dtype (0, 0.0, false).
    batch.for_each([0], [len.max(1)], |[base]| {
        for i in 0..rows {
            let first_zero = (i as i64).saturating_add(diagonal).saturating_add(1).max(0);
            for j in (first_zero as usize).min(cols)..cols {
                let at = (base + i * row_stride + j * col_stride) * elem;
                if let Some(e) = bytes.get_mut(at..at + elem) {
                    e.fill(0);
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn keeps_the_lower_triangle() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2, 3], &[1i64; 12]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 2, 3]).unwrap();
            tril_out(ctx, &x, 0, &mut o).unwrap();
            assert_eq!(
                o.data::<i64>().unwrap(),
                &[1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0]
            );
            tril_out(ctx, &x, 1, &mut o).unwrap();
            assert_eq!(&o.data::<i64>().unwrap()[..6], &[1, 1, 0, 1, 1, 1]);
            tril_out(ctx, &x, -1, &mut o).unwrap();
            assert_eq!(&o.data::<i64>().unwrap()[..6], &[0, 0, 0, 1, 0, 0]);
            let v = TensorBuf::from_slice(&[2], &[1i64, 2]).unwrap();
            let mut ov = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
            assert!(tril_out(ctx, &v, 0, &mut ov).is_err());
        });
    }
}
