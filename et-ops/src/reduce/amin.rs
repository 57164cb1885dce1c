//! `aten::amin.out`: min over dims.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::extreme;
use crate::util::reduction::{dim_mask, resize_reduced};

/// The min of `self` over `dim` (`[]`: every dim) into `out` of the same dtype. NaN
/// propagates; reducing an empty dimension is an error.
#[kernel("aten::amin.out", accepts = [all])]
pub fn amin_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: &[i64],
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    if out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "amin out dtype differs from the input's",
        ));
    }
    let mask = dim_mask(Some(dim), input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    extreme::<Sel>(input, mask, out, false)
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn minima() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 2], &[1.0f64, -3.0, f64::NAN, 0.5]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Double, &[1, 2]).unwrap();
        amin_out::<AllDtypes>(&ctx, &x, &[0], true, &mut o).unwrap();
        let d = o.data::<f64>().unwrap();
        assert!(d[0].is_nan());
        assert_eq!(d[1], -3.0);
        let mut wrong = TensorBuf::zeros(ScalarType::Float, &[1, 2]).unwrap();
        assert!(amin_out::<AllDtypes>(&ctx, &x, &[0], true, &mut wrong).is_err());
    }
}
