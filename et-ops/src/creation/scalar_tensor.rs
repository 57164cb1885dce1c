//! A 0-dim tensor holding a scalar.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_bytes;
use crate::util::layout::fill_bytes;

/// `out = torch.scalar_tensor(s, dtype=out.dtype)`: the value must fit the dtype
/// (PyTorch's `fill_` check; NaN and infinities are fine for floats).
#[kernel("aten::scalar_tensor.out", accepts = [all])]
pub fn scalar_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    s: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    out.resize(&[])?;
    let elem = et_switch!(Sel, out.dtype(), @all, T => scalar_bytes::<T>(s))?;
    let width = out.dtype().element_size();
    fill_bytes(out.bytes_mut()?, &elem[..width])
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn holds_the_value() {
        let mut scratch = std::vec![0u8; 1 << 10];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
        scalar_tensor_out::<AllDtypes>(&ctx, Scalar::Double(f64::NEG_INFINITY), &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[f32::NEG_INFINITY]);
        let mut o = TensorBuf::zeros(ScalarType::Char, &[]).unwrap();
        scalar_tensor_out::<AllDtypes>(&ctx, Scalar::Int(-7), &mut o).unwrap();
        assert_eq!(o.data::<i8>().unwrap(), &[-7]);
        assert!(scalar_tensor_out::<AllDtypes>(&ctx, Scalar::Int(200), &mut o).is_err());
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1]).unwrap();
        assert!(scalar_tensor_out::<AllDtypes>(&ctx, Scalar::Int(1), &mut o).is_err());
    }
}
