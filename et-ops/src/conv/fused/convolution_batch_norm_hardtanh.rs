//! `etch::convolution_batch_norm_hardtanh.out`: a convolution, the inference batch norm
//! of its output and a `hardtanh` (ReLU6) of that, in one pass (written by this crate's
//! load-time rewrite rule, [`super::rewrite`]).

use et_runtime::kernel;
use et_runtime::{AllDtypes, KernelContext, KernelResult, Scalar, ScalarType, Tensor};

use super::{conv_batch_norm_clamp, BatchNorm, Convolution};
use crate::util::convert::scalar_as;

/// `out = hardtanh(batch_norm(convolution(input, weight, bias, ...)), min_val, max_val)`:
/// `aten::convolution.out`'s arguments, the batch norm's weight, bias, running mean,
/// running variance and eps, then `aten::hardtanh.out`'s bounds (converted to f32 as that
/// kernel converts them).
#[kernel(
    "etch::convolution_batch_norm_hardtanh.out",
    dtype = f32,
    replaces = ["aten::convolution.out", "aten::_native_batch_norm_legit_no_training.out", "aten::hardtanh.out"]
)]
#[allow(
    clippy::too_many_arguments,
    reason = "the three operators' argument lists"
)]
pub fn convolution_batch_norm_hardtanh_out(
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
    min_val: Scalar,
    max_val: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let lo = scalar_as::<f32, AllDtypes>(min_val, ScalarType::Float)?;
    let hi = scalar_as::<f32, AllDtypes>(max_val, ScalarType::Float)?;
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
        (lo, hi),
        out,
    )
}
