//! `aten::convolution_backward.out`: gradients of a 2-d convolution.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::accumulate::Accumulator;
use crate::util::convert::Val;

/// The gradients of `convolution(input, weight, bias, stride, padding, dilation, groups)`
/// (2-d, not transposed, as ExecuTorch's portable kernel supports) given `grad_output`:
/// `grad_input` (`input`'s shape), `grad_weight` (`weight`'s shape) and `grad_bias`
/// (`[C_out]`, the sum of `grad_output` over batch and space), each computed only where
/// `output_mask` says so (other outs are left untouched). Sums accumulate in f64 scratch
/// and round once.
#[kernel("aten::convolution_backward.out", accepts = [floats, u8])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn convolution_backward_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    grad_output: &Tensor,
    input: &Tensor,
    weight: &Tensor,
    _bias_sizes: Option<&[i64]>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    _output_padding: &[i64],
    groups: i64,
    output_mask: &[bool],
    grad_input: &mut Tensor,
    grad_weight: &mut Tensor,
    grad_bias: &mut Tensor,
) -> KernelResult {
    if transposed {
        return Err(KernelError::unsupported(
            "convolution_backward of a transposed convolution is not supported",
        ));
    }
    let g = Geometry::new(
        grad_output,
        input,
        weight,
        stride,
        padding,
        dilation,
        groups,
    )?;
    let dt = input.dtype();
    if grad_output.dtype() != dt || weight.dtype() != dt || !dt.is_floating() {
        return Err(KernelError::invalid(
            "convolution_backward needs floating tensors of one dtype",
        ));
    }
    let &[want_input, want_weight, want_bias] = output_mask else {
        return Err(KernelError::invalid("output_mask needs three flags"));
    };
    for (wanted, out) in [
        (want_input, &*grad_input),
        (want_weight, &*grad_weight),
        (want_bias, &*grad_bias),
    ] {
        if wanted && out.dtype() != dt {
            return Err(KernelError::invalid(
                "convolution_backward outs must have the input's dtype",
            ));
        }
    }
    // Only element reads and writes depend on the dtype: one loop nest for every dtype.
    let acc = Accumulator::new::<Sel>(dt)?;
    if want_input {
        grad_input.resize(input.sizes())?;
        input_grad(ctx, &acc, &g, grad_output, weight, grad_input)?;
    }
    if want_weight {
        grad_weight.resize(weight.sizes())?;
        weight_grad(ctx, &acc, &g, grad_output, input, grad_weight)?;
    }
    if want_bias {
        grad_bias.resize(&[g.c_out])?;
        bias_grad(&acc, &g, grad_output, grad_bias)?;
    }
    Ok(())
}

/// Validated sizes of a 2-d convolution.
struct Geometry {
    n: usize,
    c_in: usize,
    c_out: usize,
    groups: usize,
    ih: usize,
    iw: usize,
    oh: usize,
    ow: usize,
    kh: usize,
    kw: usize,
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
}

/// A 2-element list, or one value for both dims.
fn pair(v: &[i64], what: &'static str) -> KernelResult<[usize; 2]> {
    let (a, b) = match *v {
        [a] => (a, a),
        [a, b] => (a, b),
        _ => return Err(KernelError::invalid(what)),
    };
    match (usize::try_from(a), usize::try_from(b)) {
        (Ok(a), Ok(b)) => Ok([a, b]),
        _ => Err(KernelError::invalid(what)),
    }
}

impl Geometry {
    fn new(
        grad_output: &Tensor,
        input: &Tensor,
        weight: &Tensor,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        groups: i64,
    ) -> KernelResult<Geometry> {
        if input.dim() != 4 || weight.dim() != 4 || grad_output.dim() != 4 {
            return Err(KernelError::unsupported(
                "convolution_backward supports 2-d convolutions ([N, C, H, W])",
            ));
        }
        let stride = pair(stride, "stride needs one or two non-negative values")?;
        let padding = pair(padding, "padding needs one or two non-negative values")?;
        let dilation = pair(dilation, "dilation needs one or two non-negative values")?;
        let groups = usize::try_from(groups).unwrap_or(0);
        let (n, c_in, ih, iw) = (input.size(0), input.size(1), input.size(2), input.size(3));
        let (c_out, kh, kw) = (weight.size(0), weight.size(2), weight.size(3));
        let valid = groups > 0
            && stride.iter().chain(&dilation).all(|&v| v > 0)
            && c_in.is_multiple_of(groups)
            && c_out.is_multiple_of(groups)
            && weight.size(1) * groups == c_in
            && grad_output.size(0) == n
            && grad_output.size(1) == c_out;
        if !valid {
            return Err(KernelError::invalid(
                "convolution_backward arguments do not describe one convolution",
            ));
        }
        // The forward output size must be grad_output's.
        let expect = |len: usize, k: usize, s: usize, p: usize, d: usize| {
            let span = d * (k.max(1) - 1) + 1;
            (len + 2 * p).checked_sub(span).map(|v| v / s + 1)
        };
        let (oh, ow) = (grad_output.size(2), grad_output.size(3));
        if expect(ih, kh, stride[0], padding[0], dilation[0]) != Some(oh)
            || expect(iw, kw, stride[1], padding[1], dilation[1]) != Some(ow)
        {
            return Err(KernelError::invalid(
                "grad_output does not have the convolution's output size",
            ));
        }
        Ok(Geometry {
            n,
            c_in,
            c_out,
            groups,
            ih,
            iw,
            oh,
            ow,
            kh,
            kw,
            stride,
            padding,
            dilation,
        })
    }

    /// Calls `f(n, oc, oy, ox, ic, ky, kx, iy, ix)` for every (output position, weight
    /// tap) pair whose input position lies inside the (unpadded) input; `ic` is the
    /// absolute input channel, `ic - group * c_in/groups` the weight's channel.
    fn for_each_tap(&self, mut f: impl FnMut([usize; 4], [usize; 3], [usize; 2])) {
        let (cin_g, cout_g) = (self.c_in / self.groups, self.c_out / self.groups);
        for n in 0..self.n {
            for oc in 0..self.c_out {
                let group = oc / cout_g;
                for oy in 0..self.oh {
                    for ox in 0..self.ow {
                        for icg in 0..cin_g {
                            for ky in 0..self.kh {
                                let iy = (oy * self.stride[0] + ky * self.dilation[0])
                                    .checked_sub(self.padding[0]);
                                let Some(iy) = iy.filter(|&v| v < self.ih) else {
                                    continue;
                                };
                                for kx in 0..self.kw {
                                    let ix = (ox * self.stride[1] + kx * self.dilation[1])
                                        .checked_sub(self.padding[1]);
                                    let Some(ix) = ix.filter(|&v| v < self.iw) else {
                                        continue;
                                    };
                                    f([n, oc, oy, ox], [group * cin_g + icg, ky, kx], [iy, ix]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The element offset of a 4-d index in `t`.
fn at(t: &Tensor, i: [usize; 4]) -> usize {
    let s = t.strides();
    i[0] * s[0] + i[1] * s[1] + i[2] * s[2] + i[3] * s[3]
}

fn input_grad(
    ctx: &KernelContext<'_>,
    acc: &Accumulator,
    g: &Geometry,
    grad_output: &Tensor,
    weight: &Tensor,
    grad_input: &mut Tensor,
) -> KernelResult {
    let sums = ctx.alloc_temp::<f64>(grad_input.numel())?;
    sums.fill(0.0);
    let (go, w) = (grad_output.bytes()?, weight.bytes()?);
    let cin_g = g.c_in / g.groups;
    g.for_each_tap(|[n, oc, oy, ox], [ic, ky, kx], [iy, ix]| {
        let dy = acc.get_f64(go, at(grad_output, [n, oc, oy, ox]));
        let wv = acc.get_f64(w, at(weight, [oc, ic % cin_g, ky, kx]));
        sums[at(grad_input, [n, ic, iy, ix])] += dy * wv;
    });
    store_all(acc, sums, grad_input)
}

fn weight_grad(
    ctx: &KernelContext<'_>,
    acc: &Accumulator,
    g: &Geometry,
    grad_output: &Tensor,
    input: &Tensor,
    grad_weight: &mut Tensor,
) -> KernelResult {
    let sums = ctx.alloc_temp::<f64>(grad_weight.numel())?;
    sums.fill(0.0);
    let (go, x) = (grad_output.bytes()?, input.bytes()?);
    let cin_g = g.c_in / g.groups;
    g.for_each_tap(|[n, oc, oy, ox], [ic, ky, kx], [iy, ix]| {
        let dy = acc.get_f64(go, at(grad_output, [n, oc, oy, ox]));
        let xv = acc.get_f64(x, at(input, [n, ic, iy, ix]));
        sums[at(grad_weight, [oc, ic % cin_g, ky, kx])] += dy * xv;
    });
    store_all(acc, sums, grad_weight)
}

/// Rounds f64 sums, indexed by memory offset, into `out`.
fn store_all(acc: &Accumulator, sums: &[f64], out: &mut Tensor) -> KernelResult {
    let bytes = out.bytes_mut()?;
    for (i, &v) in sums.iter().enumerate() {
        acc.set(bytes, i, Val::Float(v));
    }
    Ok(())
}

fn bias_grad(
    acc: &Accumulator,
    g: &Geometry,
    grad_output: &Tensor,
    grad_bias: &mut Tensor,
) -> KernelResult {
    let go = grad_output.bytes()?;
    let step = grad_bias.strides().first().copied().unwrap_or(1);
    let b = grad_bias.bytes_mut()?;
    for oc in 0..g.c_out {
        let mut sum = 0.0f64;
        for n in 0..g.n {
            for oy in 0..g.oh {
                for ox in 0..g.ow {
                    sum += acc.get_f64(go, at(grad_output, [n, oc, oy, ox]));
                }
            }
        }
        acc.set(b, oc * step, Val::Float(sum));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn gradients_of_a_small_convolution() {
        with_ctx(|ctx| {
            // x: 1x1x2x2, w: 1x1x1x2 (a horizontal pair), no padding: y is 1x1x2x1.
            let x = TensorBuf::from_slice(&[1, 1, 2, 2], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
            let w = TensorBuf::from_slice(&[1, 1, 1, 2], &[10.0f64, 20.0]).unwrap();
            let dy = TensorBuf::from_slice(&[1, 1, 2, 1], &[1.0f64, -1.0]).unwrap();
            let mut gx = TensorBuf::zeros(ScalarType::Double, &[1, 1, 2, 2]).unwrap();
            let mut gw = TensorBuf::zeros(ScalarType::Double, &[1, 1, 1, 2]).unwrap();
            let mut gb = TensorBuf::zeros(ScalarType::Double, &[1]).unwrap();
            convolution_backward_out::<AllDtypes>(
                ctx,
                &dy,
                &x,
                &w,
                Some(&[1]),
                &[1, 1],
                &[0, 0],
                &[1, 1],
                false,
                &[0, 0],
                1,
                &[true, true, true],
                &mut gx,
                &mut gw,
                &mut gb,
            )
            .unwrap();
            assert_eq!(gx.data::<f64>().unwrap(), &[10.0, 20.0, -10.0, -20.0]);
            assert_eq!(gw.data::<f64>().unwrap(), &[1.0 - 3.0, 2.0 - 4.0]);
            assert_eq!(gb.data::<f64>().unwrap(), &[0.0]);
            let r = convolution_backward_out::<AllDtypes>(
                ctx,
                &dy,
                &x,
                &w,
                None,
                &[1, 1],
                &[0, 0],
                &[1, 1],
                true,
                &[0, 0],
                1,
                &[true, false, false],
                &mut gx,
                &mut gw,
                &mut gb,
            );
            assert!(r.is_err());
        });
    }
}
