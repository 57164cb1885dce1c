//! `aten::any.all_out`: whether any element is non-zero.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::any::any_over;
use crate::util::reduction::all_dims;

/// True if any element of `self` is non-zero (NaN counts), as a 0-dim bool (uint8 for a
/// uint8 input, as in PyTorch). An empty tensor gives false.
#[kernel("aten::any.all_out", accepts = [all])]
pub fn any_all_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    any_over::<Sel>(input, all_dims(input.dim()), false, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn any_element() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[0i32, 0, 0, -3]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Bool, &[]).unwrap();
            any_all_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<Bool>().unwrap(), &[Bool(1)]);
            let e = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
            any_all_out::<AllDtypes>(ctx, &e, &mut o).unwrap();
            assert_eq!(o.data::<Bool>().unwrap(), &[Bool(0)]);
            let u = TensorBuf::from_slice(&[2], &[0u8, 2]).unwrap();
            let mut ou = TensorBuf::zeros(ScalarType::Byte, &[]).unwrap();
            any_all_out::<AllDtypes>(ctx, &u, &mut ou).unwrap();
            assert_eq!(ou.data::<u8>().unwrap(), &[1]);
        });
    }
}
