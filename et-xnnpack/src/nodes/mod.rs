//! Node kinds, one file each, registered in the [`NODES`] link-time slice the way kernels
//! are registered in the runtime's: the plan looks each payload node's kind and datatype
//! family ([`NodeDatatype`]: `fp32`, `qint8`, `qdint8`, derived from the node's values)
//! up there, so a kind or family that is not linked in is refused at load, naming the
//! node. A kind's families are separate elements with separate `prepare` functions, so a
//! selection that keeps only the float family leaves the int8 code unreferenced and the
//! linker drops it.
//!
//! A kind has two functions: `prepare` (at `init`: checks the node's fields, values and
//! flags, packs constant weights, and returns a [`Step`]) and `run` (at execute: computes
//! the step from its inputs into its output).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_schema::xnnpack::{Graph, NodeDatatype, NodeKind, NodeView};

use crate::builder::Builder;
pub(crate) use crate::compute::clamp::Clamp;
use crate::frame::Frame;
pub(crate) use quantized::fold_clamps;

mod activation;
mod avg_pooling;
mod batch_matmul;
mod binary;
mod binary_quantized;
mod concatenate;
mod conv2d;
mod conv2d_pointwise;
mod conv2d_quantized;
mod conv_transpose2d;
mod convert;
mod copy;
mod depthwise_conv2d;
mod fully_connected;
mod fully_connected_quantized;
mod global_avg_pooling;
mod lut_activation;
mod max_pooling;
mod pooling;
mod quantized;
mod softmax;
mod static_constant_pad;
mod static_resize_bilinear;
mod static_slice;
mod static_transpose;

/// Prepares a node: checks it and returns its step.
pub(crate) type PrepareFn = fn(&mut Builder<'_, '_>, &NodeView<'_>) -> Result<Step, DelegateError>;
/// Runs a step.
pub(crate) type RunFn = fn(&Step, &Frame<'_>) -> KernelResult;
/// An upper bound of the scratch bytes a node's `run` takes (see `Builder::scratch`).
pub(crate) type ScratchFn = fn(&Graph<'_>, &NodeView<'_>) -> usize;
/// An upper bound of the method memory a node's `prepare` takes with `Builder::alloc`
/// (packed weights, folded biases, requantization scales), each allocation's alignment
/// padding included. Read from the payload before `prepare` checks it, so it saturates
/// rather than trusting sizes.
pub(crate) type PackedFn = fn(&Graph<'_>, &NodeView<'_>) -> usize;

/// A node kind and datatype family this build runs: an element of [`NODES`].
#[derive(Debug)]
pub struct NodeSpec {
    /// The kind (`XNodeUnion` tag).
    pub kind: NodeKind,
    /// The datatype family of the nodes this element prepares.
    pub datatype: NodeDatatype,
    pub(crate) prepare: PrepareFn,
    pub(crate) scratch: ScratchFn,
    pub(crate) packed: PackedFn,
}

/// Every (node kind, datatype family) linked into the binary.
#[et_runtime::link::distributed_slice]
#[linkme(crate = et_runtime::link::linkme)]
pub static NODES: [NodeSpec];

/// The spec of `kind` in family `datatype`, if this build has it.
pub(crate) fn find(kind: NodeKind, datatype: NodeDatatype) -> Option<&'static NodeSpec> {
    NODES
        .iter()
        .find(|s| s.kind == kind && s.datatype == datatype)
}

/// Whether this build has `kind` in any datatype family.
pub(crate) fn has_kind(kind: NodeKind) -> bool {
    NODES.iter().any(|s| s.kind == kind)
}

/// A node kind's scratch bound when it takes none.
pub(crate) fn no_scratch(_: &Graph<'_>, _: &NodeView<'_>) -> usize {
    0
}

/// A node kind's packed-memory bound when its `prepare` allocates nothing.
pub(crate) fn no_packed(_: &Graph<'_>, _: &NodeView<'_>) -> usize {
    0
}

/// Registers node kinds, one element per datatype family: `register!(XNNAdd: fp32 =>
/// prepare_add, ...)`, with an optional scratch bound per element (`XNNConv2d: fp32 =>
/// prepare, scratch = conv_scratch`) and, for a kind whose `prepare` allocates, a bound
/// of that (`..., packed = conv_packed`; see [`PackedFn`]). An element the build's selection does not keep is
/// left out of [`NODES`] (`et_runtime::link::selected`, which keeps the entries
/// `ET_SELECT_OPS_MODEL` lists under `kernel_metadata: etch::xnnpack_node_kinds`; the
/// `XNodeUnion` member and the `@datatype` arm check the names), so its code is not linked and a payload
/// that needs it is refused at init, naming the node, its kind and datatype.
macro_rules! register {
    ($($kind:ident : $datatype:ident => $prepare:path $(, scratch = $scratch:path)?
        $(, packed = $packed:path)?;)*) => {$(
        const _: () = {
            #[et_runtime::link::selected(
                metadata = "etch::xnnpack_node_kinds",
                entry = $kind,
                strip_prefix = "XNN",
                variant = $datatype,
            )]
            #[et_runtime::link::distributed_slice($crate::nodes::NODES)]
            #[linkme(crate = et_runtime::link::linkme)]
            static SPEC: $crate::nodes::NodeSpec = $crate::nodes::NodeSpec {
                kind: et_schema::xnnpack::NodeKind(
                    et_schema::xnnpack::fields::XNodeUnion::$kind.0,
                ),
                datatype: $crate::nodes::register!(@datatype $datatype),
                prepare: $prepare,
                scratch: $crate::nodes::register!(@scratch $($scratch)?),
                packed: $crate::nodes::register!(@packed $($packed)?),
            };
        };
    )*};
    (@datatype fp32) => { et_schema::xnnpack::NodeDatatype::Fp32 };
    (@datatype qint8) => { et_schema::xnnpack::NodeDatatype::Qint8 };
    (@datatype qdint8) => { et_schema::xnnpack::NodeDatatype::Qdint8 };
    (@scratch) => { $crate::nodes::no_scratch };
    (@scratch $scratch:path) => { $scratch };
    (@packed) => { $crate::nodes::no_packed };
    (@packed $packed:path) => { $packed };
}
pub(crate) use register;

/// One planned node: what to run, on which values (indices into the plan's value table).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub(crate) run: RunFn,
    pub(crate) params: Params,
}

/// Each node family's parameters. Value references are indices into the plan's values.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Params {
    Unary(activation::Unary),
    Binary(binary::Binary),
    Conv(conv2d::Conv),
    PointwiseConv(conv2d_pointwise::PointwiseConv),
    Depthwise(depthwise_conv2d::Depthwise),
    Deconv(conv_transpose2d::Deconv),
    FullyConnected(fully_connected::FullyConnected),
    QuantizedFc(fully_connected_quantized::QuantizedFc),
    QuantizedConv(conv2d_quantized::QuantizedConv),
    QuantizedMul(binary_quantized::QuantizedMul),
    Quantized(quantized::Quantized),
    QuantizedUnary(lut_activation::QuantizedUnary),
    BatchMatmul(batch_matmul::BatchMatmul),
    AvgPool(avg_pooling::AvgPool),
    MaxPool(max_pooling::MaxPool),
    QuantizedMaxPool(max_pooling::QuantizedMaxPool),
    GlobalAvg(global_avg_pooling::GlobalAvg),
    Softmax(softmax::Softmax),
    Copy(copy::Copy),
    Convert(convert::Convert),
    Transpose(static_transpose::Transpose),
    Pad(static_constant_pad::Pad),
    Resize(static_resize_bilinear::Resize),
    Slice(static_slice::Slice),
    Concat(concatenate::Concat),
}

/// The error for a step run with another family's parameters (a planning bug).
pub(crate) fn wrong_params() -> et_runtime::KernelError {
    et_runtime::KernelError::new(
        et_runtime::Error::Internal,
        "step has another node's parameters",
    )
}
