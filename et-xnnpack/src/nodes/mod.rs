//! Node kinds, one file each, and their registry: every (kind, datatype family) this
//! build runs is an element of the [`NODES`] link-time slice, registered the way kernels
//! are registered in the runtime's. The plan looks each payload node's kind and datatype
//! family ([`NodeDatatype`]: `fp32`, `qint8`, `qdint8`, derived from the node's values)
//! up there, so a kind or family that is not linked in is refused at load, naming the
//! node. A kind's families are separate elements with separate `prepare` functions, so a
//! selection that keeps only the float family leaves the int8 code unreferenced and the
//! linker drops it.
//!
//! A kind has two functions: `prepare` (at `init`: checks the node's fields, values and
//! flags through the [`Builder`], packs constant weights, and returns its family's
//! [`Step`]) and `run` (at execute: computes the step from its inputs into its output in
//! a [`Frame`]). A node file knows its own family's parameters only; [`AnyStep`], the
//! step of any family, is what the plan keeps per node and the executor runs.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::{Graph, NodeDatatype, NodeKind, NodeView};

use crate::builder::Builder;
use crate::frame::{Frame, Step};
use crate::values::{Storage, Value};

mod activation;
mod avg_pooling;
mod bands;
mod batch_matmul;
mod binary;
mod binary_quantized;
mod concatenate;
mod conv2d;
mod conv2d_pointwise;
mod conv2d_quantized;
mod conv_transpose2d;
mod convert;
mod convolution;
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
pub(crate) type PrepareFn =
    fn(&mut Builder<'_, '_>, &NodeView<'_>) -> Result<AnyStep, DelegateError>;
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
fn no_scratch(_: &Graph<'_>, _: &NodeView<'_>) -> usize {
    0
}

/// A node kind's packed-memory bound when its `prepare` allocates nothing.
fn no_packed(_: &Graph<'_>, _: &NodeView<'_>) -> usize {
    0
}

/// Registers node kinds, one element per datatype family: `register!(XNNAdd: fp32 =>
/// binary::prepare_add, ...)`, with an optional scratch bound per element (`XNNConv2d:
/// fp32 => conv2d::prepare, scratch = conv2d::scratch`) and, for a kind whose `prepare`
/// allocates, a bound of that (`..., packed = conv2d::packed`; see [`PackedFn`]). A
/// `prepare` returns its family's [`Step`] (or, for a kind that hands some nodes to
/// another family, is generic over the step it returns), which the element's wrapper
/// turns into an [`AnyStep`]. An element the build's selection does not keep is left out
/// of [`NODES`] (`et_runtime::link::selected`, which keeps the entries
/// `ET_SELECT_OPS_MODEL` lists under `kernel_metadata: etch::xnnpack_node_kinds`; the
/// `XNodeUnion` member and the `@datatype` arm check the names), so its code is not
/// linked and a payload that needs it is refused at init, naming the node, its kind and
/// datatype.
macro_rules! register {
    ($($kind:ident : $datatype:ident => $prepare:path $(, scratch = $scratch:path)?
        $(, packed = $packed:path)?;)*) => {$(
        const _: () = {
            fn prepare(
                b: &mut Builder<'_, '_>,
                node: &NodeView<'_>,
            ) -> Result<AnyStep, DelegateError> {
                $prepare(b, node).map(AnyStep::from)
            }

            #[et_runtime::link::selected(
                metadata = "etch::xnnpack_node_kinds",
                entry = $kind,
                strip_prefix = "XNN",
                variant = $datatype,
            )]
            #[et_runtime::link::distributed_slice($crate::nodes::NODES)]
            #[linkme(crate = et_runtime::link::linkme)]
            static SPEC: $crate::nodes::NodeSpec = $crate::nodes::NodeSpec {
                kind: et_xnnpack_schema::NodeKind(
                    et_xnnpack_schema::fields::XNodeUnion::$kind.0,
                ),
                datatype: register!(@datatype $datatype),
                prepare,
                scratch: register!(@scratch $($scratch)?),
                packed: register!(@packed $($packed)?),
            };
        };
    )*};
    (@datatype fp32) => { et_xnnpack_schema::NodeDatatype::Fp32 };
    (@datatype qint8) => { et_xnnpack_schema::NodeDatatype::Qint8 };
    (@datatype qdint8) => { et_xnnpack_schema::NodeDatatype::Qdint8 };
    (@scratch) => { no_scratch };
    (@scratch $scratch:path) => { $scratch };
    (@packed) => { no_packed };
    (@packed $packed:path) => { $packed };
}

register! {
    XNNClamp: fp32 => activation::prepare_clamp;
    XNNClamp: qint8 => activation::prepare_clamp_qint8;
    XNNAbs: fp32 => activation::prepare_abs;
    XNNNegate: fp32 => activation::prepare_negate;
    XNNSquare: fp32 => activation::prepare_square;
    XNNSquareRoot: fp32 => activation::prepare_sqrt;
    XNNReciprocalSquareRoot: fp32 => activation::prepare_rsqrt;
    XNNExp: fp32 => activation::prepare_exp;
    XNNLog: fp32 => activation::prepare_log;
    XNNFloor: fp32 => activation::prepare_floor;
    XNNCeiling: fp32 => activation::prepare_ceiling;
    XNNSigmoid: fp32 => activation::prepare_sigmoid;
    XNNTanh: fp32 => activation::prepare_tanh;
    XNNGelu: fp32 => activation::prepare_gelu;
    XNNHardswish: fp32 => activation::prepare_hardswish;
    XNNSin: fp32 => activation::prepare_sin;
    XNNCos: fp32 => activation::prepare_cos;
    XNNELU: fp32 => activation::prepare_elu;
    XNNLeakyReLU: fp32 => activation::prepare_leaky_relu;
    XNNELU: qint8 => lut_activation::prepare_elu, packed = lut_activation::table_bytes;
    XNNHardswish: qint8 => lut_activation::prepare_hardswish,
        packed = lut_activation::table_bytes;
    XNNLeakyReLU: qint8 => lut_activation::prepare_leaky_relu,
        packed = lut_activation::table_bytes;
    XNNSigmoid: qint8 => lut_activation::prepare_sigmoid, packed = lut_activation::table_bytes;
    XNNTanh: qint8 => lut_activation::prepare_tanh, packed = lut_activation::table_bytes;
    XNNAdd: fp32 => binary::prepare_add;
    XNNAdd: qint8 => binary::prepare_add_qint8;
    XNNSubtract: fp32 => binary::prepare_subtract;
    XNNMultiply: fp32 => binary::prepare_multiply;
    XNNDiv: fp32 => binary::prepare_div;
    XNNMinimum: fp32 => binary::prepare_minimum;
    XNNMaximum: fp32 => binary::prepare_maximum;
    XNNPReLU: fp32 => binary::prepare_prelu;
    XNNMultiply: qint8 => binary_quantized::prepare_multiply;
    XNNSubtract: qint8 => binary_quantized::prepare_subtract;
    XNNConv2d: fp32 => conv2d::prepare::<AnyStep>, scratch = conv2d::scratch,
        packed = conv2d::packed;
    XNNConv2d: qint8 => conv2d::prepare_qint8, scratch = conv2d_quantized::conv_scratch,
        packed = conv2d_quantized::conv_packed;
    XNNDepthwiseConv2d: fp32 => depthwise_conv2d::prepare, packed = depthwise_conv2d::packed;
    XNNDepthwiseConv2d: qint8 => depthwise_conv2d::prepare_qint8,
        scratch = conv2d_quantized::depthwise_scratch,
        packed = conv2d_quantized::depthwise_packed;
    XNNConvTranspose2d: fp32 => conv_transpose2d::prepare;
    XNNFullyConnected: fp32 => fully_connected::prepare, scratch = fully_connected::scratch,
        packed = fully_connected::packed;
    XNNFullyConnected: qint8 => fully_connected_quantized::prepare::<false, AnyStep>,
        scratch = fully_connected::scratch, packed = fully_connected_quantized::packed;
    XNNFullyConnected: qdint8 => fully_connected_quantized::prepare::<true, AnyStep>,
        scratch = fully_connected::scratch, packed = fully_connected_quantized::packed;
    XNNBatchMatrixMultiply: fp32 => batch_matmul::prepare, scratch = batch_matmul::scratch;
    XNNAvgPooling2d: fp32 => avg_pooling::prepare;
    XNNMaxPooling2d: fp32 => max_pooling::prepare;
    XNNMaxPooling2d: qint8 => max_pooling::prepare_qint8;
    XNNGlobalAvgPooling2d: fp32 => global_avg_pooling::prepare::<false, AnyStep>;
    XNNGlobalAvgPooling2d: qint8 => global_avg_pooling::prepare::<true, AnyStep>,
        scratch = global_avg_pooling::scratch;
    XNNSoftmax: fp32 => softmax::prepare;
    XNNConvert: qint8 => convert::prepare::<false>;
    XNNConvert: qdint8 => convert::prepare::<true>;
    XNNStaticReshape: fp32 => copy::prepare_reshape;
    XNNStaticReshape: qint8 => copy::prepare_reshape;
    XNNCopy: fp32 => copy::prepare_copy;
    XNNCopy: qint8 => copy::prepare_copy;
    XNNConcatenate2: fp32 => concatenate::prepare2::<false>;
    XNNConcatenate2: qint8 => concatenate::prepare2::<true>;
    XNNConcatenate3: fp32 => concatenate::prepare3::<false>;
    XNNConcatenate3: qint8 => concatenate::prepare3::<true>;
    XNNConcatenate4: fp32 => concatenate::prepare4::<false>;
    XNNConcatenate4: qint8 => concatenate::prepare4::<true>;
    XNNConcatenate5: fp32 => concatenate::prepare5::<false>;
    XNNConcatenate5: qint8 => concatenate::prepare5::<true>;
    XNNStaticConstantPad: fp32 => static_constant_pad::prepare_fp32;
    XNNStaticConstantPad: qint8 => static_constant_pad::prepare_qint8;
    XNNStaticSlice: fp32 => static_slice::prepare_fp32;
    XNNStaticSlice: qint8 => static_slice::prepare_qint8;
    XNNStaticTranspose: fp32 => static_transpose::prepare;
    XNNStaticTranspose: qint8 => static_transpose::prepare;
    XNNStaticResizeBilinear2D: fp32 => static_resize_bilinear::prepare,
        scratch = static_resize_bilinear::scratch;
}

/// Declares [`AnyStep`], one variant per node family's [`Step`], with its conversions
/// from each family's step and its dispatch to the step's own `run`.
macro_rules! any_step {
    ($($family:ident($params:ty),)*) => {
        /// One planned node: the step of any node family. The plan holds one per node;
        /// value references in it are indices into the plan's value table.
        #[derive(Clone, Copy, Debug)]
        pub(crate) enum AnyStep {
            $($family(Step<$params>),)*
        }

        $(impl From<Step<$params>> for AnyStep {
            fn from(step: Step<$params>) -> Self {
                AnyStep::$family(step)
            }
        })*

        impl AnyStep {
            /// Runs the step in `frame`: its family's `run` on its parameters.
            pub(crate) fn run(&self, frame: &Frame<'_>) -> KernelResult {
                match self {
                    $(AnyStep::$family(step) => (step.run)(&step.params, frame),)*
                }
            }
        }
    };
}

any_step! {
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

/// Folds each qint8 Clamp into the convolution just before it when that convolution's
/// output is an intermediate value only the Clamp reads: the convolution then writes the
/// Clamp's output through the narrowed requantization, and the Clamp step does nothing.
/// Results are the same bytes (see `Requant::narrowed`); one pass over the output is
/// saved. Runs before liveness lays values out: the Clamp's output is then live from the
/// convolution on, and the convolution's own output is written by no one (no bytes).
pub(crate) fn fold_clamps(steps: &mut [AnyStep], values: &mut [Value]) {
    for s in 1..steps.len() {
        let AnyStep::Quantized(Step {
            params:
                quantized::Quantized::Clamp {
                    input,
                    output,
                    min,
                    max,
                },
            ..
        }) = steps[s]
        else {
            continue;
        };
        let AnyStep::QuantizedConv(conv) = steps[s - 1] else {
            continue;
        };
        let (producer, clamp) = ((s - 1) as u32, s as u32);
        let read_once = {
            let v = &values[input as usize];
            matches!(v.storage, Storage::Unused) && v.def == producer && v.last_use == clamp
        };
        if !read_once {
            continue;
        }
        let Some(fused) = conv.params.with_output_clamp(input, output, (min, max)) else {
            continue;
        };
        steps[s - 1] = AnyStep::QuantizedConv(Step {
            params: fused,
            ..conv
        });
        if let AnyStep::Quantized(step) = &mut steps[s] {
            step.run = folded;
        }
        values[output as usize].def = producer;
        values[input as usize].def = u32::MAX;
    }
}

/// The run of a step whose work another step does (a Clamp folded into the convolution
/// before it by [`fold_clamps`]): nothing.
fn folded(_: &quantized::Quantized, _: &Frame<'_>) -> KernelResult {
    Ok(())
}
