//! `aten::masked_select.out`: the elements where a mask is true, as a 1-D tensor.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::broadcast_strides;
use crate::util::elementwise::broadcast_shapes;
use crate::util::layout::check_same_dtype;
use crate::util::reduction::Space;

/// `out = self.masked_select(mask)`: `self` and the bool `mask` broadcast together, and
/// the elements of `self` where `mask` is true, in row-major order, form the 1-D `out`
/// (whose length depends on the data: `out` must be resizable to it).
#[kernel("aten::masked_select.out")]
pub fn masked_select_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    mask: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    if mask.dtype() != ScalarType::Bool {
        return Err(KernelError::invalid("masked_select mask must be bool"));
    }
    check_same_dtype(input, out)?;
    let shape = broadcast_shapes(&[input.sizes(), mask.sizes()])?;
    let sizes = shape.as_slice();
    let n = sizes.len();
    let (xs, ms) = (
        broadcast_strides(input, sizes)?,
        broadcast_strides(mask, sizes)?,
    );
    let space = Space::new(sizes, [&xs[..n], &ms[..n]]);
    let m = mask.bytes()?;
    let mut count = 0usize;
    space.for_each([0, 0], |[_, k]| {
        count += usize::from(m.get(k).is_some_and(|&b| b != 0))
    });
    out.resize(&[count])?;
    let elem = input.dtype().element_size();
    let src = input.bytes()?;
    let dst = out.bytes_mut()?;
    let mut at = 0usize;
    space.for_each([0, 0], |[i, k]| {
        if m.get(k).is_some_and(|&b| b != 0) {
            if let (Some(d), Some(s)) = (
                dst.get_mut(at * elem..(at + 1) * elem),
                src.get(i * elem..(i + 1) * elem),
            ) {
                d.copy_from_slice(s);
            }
            at += 1;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{Bool, ShapeDynamism, TensorBuf};

    #[test]
    fn selects_in_row_major_order() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[1i64, 2, 3, 4]).unwrap();
            let m = TensorBuf::from_slice(&[2], &[Bool(0), Bool(1)]).unwrap();
            let mut o =
                TensorBuf::with_layout(ScalarType::Long, &[4], &[0], ShapeDynamism::Bound).unwrap();
            masked_select_out(ctx, &x, &m, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[2, 4]);
            let none = TensorBuf::from_slice(&[1], &[Bool(0)]).unwrap();
            masked_select_out(ctx, &x, &none, &mut o).unwrap();
            assert_eq!(o.sizes(), &[0]);
        });
    }
}
