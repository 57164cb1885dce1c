//! `aten::argmax.out`: index of the largest element.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::arg_extreme;
use crate::util::reduction::{dim_mask_one, resize_reduced};

/// The index of the largest element of `self` along `dim` (`None`: of the flattened
/// tensor) into an int64 `out`. Ties keep the first occurrence; the first NaN wins.
#[kernel("aten::argmax.out", accepts = [reals])]
pub fn argmax_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    if out.dtype() != ScalarType::Long {
        return Err(KernelError::invalid("argmax out must be int64"));
    }
    let mask = dim_mask_one(dim, input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    arg_extreme::<Sel>(input, mask, out, true)
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, TensorBuf};
    use std::vec;

    #[test]
    fn indices() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[5.0f32, 1.0, 5.0, 0.0, f32::NAN, 9.0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
        argmax_out::<AllDtypes>(&ctx, &x, Some(1), false, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[0, 1]);
        let mut all = TensorBuf::zeros(ScalarType::Long, &[]).unwrap();
        argmax_out::<AllDtypes>(&ctx, &x, None, false, &mut all).unwrap();
        assert_eq!(all.data::<i64>().unwrap(), &[4]);
        let mut keep = TensorBuf::zeros(ScalarType::Long, &[1, 1]).unwrap();
        argmax_out::<AllDtypes>(&ctx, &x, None, true, &mut keep).unwrap();
        assert_eq!(keep.data::<i64>().unwrap(), &[4]);
        let mut wrong = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
        assert!(argmax_out::<AllDtypes>(&ctx, &x, Some(1), false, &mut wrong).is_err());
        assert!(argmax_out::<AllDtypes>(&ctx, &x, Some(2), false, &mut o).is_err());
    }
}
