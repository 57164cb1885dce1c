//! StaticSlice: a box of the input (`out[i] = in[offsets + i]`, `sizes` = the output's),
//! on fp32 or 8-bit values (the quantized slice keeps its input's parameters: ExecuTorch
//! lowers only a slice whose input and output quantization match).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::{check_flags, other_family, Builder};
use crate::elem::Elem;
use crate::frame::{Frame, Step};
use crate::values::{Shape, MAX_RANK};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Slice {
    input: u32,
    output: u32,
    offsets: [usize; MAX_RANK],
    bytes: bool,
}

fn prepare(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step<Slice>, DelegateError> {
    type S<'a> = xf::XNNStaticSlice<'a>;
    check_flags(b, node.u32(S::VT_FLAGS), 0)?;
    let input = b.read_any(node.u32(S::VT_INPUT_ID))?;
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
        params: Slice {
            input,
            output,
            offsets,
            bytes,
        },
    })
}

/// The fp32 family; the node's values must be fp32.
pub(super) fn prepare_fp32(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Slice>, DelegateError> {
    b.read(node.u32(xf::XNNStaticSlice::VT_INPUT_ID))?;
    prepare(b, node)
}

/// The qint8 family (8-bit values per tensor).
pub(super) fn prepare_qint8(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Slice>, DelegateError> {
    let input = b.read_any(node.u32(xf::XNNStaticSlice::VT_INPUT_ID))?;
    if b.value(input).elem == Elem::F32 {
        return Err(other_family(b));
    }
    prepare(b, node)
}

fn run(p: &Slice, frame: &Frame<'_>) -> KernelResult {
    let (is, os) = (frame.shape(p.input), frame.shape(p.output));
    if p.bytes {
        slice(
            frame.input::<u8>(p.input)?,
            &is,
            &p.offsets,
            frame.output::<u8>(p.output)?,
            &os,
        );
    } else {
        let ([x], out) = frame.operands([p.input], p.output)?;
        slice(x, &is, &p.offsets, out, &os);
    }
    Ok(())
}

/// Copies the box of `x` (sizes `is`) at `offsets` into `out` (sizes `os`), one innermost
/// row at a time; the box was checked to fit at init.
pub(crate) fn slice<T: Copy>(x: &[T], is: &Shape, offsets: &[usize], out: &mut [T], os: &Shape) {
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

    /// The box element by element: output coordinate plus offset, flattened in the input.
    fn reference<T: Copy>(x: &[T], is: &[usize], offsets: &[usize], os: &[usize]) -> Vec<T> {
        let total: usize = os.iter().product();
        (0..total)
            .map(|flat| {
                let (mut rem, mut src, mut stride) = (flat, 0, 1);
                for d in (0..os.len()).rev() {
                    src += (rem % os[d] + offsets[d]) * stride;
                    rem /= os[d];
                    stride *= is[d];
                }
                x[src]
            })
            .collect()
    }

    #[test]
    fn slices_boxes_of_floats_and_bytes() {
        for (is, offsets, os) in [
            (&[4, 5, 6][..], &[1, 0, 2][..], &[2, 5, 3][..]),
            (&[7], &[3], &[4]),
            (&[2, 3, 4, 5], &[1, 1, 0, 4], &[1, 2, 4, 1]),
            (&[2, 3], &[0, 0], &[2, 3]),
        ] {
            let (ishape, oshape) = (Shape::new(is).unwrap(), Shape::new(os).unwrap());
            let n: usize = is.iter().product();
            let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let mut out = vec![0.0; os.iter().product()];
            slice(&x, &ishape, offsets, &mut out, &oshape);
            assert_eq!(out, reference(&x, is, offsets, os));
            let xb: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            let mut outb = vec![0u8; os.iter().product()];
            slice(&xb, &ishape, offsets, &mut outb, &oshape);
            assert_eq!(outb, reference(&xb, is, offsets, os));
        }
    }
}
