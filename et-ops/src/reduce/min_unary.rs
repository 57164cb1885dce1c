//! `aten::min.unary_out`: the smallest element of a whole tensor.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::extreme;
use crate::util::reduction::{all_dims, resize_reduced};

/// `out = self.min()`: the smallest element of `self` as a 0-dim tensor of its dtype.
/// NaN propagates; an empty tensor is an error, as in PyTorch.
#[kernel("aten::min.unary_out", accepts = [all])]
pub fn min_unary_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    if out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "min out dtype differs from the input's",
        ));
    }
    if input.numel() == 0 {
        return Err(KernelError::invalid("min of an empty tensor"));
    }
    let mask = all_dims(input.dim());
    resize_reduced(input, mask, false, out)?;
    extreme::<Sel>(input, mask, out, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn smallest_of_all() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[4u8, 9, 0, 7]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Byte, &[]).unwrap();
            min_unary_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<u8>().unwrap(), &[0]);
            let b = TensorBuf::from_slice(&[2], &[Bool(0), Bool(1)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[]).unwrap();
            min_unary_out::<AllDtypes>(ctx, &b, &mut ob).unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(0)]);
            let f = TensorBuf::from_slice(&[2], &[1.0f32, f32::NAN]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
            min_unary_out::<AllDtypes>(ctx, &f, &mut of).unwrap();
            assert!(of.data::<f32>().unwrap()[0].is_nan());
            let e = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
            assert!(min_unary_out::<AllDtypes>(ctx, &e, &mut of).is_err());
        });
    }
}
