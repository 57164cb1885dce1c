//! `aten::_to_copy.out`: dtype conversion (the legacy, non-dim-order export flow).

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::convert::{loader, storer};
use crate::util::layout::copy_same_shape;

/// `out = self.to(out.dtype)`, laid out in `out`'s dim order (which carries the memory
/// format). Conversions follow C++ casts as PyTorch does: float to integer truncates
/// toward zero, integer narrowing wraps, anything to bool is "non-zero" (NaN is true).
#[kernel("aten::_to_copy.out")]
pub fn to_copy_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    _non_blocking: bool,
    _memory_format: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    out.resize(input.sizes())?;
    if input.dtype() == out.dtype() {
        return copy_same_shape(out, input, None, None);
    }
    let from = et_switch!(Sel, input.dtype(), @all, T => Ok(loader::<T>()))?;
    let to = et_switch!(Sel, out.dtype(), @all, T => Ok(storer::<T>()))?;
    copy_same_shape(out, input, Some(from), Some(to))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn converts() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[4], &[1.7f32, -2.9, f32::NAN, 0.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            to_copy_out::<AllDtypes>(ctx, &x, false, None, &mut o).unwrap();
            assert_eq!(&o.data::<i32>().unwrap()[..2], &[1, -2]);
            let mut b = TensorBuf::zeros(ScalarType::Bool, &[4]).unwrap();
            to_copy_out::<AllDtypes>(ctx, &x, false, None, &mut b).unwrap();
            assert_eq!(b.data::<Bool>().unwrap(), &[1u8, 1, 1, 0].map(Bool));
        });
    }
}
