//! `aten::max_pool2d_with_indices_backward.grad_input`: the gradient of max pooling.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::{strides4, Pool};
use crate::util::accumulate::Accumulator;
use crate::util::layout::IndexData;

/// `grad_input` has `self`'s shape and receives, for every pooled output position, its
/// `grad_output` value added at the input position its `indices` entry names (the flat
/// `h * W + w` index within the channel's plane that `max_pool2d_with_indices` returned);
/// positions no window picked stay zero, positions several windows picked sum. The pooling
/// arguments are checked against the shapes. Integers wrap; floats add in their own
/// precision.
#[kernel("aten::max_pool2d_with_indices_backward.grad_input", accepts = [reals])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn max_pool2d_with_indices_backward_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    grad_output: &Tensor,
    input: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
    indices: &Tensor,
    grad_input: &mut Tensor,
) -> KernelResult {
    let p = Pool::new(input, kernel_size, stride, padding, dilation, ceil_mode)?;
    let dt = input.dtype();
    if grad_output.dtype() != dt || grad_input.dtype() != dt || indices.dtype() != ScalarType::Long
    {
        return Err(KernelError::invalid(
            "max pool backward tensors must share the input's dtype, indices int64",
        ));
    }
    let pooled = |t: &Tensor| {
        t.dim() == input.dim() && {
            let n = t.dim();
            t.size(n - 2) == p.oh && t.size(n - 1) == p.ow
        }
    };
    if !pooled(grad_output) || !pooled(indices) || grad_output.sizes() != indices.sizes() {
        return Err(KernelError::invalid(
            "grad_output and indices must have the pooled shape",
        ));
    }
    if !dt.is_floating() && !dt.is_integral(false) {
        return Err(KernelError::invalid("max pool backward needs a real dtype"));
    }
    grad_input.resize(input.sizes())?;
    let acc = Accumulator::new::<Sel>(dt)?;
    scatter_grad(&acc, &p, grad_output, indices, grad_input)
}

fn scatter_grad(
    acc: &Accumulator,
    p: &Pool,
    grad_output: &Tensor,
    indices: &Tensor,
    grad_input: &mut Tensor,
) -> KernelResult {
    let (gs, xs, is) = (
        strides4(grad_output),
        strides4(indices),
        strides4(grad_input),
    );
    let g = grad_output.bytes()?;
    let idx = IndexData::of(indices)?;
    let gi = grad_input.bytes_mut()?;
    // Zero bits are zero in every real dtype.
    gi.fill(0);
    let plane = p.ih * p.iw;
    for n in 0..p.n {
        for c in 0..p.c {
            for i in 0..p.oh {
                for j in 0..p.ow {
                    let at = idx.get(n * xs[0] + c * xs[1] + i * xs[2] + j * xs[3]);
                    let at = usize::try_from(at)
                        .ok()
                        .filter(|&a| a < plane)
                        .ok_or(KernelError::invalid("max pool index out of range"))?;
                    let (h, w) = (at / p.iw, at % p.iw);
                    let to = n * is[0] + c * is[1] + h * is[2] + w * is[3];
                    let from = n * gs[0] + c * gs[1] + i * gs[2] + j * gs[3];
                    if !acc.add(gi, to, g, from) {
                        return Err(KernelError::invalid("index out of bounds for tensor data"));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn routes_gradients_to_the_maxima() {
        with_ctx(|ctx| {
            // A 1x3 plane pooled by 1x2 windows with stride 1: both windows picked index 1.
            let x = TensorBuf::zeros(ScalarType::Float, &[1, 1, 3]).unwrap();
            let g = TensorBuf::from_slice(&[1, 1, 2], &[0.5f32, 2.0]).unwrap();
            let ix = TensorBuf::from_slice(&[1, 1, 2], &[1i64, 1]).unwrap();
            let mut gi = TensorBuf::zeros(ScalarType::Float, &[1, 1, 3]).unwrap();
            max_pool2d_with_indices_backward_out::<AllDtypes>(
                ctx,
                &g,
                &x,
                &[1, 2],
                &[1, 1],
                &[0],
                &[1],
                false,
                &ix,
                &mut gi,
            )
            .unwrap();
            assert_eq!(gi.data::<f32>().unwrap(), &[0.0, 2.5, 0.0]);
            let bad = TensorBuf::from_slice(&[1, 1, 2], &[1i64, 3]).unwrap();
            let r = max_pool2d_with_indices_backward_out::<AllDtypes>(
                ctx,
                &g,
                &x,
                &[1, 2],
                &[1, 1],
                &[0],
                &[1],
                false,
                &bad,
                &mut gi,
            );
            assert!(r.is_err());
        });
    }
}
