//! StaticTranspose: the input's dims permuted (`out.dims[i] = in.dims[perm[i]]`); how the
//! partitioner turns NCHW activations into NHWC and back.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::{check_flags, Builder};
use crate::compute::permute::{collapse, permute_runs};
use crate::frame::{Frame, Step};
use crate::values::{Shape, MAX_RANK};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Transpose {
    input: u32,
    output: u32,
    perm: [u8; MAX_RANK],
    /// The elements are single bytes (qint8, quint8), not floats.
    bytes: bool,
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Transpose>, DelegateError> {
    type T<'a> = xf::XNNStaticTranspose<'a>;
    check_flags(b, node.u32(T::VT_FLAGS), 0)?;
    let input = b.read_any(node.u32(T::VT_INPUT_ID))?;
    let output = b.write_any(node.u32(T::VT_OUTPUT_ID), &[input])?;
    let bytes = super::copy::same_plain_elem(b, input, output)?;
    let (is, os) = (b.shape(input), b.shape(output));
    let list = node.table.vector(T::VT_PERM);
    let rank = is.rank();
    let mut perm = [0u8; MAX_RANK];
    let mut seen = 0u32;
    let ok = list.is_some_and(|v| {
        v.len() == rank
            && os.rank() == rank
            && (0..rank).all(|i| {
                let d = v.uint(i, 4) as usize;
                let fresh = d < rank && seen & (1 << d) == 0;
                if fresh {
                    seen |= 1 << d;
                    perm[i] = d as u8;
                }
                fresh && os.dims()[i] == is.dims()[d]
            })
    });
    if !ok {
        return Err(b.invalid("perm is not a permutation of the input's dims matching the output"));
    }
    Ok(Step {
        run,
        params: Transpose {
            input,
            output,
            perm,
            bytes,
        },
    })
}

fn run(p: &Transpose, frame: &Frame<'_>) -> KernelResult {
    let shape = frame.shape(p.input);
    let perm: [usize; MAX_RANK] = p.perm.map(usize::from);
    let perm = &perm[..shape.rank()];
    if p.bytes {
        let x = frame.input::<u8>(p.input)?;
        let out = frame.output::<u8>(p.output)?;
        transpose(frame, x, &shape, perm, out)
    } else {
        let ([x], out) = frame.operands([p.input], p.output)?;
        transpose(frame, x, &shape, perm, out)
    }
}

/// The permutation of `x` into `out`, its output runs (rows of the last dim) cut into
/// bands for the pool. A moved element, read at a stride, counts as a few
/// multiply-adds of work.
fn transpose<T: Copy + Send + Sync>(
    frame: &Frame<'_>,
    x: &[T],
    shape: &Shape,
    perm: &[usize],
    out: &mut [T],
) -> KernelResult {
    const WORK_PER_ELEMENT: usize = 8;
    // Fewer, longer dims: runs as long as the layout allows, and a transpose of the
    // contiguous dim wherever one hides behind several (NHWC to NCHW).
    let (collapsed, collapsed_perm, rank) = collapse(shape, perm);
    let (shape, perm) = (&collapsed, &collapsed_perm[..rank]);
    let inner = perm.last().map_or(0, |&d| shape.dims()[d]);
    if inner == 0 {
        // A scalar is copied; an empty tensor has nothing to move.
        let len = out.len().min(x.len());
        out[..len].copy_from_slice(&x[..len]);
        return Ok(());
    }
    let runs = out.len() / inner;
    frame.split(
        runs,
        inner * WORK_PER_ELEMENT,
        (out, inner),
        0,
        |band, out, _| permute_runs(x, shape, perm, band.start, out),
    )
}
