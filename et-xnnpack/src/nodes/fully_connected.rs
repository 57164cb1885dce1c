//! FullyConnected: `out[.., o] = sum_i in[.., i] * filter[o, i] + bias[o]`, over the
//! input's last dim (the others are rows). The filter is `[out, in]`, or `[in, out]` with
//! `XNN_FLAG_TRANSPOSE_WEIGHTS` (how `mm` lowers). A constant filter is packed once at
//! init in `compute::fgemm`'s panels with the bias, and the product runs on them with
//! nothing packed per call, cut over the execute's pool by rows or, for one row (a
//! classifier's head), by panels of output features; a filter computed at run time (a
//! lowered `mm` of two activations) is read through strides by the general GEMM.

use et_ops::gemm::{sgemm, sgemm_scratch_bytes, Mat, MatMut};
use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::{Graph, NodeView, INVALID_ID};

use crate::builder::{check_flags, graph_shape, other_family, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::fgemm::{self, Isa, PackedGemm};
use crate::compute::qconv::QConv;
use crate::elem::Elem;
use crate::frame::{Frame, Step};
use crate::values::Shape;

/// `XNN_FLAG_TRANSPOSE_WEIGHTS`: the filter is `[in, out]`.
pub(super) const TRANSPOSE_WEIGHTS: u32 = 1;

pub(super) type F<'a> = xf::XNNFullyConnected<'a>;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Filter {
    /// Packed at init: `fgemm::packed_len(out, in)` floats of panels and
    /// `fgemm::padded(out)` of bias (zero without one).
    Packed {
        panels: *const f32,
        bias: *const f32,
        isa: Isa,
    },
    /// A value computed at run time, `[out, in]` (or `[in, out]` when `transposed`).
    Value { value: u32, transposed: bool },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct FullyConnected {
    input: u32,
    output: u32,
    filter: Filter,
    bias: Option<*const f32>,
    rows: usize,
    in_features: usize,
    out_features: usize,
    clamp: Clamp,
}

/// A FullyConnected node's values (indices into the plan) and sizes, checked.
pub(super) struct Operands {
    pub(super) input: u32,
    pub(super) filter: u32,
    pub(super) bias: Option<u32>,
    pub(super) output: u32,
    pub(super) rows: usize,
    pub(super) in_features: usize,
    pub(super) out_features: usize,
}

/// Reads the node's filter, bias and output (of any datatype when `any_datatype`, else
/// fp32) after its input, and checks that the sizes agree: a 2-D filter (`[in, out]` when
/// `transposed`), the input's last dim its input size, the output the input's rows by
/// the filter's outputs.
pub(super) fn read_operands(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    transposed: bool,
    any_datatype: bool,
) -> Result<Operands, DelegateError> {
    let read = |b: &mut Builder<'_, '_>, id| {
        if any_datatype {
            b.read_any(id)
        } else {
            b.read(id)
        }
    };
    let filter = read(b, node.u32(F::VT_FILTER_ID))?;
    let bias_id = node.u32(F::VT_BIAS_ID);
    let bias = if bias_id == INVALID_ID {
        None
    } else {
        Some(read(b, bias_id)?)
    };
    let inputs = [input, filter, bias.unwrap_or(filter)];
    let output_id = node.u32(F::VT_OUTPUT_ID);
    let output = if any_datatype {
        b.write_any(output_id, &inputs)?
    } else {
        b.write(output_id, &inputs)?
    };
    let fshape = b.shape(filter);
    if fshape.rank() != 2 {
        return Err(b.invalid("the filter is not 2-D"));
    }
    let (out_features, in_features) = if transposed {
        (fshape.dims()[1], fshape.dims()[0])
    } else {
        (fshape.dims()[0], fshape.dims()[1])
    };
    let ishape = b.shape(input);
    if ishape.rank() == 0 || ishape.last() != in_features {
        return Err(b.invalid("the input's last dim differs from the filter's input size"));
    }
    let oshape = b.shape(output);
    if oshape.rank() != ishape.rank()
        || oshape.dims()[..oshape.rank() - 1] != ishape.dims()[..ishape.rank() - 1]
        || oshape.last() != out_features
    {
        return Err(b.invalid("the output's sizes do not match the input rows and filter outputs"));
    }
    if let Some(v) = bias {
        if b.value(v).numel() != out_features {
            return Err(b.invalid("the bias does not have one element per output"));
        }
    }
    Ok(Operands {
        input,
        filter,
        bias,
        output,
        rows: b.value(input).numel() / in_features.max(1),
        in_features,
        out_features,
    })
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<FullyConnected>, DelegateError> {
    let flags = node.u32(F::VT_FLAGS);
    check_flags(b, flags, TRANSPOSE_WEIGHTS)?;
    let transposed = flags & TRANSPOSE_WEIGHTS != 0;
    let input = b.read_any(node.u32(F::VT_INPUT1_ID))?;
    if b.value(input).elem != Elem::F32 {
        return Err(other_family(b));
    }
    let Operands {
        input,
        filter,
        bias,
        output,
        rows,
        in_features,
        out_features,
    } = read_operands(b, node, input, transposed, false)?;
    let bias = match bias {
        None => None,
        Some(v) => {
            let data = b.constant(v).ok_or_else(|| {
                b.fail(
                    Error::NotSupported,
                    "a bias computed at run time is not supported",
                )
            })?;
            Some(data)
        }
    };
    let filter = match b.constant(filter) {
        Some(w) => {
            let (n, k) = (out_features, in_features);
            let panels = b.alloc::<f32>(fgemm::packed_len(n, k))?;
            let weight = |o: usize, i: usize| {
                if transposed {
                    w[i * n + o]
                } else {
                    w[o * k + i]
                }
            };
            fgemm::pack(n, k, weight, panels);
            let padded = b.alloc::<f32>(fgemm::padded(n))?;
            if let Some(bias) = bias {
                padded[..n].copy_from_slice(&bias[..n]);
            }
            Filter::Packed {
                panels: panels.as_ptr(),
                bias: padded.as_ptr(),
                isa: Isa::detect(),
            }
        }
        None if b.value(filter).is_constant() => {
            return Err(b.invalid("the filter constant is not 4-byte aligned"));
        }
        None => Filter::Value {
            value: filter,
            transposed,
        },
    };
    let bias = bias.map(<[f32]>::as_ptr);
    if matches!(filter, Filter::Value { .. }) {
        b.scratch(sgemm_scratch_bytes(rows, out_features, in_features));
    }
    Ok(Step {
        run,
        params: FullyConnected {
            input,
            output,
            filter,
            bias,
            rows,
            in_features,
            out_features,
            clamp: Clamp::of(node),
        },
    })
}

pub(super) fn scratch(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let filter = graph_shape(graph, node.u32(F::VT_FILTER_ID));
    let input = graph_shape(graph, node.u32(F::VT_INPUT1_ID));
    match (filter, input) {
        (Some(f), Some(i)) if f.rank() == 2 => {
            let (n, k) = (f.dims()[0].max(f.dims()[1]), i.last());
            let m = i.numel().unwrap_or(0) / k.max(1);
            // A qint8 FullyConnected runs as a pointwise convolution (its row tiles).
            sgemm_scratch_bytes(m, n, k).max(QConv::scratch_bytes(k, 0))
        }
        _ => 0,
    }
}

/// The filter's `(out_features, in_features)` by its sizes and the transpose flag.
pub(super) fn filter_dims(graph: &Graph<'_>, node: &NodeView<'_>) -> (usize, usize) {
    match graph_shape(graph, node.u32(F::VT_FILTER_ID)) {
        Some(f) if f.rank() == 2 && node.u32(F::VT_FLAGS) & TRANSPOSE_WEIGHTS != 0 => {
            (f.dims()[1], f.dims()[0])
        }
        Some(f) if f.rank() == 2 => (f.dims()[0], f.dims()[1]),
        _ => (0, 0),
    }
}

/// The packed-memory bound of an fp32 FullyConnected: its filter's panels and the
/// padded bias. Every node packs its own copy, so filters shared by several nodes (an
/// unrolled recurrence) count once per node.
pub(super) fn packed(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let (n, k) = filter_dims(graph, node);
    super::conv2d_pointwise::packed_bound(n, k)
}

impl FullyConnected {
    /// The output value and its sizes for this execute's input sizes: the input's rows
    /// by the output features.
    pub(crate) fn reshape(
        &self,
        shape: &dyn Fn(u32) -> Shape,
    ) -> Result<(u32, Shape), &'static str> {
        let out = crate::dynamic::rows_by(shape(self.input), shape(self.output), self.in_features)?;
        Ok((self.output, out))
    }
}

fn run(p: &FullyConnected, frame: &Frame<'_>) -> KernelResult {
    let (k, n) = (p.in_features, p.out_features);
    // The rows of this execute (fewer than planned under a dynamic input).
    let m = frame.numel(p.input) / k.max(1);
    debug_assert!(m <= p.rows);
    let (filter_value, transposed) = match p.filter {
        Filter::Value { value, transposed } => (value, transposed),
        Filter::Packed { panels, bias, isa } => {
            let ([x], out) = frame.operands([p.input], p.output)?;
            // SAFETY: both packed at init in method memory with these lengths, read-only
            // since, living as long as the plan.
            let (panels, bias) = unsafe {
                (
                    core::slice::from_raw_parts(panels, fgemm::packed_len(n, k)),
                    core::slice::from_raw_parts(bias, fgemm::padded(n)),
                )
            };
            let gemm = PackedGemm {
                n,
                k,
                panels,
                bias,
                min: p.clamp.min,
                max: p.clamp.max,
                isa,
            };
            return run_packed(frame, &gemm, x, (m, out));
        }
    };
    let ([x, w], out) = frame.operands([p.input, filter_value], p.output)?;
    let b = if transposed {
        Mat {
            data: w,
            rows: k,
            cols: n,
            rs: n,
            cs: 1,
        }
    } else {
        Mat {
            data: w,
            rows: k,
            cols: n,
            rs: 1,
            cs: k,
        }
    };
    // SAFETY: a constant of `n` floats (checked at init), 4-aligned, read-only.
    let bias = p.bias.map(|b| unsafe { core::slice::from_raw_parts(b, n) });
    let a = Mat {
        data: x,
        rows: m,
        cols: k,
        rs: k,
        cs: 1,
    };
    let c = MatMut {
        data: &mut *out,
        rows: m,
        cols: n,
        rs: n,
        cs: 1,
    };
    frame
        .scratch(0)?
        .1
        .with(|ctx| sgemm(ctx, 1.0, a, b, 0.0, c))?;
    p.clamp.bias_rows(out, bias);
    Ok(())
}

/// The product of `m` rows of `x` with the packed filter into `out`: bands of rows over
/// the pool, or for one row bands of whole panels of output features (each output
/// depends on its row and column alone, so any cut gives the same bits).
fn run_packed(
    frame: &Frame<'_>,
    gemm: &PackedGemm<'_>,
    x: &[f32],
    (m, out): (usize, &mut [f32]),
) -> KernelResult {
    let (n, k) = (gemm.n, gemm.k);
    let short = || {
        et_runtime::KernelError::new(
            Error::Internal,
            "a fully connected operand is smaller than its rows",
        )
    };
    let x = x.get(..m * k).ok_or_else(short)?;
    let out = out.get_mut(..m * n).ok_or_else(short)?;
    if m != 1 {
        return frame.split(m, n * k, (out, n), 0, |band, out, _| {
            gemm.rows(&x[band.start * k..band.end * k], band.len(), out)
        });
    }
    frame.split_by(n, fgemm::NR, k, (out, 1), 0, |band, out, _| {
        let part = PackedGemm {
            n: band.len(),
            panels: &gemm.panels[band.start * k..],
            bias: &gemm.bias[band.start..],
            ..*gemm
        };
        part.rows(x, 1, out);
    })
}
