//! `aten::convolution.out`: 1-d and 2-d convolutions, grouped, dilated, transposed.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::direct::conv_direct;
use super::fast::conv_f32;
use super::geom::{strides4, Geom};
use crate::util::element::Dot;

/// `out = conv(input, weight) + bias` as PyTorch's `convolution`: `input` is
/// `[N, C_in, (H,) W]` in any dim order, `weight` `[C_out, C_in / groups, (kh,) kw]`
/// (`[C_in, C_out / groups, ...]` when `transposed`). Non-transposed f32 convolutions take
/// the gemm and depthwise paths; f16/f64 and transposed convolutions a direct loop that
/// accumulates in f64. Integer convolutions (every integer dtype, as ExecuTorch's
/// portable kernel accepts) take the direct loop and wrap around, as PyTorch's do.
#[kernel("aten::convolution.out", accepts = [reals])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn convolution_out<Sel: DtypeSelection>(
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
    out: &mut Tensor,
) -> KernelResult {
    let g = Geom::new(
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )?;
    if out.dtype() != input.dtype() {
        return Err(et_runtime::KernelError::invalid(
            "convolution out dtype differs from the input's",
        ));
    }
    if input.dim() == 3 {
        out.resize(&[g.n, g.cout, g.ow])?;
    } else {
        out.resize(&[g.n, g.cout, g.oh, g.ow])?;
    }
    let os = strides4(out);
    // The f32 fast paths exist only in builds that select f32 for this operator.
    if Sel::SET.contains(ScalarType::Float) && input.dtype() == ScalarType::Float && !transposed {
        let b = match bias {
            Some(b) => Some(b.data::<f32>()?),
            None => None,
        };
        return conv_f32(
            ctx,
            &g,
            input.data()?,
            weight.data()?,
            b,
            out.data_mut()?,
            os,
            None,
        );
    }
    et_switch!(Sel, input.dtype(), @reals, T => direct::<T>(&g, input, weight, bias, out, os))
}

fn direct<T: Dot>(
    g: &Geom,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &mut Tensor,
    os: [usize; 4],
) -> KernelResult {
    let b = match bias {
        Some(b) => Some(b.data::<T>()?),
        None => None,
    };
    conv_direct(
        g,
        input.data::<T>()?,
        weight.data::<T>()?,
        b,
        out.data_mut::<T>()?,
        os,
    )
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bench;
