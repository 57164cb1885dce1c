//! `aten::amax.out`: max over dims.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::extreme;
use crate::util::reduction::{dim_mask, resize_reduced};

/// The max of `self` over `dim` (`[]`: every dim) into `out` of the same dtype. NaN
/// propagates; reducing an empty dimension is an error.
#[kernel("aten::amax.out", accepts = [all])]
pub fn amax_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: &[i64],
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    if out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "amax out dtype differs from the input's",
        ));
    }
    let mask = dim_mask(Some(dim), input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    extreme::<Sel>(input, mask, out, true)
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn maxima() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[1.0f32, f32::NAN, 3.0, -4.0, 5.0, 2.0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
        amax_out::<AllDtypes>(&ctx, &x, &[1], false, &mut o).unwrap();
        let d = o.data::<f32>().unwrap();
        assert!(d[0].is_nan());
        assert_eq!(d[1], 5.0);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 3]).unwrap();
        amax_out::<AllDtypes>(&ctx, &x, &[0], true, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap()[2], 3.0);
        let i = TensorBuf::from_slice(&[3], &[-5i64, -2, -9]).unwrap();
        let mut io = TensorBuf::zeros(ScalarType::Long, &[]).unwrap();
        amax_out::<AllDtypes>(&ctx, &i, &[], false, &mut io).unwrap();
        assert_eq!(io.data::<i64>().unwrap(), &[-2]);
        let e = TensorBuf::zeros(ScalarType::Long, &[0]).unwrap();
        assert!(amax_out::<AllDtypes>(&ctx, &e, &[0], false, &mut io).is_err());
    }
}
