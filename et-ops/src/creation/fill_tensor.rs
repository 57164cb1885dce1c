//! `aten::fill.Tensor_out`: fill with the value of a 0-dim tensor.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::convert::{loader, storer};
use crate::util::layout::{check_same_dtype, fill_bytes};

/// `out = self.fill(value)` for a 0-dim `value` tensor of any dtype: `self`'s sizes and
/// dtype (which `out` must have), every element the value cast to that dtype.
#[kernel("aten::fill.Tensor_out", accepts = [all])]
pub fn fill_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    value: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    if value.dim() != 0 {
        return Err(KernelError::invalid("fill value must be a 0-dim tensor"));
    }
    out.resize(input.sizes())?;
    let from = et_switch!(Sel, value.dtype(), @all, T => Ok(loader::<T>()))?;
    let to = et_switch!(Sel, out.dtype(), @all, T => Ok(storer::<T>()))?;
    let mut elem = [0u8; 8];
    (to.store)(&mut elem, (from.load)(value.bytes()?));
    fill_bytes(out.bytes_mut()?, &elem[..to.size])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{f16, ScalarType, TensorBuf};

    #[test]
    fn fills_with_a_cast_value() {
        with_ctx(|ctx| {
            let x = TensorBuf::zeros(ScalarType::Half, &[2, 2]).unwrap();
            let v = TensorBuf::from_slice(&[], &[1.5f64]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Half, &[2, 2]).unwrap();
            fill_tensor_out::<AllDtypes>(ctx, &x, &v, &mut o).unwrap();
            assert_eq!(o.data::<f16>().unwrap(), &[f16::from_f64(1.5); 4]);
            let i = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            fill_tensor_out::<AllDtypes>(ctx, &i, &v, &mut oi).unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[1; 3]);
            let not_scalar = TensorBuf::from_slice(&[1], &[1.5f64]).unwrap();
            assert!(fill_tensor_out::<AllDtypes>(ctx, &i, &not_scalar, &mut oi).is_err());
        });
    }
}
