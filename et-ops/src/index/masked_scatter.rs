//! `aten::masked_scatter.out`: fill the positions where a mask is true from a source.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::broadcast_strides;
use crate::util::elementwise::broadcast_shapes;
use crate::util::layout::{check_same_dtype, copy_same_shape, istrides, LogicalOffsets};
use crate::util::reduction::Space;

/// `out = self.masked_scatter(mask, source)`: a copy of `self` where the positions at
/// which the bool `mask` is true receive the elements of
/// `source` one after another, in row-major order (`source` needs at least as many
/// elements as there are true positions). `self` and `mask` broadcast together: the
/// result has their broadcast shape, whichever of the two has the higher rank.
#[kernel("aten::masked_scatter.out")]
pub fn masked_scatter_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    mask: &Tensor,
    source: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    if mask.dtype() != ScalarType::Bool {
        return Err(KernelError::invalid("masked_scatter mask must be bool"));
    }
    check_same_dtype(input, out)?;
    check_same_dtype(input, source)?;
    // `self` and `mask` broadcast together (PyTorch's `expand_outplace`), so a mask of
    // higher rank than `self` gives a higher-rank result.
    let shape = broadcast_shapes(&[input.sizes(), mask.sizes()])?;
    let sizes = shape.as_slice();
    let n = sizes.len();
    out.resize(sizes)?;
    let os = istrides(out)?;
    let out_strides: [usize; et_runtime::MAX_DIM] = core::array::from_fn(|d| os[d] as usize);
    if input.sizes() == sizes {
        copy_same_shape(out, input, None, None)?;
    } else {
        // `self` repeats along the broadcast dims.
        let is = broadcast_strides(input, sizes)?;
        let elem = input.dtype().element_size();
        let from = input.bytes()?;
        let to = out.bytes_mut()?;
        Space::new(sizes, [&out_strides[..n], &is[..n]]).for_each([0, 0], |[o, i]| {
            if let (Some(d), Some(v)) = (
                to.get_mut(o * elem..(o + 1) * elem),
                from.get(i * elem..(i + 1) * elem),
            ) {
                d.copy_from_slice(v);
            }
        });
    }
    let ms = broadcast_strides(mask, sizes)?;
    let space = Space::new(sizes, [&out_strides[..n], &ms[..n]]);
    let m = mask.bytes()?;
    let elem = input.dtype().element_size();
    let src = source.bytes()?;
    let mut next = LogicalOffsets::new(source);
    let dst = out.bytes_mut()?;
    let mut short = false;
    space.for_each([0, 0], |[o, k]| {
        if m.get(k).is_some_and(|&b| b != 0) {
            match next.next() {
                Some(s) => {
                    if let (Some(d), Some(v)) = (
                        dst.get_mut(o * elem..(o + 1) * elem),
                        src.get(s * elem..(s + 1) * elem),
                    ) {
                        d.copy_from_slice(v);
                    }
                }
                None => short = true,
            }
        }
    });
    if short {
        return Err(KernelError::invalid(
            "masked_scatter source has fewer elements than the mask's true count",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn fills_true_positions_in_order() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[0i32; 4]).unwrap();
            let m = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let src = TensorBuf::from_slice(&[3], &[7i32, 8, 9]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[2, 2]).unwrap();
            masked_scatter_out(ctx, &x, &m, &src, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[7, 0, 8, 0]);
            let one = TensorBuf::from_slice(&[1], &[5i32]).unwrap();
            assert!(masked_scatter_out(ctx, &x, &m, &one, &mut o).is_err());
        });
    }

    #[test]
    fn mask_of_higher_rank_broadcasts_self() {
        with_ctx(|ctx| {
            // self [2], mask [2, 2]: the result is [2, 2], self repeated per row.
            let x = TensorBuf::from_slice(&[2], &[1i32, 2]).unwrap();
            let m = TensorBuf::from_slice(&[2, 2], &[Bool(0), Bool(1), Bool(1), Bool(0)]).unwrap();
            let src = TensorBuf::from_slice(&[2], &[8i32, 9]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[2, 2]).unwrap();
            masked_scatter_out(ctx, &x, &m, &src, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[1, 8, 9, 2]);
            // Shapes that do not broadcast are refused.
            let m3 = TensorBuf::from_slice(&[3], &[Bool(0); 3]).unwrap();
            assert!(masked_scatter_out(ctx, &x, &m3, &src, &mut o).is_err());
        });
    }
}
