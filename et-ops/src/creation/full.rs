//! A tensor of a given shape filled with one value.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor, MAX_DIM};

use crate::util::convert::scalar_bytes;
use crate::util::layout::{fill_bytes, sizes_from_i64};

/// `out = torch.full(size, fill_value, dtype=out.dtype)`: the value must fit the dtype.
#[kernel("aten::full.out", accepts = [all])]
pub fn full_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    size: &[i64],
    fill_value: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let mut sizes = [0usize; MAX_DIM];
    let n = sizes_from_i64(size, &mut sizes)?;
    out.resize(&sizes[..n])?;
    let elem = et_switch!(Sel, out.dtype(), @all, T => scalar_bytes::<T>(fill_value))?;
    let width = out.dtype().element_size();
    fill_bytes(out.bytes_mut()?, &elem[..width])
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, Bool, ScalarType, TensorBuf};

    #[test]
    fn fills() {
        let mut scratch = std::vec![0u8; 1 << 10];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let mut o = TensorBuf::zeros(ScalarType::Bool, &[2, 2]).unwrap();
        full_out::<AllDtypes>(&ctx, &[2, 2], Scalar::Bool(true), &mut o).unwrap();
        assert_eq!(o.data::<Bool>().unwrap(), &[Bool(1); 4]);
        let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
        full_out::<AllDtypes>(&ctx, &[3], Scalar::Double(2.5), &mut o).unwrap();
        assert_eq!(o.data::<f64>().unwrap(), &[2.5; 3]);
        let mut o = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
        full_out::<AllDtypes>(&ctx, &[3], Scalar::Double(2.5), &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[2; 3]);
        assert!(full_out::<AllDtypes>(&ctx, &[4], Scalar::Int(1), &mut o).is_err());
        assert!(full_out::<AllDtypes>(&ctx, &[-3], Scalar::Int(1), &mut o).is_err());
    }
}
