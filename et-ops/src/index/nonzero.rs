//! `aten::nonzero.out`: the coordinates of the non-zero elements.

use et_runtime::kernel;
use et_runtime::{
    DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor, MAX_DIM,
};

use crate::util::accumulate::Accumulator;
use crate::util::convert::Val;
use crate::util::reduction::Space;

/// `out = self.nonzero()`: one row per non-zero element of `self` (NaN counts), in
/// row-major order, holding its coordinates: an int64 `[count, self.dim()]` tensor whose
/// length depends on the data (`out` must be resizable to it).
#[kernel("aten::nonzero.out", accepts = [all])]
pub fn nonzero_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    if out.dtype() != ScalarType::Long || out.dim() != 2 {
        return Err(KernelError::invalid(
            "nonzero out must be a 2-d int64 tensor",
        ));
    }
    // Only the truth of each element depends on the dtype: one loop for every dtype.
    let acc = Accumulator::new::<Sel>(input.dtype())?;
    let x = input.bytes()?;
    let truth = |i: usize| match acc.get(x, i) {
        Val::Int(v) => v != 0,
        Val::Float(v) => v != 0.0,
    };
    list_coordinates(input, &truth, out)
}

fn list_coordinates(
    input: &Tensor,
    truth: &dyn Fn(usize) -> bool,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let space = Space::new(input.sizes(), [input.strides()]);
    let mut count = 0usize;
    space.for_each([0], |[i]| count += usize::from(truth(i)));
    out.resize(&[count, n])?;
    let (row_stride, col_stride) = (out.strides()[0], out.strides()[1]);
    let y = out.data_mut::<i64>()?;
    // The space visits positions in row-major order; this odometer names them.
    let mut coord = [0usize; MAX_DIM];
    let mut row = 0usize;
    space.for_each([0], |[i]| {
        if truth(i) {
            for (c, &v) in coord[..n].iter().enumerate() {
                if let Some(slot) = y.get_mut(row * row_stride + c * col_stride) {
                    *slot = v as i64;
                }
            }
            row += 1;
        }
        for d in (0..n).rev() {
            coord[d] += 1;
            if coord[d] < input.size(d) {
                break;
            }
            coord[d] = 0;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ShapeDynamism, TensorBuf};

    #[test]
    fn lists_coordinates() {
        with_ctx(|ctx| {
            let x =
                TensorBuf::from_slice(&[2, 3], &[0.0f32, 1.0, 0.0, f32::NAN, 0.0, -2.0]).unwrap();
            let mut o =
                TensorBuf::with_layout(ScalarType::Long, &[6, 2], &[0, 1], ShapeDynamism::Bound)
                    .unwrap();
            nonzero_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            assert_eq!(o.sizes(), &[3, 2]);
            assert_eq!(o.data::<i64>().unwrap(), &[0, 1, 1, 0, 1, 2]);
        });
    }
}
