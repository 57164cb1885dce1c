//! `aten::copy.out`: the functional form of `self.copy_(src)`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::broadcast_copy;
use crate::util::layout::check_same_dtype;

/// `out = self.clone().copy_(src)`: `self`'s sizes and dtype (which `out` must have),
/// holding `src` broadcast to those sizes and cast to that dtype (C++ casts: float to
/// integer truncates, anything to bool is "non-zero"). `self`'s values are not used.
#[kernel("aten::copy.out")]
pub fn copy_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    src: &Tensor,
    _non_blocking: bool,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    broadcast_copy::<Sel>(out, src)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn broadcasts_and_casts() {
        with_ctx(|ctx| {
            let x = TensorBuf::zeros(ScalarType::Long, &[2, 3]).unwrap();
            let src = TensorBuf::from_slice(&[3], &[1.9f64, -2.9, 3.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 3]).unwrap();
            copy_out::<AllDtypes>(ctx, &x, &src, false, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[1, -2, 3, 1, -2, 3]);
            let col = TensorBuf::from_slice(&[2, 1], &[5i64, 6]).unwrap();
            copy_out::<AllDtypes>(ctx, &x, &col, false, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[5, 5, 5, 6, 6, 6]);
            let bad = TensorBuf::from_slice(&[2], &[1i64, 2]).unwrap();
            assert!(copy_out::<AllDtypes>(ctx, &x, &bad, false, &mut o).is_err());
        });
    }
}
