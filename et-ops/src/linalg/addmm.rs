//! `aten::addmm.out`: `beta * self + alpha * (mat1 @ mat2)`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use super::{mat_at, mat_mut_at};
use crate::util::gemm::GemmElem;

/// `out = beta * self + alpha * (mat1 @ mat2)` with `self` broadcast to `[n, p]` (0-d,
/// `[p]`, `[1, p]`, `[n, 1]` or `[n, p]`). As in PyTorch, `beta == 0` ignores `self`
/// entirely (NaN or inf in it do not propagate). Integer tensors take integer `alpha` and
/// `beta` and wrap around, as PyTorch's integer addmm.
#[kernel("aten::addmm.out", accepts = [reals])]
pub fn addmm_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    a: &Tensor,
    b: &Tensor,
    beta: Scalar,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    if a.dim() != 2 || b.dim() != 2 {
        return Err(KernelError::invalid("addmm expects 2-D matrices"));
    }
    if a.size(1) != b.size(0) {
        return Err(KernelError::invalid("addmm inner dimensions differ"));
    }
    let dt = a.dtype();
    if b.dtype() != dt || input.dtype() != dt || out.dtype() != dt {
        return Err(KernelError::invalid("addmm tensors must share one dtype"));
    }
    let (n, p) = (a.size(0), b.size(1));
    let (bs0, bs1) = bias_strides(input, n, p)?;
    if !dt.is_floating() && (beta.is_floating() || alpha.is_floating()) {
        // PyTorch refuses a fractional alpha or beta for integer tensors.
        return Err(KernelError::invalid(
            "addmm alpha and beta must be integers for integer tensors",
        ));
    }
    out.resize(&[n, p])?;
    et_switch!(Sel, dt, @reals, T => addmm_impl::<T>(ctx, input, (bs0, bs1), a, b, beta, alpha, out))
}

/// Strides that read `self` as an `[n, p]` matrix (0 along broadcast dims).
fn bias_strides(t: &Tensor, n: usize, p: usize) -> KernelResult<(usize, usize)> {
    let bad = || KernelError::invalid("addmm input cannot broadcast to the product's shape");
    let st = t.strides();
    let along = |size: usize, stride: usize, want: usize| -> KernelResult<usize> {
        if size == want {
            Ok(if want == 1 { 0 } else { stride })
        } else if size == 1 {
            Ok(0)
        } else {
            Err(bad())
        }
    };
    match t.dim() {
        0 => Ok((0, 0)),
        1 => Ok((0, along(t.size(0), st[0], p)?)),
        2 => Ok((along(t.size(0), st[0], n)?, along(t.size(1), st[1], p)?)),
        _ => Err(bad()),
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the operator's arguments"
)]
fn addmm_impl<T: GemmElem>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    (bs0, bs1): (usize, usize),
    a: &Tensor,
    b: &Tensor,
    beta: Scalar,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    if beta.to_f64() != 0.0 && out.numel() > 0 {
        // Broadcast `self` into `out` so the gemm can accumulate onto it with `beta`.
        let src = input.data::<T>()?;
        let (os0, os1) = (out.strides()[0], out.strides()[1]);
        let (n, p) = (out.size(0), out.size(1));
        let dst = out.data_mut::<T>()?;
        for i in 0..n {
            for j in 0..p {
                let v = *src
                    .get(i * bs0 + j * bs1)
                    .ok_or(KernelError::invalid("addmm input is too small"))?;
                dst[i * os0 + j * os1] = v;
            }
        }
    }
    let am = mat_at::<T>(a, 0, 1, 0)?;
    let bm = mat_at::<T>(b, 0, 1, 0)?;
    T::gemm(ctx, alpha, am, bm, beta, mat_mut_at::<T>(out, 0, 1, 0)?)
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn bias_broadcast_and_scalars() {
        let mut scratch = vec![0u8; 1 << 16];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let a = TensorBuf::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let id = TensorBuf::from_slice(&[2, 2], &[1.0f32, 0.0, 0.0, 1.0]).unwrap();
        let bias = TensorBuf::from_slice(&[2], &[10.0f32, 20.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
        addmm_out::<AllDtypes>(
            &ctx,
            &bias,
            &a,
            &id,
            Scalar::Double(0.5),
            Scalar::Int(2),
            &mut out,
        )
        .unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[7.0, 14.0, 11.0, 18.0]);

        // Column bias [2, 1].
        let col = TensorBuf::from_slice(&[2, 1], &[1.0f32, -1.0]).unwrap();
        addmm_out::<AllDtypes>(
            &ctx,
            &col,
            &a,
            &id,
            Scalar::Int(1),
            Scalar::Int(1),
            &mut out,
        )
        .unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[2.0, 3.0, 2.0, 3.0]);

        // beta = 0 ignores NaN in self.
        let nan = TensorBuf::from_slice(&[], &[f32::NAN]).unwrap();
        addmm_out::<AllDtypes>(
            &ctx,
            &nan,
            &a,
            &id,
            Scalar::Int(0),
            Scalar::Int(1),
            &mut out,
        )
        .unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);

        let bad = TensorBuf::from_slice(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
        assert!(addmm_out::<AllDtypes>(
            &ctx,
            &bad,
            &a,
            &id,
            Scalar::Int(1),
            Scalar::Int(1),
            &mut out
        )
        .is_err());
    }

    #[test]
    fn float64() {
        let mut scratch = vec![0u8; 1 << 16];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let a = TensorBuf::from_slice(&[1, 2], &[1.0f64, 2.0]).unwrap();
        let b = TensorBuf::from_slice(&[2, 1], &[3.0f64, 4.0]).unwrap();
        let s = TensorBuf::from_slice(&[1], &[1.0f64]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Double, &[1, 1]).unwrap();
        addmm_out::<AllDtypes>(&ctx, &s, &a, &b, Scalar::Int(1), Scalar::Int(1), &mut out).unwrap();
        assert_eq!(out.data::<f64>().unwrap(), &[12.0]);
    }
}
