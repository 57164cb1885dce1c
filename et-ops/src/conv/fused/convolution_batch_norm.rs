//! `etch::convolution_batch_norm.out`: a convolution and the inference batch norm of its
//! output, in one pass (written by this crate's load-time rewrite rule,
//! [`super::rewrite`]).

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use super::{conv_batch_norm_clamp, BatchNorm, Convolution};

/// `out = batch_norm(convolution(input, weight, bias, ...))`: `aten::convolution.out`'s
/// arguments, then `aten::_native_batch_norm_legit_no_training.out`'s weight, bias,
/// running mean, running variance and eps.
#[kernel(
    "etch::convolution_batch_norm.out",
    dtype = f32,
    replaces = ["aten::convolution.out", "aten::_native_batch_norm_legit_no_training.out"]
)]
#[allow(
    clippy::too_many_arguments,
    reason = "the two operators' argument lists"
)]
pub fn convolution_batch_norm_out(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
    bn_weight: Option<&Tensor>,
    bn_bias: Option<&Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
    eps: f64,
    out: &mut Tensor,
) -> KernelResult {
    conv_batch_norm_clamp(
        ctx,
        Convolution {
            input,
            weight,
            bias,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
        },
        BatchNorm {
            weight: bn_weight,
            bias: bn_bias,
            mean: running_mean,
            var: running_var,
            eps,
        },
        (f32::NEG_INFINITY, f32::INFINITY),
        out,
    )
}
