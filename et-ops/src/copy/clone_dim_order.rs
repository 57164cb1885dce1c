//! Copy into a given dim order (`Tensor.clone(memory_format=...)`).

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use crate::util::layout::{check_dim_order_arg, check_same_dtype, copy_same_shape};

/// `out = self.clone()` laid out in `dim_order` (which must be `out`'s dim order).
#[kernel("dim_order_ops::_clone_dim_order.out")]
pub fn clone_dim_order_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    _non_blocking: bool,
    dim_order: Option<&[i64]>,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    check_dim_order_arg(dim_order, out)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, ShapeDynamism, TensorBuf};

    #[test]
    fn clones_to_channels_last_and_back() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let v: std::vec::Vec<u8> = (0..12).collect();
        let x = TensorBuf::from_slice(&[1, 3, 2, 2], &v).unwrap();
        let mut cl = TensorBuf::with_layout(
            ScalarType::Byte,
            &[1, 3, 2, 2],
            &[0, 2, 3, 1],
            ShapeDynamism::Static,
        )
        .unwrap();
        clone_dim_order_out(&ctx, &x, false, Some(&[0, 2, 3, 1]), &mut cl).unwrap();
        assert_eq!(
            cl.data::<u8>().unwrap(),
            &[0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
        );
        let mut back = TensorBuf::zeros(ScalarType::Byte, &[1, 3, 2, 2]).unwrap();
        clone_dim_order_out(&ctx, &cl, false, Some(&[0, 1, 2, 3]), &mut back).unwrap();
        assert_eq!(back.data::<u8>().unwrap(), &v[..]);
        let mut wrong = TensorBuf::zeros(ScalarType::Char, &[1, 3, 2, 2]).unwrap();
        assert!(clone_dim_order_out(&ctx, &x, false, None, &mut wrong).is_err());
    }
}
