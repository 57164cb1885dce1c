//! Softmax over the innermost dim, computed stably (the row's maximum subtracted first),
//! one row at a time by et-ops' vectorized [`softmax`](et_ops::vmath::softmax).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::{check_flags, Builder};
use crate::frame::{Frame, Step};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Softmax {
    input: u32,
    output: u32,
    row: usize,
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Softmax>, DelegateError> {
    type N<'a> = xf::_XNNNode1x1<'a>;
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let input = b.read(node.u32(N::VT_INPUT_ID))?;
    let output = b.write(node.u32(N::VT_OUTPUT_ID), &[input])?;
    if b.shape(input) != b.shape(output) {
        return Err(b.invalid("the output's sizes differ from the input's"));
    }
    Ok(Step {
        run,
        params: Softmax {
            input,
            output,
            row: b.shape(input).last(),
        },
    })
}

fn run(p: &Softmax, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    if p.row == 0 {
        return Ok(());
    }
    for (src, dst) in x.chunks_exact(p.row).zip(out.chunks_exact_mut(p.row)) {
        et_ops::vmath::softmax(src, dst);
    }
    Ok(())
}
