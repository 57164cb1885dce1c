//! `aten::masked_fill.Scalar_out`: set the elements where a mask is true.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, ScalarType, Tensor,
};

use crate::util::convert::scalar_as;
use crate::util::element::Num;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set};

/// `out = self.masked_fill(mask, value)`: `value` (cast to `self`'s dtype) where the bool
/// `mask`, broadcast against `self`, is true, else `self`'s element.
#[kernel("aten::masked_fill.Scalar_out", accepts = [all])]
pub fn masked_fill_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    mask: &Tensor,
    value: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    if mask.dtype() != ScalarType::Bool {
        return Err(KernelError::invalid("masked_fill mask must be bool"));
    }
    let common = input.dtype();
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let v = scalar_as::<C, Sel>(value, common)?;
        // The mask arrives converted to `common`: 0 for false, 1 for true.
        binary::<C, C, Sel>(input, mask, out, common, move |x, m| {
            if m.to_bool() { v } else { x }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn fills_where_masked() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
            let m = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
            masked_fill_scalar_out::<AllDtypes>(ctx, &x, &m, Scalar::Double(-0.5), &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[-0.5, 2.0, -0.5, 4.0]);
            let b = TensorBuf::from_slice(&[2], &[Bool(0), Bool(0)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            masked_fill_scalar_out::<AllDtypes>(ctx, &b, &m, Scalar::Bool(true), &mut ob).unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(1), Bool(0)]);
            let not_bool = TensorBuf::from_slice(&[2], &[1u8, 0]).unwrap();
            let r = masked_fill_scalar_out::<AllDtypes>(ctx, &x, &not_bool, Scalar::Int(0), &mut o);
            assert!(r.is_err());
        });
    }
}
