//! Softmax over the innermost dim, computed stably (the row's maximum subtracted first).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_schema::xnnpack::fields as xf;
use et_schema::xnnpack::NodeView;

use super::{register, wrong_params, Params, Step};
use crate::builder::{check_flags, Builder};
use crate::frame::Frame;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Softmax {
    input: u32,
    output: u32,
    row: usize,
}

fn prepare(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step, DelegateError> {
    type N<'a> = xf::_XNNNode1x1<'a>;
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let input = b.read(node.u32(N::VT_INPUT_ID))?;
    let output = b.write(node.u32(N::VT_OUTPUT_ID), &[input])?;
    if b.shape(input) != b.shape(output) {
        return Err(b.invalid("the output's sizes differ from the input's"));
    }
    Ok(Step {
        run,
        params: Params::Softmax(Softmax {
            input,
            output,
            row: b.shape(input).last(),
        }),
    })
}

register! {
    XNNSoftmax: fp32 => prepare;
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::Softmax(p) = step.params else {
        return Err(wrong_params());
    };
    let ([x], out) = frame.operands([p.input], p.output)?;
    if p.row == 0 {
        return Ok(());
    }
    for (src, dst) in x.chunks_exact(p.row).zip(out.chunks_exact_mut(p.row)) {
        let max = src.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0f32;
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = libm::expf(v - max);
            sum += *d;
        }
        let scale = 1.0 / sum;
        for d in dst.iter_mut() {
            *d *= scale;
        }
    }
    Ok(())
}
