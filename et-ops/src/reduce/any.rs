//! `aten::any.out`: whether any element along a dim is non-zero.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::reduction::{dim_mask_one, reduce_spaces, resize_reduced, DimMask, Gathered};

/// True where any element of `self` along `dim` is non-zero (NaN counts as non-zero). The
/// out is bool, or uint8 for a uint8 input, as in PyTorch. An empty reduction is false.
#[kernel("aten::any.out", accepts = [all])]
pub fn any_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    let mask = dim_mask_one(Some(dim), input.dim())?;
    any_over::<Sel>(input, mask, keepdim, out)
}

/// `any` over the dims in `mask`: the body of every `any` overload. The out must be bool,
/// or uint8 for a uint8 input.
pub(super) fn any_over<Sel: DtypeSelection>(
    input: &Tensor,
    mask: DimMask,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    let ok_out = out.dtype() == ScalarType::Bool
        || (out.dtype() == ScalarType::Byte && input.dtype() == ScalarType::Byte);
    if !ok_out {
        return Err(KernelError::invalid(
            "any out must be bool (or uint8 for a uint8 input)",
        ));
    }
    resize_reduced(input, mask, keepdim, out)?;
    // bool and uint8 outs are both one byte holding 0 or 1.
    // Read as f64 whatever the dtype (see `Gathered`): a non-zero integer stays non-zero.
    any_impl(Gathered::<f64>::new::<Sel>(input)?, mask, out)
}

fn any_impl(x: Gathered<'_, f64>, mask: DimMask, out: &mut Tensor) -> KernelResult {
    let (outer, inner) = reduce_spaces(x.tensor(), mask, out);
    let y = out.bytes_mut()?;
    let mut result = Ok(());
    outer.for_each([0, 0], |[ib, ob]| {
        let mut any = false;
        if result.is_ok() {
            result = x.each(&inner, [ib, 0], |v| any |= v != 0.0);
        }
        if let Some(b) = y.get_mut(ob) {
            *b = any as u8;
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, Bool, TensorBuf};
    use std::vec;

    #[test]
    fn any_along_dim() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 2], &[Bool(0), Bool(0), Bool(0), Bool(1)]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
        any_out::<AllDtypes>(&ctx, &x, 1, false, &mut o).unwrap();
        assert_eq!(o.data::<Bool>().unwrap(), &[Bool(0), Bool(1)]);
        let f = TensorBuf::from_slice(&[3], &[0.0f32, f32::NAN, 0.0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Bool, &[1]).unwrap();
        any_out::<AllDtypes>(&ctx, &f, 0, true, &mut o).unwrap();
        assert_eq!(o.data::<Bool>().unwrap(), &[Bool(1)]);
        let mut wrong = TensorBuf::zeros(ScalarType::Float, &[1]).unwrap();
        assert!(any_out::<AllDtypes>(&ctx, &f, 0, true, &mut wrong).is_err());
    }
}
