//! `aten::mm.out`: matrix product of two 2-D tensors.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use super::{mat_at, mat_mut_at};
use crate::util::gemm::GemmElem;

/// `out = self @ mat2` for `self: [n, m]`, `mat2: [m, p]`, `out: [n, p]`, all one real
/// dtype. f32 runs the blocked SIMD gemm; f16 and f64 a reference loop (f16 accumulates
/// in f64 and rounds once); integers the same loop wrapping around, as PyTorch's integer
/// matmul does.
#[kernel("aten::mm.out", accepts = [reals])]
pub fn mm_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    if a.dim() != 2 || b.dim() != 2 {
        return Err(KernelError::invalid("mm expects 2-D tensors"));
    }
    if a.size(1) != b.size(0) {
        return Err(KernelError::invalid("mm inner dimensions differ"));
    }
    if a.dtype() != b.dtype() || a.dtype() != out.dtype() {
        return Err(KernelError::invalid("mm tensors must share one dtype"));
    }
    out.resize(&[a.size(0), b.size(1)])?;
    et_switch!(Sel, a.dtype(), @reals, T => mm_impl::<T>(ctx, a, b, out))
}

fn mm_impl<T: GemmElem>(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let am = mat_at::<T>(a, 0, 1, 0)?;
    let bm = mat_at::<T>(b, 0, 1, 0)?;
    T::gemm(
        ctx,
        Scalar::Int(1),
        am,
        bm,
        Scalar::Int(0),
        mat_mut_at::<T>(out, 0, 1, 0)?,
    )
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, ShapeDynamism, TensorBuf};
    use std::vec;

    #[test]
    fn small_products() {
        let mut scratch = vec![0u8; 1 << 16];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let a = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let b = TensorBuf::from_slice(&[3, 2], &[7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
        mm_out::<AllDtypes>(&ctx, &a, &b, &mut out).unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[58.0, 64.0, 139.0, 154.0]);

        let a = TensorBuf::from_slice(&[2, 2], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Double, &[2, 2]).unwrap();
        mm_out::<AllDtypes>(&ctx, &a, &a, &mut out).unwrap();
        assert_eq!(out.data::<f64>().unwrap(), &[7.0, 10.0, 15.0, 22.0]);
    }

    #[test]
    fn transposed_layout_and_errors() {
        let mut scratch = vec![0u8; 1 << 16];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        // `a` is [2, 3] stored column-major: memory holds a^T row-major.
        let mut a =
            TensorBuf::with_layout(ScalarType::Float, &[2, 3], &[1, 0], ShapeDynamism::Static)
                .unwrap();
        a.data_mut::<f32>()
            .unwrap()
            .copy_from_slice(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        let b = TensorBuf::from_slice(&[3, 1], &[1.0f32, 1.0, 1.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 1]).unwrap();
        mm_out::<AllDtypes>(&ctx, &a, &b, &mut out).unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[6.0, 15.0]);

        let mut bad = TensorBuf::zeros(ScalarType::Float, &[3, 3]).unwrap();
        assert!(mm_out::<AllDtypes>(&ctx, &a, &b, &mut bad).is_err());
        assert!(mm_out::<AllDtypes>(&ctx, &a, &a, &mut out).is_err());
        // Integers wrap around: 16 * 16 = 256 is 0 in u8.
        let i = TensorBuf::from_slice(&[1, 1], &[16u8]).unwrap();
        let mut io = TensorBuf::zeros(ScalarType::Byte, &[1, 1]).unwrap();
        mm_out::<AllDtypes>(&ctx, &i, &i, &mut io).unwrap();
        assert_eq!(io.data::<u8>().unwrap(), &[0]);
        let t = TensorBuf::from_slice(&[1, 1], &[et_runtime::Bool::from(true)]).unwrap();
        let mut to = TensorBuf::zeros(ScalarType::Bool, &[1, 1]).unwrap();
        assert!(mm_out::<AllDtypes>(&ctx, &t, &t, &mut to).is_err());
    }
}
