//! `aten::repeat_interleave.Tensor_out`: each index repeated by a count.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::layout::{IndexData, LogicalOffsets};

/// `out = torch.repeat_interleave(repeats)`: for a 1-D `repeats` of non-negative counts,
/// index `i` repeated `repeats[i]` times, in order (`[0, 0, 1, 2, 2, 2]` for `[2, 1, 3]`),
/// in `repeats`' dtype (int64 or int32). `output_size`, when given, must equal the total.
/// The length depends on the data: `out` must be resizable to it.
#[kernel("aten::repeat_interleave.Tensor_out", accepts = [i32, i64])]
pub fn repeat_interleave_tensor_out(
    _ctx: &KernelContext<'_>,
    repeats: &Tensor,
    output_size: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    if repeats.dim() != 1 || out.dtype() != repeats.dtype() {
        return Err(KernelError::invalid(
            "repeat_interleave needs 1-d repeats and an out of their dtype",
        ));
    }
    let counts = IndexData::of(repeats)?;
    let offsets = || LogicalOffsets::new(repeats);
    let mut total = 0usize;
    for o in offsets() {
        let c = usize::try_from(counts.get(o))
            .map_err(|_| KernelError::invalid("repeats must be non-negative"))?;
        total = total
            .checked_add(c)
            .ok_or(KernelError::invalid("repeat_interleave size overflows"))?;
    }
    if output_size.is_some_and(|s| usize::try_from(s) != Ok(total)) {
        return Err(KernelError::invalid(
            "output_size differs from the sum of repeats",
        ));
    }
    out.resize(&[total])?;
    let mut at = 0usize;
    let mut fill = |value: i64, count: usize, out: &mut Tensor| -> KernelResult {
        match out.dtype() {
            ScalarType::Long => out.data_mut::<i64>()?[at..at + count].fill(value),
            _ => out.data_mut::<i32>()?[at..at + count].fill(value as i32),
        }
        at += count;
        Ok(())
    };
    for (i, o) in offsets().enumerate() {
        fill(i as i64, counts.get(o) as usize, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ShapeDynamism, TensorBuf};

    #[test]
    fn repeats_indices() {
        with_ctx(|ctx| {
            let r = TensorBuf::from_slice(&[3], &[2i32, 0, 3]).unwrap();
            let mut o =
                TensorBuf::with_layout(ScalarType::Int, &[8], &[0], ShapeDynamism::Bound).unwrap();
            repeat_interleave_tensor_out(ctx, &r, None, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[0, 0, 2, 2, 2]);
            assert!(repeat_interleave_tensor_out(ctx, &r, Some(4), &mut o).is_err());
            let neg = TensorBuf::from_slice(&[1], &[-1i32]).unwrap();
            assert!(repeat_interleave_tensor_out(ctx, &neg, None, &mut o).is_err());
        });
    }
}
