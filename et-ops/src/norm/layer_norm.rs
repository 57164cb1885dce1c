//! `aten::native_layer_norm.out`: layer normalization with its statistics.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM,
};

use crate::util::element::Float;
use crate::util::element::OpMath;
use crate::util::reduction::{split, strides_over_input};

/// Normalizes `input` over its trailing `normalized_shape` dims by their mean and biased
/// variance, then applies the elementwise `weight` and `bias` (of `normalized_shape`).
/// `mean` and `rstd` receive the statistics with the normalized dims kept as size 1.
#[kernel("aten::native_layer_norm.out", accepts = [floats])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn native_layer_norm_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    out: &mut Tensor,
    mean: &mut Tensor,
    rstd: &mut Tensor,
) -> KernelResult {
    let nd = input.dim();
    let k = normalized_shape.len();
    if k == 0 || k > nd {
        return Err(KernelError::invalid(
            "layer norm shape does not fit the input",
        ));
    }
    let lead = nd - k;
    let sizes = input.sizes();
    for (i, &s) in normalized_shape.iter().enumerate() {
        if usize::try_from(s).ok() != Some(sizes[lead + i]) {
            return Err(KernelError::invalid(
                "layer norm shape does not match the input's trailing dims",
            ));
        }
    }
    let dt = input.dtype();
    for p in [weight, bias].into_iter().flatten() {
        if p.dtype() != dt || p.sizes() != &sizes[lead..] {
            return Err(KernelError::invalid(
                "layer norm weight and bias must have the normalized shape",
            ));
        }
    }
    if out.dtype() != dt || mean.dtype() != dt || rstd.dtype() != dt {
        return Err(KernelError::invalid(
            "layer norm outs must have the input's dtype",
        ));
    }
    out.resize(sizes)?;
    let mut ssz = [1usize; MAX_DIM];
    ssz[..lead].copy_from_slice(&sizes[..lead]);
    mean.resize(&ssz[..nd])?;
    rstd.resize(&ssz[..nd])?;
    et_switch!(Sel, dt, @floats, T => ln_impl::<T>(input, lead, weight, bias, eps, out, mean, rstd))
}

#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
fn ln_impl<T: OpMath>(
    input: &Tensor,
    lead: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    out: &mut Tensor,
    mean: &mut Tensor,
    rstd: &mut Tensor,
) -> KernelResult {
    let nd = input.dim();
    let mask = crate::util::reduction::all_dims(nd) & !crate::util::reduction::all_dims(lead);
    // Operands: input, out, mean, rstd, weight, bias, strides per input dim.
    let ms = strides_over_input(mean, mask, nd);
    let rs = strides_over_input(rstd, mask, nd);
    let mut wst = [0usize; MAX_DIM];
    let mut bst = [0usize; MAX_DIM];
    if let Some(w) = weight {
        wst[lead..nd].copy_from_slice(w.strides());
    }
    if let Some(b) = bias {
        bst[lead..nd].copy_from_slice(b.strides());
    }
    let (outer, inner) = split(
        input.sizes(),
        [
            input.strides(),
            out.strides(),
            &ms[..nd],
            &rs[..nd],
            &wst[..nd],
            &bst[..nd],
        ],
        mask,
    );
    let count = inner.numel() as f64;
    let x = input.data::<T>()?;
    let w = weight.map(|t| t.data::<T>()).transpose()?;
    let b = bias.map(|t| t.data::<T>()).transpose()?;
    let mdata = mean.data_mut::<T>()?;
    let rdata = rstd.data_mut::<T>()?;
    let y = out.data_mut::<T>()?;
    outer.for_each([0; 6], |[xb, yb, mi, ri, _, _]| {
        let mut sum = 0.0f64;
        inner.for_each([xb, 0, 0, 0, 0, 0], |[xi, ..]| sum += x[xi].to_f64());
        let mu = sum / count;
        let mut sq = 0.0f64;
        inner.for_each([xb, 0, 0, 0, 0, 0], |[xi, ..]| {
            let d = x[xi].to_f64() - mu;
            sq += d * d;
        });
        let inv = 1.0 / libm::sqrt(sq / count + eps);
        mdata[mi] = T::down(T::C::c(mu));
        rdata[ri] = T::down(T::C::c(inv));
        let (mu_c, inv_c) = (T::C::c(mu), T::C::c(inv));
        inner.for_each([xb, yb, 0, 0, 0, 0], |[xi, yi, _, _, wi, bi]| {
            let mut v = (x[xi].up() - mu_c) * inv_c;
            if let Some(w) = w {
                v = v * w[wi].up();
            }
            if let Some(b) = b {
                v += b[bi].up();
            }
            y[yi] = T::down(v);
        });
    });
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
    fn rows() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 2], &[1.0f32, 3.0, 5.0, 5.0]).unwrap();
        let w = TensorBuf::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
        let b = TensorBuf::from_slice(&[2], &[0.0f32, 1.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
        let mut m = TensorBuf::zeros(ScalarType::Float, &[2, 1]).unwrap();
        let mut r = TensorBuf::zeros(ScalarType::Float, &[2, 1]).unwrap();
        native_layer_norm_out::<AllDtypes>(
            &ctx,
            &x,
            &[2],
            Some(&w),
            Some(&b),
            0.0,
            &mut out,
            &mut m,
            &mut r,
        )
        .unwrap();
        assert_eq!(out.data::<f32>().unwrap()[..2], [-1.0, 3.0]);
        assert_eq!(m.data::<f32>().unwrap(), &[2.0, 5.0]);
        assert_eq!(r.data::<f32>().unwrap()[0], 1.0);
        // Constant row with eps = 0: 0 * inf = NaN, as in PyTorch.
        assert!(out.data::<f32>().unwrap()[2].is_nan());
        assert!(native_layer_norm_out::<AllDtypes>(
            &ctx,
            &x,
            &[3],
            None,
            None,
            0.0,
            &mut out,
            &mut m,
            &mut r
        )
        .is_err());
    }
}
