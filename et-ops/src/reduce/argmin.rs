//! `aten::argmin.out`: index of the smallest element.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::arg_extreme;
use crate::util::reduction::{dim_mask_one, resize_reduced};

/// The index of the smallest element of `self` along `dim` (`None`: of the flattened
/// tensor) into an int64 `out`. Ties keep the first occurrence; the first NaN wins.
#[kernel("aten::argmin.out", accepts = [reals])]
pub fn argmin_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    if out.dtype() != ScalarType::Long {
        return Err(KernelError::invalid("argmin out must be int64"));
    }
    let mask = dim_mask_one(dim, input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    arg_extreme::<Sel>(input, mask, out, false)
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ShapeDynamism, TensorBuf};
    use std::vec;

    #[test]
    fn indices_channels_last() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        // [1, 2, 1, 2] channels-last: memory order (h, w, c): logical x[0, c, 0, w].
        let mut x = TensorBuf::with_layout(
            ScalarType::Int,
            &[1, 2, 1, 2],
            &[0, 2, 3, 1],
            ShapeDynamism::Static,
        )
        .unwrap();
        // memory: (w0,c0)=3 (w0,c1)=1 (w1,c0)=-2 (w1,c1)=7
        x.data_mut::<i32>().unwrap().copy_from_slice(&[3, 1, -2, 7]);
        let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 2, 1]).unwrap();
        argmin_out::<AllDtypes>(&ctx, &x, Some(-1), false, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[1, 0]);
    }
}
