//! BatchMatrixMultiply: `out[.., m, n] = sum_k a[.., m, k] * b[.., k, n]` over matching
//! (or size-1, broadcast) batch dims; `b` is `[.., n, k]` with `XNN_FLAG_TRANSPOSE_B`.

use et_ops::gemm::{sgemm, sgemm_scratch_bytes, Mat, MatMut};
use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::{Graph, NodeView};

use crate::builder::{check_flags, graph_shape, Builder};
use crate::frame::{Frame, Step};

const TRANSPOSE_B: u32 = 1;

type N<'a> = xf::_XNNNode2x1<'a>;

#[derive(Clone, Copy, Debug)]
pub(crate) struct BatchMatmul {
    a: u32,
    b: u32,
    output: u32,
    batches: usize,
    /// Whether `a` / `b` repeat one matrix for every batch.
    a_broadcast: bool,
    b_broadcast: bool,
    m: usize,
    k: usize,
    n: usize,
    transpose_b: bool,
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<BatchMatmul>, DelegateError> {
    let flags = node.u32(N::VT_FLAGS);
    check_flags(b, flags, TRANSPOSE_B)?;
    let transpose_b = flags & TRANSPOSE_B != 0;
    let x = b.read(node.u32(N::VT_INPUT1_ID))?;
    let y = b.read(node.u32(N::VT_INPUT2_ID))?;
    let output = b.write(node.u32(N::VT_OUTPUT_ID), &[x, y])?;
    let (sa, sb, so) = (b.shape(x), b.shape(y), b.shape(output));
    let r = so.rank();
    if r < 2 || sa.rank() != r || sb.rank() != r {
        return Err(b.invalid("the operands are not matrices of the output's rank"));
    }
    let (m, k) = (sa.dims()[r - 2], sa.dims()[r - 1]);
    let (kb, n) = if transpose_b {
        (sb.dims()[r - 1], sb.dims()[r - 2])
    } else {
        (sb.dims()[r - 2], sb.dims()[r - 1])
    };
    if kb != k || so.dims()[r - 2] != m || so.dims()[r - 1] != n {
        return Err(b.invalid("the operands' inner sizes or the output's sizes do not match"));
    }
    let batch_of = |s: &crate::values::Shape| s.dims()[..r - 2].iter().product::<usize>();
    let batches = batch_of(&so);
    let (ba, bb) = (batch_of(&sa), batch_of(&sb));
    let fits = |s: &crate::values::Shape| {
        (0..r - 2).all(|d| s.dims()[d] == so.dims()[d]) || s.dims()[..r - 2].iter().all(|&d| d == 1)
    };
    if !fits(&sa) || !fits(&sb) {
        return Err(b.invalid("the batch dims neither match the output's nor are all 1"));
    }
    b.scratch(sgemm_scratch_bytes(m, n, k));
    Ok(Step {
        run,
        params: BatchMatmul {
            a: x,
            b: y,
            output,
            batches,
            a_broadcast: ba != batches,
            b_broadcast: bb != batches,
            m,
            k,
            n,
            transpose_b,
        },
    })
}

pub(super) fn scratch(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    match graph_shape(graph, node.u32(N::VT_OUTPUT_ID)) {
        Some(s) if s.rank() >= 2 => {
            let (m, n) = (s.dims()[s.rank() - 2], s.last());
            let k = graph_shape(graph, node.u32(N::VT_INPUT1_ID)).map_or(0, |a| a.last());
            sgemm_scratch_bytes(m, n, k)
        }
        _ => 0,
    }
}

fn run(p: &BatchMatmul, frame: &Frame<'_>) -> KernelResult {
    let ([x, y], out) = frame.operands([p.a, p.b], p.output)?;
    let (m, k, n) = (p.m, p.k, p.n);
    let (_, mut scratch) = frame.scratch(0)?;
    {
        for batch in 0..p.batches {
            let ai = if p.a_broadcast { 0 } else { batch };
            let bi = if p.b_broadcast { 0 } else { batch };
            let a = Mat {
                data: &x[ai * m * k..(ai + 1) * m * k],
                rows: m,
                cols: k,
                rs: k,
                cs: 1,
            };
            let bdata = &y[bi * k * n..(bi + 1) * k * n];
            let bm = if p.transpose_b {
                Mat {
                    data: bdata,
                    rows: k,
                    cols: n,
                    rs: 1,
                    cs: k,
                }
            } else {
                Mat {
                    data: bdata,
                    rows: k,
                    cols: n,
                    rs: n,
                    cs: 1,
                }
            };
            let c = MatMut {
                data: &mut out[batch * m * n..(batch + 1) * m * n],
                rows: m,
                cols: n,
                rs: n,
                cs: 1,
            };
            // Each product's packing buffers start from the scratch's beginning again.
            scratch.with(|ctx| sgemm(ctx, 1.0, a, bm, 0.0, c))?;
        }
    }
    Ok(())
}
