//! `aten::copy_`: overwrite a tensor with another's values, in place.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::broadcast_copy;

/// `self.copy_(src)`: `self` keeps its sizes and dtype and receives `src` broadcast to
/// those sizes and cast to that dtype (C++ casts). Programs call this after the reinplace
/// pass turns a functional `copy` on a fresh clone into an in-place one.
#[kernel("aten::copy_")]
pub fn copy_inplace<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    target: &mut Tensor,
    src: &Tensor,
    _non_blocking: bool,
) -> KernelResult {
    broadcast_copy::<Sel>(target, src)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn overwrites_in_place() {
        with_ctx(|ctx| {
            let mut t = TensorBuf::zeros(ScalarType::Int, &[2, 2]).unwrap();
            let src = TensorBuf::from_slice(&[2], &[7.5f32, -1.0]).unwrap();
            copy_inplace::<AllDtypes>(ctx, &mut t, &src, false).unwrap();
            assert_eq!(t.data::<i32>().unwrap(), &[7, -1, 7, -1]);
        });
    }
}
