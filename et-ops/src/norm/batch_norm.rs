//! `aten::_native_batch_norm_legit_no_training.out`: inference batch norm.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM,
};

use super::{check_param, memory_order};
use crate::util::element::Float;
use crate::util::element::OpMath;
#[cfg(target_arch = "x86_64")]
use crate::util::gemm::avx2_fma_available;
use crate::util::reduction::Space;
use crate::util::split::{for_each_band, SPLIT_MIN_ELEMENTS};

/// `out = (x - running_mean) / sqrt(running_var + eps) * weight + bias` per channel
/// (dim 1), folded into one multiply-add per element: `alpha = weight * invstd`,
/// `beta = bias - mean * alpha`, as PyTorch's CPU kernel does. `momentum` is unused
/// without training; the two statistics outs are empty, as PyTorch returns them.
#[kernel("aten::_native_batch_norm_legit_no_training.out", accepts = [floats])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn batch_norm_no_training_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
    _momentum: f64,
    eps: f64,
    out: &mut Tensor,
    save_mean: &mut Tensor,
    save_invstd: &mut Tensor,
) -> KernelResult {
    if input.dim() < 2 {
        return Err(KernelError::invalid("batch norm input needs a channel dim"));
    }
    check_params(input, weight, bias, running_mean, running_var)?;
    if out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "batch norm out dtype differs from the input's",
        ));
    }
    out.resize(input.sizes())?;
    for s in [&mut *save_mean, &mut *save_invstd] {
        if s.dim() != 1 {
            return Err(KernelError::invalid(
                "batch norm statistics outs must be 1-d",
            ));
        }
        s.resize(&[0])?;
    }
    et_switch!(Sel, input.dtype(), @floats, T => bn_impl::<T>(ctx, input, weight, bias, running_mean, running_var, eps, out))
}

#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
fn bn_impl<T: OpMath>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    mean: &Tensor,
    var: &Tensor,
    eps: f64,
    out: &mut Tensor,
) -> KernelResult {
    let (alpha, beta) = fold::<T>(ctx, input.size(1), weight, bias, mean, var, eps)?;
    if input.dim() >= 2
        && input.numel() >= SPLIT_MIN_ELEMENTS
        && ctx.workers() > 1
        && input.is_contiguous()
        && out.is_contiguous()
    {
        return apply_split::<T>(ctx, input, out, alpha, beta);
    }
    // Walk in the input's memory order; operand 2's "offset" is the channel index.
    let (sizes, is, os, dims) = memory_order(input, out);
    let mut cs = [0usize; MAX_DIM];
    for (k, &d) in dims.iter().enumerate().take(input.dim()) {
        cs[k] = usize::from(d == 1);
    }
    let nd = input.dim();
    let space = Space::new(&sizes[..nd], [&is[..nd], &os[..nd], &cs[..nd]]);
    apply_best::<T>(
        &space,
        input.data::<T>()?,
        out.data_mut::<T>()?,
        alpha,
        beta,
    );
    Ok(())
}

/// Checks batch norm's parameters against `input` (at least 2-d, channels in dim 1):
/// each is 1-d, one entry per channel, of the input's dtype.
pub(crate) fn check_params(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
) -> KernelResult {
    let c = input.size(1);
    check_param(
        weight,
        input,
        c,
        "batch norm weight must be 1-d per channel",
    )?;
    check_param(bias, input, c, "batch norm bias must be 1-d per channel")?;
    check_param(
        Some(running_mean),
        input,
        c,
        "batch norm mean must be 1-d per channel",
    )?;
    check_param(
        Some(running_var),
        input,
        c,
        "batch norm var must be 1-d per channel",
    )
}

/// The per-channel `alpha` and `beta` of a folded batch norm.
pub(crate) type Folded<'c, C> = (&'c mut [C], &'c mut [C]);

/// Inference batch norm of `c` channels folded into one multiply-add per element,
/// `y = x * alpha[ch] + beta[ch]`: `alpha = weight * invstd`, `beta = bias - mean * alpha`
/// (in scratch). Parameters must have passed [`check_params`]. Convolutions that absorb a
/// batch norm (`etch::convolution_batch_norm*`) fold it here too, so they compute the
/// same values.
pub(crate) fn fold<'c, T: OpMath>(
    ctx: &'c KernelContext<'_>,
    c: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    mean: &Tensor,
    var: &Tensor,
    eps: f64,
) -> KernelResult<Folded<'c, T::C>> {
    let alpha = ctx.alloc_temp::<T::C>(c)?;
    let beta = ctx.alloc_temp::<T::C>(c)?;
    let (m, v) = (mean.data::<T>()?, var.data::<T>()?);
    let w = weight.map(|t| t.data::<T>()).transpose()?;
    let b = bias.map(|t| t.data::<T>()).transpose()?;
    let one = T::C::c(1.0);
    for ch in 0..c {
        let invstd = one / (v[ch].up() + T::C::c(eps)).sqrt();
        let a = w.map_or(one, |w| w[ch].up()) * invstd;
        alpha[ch] = a;
        beta[ch] = b.map_or(T::C::c(0.0), |b| b[ch].up()) - m[ch].up() * a;
    }
    Ok((alpha, beta))
}

/// [`bn_impl`]'s contiguous case split over the pool: bands of whole channel planes of
/// `out`, each normalized by the same loops as a single-threaded call (so bit for bit the
/// same result).
fn apply_split<T: OpMath>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
    alpha: &[T::C],
    beta: &[T::C],
) -> KernelResult {
    let channels = input.size(1);
    let plane: usize = input.sizes()[2..].iter().product();
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    for_each_band(ctx, y, plane, 0, |start, band| {
        let mut p = start / plane.max(1);
        let mut done = 0;
        // One space per run of planes inside one batch item: plane `p` is channel
        // `p % channels`.
        while done < band.len() {
            let ch = p % channels;
            let planes = (channels - ch)
                .min((band.len() - done) / plane.max(1))
                .max(1);
            let space = Space::new(&[planes, plane], [&[plane, 1], &[plane, 1], &[1, 0]]);
            let (xs, ys) = (&x[start + done..], &mut band[done..]);
            apply_best::<T>(&space, xs, ys, &alpha[ch..], &beta[ch..]);
            done += planes * plane;
            p += planes;
        }
    });
    Ok(())
}

/// [`apply`] compiled for the best instruction set the CPU has.
fn apply_best<T: OpMath>(space: &Space<3>, x: &[T], y: &mut [T], alpha: &[T::C], beta: &[T::C]) {
    // On aarch64 the baseline build is the NEON path (4-wide, nothing wider to pick).
    #[cfg(target_arch = "x86_64")]
    if avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 and FMA (checked by `avx2_fma_available`), all
        // the target-feature function requires.
        unsafe { apply_avx2::<T>(space, x, y, alpha, beta) };
        return;
    }
    apply::<T>(space, x, y, alpha, beta);
}

/// `y = x * alpha[c] + beta[c]` over a [`Space`] whose operand 2's offset is the channel.
/// A macro rather than a function so the per-run closure is defined inside each caller:
/// closures take their target features from the function that defines them, and the
/// closure is where the loop runs.
macro_rules! apply_body {
    ($T:ty, $space:expr, $x:expr, $y:expr, $alpha:expr, $beta:expr) => {{
        let (x, y, alpha, beta) = ($x, $y, $alpha, $beta);
        $space.for_each_run([0, 0, 0], |[xi, yi, ch], len, steps| match steps {
            // One channel along a contiguous run (NCHW planes): vectorizes.
            [1, 1, 0] => {
                let (a, b) = (alpha[ch], beta[ch]);
                for (d, &s) in y[yi..yi + len].iter_mut().zip(&x[xi..xi + len]) {
                    *d = <$T>::down(s.up() * a + b);
                }
            }
            // Channels innermost (channels-last).
            [1, 1, 1] => {
                let (a, b) = (&alpha[ch..ch + len], &beta[ch..ch + len]);
                for (((d, &s), &a), &b) in y[yi..yi + len]
                    .iter_mut()
                    .zip(&x[xi..xi + len])
                    .zip(a)
                    .zip(b)
                {
                    *d = <$T>::down(s.up() * a + b);
                }
            }
            [sx, sy, sc] => {
                for k in 0..len {
                    let ch = ch + k * sc;
                    y[yi + k * sy] = <$T>::down(x[xi + k * sx].up() * alpha[ch] + beta[ch]);
                }
            }
        })
    }};
}

/// [`apply`] compiled for AVX2: the per-element multiply-add is memory- and issue-bound,
/// and 8-wide vectors halve the instruction count against the SSE2 baseline.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn apply_avx2<T: OpMath>(space: &Space<3>, x: &[T], y: &mut [T], alpha: &[T::C], beta: &[T::C]) {
    apply_body!(T, space, x, y, alpha, beta);
}

/// The baseline instantiation of [`apply_body`].
fn apply<T: OpMath>(space: &Space<3>, x: &[T], y: &mut [T], alpha: &[T::C], beta: &[T::C]) {
    apply_body!(T, space, x, y, alpha, beta);
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, ShapeDynamism, TensorBuf};
    use std::vec;

    #[test]
    fn normalizes_per_channel_any_layout() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        // [1, 2, 1, 2]: channel 0 = [1, 3], channel 1 = [10, 20].
        let x = TensorBuf::from_slice(&[1, 2, 1, 2], &[1.0f32, 3.0, 10.0, 20.0]).unwrap();
        let w = TensorBuf::from_slice(&[2], &[2.0f32, 1.0]).unwrap();
        let b = TensorBuf::from_slice(&[2], &[0.5f32, 0.0]).unwrap();
        let mean = TensorBuf::from_slice(&[2], &[1.0f32, 10.0]).unwrap();
        let var = TensorBuf::from_slice(&[2], &[4.0f32, 100.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[1, 2, 1, 2]).unwrap();
        let mut m = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
        let mut r = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
        batch_norm_no_training_out::<AllDtypes>(
            &ctx,
            &x,
            Some(&w),
            Some(&b),
            &mean,
            &var,
            0.1,
            0.0,
            &mut out,
            &mut m,
            &mut r,
        )
        .unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[0.5, 2.5, 0.0, 1.0]);

        // Channels-last, no affine parameters.
        let mut xl = TensorBuf::with_layout(
            ScalarType::Float,
            &[1, 2, 1, 2],
            &[0, 2, 3, 1],
            ShapeDynamism::Static,
        )
        .unwrap();
        xl.data_mut::<f32>()
            .unwrap()
            .copy_from_slice(&[1.0, 10.0, 3.0, 20.0]);
        let mut ol = TensorBuf::with_layout(
            ScalarType::Float,
            &[1, 2, 1, 2],
            &[0, 2, 3, 1],
            ShapeDynamism::Static,
        )
        .unwrap();
        batch_norm_no_training_out::<AllDtypes>(
            &ctx, &xl, None, None, &mean, &var, 0.1, 0.0, &mut ol, &mut m, &mut r,
        )
        .unwrap();
        assert_eq!(ol.data::<f32>().unwrap(), &[0.0, 0.0, 1.0, 1.0]);

        let bad = TensorBuf::from_slice(&[3], &[1.0f32, 1.0, 1.0]).unwrap();
        assert!(batch_norm_no_training_out::<AllDtypes>(
            &ctx,
            &x,
            Some(&bad),
            None,
            &mean,
            &var,
            0.1,
            0.0,
            &mut out,
            &mut m,
            &mut r
        )
        .is_err());
    }
}
