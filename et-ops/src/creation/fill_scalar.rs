//! `aten::fill.Scalar_out`: a tensor shaped like another, filled with one value.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_bytes;
use crate::util::layout::{check_same_dtype, fill_bytes};

/// `out = self.fill(value)`: `self`'s sizes and dtype (which `out` must have), every
/// element `value`; the value must fit the dtype, as PyTorch's `fill_` checks.
#[kernel("aten::fill.Scalar_out", accepts = [all])]
pub fn fill_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    value: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    let elem = et_switch!(Sel, out.dtype(), @all, T => scalar_bytes::<T>(value))?;
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
    fn fills() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[1i32, 2, 3]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
            fill_scalar_out::<AllDtypes>(ctx, &x, Scalar::Double(-2.7), &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[-2; 3]);
            let b = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            fill_scalar_out::<AllDtypes>(ctx, &b, Scalar::Bool(true), &mut ob).unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(1); 2]);
            let u = TensorBuf::zeros(ScalarType::Byte, &[2]).unwrap();
            let mut ou = TensorBuf::zeros(ScalarType::Byte, &[2]).unwrap();
            assert!(fill_scalar_out::<AllDtypes>(ctx, &u, Scalar::Int(300), &mut ou).is_err());
            let mut wrong = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            assert!(fill_scalar_out::<AllDtypes>(ctx, &x, Scalar::Int(1), &mut wrong).is_err());
        });
    }
}
