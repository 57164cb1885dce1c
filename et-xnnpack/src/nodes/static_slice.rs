//! StaticSlice: a box of the input (`out[i] = in[offsets + i]`, `sizes` = the output's).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_schema::xnnpack::fields as xf;
use et_schema::xnnpack::NodeView;

use super::{check_flags, register, wrong_params, Params, Step};
use crate::exec::Frame;
use crate::plan::{Builder, MAX_RANK};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Slice {
    input: u32,
    output: u32,
    offsets: [usize; MAX_RANK],
}

fn prepare(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step, DelegateError> {
    type S<'a> = xf::XNNStaticSlice<'a>;
    check_flags(b, node.u32(S::VT_FLAGS), 0)?;
    let input = b.read(node.u32(S::VT_INPUT_ID))?;
    let output = b.write(node.u32(S::VT_OUTPUT_ID), &[input])?;
    let (is, os) = (b.shape(input), b.shape(output));
    let rank = is.rank();
    let (offsets_v, sizes_v) = (
        node.table.vector(S::VT_OFFSETS),
        node.table.vector(S::VT_SIZES),
    );
    let mut offsets = [0usize; MAX_RANK];
    let ok = match (offsets_v, sizes_v) {
        (Some(o), Some(s)) => {
            o.len() == rank
                && s.len() == rank
                && os.rank() == rank
                && (0..rank).all(|i| {
                    let (off, size) = (o.uint(i, 4) as usize, s.uint(i, 4) as usize);
                    offsets[i] = off;
                    // A size of 0 means "to the end" in XNNPACK.
                    let size = if size == 0 {
                        is.dims()[i].saturating_sub(off)
                    } else {
                        size
                    };
                    off.checked_add(size).is_some_and(|e| e <= is.dims()[i]) && size == os.dims()[i]
                })
        }
        _ => false,
    };
    if !ok {
        return Err(b.invalid("the slice's offsets and sizes do not fit the input and output"));
    }
    Ok(Step {
        run,
        params: Params::Slice(Slice {
            input,
            output,
            offsets,
        }),
    })
}

register! {
    XNNStaticSlice: fp32 => prepare;
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::Slice(p) = step.params else {
        return Err(wrong_params());
    };
    let (is, os) = (frame.shape(p.input), frame.shape(p.output));
    let ([x], out) = frame.operands([p.input], p.output)?;
    let rank = is.rank();
    if rank == 0 {
        out.copy_from_slice(x);
        return Ok(());
    }
    let mut strides = [0usize; MAX_RANK];
    let mut step_size = 1;
    for d in (0..rank).rev() {
        strides[d] = step_size;
        step_size *= is.dims()[d];
    }
    let inner = os.last();
    if inner == 0 {
        return Ok(());
    }
    let mut index = [0usize; MAX_RANK];
    for run in out.chunks_exact_mut(inner) {
        let src: usize = (0..rank)
            .map(|d| (p.offsets[d] + index[d]) * strides[d])
            .sum();
        run.copy_from_slice(&x[src..src + inner]);
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            if index[d] < os.dims()[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}
