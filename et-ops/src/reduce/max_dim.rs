//! `aten::max.dim_max`: the largest value along a dim, with its index.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::indexed_extreme;
use crate::util::accumulate::Accumulator;
use crate::util::reduction::{dim_mask_one, resize_reduced};

/// `(max, max_indices) = self.max(dim, keepdim)`: the largest element along `dim`
/// into `max` (the input's dtype) and its index along `dim` into the int64
/// `max_indices`. The first of equal elements wins; NaN propagates (the first NaN's
/// index). Reducing an empty dimension is an error.
#[kernel("aten::max.dim_max", accepts = [all])]
pub fn max_dim_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    keepdim: bool,
    max: &mut Tensor,
    max_indices: &mut Tensor,
) -> KernelResult {
    if max.dtype() != input.dtype() || max_indices.dtype() != ScalarType::Long {
        return Err(KernelError::invalid(
            "max.dim outs must be the input's dtype and int64",
        ));
    }
    let mask = dim_mask_one(Some(dim), input.dim())?;
    resize_reduced(input, mask, keepdim, max)?;
    resize_reduced(input, mask, keepdim, max_indices)?;
    let acc = Accumulator::new::<Sel>(input.dtype())?;
    indexed_extreme(&acc, input, mask, max, max_indices, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn largest_with_index() {
        with_ctx(|ctx| {
            let x =
                TensorBuf::from_slice(&[2, 3], &[1.0f32, 3.0, 3.0, -1.0, f32::NAN, -5.0]).unwrap();
            let mut v = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            let mut i = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
            max_dim_out::<AllDtypes>(ctx, &x, -1, false, &mut v, &mut i).unwrap();
            let v = v.data::<f32>().unwrap();
            assert_eq!(v[0], 3.0);
            assert!(v[1].is_nan());
            assert_eq!(i.data::<i64>().unwrap(), &[1, 1]);
            let mut vk = TensorBuf::zeros(ScalarType::Float, &[1, 3]).unwrap();
            let mut ik = TensorBuf::zeros(ScalarType::Long, &[1, 3]).unwrap();
            max_dim_out::<AllDtypes>(ctx, &x, 0, true, &mut vk, &mut ik).unwrap();
            assert_eq!(ik.data::<i64>().unwrap(), &[0, 1, 0]);
            let e = TensorBuf::zeros(ScalarType::Float, &[2, 0]).unwrap();
            let mut ve = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            let mut ie = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
            assert!(max_dim_out::<AllDtypes>(ctx, &e, 1, false, &mut ve, &mut ie).is_err());
        });
    }
}
