//! Materialized reshape.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, copy_logical};

/// `out = self.view(size)`, materialized: the elements in logical (row-major) order,
/// re-shaped. One size may be `-1` (inferred from the element count).
#[kernel("aten::view_copy.out")]
pub fn view_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    size: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    let mut sizes = [0usize; MAX_DIM];
    infer_size(size, input.numel(), &mut sizes)?;
    out.resize(&sizes[..size.len()])?;
    copy_logical(out, input)
}

/// Resolves a view's sizes (with at most one `-1`) for `numel` elements.
fn infer_size(size: &[i64], numel: usize, out: &mut [usize; MAX_DIM]) -> KernelResult<()> {
    if size.len() > MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    let mut infer = None;
    let mut known = 1usize;
    for (i, &s) in size.iter().enumerate() {
        if s == -1 {
            if infer.replace(i).is_some() {
                return Err(KernelError::invalid("only one view dim can be inferred"));
            }
            continue;
        }
        let s = usize::try_from(s).map_err(|_| KernelError::invalid("invalid view size"))?;
        out[i] = s;
        known = known
            .checked_mul(s)
            .ok_or(KernelError::invalid("view size overflows"))?;
    }
    match infer {
        // A zero-size known part makes the inferred size ambiguous, as in PyTorch.
        Some(i) if known != 0 && numel.is_multiple_of(known) => out[i] = numel / known,
        Some(_) => return Err(KernelError::invalid("view size is invalid for the input")),
        None if known == numel => {}
        None => return Err(KernelError::invalid("view size does not match the input")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, ShapeDynamism, TensorBuf};

    #[test]
    fn reshapes() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let v: std::vec::Vec<i32> = (0..24).collect();
        let x = TensorBuf::from_slice(&[6, 4], &v).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Int, &[2, 3, 4]).unwrap();
        view_copy_out(&ctx, &x, &[2, -1, 4], &mut out).unwrap();
        assert_eq!(out.data::<i32>().unwrap(), &v[..]);
        assert!(view_copy_out(&ctx, &x, &[5, -1, 4], &mut out).is_err());
        assert!(view_copy_out(&ctx, &x, &[-1, -1, 4], &mut out).is_err());
        assert!(view_copy_out(&ctx, &x, &[2, 3, 5], &mut out).is_err());

        // A bounded-dynamic out takes the new shape.
        let mut dynout =
            TensorBuf::with_layout(ScalarType::Int, &[8, 8], &[0, 1], ShapeDynamism::Bound)
                .unwrap();
        view_copy_out(&ctx, &x, &[-1, 12], &mut dynout).unwrap();
        assert_eq!(dynout.sizes(), &[2, 12]);
        assert_eq!(dynout.data::<i32>().unwrap(), &v[..]);
    }

    #[test]
    fn channels_last_input_reads_logically() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        // [1, 2, 1, 2] channels-last: memory order (n, h, w, c).
        let mut x = TensorBuf::with_layout(
            ScalarType::Float,
            &[1, 2, 1, 2],
            &[0, 2, 3, 1],
            ShapeDynamism::Static,
        )
        .unwrap();
        // logical x[0, c, 0, w] = 10c + w  -> memory (w, c): [0, 10, 1, 11]
        x.data_mut::<f32>()
            .unwrap()
            .copy_from_slice(&[0., 10., 1., 11.]);
        let mut out = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
        view_copy_out(&ctx, &x, &[4], &mut out).unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[0., 1., 10., 11.]);
    }
}
