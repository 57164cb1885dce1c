//! MaxPooling2d: the maximum over each window of an NHWC input; padding never wins (it
//! counts as -inf).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_schema::xnnpack::fields as xf;
use et_schema::xnnpack::NodeView;

use super::conv2d::Window;
use super::global_avg_pooling::KEEP_DIMS;
use super::{check_flags, register, wrong_params, Clamp, Params, Step};
use crate::exec::Frame;
use crate::plan::Builder;

type P<'a> = xf::_XNNPooling2D<'a>;

const POOL_WINDOW: [u16; 10] = [
    P::VT_PADDING_TOP,
    P::VT_PADDING_RIGHT,
    P::VT_PADDING_BOTTOM,
    P::VT_PADDING_LEFT,
    P::VT_POOLING_HEIGHT,
    P::VT_POOLING_WIDTH,
    P::VT_STRIDE_HEIGHT,
    P::VT_STRIDE_WIDTH,
    P::VT_DILATION_HEIGHT,
    P::VT_DILATION_WIDTH,
];

#[derive(Clone, Copy, Debug)]
pub(crate) struct MaxPool {
    input: u32,
    output: u32,
    window: Window,
    channels: usize,
    clamp: Clamp,
}

fn prepare(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step, DelegateError> {
    check_flags(b, node.u32(P::VT_FLAGS), KEEP_DIMS)?;
    let input = b.read(node.u32(P::VT_INPUT_ID))?;
    let output = b.write(node.u32(P::VT_OUTPUT_ID), &[input])?;
    let (is, os) = (b.shape(input), b.shape(output));
    if is.rank() != 4 {
        return Err(b.invalid("the input is not 4-D (NHWC)"));
    }
    let [batch, in_h, in_w, channels] = [is.dims()[0], is.dims()[1], is.dims()[2], is.dims()[3]];
    let window = Window::new(node, POOL_WINDOW, batch, in_h, in_w)
        .ok_or_else(|| b.invalid("the pooling window is empty or larger than the padded input"))?;
    if os.dims() != [batch, window.out_h, window.out_w, channels] {
        return Err(b.invalid("the output's sizes differ from what the window gives"));
    }
    Ok(Step {
        run,
        params: Params::MaxPool(MaxPool {
            input,
            output,
            window,
            channels,
            clamp: Clamp::of(node),
        }),
    })
}

register! {
    XNNMaxPooling2d: fp32 => prepare;
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::MaxPool(p) = step.params else {
        return Err(wrong_params());
    };
    let ([x], out) = frame.operands([p.input], p.output)?;
    let (w, c) = (&p.window, p.channels);
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                let at = ((n * w.out_h + oh) * w.out_w + ow) * c;
                let acc = &mut out[at..at + c];
                acc.fill(f32::NEG_INFINITY);
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        let src = ((n * w.in_h + ih) * w.in_w + iw) * c;
                        for (a, &v) in acc.iter_mut().zip(&x[src..src + c]) {
                            *a = a.max(v);
                        }
                    }
                }
            }
        }
    }
    p.clamp.apply(out);
    Ok(())
}
