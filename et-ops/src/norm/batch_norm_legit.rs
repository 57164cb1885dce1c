//! `aten::_native_batch_norm_legit.out`: batch norm with running statistics.
//!
//! No exported program calls this overload (eval-mode batch norm becomes
//! `_native_batch_norm_legit_no_training`, and training mode is functionalized to an op
//! without an out variant), so it is tested by unit tests only.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::batch_norm::batch_norm_no_training_out;
use super::batch_norm_no_stats::{batch_norm_no_stats_out, normalize};
use super::check_param;
use crate::util::accumulate::Accumulator;
use crate::util::convert::Val;
use crate::util::reduction::Gathered;

/// Batch norm over dim 1 with running statistics. Evaluation (`training` false): the
/// running statistics normalize, as `_native_batch_norm_legit_no_training` (the only
/// mode ExecuTorch's portable kernel accepts); the statistics outs are empty. Training:
/// the batch's statistics normalize, as `.no_stats_out`, `save_mean`/`save_invstd`
/// receive them, and the running statistics are updated in place as PyTorch does:
/// `running = (1 - momentum) * running + momentum * batch`, with the unbiased batch
/// variance.
#[kernel("aten::_native_batch_norm_legit.out", accepts = [floats])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn batch_norm_legit_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: &mut Tensor,
    running_var: &mut Tensor,
    training: bool,
    momentum: f64,
    eps: f64,
    out: &mut Tensor,
    save_mean: &mut Tensor,
    save_invstd: &mut Tensor,
) -> KernelResult {
    if !training {
        return batch_norm_no_training_out::<Sel>(
            ctx,
            input,
            weight,
            bias,
            running_mean,
            running_var,
            momentum,
            eps,
            out,
            save_mean,
            save_invstd,
        );
    }
    if input.dim() < 2 {
        return Err(KernelError::invalid("batch norm input needs a channel dim"));
    }
    let c = input.size(1);
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
    )?;
    // Validates the rest and sizes the outs.
    batch_norm_no_stats_out::<Sel>(
        ctx,
        input,
        weight,
        bias,
        true,
        momentum,
        eps,
        out,
        save_mean,
        save_invstd,
    )?;
    let count = input.numel() / c.max(1);
    // The dtype is floating and selected: batch_norm_no_stats_out checked it.
    let x = Gathered::new::<Sel>(input)?;
    let acc = Accumulator::new::<Sel>(input.dtype())?;
    let rm = running_mean.bytes_mut()?;
    let rv = running_var.bytes_mut()?;
    normalize(
        x,
        &acc,
        weight,
        bias,
        eps,
        out,
        save_mean,
        save_invstd,
        &mut |ch, mean, var| {
            // Bessel's correction for the running variance (n / (n - 1)).
            let unbiased = if count > 1 {
                var * count as f64 / (count - 1) as f64
            } else {
                f64::NAN
            };
            let m = (1.0 - momentum) * acc.get_f64(rm, ch) + momentum * mean;
            let v = (1.0 - momentum) * acc.get_f64(rv, ch) + momentum * unbiased;
            acc.set(rm, ch, Val::Float(m));
            acc.set(rv, ch, Val::Float(v));
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn evaluation_uses_running_statistics() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[1, 2, 1], &[3.0f64, 5.0]).unwrap();
            let mut rm = TensorBuf::from_slice(&[2], &[1.0f64, 5.0]).unwrap();
            let mut rv = TensorBuf::from_slice(&[2], &[4.0f64, 1.0]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Double, &[1, 2, 1]).unwrap();
            // Evaluation leaves the statistics outs empty.
            let mut sm = TensorBuf::zeros(ScalarType::Double, &[0]).unwrap();
            let mut si = TensorBuf::zeros(ScalarType::Double, &[0]).unwrap();
            batch_norm_legit_out::<AllDtypes>(
                ctx, &x, None, None, &mut rm, &mut rv, false, 0.1, 0.0, &mut out, &mut sm, &mut si,
            )
            .unwrap();
            assert_eq!(out.data::<f64>().unwrap(), &[1.0, 0.0]);
            assert_eq!(sm.sizes(), &[0]);
        });
    }

    #[test]
    fn training_updates_running_statistics() {
        with_ctx(|ctx| {
            // One channel holding 1, 3: mean 2, biased var 1, unbiased var 2.
            let x = TensorBuf::from_slice(&[2, 1], &[1.0f64, 3.0]).unwrap();
            let mut rm = TensorBuf::from_slice(&[1], &[0.0f64]).unwrap();
            let mut rv = TensorBuf::from_slice(&[1], &[1.0f64]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Double, &[2, 1]).unwrap();
            let mut sm = TensorBuf::zeros(ScalarType::Double, &[1]).unwrap();
            let mut si = TensorBuf::zeros(ScalarType::Double, &[1]).unwrap();
            batch_norm_legit_out::<AllDtypes>(
                ctx, &x, None, None, &mut rm, &mut rv, true, 0.5, 0.0, &mut out, &mut sm, &mut si,
            )
            .unwrap();
            assert_eq!(out.data::<f64>().unwrap(), &[-1.0, 1.0]);
            assert_eq!(sm.data::<f64>().unwrap(), &[2.0]);
            assert_eq!(si.data::<f64>().unwrap(), &[1.0]);
            assert_eq!(rm.data::<f64>().unwrap(), &[1.0]);
            assert_eq!(rv.data::<f64>().unwrap(), &[1.5]);
        });
    }
}
