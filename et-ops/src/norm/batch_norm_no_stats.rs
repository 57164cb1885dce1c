//! `aten::_native_batch_norm_legit.no_stats_out`: batch norm over the batch's own
//! statistics, without running statistics (instance norm exports as this on a
//! `[1, N*C, *]` view).

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::check_param;
use crate::util::accumulate::Accumulator;
use crate::util::convert::Val;
use crate::util::reduction::{split, unsupported_dtype, Gathered};

/// For each channel `c` (dim 1) of `input`: `mean` and biased `var` over every other dim,
/// `out = (x - mean) / sqrt(var + eps) * weight[c] + bias[c]`, `save_mean[c] = mean`,
/// `save_invstd[c] = 1 / sqrt(var + eps)`. Statistics are computed in f64 (two passes).
/// `training` and `momentum` change nothing without running statistics: the batch's
/// statistics are always used, as ExecuTorch's portable kernel does.
#[kernel("aten::_native_batch_norm_legit.no_stats_out", accepts = [floats])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn batch_norm_no_stats_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    _training: bool,
    _momentum: f64,
    eps: f64,
    out: &mut Tensor,
    save_mean: &mut Tensor,
    save_invstd: &mut Tensor,
) -> KernelResult {
    if input.dim() < 2 {
        return Err(KernelError::invalid("batch norm input needs a channel dim"));
    }
    let c = input.size(1);
    check_param(
        weight,
        input,
        c,
        "batch norm weight must be 1-d per channel",
    )?;
    check_param(bias, input, c, "batch norm bias must be 1-d per channel")?;
    let dt = input.dtype();
    if out.dtype() != dt || save_mean.dtype() != dt || save_invstd.dtype() != dt {
        return Err(KernelError::invalid(
            "batch norm outs must have the input's dtype",
        ));
    }
    out.resize(input.sizes())?;
    save_mean.resize(&[c])?;
    save_invstd.resize(&[c])?;
    if !dt.is_floating() {
        return Err(unsupported_dtype());
    }
    let x = Gathered::new::<Sel>(input)?;
    let acc = Accumulator::new::<Sel>(dt)?;
    normalize(
        x,
        &acc,
        weight,
        bias,
        eps,
        out,
        save_mean,
        save_invstd,
        &mut |_, _, _| {},
    )
}

/// Normalizes each channel by its batch statistics (the body of the training-mode batch
/// norms) and calls `on_stats(channel, mean, biased_var)` for each channel.
///
/// One loop for every floating dtype: `x` reads the input as f64 (see [`Gathered`]) and
/// `acc` (of the input's dtype) reads the parameters and rounds each result once, as the
/// typed loops did (training-mode batch norm is rare in exported models; this is about
/// 15 KB less in a build of every dtype).
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list, plus the statistics callback"
)]
pub(super) fn normalize(
    x: Gathered<'_, f64>,
    acc: &Accumulator,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    out: &mut Tensor,
    save_mean: &mut Tensor,
    save_invstd: &mut Tensor,
    on_stats: &mut dyn FnMut(usize, f64, f64),
) -> KernelResult {
    let input = x.tensor();
    let nd = input.dim();
    // Operand 2 walks the channel index: stride 1 along dim 1, 0 elsewhere.
    let mut channel = [0usize; et_runtime::MAX_DIM];
    channel[1] = 1;
    let all_but_channel = ((1u32 << nd) - 1) & !0b10;
    let (channels, per_channel) = split(
        input.sizes(),
        [input.strides(), out.strides(), &channel[..nd]],
        all_but_channel,
    );
    let count = per_channel.numel() as f64;
    let w = weight.map(|t| t.bytes()).transpose()?;
    let b = bias.map(|t| t.bytes()).transpose()?;
    let y = out.bytes_mut()?;
    let means = save_mean.bytes_mut()?;
    let invstds = save_invstd.bytes_mut()?;
    let mut result = Ok(());
    channels.for_each([0, 0, 0], |[xb, yb, ch]| {
        if result.is_err() {
            return;
        }
        let (mean, squares) = match x.mean_and_squares(&per_channel, [xb, 0, 0]) {
            Ok(stats) => stats,
            Err(e) => {
                result = Err(e);
                return;
            }
        };
        let var = squares / count;
        on_stats(ch, mean, var);
        let invstd = 1.0 / libm::sqrt(var + eps);
        let scale = w.map_or(1.0, |w| acc.get_f64(w, ch)) * invstd;
        let shift = b.map_or(0.0, |b| acc.get_f64(b, ch));
        let mut inside = true;
        per_channel.for_each_run([xb, yb, 0], |[i, o, _], len, [si, so, _]| {
            if result.is_ok() {
                result = x.run(i, len, si, |k, chunk| {
                    for (j, &v) in chunk.iter().enumerate() {
                        let at = o + (k + j) * so;
                        inside &= acc.set(y, at, Val::Float((v - mean) * scale + shift));
                    }
                });
            }
        });
        inside &= acc.set(means, ch, Val::Float(mean));
        inside &= acc.set(invstds, ch, Val::Float(invstd));
        if !inside && result.is_ok() {
            result = Err(KernelError::invalid("channel index out of range"));
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn normalizes_each_channel_over_the_batch() {
        with_ctx(|ctx| {
            // [N=2, C=2, L=2]: channel 0 holds 1, 2, 3, 4; channel 1 is constant 5.
            let x = TensorBuf::from_slice(&[2, 2, 2], &[1.0f64, 2.0, 5.0, 5.0, 3.0, 4.0, 5.0, 5.0])
                .unwrap();
            let w = TensorBuf::from_slice(&[2], &[2.0f64, 1.0]).unwrap();
            let b = TensorBuf::from_slice(&[2], &[0.5f64, -1.0]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Double, &[2, 2, 2]).unwrap();
            let mut mean = TensorBuf::zeros(ScalarType::Double, &[2]).unwrap();
            let mut invstd = TensorBuf::zeros(ScalarType::Double, &[2]).unwrap();
            batch_norm_no_stats_out::<AllDtypes>(
                ctx,
                &x,
                Some(&w),
                Some(&b),
                true,
                0.1,
                0.0,
                &mut out,
                &mut mean,
                &mut invstd,
            )
            .unwrap();
            assert_eq!(mean.data::<f64>().unwrap(), &[2.5, 5.0]);
            // Channel 0: biased variance 1.25.
            let s = 1.0 / 1.25f64.sqrt();
            assert_eq!(invstd.data::<f64>().unwrap()[0], s);
            assert!(invstd.data::<f64>().unwrap()[1].is_infinite());
            let o = out.data::<f64>().unwrap();
            assert_eq!(o[0], (1.0 - 2.5) * 2.0 * s + 0.5);
            assert_eq!(o[5], (4.0 - 2.5) * 2.0 * s + 0.5);
            let i = TensorBuf::from_slice(&[1, 2], &[1i32, 2]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[1, 2]).unwrap();
            let mut mi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            let mut si = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            let r = batch_norm_no_stats_out::<AllDtypes>(
                ctx, &i, None, None, true, 0.1, 1e-5, &mut oi, &mut mi, &mut si,
            );
            assert!(r.is_err());
        });
    }
}
