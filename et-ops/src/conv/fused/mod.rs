//! Convolutions that absorb the inference batch norm, and the activation, that follow
//! them in a program: `etch::convolution_batch_norm.out` and its `_hardtanh` and `_relu`
//! forms.
//!
//! No exporter writes these operators. This crate's load-time rewrite rule
//! ([`rewrite`], which says when it applies) turns an
//! `aten::convolution.out` call followed by `aten::_native_batch_norm_legit_no_training.out`
//! (and `aten::hardtanh.out` or `aten::relu.out` on its result) into one call of these,
//! and the calls it absorbed into no-ops. MobileNetV2's 52 convolutions are each followed
//! by a batch norm, 35 of them by a ReLU6: the two extra passes over every activation
//! were a sixth of its execute.
//!
//! The values are the separate kernels': the convolution's sums and bias, then the batch
//! norm folded as its own kernel folds it (`batch_norm::fold`: `x * alpha + beta`, not one FMA),
//! then the clamp with `hardtanh`'s and `relu`'s comparisons. Only where they are
//! applied changes: to each tile of the output as it is stored, while it is in L1.
//!
//! f32 and not transposed only (the fusion checks both at load; a call that is not
//! fails here with a clear error rather than computing something else).

pub mod convolution_batch_norm;
pub mod convolution_batch_norm_hardtanh;
pub mod convolution_batch_norm_relu;
pub mod rewrite;

use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::fast::conv_f32;
use super::geom::{strides4, Geom};
use crate::norm::batch_norm::{check_params, fold};
use crate::util::gemm::RowEpilogue;

/// The convolution's own arguments.
pub(crate) struct Convolution<'t> {
    pub(crate) input: &'t Tensor,
    pub(crate) weight: &'t Tensor,
    pub(crate) bias: Option<&'t Tensor>,
    pub(crate) stride: &'t [i64],
    pub(crate) padding: &'t [i64],
    pub(crate) dilation: &'t [i64],
    pub(crate) transposed: bool,
    pub(crate) output_padding: &'t [i64],
    pub(crate) groups: i64,
}

/// The batch norm's parameters (its input is the convolution's output).
pub(crate) struct BatchNorm<'t> {
    pub(crate) weight: Option<&'t Tensor>,
    pub(crate) bias: Option<&'t Tensor>,
    pub(crate) mean: &'t Tensor,
    pub(crate) var: &'t Tensor,
    pub(crate) eps: f64,
}

/// Writes `clamp(batch_norm(conv(input)), lo, hi)` into `out`. A NaN bound makes every
/// element NaN, as `hardtanh` does.
pub(crate) fn conv_batch_norm_clamp(
    ctx: &KernelContext<'_>,
    conv: Convolution<'_>,
    bn: BatchNorm<'_>,
    (lo, hi): (f32, f32),
    out: &mut Tensor,
) -> KernelResult {
    if conv.transposed {
        return Err(KernelError::invalid(
            "a convolution fused with a batch norm cannot be transposed",
        ));
    }
    let g = Geom::new(
        conv.input,
        conv.weight,
        conv.bias,
        conv.stride,
        conv.padding,
        conv.dilation,
        conv.transposed,
        conv.output_padding,
        conv.groups,
    )?;
    if conv.input.dtype() != ScalarType::Float || out.dtype() != ScalarType::Float {
        return Err(KernelError::invalid(
            "a convolution fused with a batch norm takes and gives f32",
        ));
    }
    if conv.input.dim() == 3 {
        out.resize(&[g.n, g.cout, g.ow])?;
    } else {
        out.resize(&[g.n, g.cout, g.oh, g.ow])?;
    }
    // The batch norm's input would have been the convolution's output: `out`'s shape
    // and dtype.
    check_params(out, bn.weight, bn.bias, bn.mean, bn.var)?;
    if lo.is_nan() || hi.is_nan() {
        out.data_mut::<f32>()?.fill(f32::NAN);
        return Ok(());
    }
    let (alpha, beta) = fold::<f32>(ctx, g.cout, bn.weight, bn.bias, bn.mean, bn.var, bn.eps)?;
    let epilogue = RowEpilogue::new(alpha, beta, lo, hi)
        .ok_or_else(|| KernelError::invalid("batch norm parameters of different lengths"))?;
    let bias = conv.bias.map(|b| b.data::<f32>()).transpose()?;
    let os = strides4(out);
    conv_f32(
        ctx,
        &g,
        conv.input.data()?,
        conv.weight.data()?,
        bias,
        out.data_mut()?,
        os,
        Some(epilogue),
    )
}

#[cfg(test)]
mod tests;
