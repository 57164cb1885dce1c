//! `aten::ones.out`: a tensor of a given shape filled with 1.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor, MAX_DIM};

use crate::util::convert::scalar_bytes;
use crate::util::layout::{fill_bytes, sizes_from_i64};

/// `out = torch.ones(size, dtype=out.dtype)`.
#[kernel("aten::ones.out", accepts = [all])]
pub fn ones_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    size: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let mut sizes = [0usize; MAX_DIM];
    let n = sizes_from_i64(size, &mut sizes)?;
    out.resize(&sizes[..n])?;
    let elem = et_switch!(Sel, out.dtype(), @all, T => scalar_bytes::<T>(Scalar::Int(1)))?;
    let width = out.dtype().element_size();
    fill_bytes(out.bytes_mut()?, &elem[..width])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn fills_with_ones() {
        with_ctx(|ctx| {
            let mut o = TensorBuf::with_layout(
                ScalarType::Float,
                &[2, 3],
                &[0, 1],
                et_runtime::ShapeDynamism::Bound,
            )
            .unwrap();
            ones_out::<AllDtypes>(ctx, &[3, 2], &mut o).unwrap();
            assert_eq!(o.sizes(), &[3, 2]);
            assert_eq!(o.data::<f32>().unwrap(), &[1.0; 6]);
            let mut b = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            ones_out::<AllDtypes>(ctx, &[2], &mut b).unwrap();
            assert_eq!(b.data::<Bool>().unwrap(), &[Bool(1); 2]);
            assert!(ones_out::<AllDtypes>(ctx, &[-1], &mut b).is_err());
        });
    }
}
