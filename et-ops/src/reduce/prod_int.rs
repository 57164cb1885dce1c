//! `aten::prod.int_out`: the product along a dim.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::prod::prod_over;
use crate::util::reduction::dim_mask_one;

/// `out = self.prod(dim, keepdim, dtype=dtype)`: the product along `dim`, with the result
/// dtype and accumulation rules of `prod.out`.
#[kernel("aten::prod.int_out", accepts = [all])]
pub fn prod_int_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    keepdim: bool,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    let mask = dim_mask_one(Some(dim), input.dim())?;
    prod_over::<Sel>(input, mask, keepdim, dtype, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn products_along_a_dim() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, -1.0, 0.5, 4.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 1]).unwrap();
            prod_int_out::<AllDtypes>(ctx, &x, -1, true, None, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[6.0, -2.0]);
            let mut o0 = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            prod_int_out::<AllDtypes>(ctx, &x, 0, false, None, &mut o0).unwrap();
            assert_eq!(o0.data::<f32>().unwrap(), &[-1.0, 1.0, 12.0]);
        });
    }
}
