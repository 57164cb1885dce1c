//! StaticSlice: a box of the input (`out[i] = in[offsets + i]`, `sizes` = the output's).
//! The qint8 family moves the same bytes: input and output share quantization, as XNNPACK
//! requires.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_schema::xnnpack::fields as xf;
use et_schema::xnnpack::NodeView;

use super::{check_flags, register, wrong_params, Params, Step};
use crate::exec::Frame;
use crate::plan::{Builder, Elem, Shape, MAX_RANK};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Slice {
    input: u32,
    output: u32,
    offsets: [usize; MAX_RANK],
    /// The elements are single bytes (qint8, quint8), not floats.
    bytes: bool,
}

/// The fp32 family, or (`QUANTIZED`) the qint8 one.
fn prepare<const QUANTIZED: bool>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step, DelegateError> {
    type S<'a> = xf::XNNStaticSlice<'a>;
    check_flags(b, node.u32(S::VT_FLAGS), 0)?;
    let input = b.read_any(node.u32(S::VT_INPUT_ID))?;
    if (b.value(input).elem == Elem::F32) == QUANTIZED {
        return Err(super::other_family(b));
    }
    let output = b.write_any(node.u32(S::VT_OUTPUT_ID), &[input])?;
    let bytes = super::copy::same_plain_elem(b, input, output)?;
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
            bytes,
        }),
    })
}

register! {
    XNNStaticSlice: fp32 => prepare::<false>;
    XNNStaticSlice: qint8 => prepare::<true>;
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::Slice(p) = step.params else {
        return Err(wrong_params());
    };
    let (is, os) = (frame.shape(p.input), frame.shape(p.output));
    if p.bytes {
        let x = frame.input::<u8>(p.input)?;
        slice(x, frame.output::<u8>(p.output)?, (&is, &os), &p.offsets);
    } else {
        let ([x], out) = frame.operands([p.input], p.output)?;
        slice(x, out, (&is, &os), &p.offsets);
    }
    Ok(())
}

/// Copies the box of `x` (sizes `is`) at `offsets` with `out`'s sizes `os` into `out`.
fn slice<T: Copy>(x: &[T], out: &mut [T], (is, os): (&Shape, &Shape), offsets: &[usize]) {
    let rank = is.rank();
    if rank == 0 {
        out.copy_from_slice(x);
        return;
    }
    let mut strides = [0usize; MAX_RANK];
    let mut step_size = 1;
    for d in (0..rank).rev() {
        strides[d] = step_size;
        step_size *= is.dims()[d];
    }
    let inner = os.last();
    if inner == 0 {
        return;
    }
    let mut index = [0usize; MAX_RANK];
    for run in out.chunks_exact_mut(inner) {
        let src: usize = (0..rank)
            .map(|d| (offsets[d] + index[d]) * strides[d])
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
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::{vec, vec::Vec};

    #[test]
    fn byte_slices_take_the_box_at_the_offsets() {
        // A [2, 3, 4, 5] int8 tensor, the box at [1, 0, 1, 2] of sizes [1, 3, 2, 3].
        let is = Shape::new(&[2, 3, 4, 5]).unwrap();
        let os = Shape::new(&[1, 3, 2, 3]).unwrap();
        let x: Vec<u8> = (0..120).collect();
        let mut out = vec![0u8; 18];
        slice(&x, &mut out, (&is, &os), &[1, 0, 1, 2]);
        let mut want = Vec::new();
        for c in 0..3 {
            for h in 1..3 {
                for w in 2..5 {
                    want.push((((3 + c) * 4 + h) * 5 + w) as u8);
                }
            }
        }
        assert_eq!(out, want);
    }
}
