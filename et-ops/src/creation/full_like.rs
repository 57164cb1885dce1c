//! A tensor shaped like another, filled with one value.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_bytes;
use crate::util::layout::fill_bytes;

/// `out = torch.full_like(self, fill_value)` in `out`'s dtype and dim order; the
/// memory format argument is carried by `out`'s layout.
#[kernel("aten::full_like.out", accepts = [all])]
pub fn full_like_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    fill_value: Scalar,
    _memory_format: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    out.resize(input.sizes())?;
    let elem = et_switch!(Sel, out.dtype(), @all, T => scalar_bytes::<T>(fill_value))?;
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
    fn fills_like() {
        let mut scratch = std::vec![0u8; 1 << 10];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Int, &[2, 3]).unwrap();
        full_like_out::<AllDtypes>(&ctx, &x, Scalar::Int(7), None, &mut o).unwrap();
        assert_eq!(o.data::<i32>().unwrap(), &[7; 6]);
        let mut h = TensorBuf::zeros(ScalarType::Half, &[2, 3]).unwrap();
        full_like_out::<AllDtypes>(&ctx, &x, Scalar::Double(0.1), Some(1), &mut h).unwrap();
        assert_eq!(
            h.data::<et_runtime::f16>().unwrap()[5],
            et_runtime::f16::from_f64(0.1)
        );
    }
}
