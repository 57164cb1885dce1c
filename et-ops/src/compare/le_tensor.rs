//! `aten::le.Tensor_out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{compare_tensors, Cmp};

/// `<=`.
pub(crate) struct Le;

impl Cmp for Le {
    #[inline(always)]
    fn test<C: PartialOrd>(x: C, y: C) -> bool {
        x <= y
    }
}

/// Elementwise `a <= b` (less than or equal to) with broadcasting and type promotion, as bools.
#[kernel("aten::le.Tensor_out", accepts = [all])]
pub fn le_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    compare_tensors::<Le, Sel>(a, b, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn compares() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[1.0f32, 2.0, 3.0, f32::NAN]).unwrap();
            let b = TensorBuf::from_slice(&[], &[2.0f32]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Bool, &[4]).unwrap();
            le_tensor_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            assert_eq!(
                out.data::<Bool>().unwrap(),
                &[Bool(1), Bool(1), Bool(0), Bool(0)]
            );
            let ai = TensorBuf::from_slice(&[3], &[1i32, 2, 3]).unwrap();
            let bi = TensorBuf::from_slice(&[1], &[2i64]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Bool, &[3]).unwrap();
            le_tensor_out::<AllDtypes>(ctx, &ai, &bi, &mut oi).unwrap();
            assert_eq!(oi.data::<Bool>().unwrap(), &[Bool(1), Bool(1), Bool(0)]);
        });
    }
}
