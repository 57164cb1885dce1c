//! `aten::bmm.out`: batched matrix product of two 3-D tensors.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::{mat_at, mat_mut_at};
use crate::util::gemm::GemmElem;

/// `out[i] = self[i] @ mat2[i]` for `self: [b, n, m]`, `mat2: [b, m, p]`,
/// `out: [b, n, p]`, all one real dtype; each batch is one gemm (wrapping for integers).
///
/// float32 sums each element's products in order, each rounded
/// (`util::gemm::sgemm_in_order`): `bmm` is the product of
/// decomposed attention, whose softmax turns a last-bit difference in a large score into
/// a visible one, and PyTorch's decomposition and ExecuTorch's portable `bmm` sum so.
#[kernel("aten::bmm.out", accepts = [reals])]
pub fn bmm_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    if a.dim() != 3 || b.dim() != 3 {
        return Err(KernelError::invalid("bmm expects 3-D tensors"));
    }
    if a.size(0) != b.size(0) {
        return Err(KernelError::invalid("bmm batch sizes differ"));
    }
    if a.size(2) != b.size(1) {
        return Err(KernelError::invalid("bmm inner dimensions differ"));
    }
    if a.dtype() != b.dtype() || a.dtype() != out.dtype() {
        return Err(KernelError::invalid("bmm tensors must share one dtype"));
    }
    out.resize(&[a.size(0), a.size(1), b.size(2)])?;
    et_switch!(Sel, a.dtype(), @reals, T => bmm_impl::<T>(ctx, a, b, out))
}

fn bmm_impl<T: GemmElem>(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let (sa, sb, so) = (a.strides()[0], b.strides()[0], out.strides()[0]);
    for i in 0..a.size(0) {
        let am = mat_at::<T>(a, 1, 2, i * sa)?;
        let bm = mat_at::<T>(b, 1, 2, i * sb)?;
        T::product_in_order(ctx, am, bm, mat_mut_at::<T>(out, 1, 2, i * so)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn batches() {
        let mut scratch = vec![0u8; 1 << 16];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let a = TensorBuf::from_slice(&[2, 1, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let b = TensorBuf::from_slice(&[2, 2, 1], &[1.0f32, 1.0, 2.0, -1.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 1, 1]).unwrap();
        bmm_out::<AllDtypes>(&ctx, &a, &b, &mut out).unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[3.0, 2.0]);
        let mut out = TensorBuf::zeros(ScalarType::Double, &[2, 1, 1]).unwrap();
        assert!(bmm_out::<AllDtypes>(&ctx, &a, &b, &mut out).is_err());
        // Empty batch.
        let e = TensorBuf::zeros(ScalarType::Float, &[0, 1, 2]).unwrap();
        let f = TensorBuf::zeros(ScalarType::Float, &[0, 2, 1]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[0, 1, 1]).unwrap();
        bmm_out::<AllDtypes>(&ctx, &e, &f, &mut out).unwrap();
    }
}
