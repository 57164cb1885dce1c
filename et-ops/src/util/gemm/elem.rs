//! [`GemmElem`]: the matrix product generic kernels call inside their dtype switch.

use et_runtime::{KernelContext, KernelResult, Scalar};

use super::{gemm_ref, sgemm, sgemm_in_order, Dot, Mat, MatMut};

/// Element types with a matrix product: f32 takes [`sgemm`], the other floats and the
/// integers [`gemm_ref`]. Generic kernels call `T::gemm` inside their dtype switch.
pub trait GemmElem: Dot {
    /// `C = alpha * A * B + beta * C` (`beta == 0`: C is not read).
    fn gemm(
        ctx: &KernelContext<'_>,
        alpha: Scalar,
        a: Mat<'_, Self>,
        b: Mat<'_, Self>,
        beta: Scalar,
        c: MatMut<'_, Self>,
    ) -> KernelResult;

    /// `C = A * B` with each element summed in k order, each product rounded to `Self`
    /// where the type's own product would fuse (f32: [`sgemm_in_order`]).
    fn product_in_order(
        ctx: &KernelContext<'_>,
        a: Mat<'_, Self>,
        b: Mat<'_, Self>,
        c: MatMut<'_, Self>,
    ) -> KernelResult {
        Self::gemm(ctx, Scalar::Int(1), a, b, Scalar::Int(0), c)
    }
}

impl GemmElem for f32 {
    #[inline]
    fn gemm(
        ctx: &KernelContext<'_>,
        alpha: Scalar,
        a: Mat<'_, f32>,
        b: Mat<'_, f32>,
        beta: Scalar,
        c: MatMut<'_, f32>,
    ) -> KernelResult {
        sgemm(ctx, alpha.to_f64() as f32, a, b, beta.to_f64() as f32, c)
    }

    #[inline]
    fn product_in_order(
        ctx: &KernelContext<'_>,
        a: Mat<'_, f32>,
        b: Mat<'_, f32>,
        c: MatMut<'_, f32>,
    ) -> KernelResult {
        sgemm_in_order(ctx, a, b, c)
    }
}

macro_rules! gemm_by_reference {
    ($($t:ty),*) => {$(
        impl GemmElem for $t {
            #[inline]
            fn gemm(
                _ctx: &KernelContext<'_>,
                alpha: Scalar,
                a: Mat<'_, $t>,
                b: Mat<'_, $t>,
                beta: Scalar,
                c: MatMut<'_, $t>,
            ) -> KernelResult {
                gemm_ref(alpha, a, b, beta, c)
            }
        }
    )*};
}

gemm_by_reference!(
    f64,
    et_runtime::f16,
    et_runtime::bf16,
    u8,
    i8,
    i16,
    i32,
    i64
);
