//! Typed views of an XNNPACK graph: its values, nodes and constants, read through the
//! bounds-checked [`reader`](et_schema::reader) (any bytes are safe to view; what a field
//! means is checked by whoever uses it).

use super::fields as xf;
use super::header::{locate, HeaderError};
use et_schema::reader::{Table, Vector};
use et_schema::Error;

/// `XNNTensorValue.flags` bit: the value is an input of the delegate call.
pub const FLAG_EXTERNAL_INPUT: u32 = 1;
/// `XNNTensorValue.flags` bit: the value is an output of the delegate call.
pub const FLAG_EXTERNAL_OUTPUT: u32 = 2;
/// The id that names no value (an absent bias, for example).
pub const INVALID_ID: u32 = u32::MAX;

/// A node kind: the `XNodeUnion` tag of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeKind(pub u8);

impl NodeKind {
    /// Every kind the schema defines, in tag order.
    pub fn all() -> impl Iterator<Item = NodeKind> {
        xf::XNodeUnion::ALL
            .iter()
            .filter(|(k, _)| *k != xf::XNodeUnion::NONE)
            .map(|(k, _)| NodeKind(k.0))
    }

    /// The kind's name without the `XNN` prefix (`Conv2d`), as ExecuTorch's tools print
    /// it, or `unknown` for a tag the schema does not define.
    pub fn name(self) -> &'static str {
        xf::XNodeUnion::ALL
            .iter()
            .find(|(k, _)| k.0 == self.0 && *k != xf::XNodeUnion::NONE)
            .map_or("unknown", |(_, n)| n.strip_prefix("XNN").unwrap_or(n))
    }

    /// The kind named `name` (with or without the `XNN` prefix).
    pub fn named(name: &str) -> Option<NodeKind> {
        NodeKind::from_name(name.strip_prefix("XNN").unwrap_or(name))
    }

    /// The kind whose name is exactly `name`, as [`name`](Self::name) spells it
    /// (`Conv2d`, no prefix): how selection files and build attributes name kinds.
    pub fn from_name(name: &str) -> Option<NodeKind> {
        NodeKind::all().find(|k| k.name() == name)
    }

    /// Whether the schema defines this kind.
    pub fn is_defined(self) -> bool {
        NodeKind::all().any(|k| k == self)
    }

    /// Every defined kind's name, in tag order (for messages that list the choices).
    pub fn names() -> impl Iterator<Item = &'static str> {
        NodeKind::all().map(NodeKind::name)
    }
}

/// A value's element type (`XNNDatatype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Datatype(pub i16);

impl Datatype {
    /// IEEE single precision.
    pub const FP32: Datatype = Datatype(xf::XNNDatatype::xnn_datatype_fp32.0);

    /// The datatype's name without the `xnn_datatype_` prefix (`fp32`, `qcint8`).
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 15] = [
            "invalid", "fp32", "fp16", "qint8", "quint8", "qint32", "qcint8", "qcint32", "qcint4",
            "qdint8", "qbint4", "qpint8", "int32", "pfp32", "bf16",
        ];
        usize::try_from(self.0)
            .ok()
            .and_then(|i| NAMES.get(i))
            .copied()
            .unwrap_or("unknown")
    }
}

/// Where a constant's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstantRef<'a> {
    /// In the named data (the program's or a `.ptd` file's), under this key.
    Named(&'a str),
    /// Inside the payload's constant data.
    Inline(&'a [u8]),
}

/// How a quantized value's real numbers relate to its integers.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum QuantParams<'a> {
    /// One scale and zero point for the whole value.
    PerTensor {
        /// Real = scale * (q - zero_point).
        scale: f32,
        /// The integer that stands for 0.
        zero_point: i32,
    },
    /// One scale per channel along `channel_dim` (zero point 0).
    PerChannel {
        /// The dim the scales run along.
        channel_dim: i32,
        /// The scales, when stored in the graph.
        scales: Vector<'a>,
        /// The scales' constant index when stored as constant data (0: in `scales`).
        scale_buffer_idx: u32,
        /// Number of scales when stored as constant data.
        num_scales: u32,
    },
    /// Quantized at run time, one scale and zero point per row of the trailing dims.
    PerTokenDynamic {
        /// How many trailing dims make a row.
        num_nonbatch_dims: i32,
    },
    /// One scale per block of `group_size` elements of each channel.
    PerChannelGroup {
        /// The dim the channels run along.
        channel_dim: i32,
        /// Elements per block.
        group_size: i32,
        /// The scales, when stored in the graph.
        scales: Vector<'a>,
        /// The scales' constant index when stored as constant data (0: in `scales`).
        scale_buffer_idx: u32,
        /// Number of scales when stored as constant data.
        num_scales: u32,
    },
}

/// One value of the graph (a tensor).
#[derive(Clone, Copy, Debug)]
pub struct ValueView<'a> {
    /// The element type.
    pub datatype: Datatype,
    /// The sizes, outermost first.
    pub dims: Vector<'a>,
    /// Index into the constant table, 0 when the value is not a constant.
    pub constant_buffer_idx: u32,
    /// Position among the delegate call's arguments, for inputs and outputs.
    pub external_id: u32,
    /// [`FLAG_EXTERNAL_INPUT`] and [`FLAG_EXTERNAL_OUTPUT`].
    pub flags: u32,
    /// The id nodes name the value by.
    pub id: u32,
    /// The run-time quantization target of an external input (invalid: none).
    pub dq_datatype: Datatype,
    /// Quantization parameters of a quantized value.
    pub quant: Option<QuantParams<'a>>,
}

impl ValueView<'_> {
    /// Number of dims.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Size of dim `i` (0 past the rank).
    pub fn dim(&self, i: usize) -> u32 {
        self.dims.uint(i, 4) as u32
    }
}

/// One node of the graph: its kind, its fields (read with [`fields`](super::fields)
/// offsets of the kind's table) and the output range it clamps to.
#[derive(Clone, Copy, Debug)]
pub struct NodeView<'a> {
    /// The node kind.
    pub kind: NodeKind,
    /// The kind's table (`_XNNNodeConv` for Conv2d, ...).
    pub table: Table<'a>,
    /// The node's handle in the exported graph (for profiles).
    pub debug_handle: u32,
    /// The fused output range; (-inf, inf) when absent.
    pub output_min_max: (f32, f32),
}

impl NodeView<'_> {
    /// The `u32` field `vt` of the node's table (0 when absent).
    pub fn u32(&self, vt: u16) -> u32 {
        self.table.uint(vt, 4) as u32
    }

    /// The `f32` field `vt` of the node's table (0.0 when absent).
    pub fn f32(&self, vt: u16) -> f32 {
        f32::from_bits(self.table.uint(vt, 4) as u32)
    }
}

/// A delegate payload's graph.
#[derive(Clone, Copy, Debug)]
pub struct Graph<'a> {
    root: Table<'a>,
    values: Vector<'a>,
    nodes: Vector<'a>,
    constant_table: Vector<'a>,
    constant_data: &'a [u8],
}

fn invalid(reason: &'static str) -> HeaderError {
    HeaderError::new(Error::InvalidProgram, reason)
}

impl<'a> Graph<'a> {
    /// The graph of a delegate payload (with or without its `XH00` header).
    pub fn parse(payload: &'a [u8]) -> Result<Graph<'a>, HeaderError> {
        let layout = locate(payload)?;
        let root = Table::root(&payload[layout.graph]).ok_or(invalid(
            "the graph flatbuffer's root offset is out of range",
        ))?;
        type G<'x> = xf::XNNGraph<'x>;
        Ok(Graph {
            root,
            values: root.vector(G::VT_XVALUES).unwrap_or(Vector::EMPTY),
            nodes: root.vector(G::VT_XNODES).unwrap_or(Vector::EMPTY),
            constant_table: root.vector(G::VT_CONSTANT_DATA).unwrap_or(Vector::EMPTY),
            constant_data: &payload[layout.constants],
        })
    }

    /// The serializer's schema version string.
    pub fn version(&self) -> &'a str {
        self.root.string(xf::XNNGraph::VT_VERSION).unwrap_or("")
    }

    /// How many values the delegate call passes (inputs and outputs).
    pub fn num_externs(&self) -> u32 {
        self.root.uint(xf::XNNGraph::VT_NUM_EXTERNS, 4) as u32
    }

    /// Number of values.
    pub fn num_values(&self) -> usize {
        self.values.len()
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Number of entries in the constant table (entry 0 is reserved).
    pub fn num_constants(&self) -> usize {
        self.constant_table.len()
    }

    /// Value `i`.
    pub fn value(&self, i: usize) -> Result<ValueView<'a>, HeaderError> {
        let v = self.values.table(i).ok_or(invalid("a value is missing"))?;
        type V<'x> = xf::XValue<'x>;
        let (tag, member) = v.union(V::VT_XVALUE_UNION_TYPE, V::VT_XVALUE_UNION);
        let member = member.ok_or(invalid("a value has no tensor"))?;
        let (tensor, quant) = match tag {
            t if t == xf::XValueUnion::XNNTensorValue.0 => (member, None),
            t if t == xf::XValueUnion::XNNQuantizedTensorValue.0 => {
                type Q<'x> = xf::XNNQuantizedTensorValue<'x>;
                let tensor = member
                    .table(Q::VT_TENSOR_VALUE)
                    .ok_or(invalid("a quantized value has no tensor"))?;
                let (qtag, params) = member.union(Q::VT_QUANT_PARAMS_TYPE, Q::VT_QUANT_PARAMS);
                let params = params.ok_or(invalid("a quantized value has no parameters"))?;
                (tensor, Some(quant_params(qtag, params)?))
            }
            _ => {
                return Err(invalid(
                    "a value is neither a tensor nor a quantized tensor",
                ))
            }
        };
        type T<'x> = xf::XNNTensorValue<'x>;
        Ok(ValueView {
            datatype: Datatype(tensor.int(T::VT_DATATYPE, 2) as i16),
            dims: tensor.vector(T::VT_DIMS).unwrap_or(Vector::EMPTY),
            constant_buffer_idx: tensor.uint(T::VT_CONSTANT_BUFFER_IDX, 4) as u32,
            external_id: tensor.uint(T::VT_EXTERNAL_ID, 4) as u32,
            flags: tensor.uint(T::VT_FLAGS, 4) as u32,
            id: tensor.uint(T::VT_ID_OUT, 4) as u32,
            dq_datatype: Datatype(tensor.int(T::VT_DQ_DATATYPE, 2) as i16),
            quant,
        })
    }

    /// Node `i`.
    pub fn node(&self, i: usize) -> Result<NodeView<'a>, HeaderError> {
        type N<'x> = xf::XNode<'x>;
        let n = self.nodes.table(i).ok_or(invalid("a node is missing"))?;
        let (tag, table) = n.union(N::VT_XNODE_UNION_TYPE, N::VT_XNODE_UNION);
        let table = table.ok_or(invalid("a node has no parameters"))?;
        let output_min_max = match n.table(N::VT_OUTPUT_MIN_MAX) {
            Some(m) => {
                type M<'x> = xf::OutputMinMax<'x>;
                let read = |vt| f32::from_bits(m.uint(vt, 4) as u32);
                (read(M::VT_OUTPUT_MIN), read(M::VT_OUTPUT_MAX))
            }
            None => (f32::NEG_INFINITY, f32::INFINITY),
        };
        Ok(NodeView {
            kind: NodeKind(tag),
            table,
            debug_handle: n.uint(N::VT_DEBUG_HANDLE, 4) as u32,
            output_min_max,
        })
    }

    /// Each node's kind, in order; a node that cannot be read gives its index and why.
    pub fn node_kinds(&self) -> impl Iterator<Item = Result<NodeKind, (usize, HeaderError)>> + '_ {
        (0..self.num_nodes()).map(|i| self.node(i).map(|n| n.kind).map_err(|e| (i, e)))
    }

    /// Where constant `idx` (a value's `constant_buffer_idx`, 1-based) is.
    pub fn constant(&self, idx: u32) -> Result<ConstantRef<'a>, HeaderError> {
        type C<'x> = xf::ConstantDataOffset<'x>;
        let entry = self
            .constant_table
            .table(idx as usize)
            .filter(|_| idx != 0)
            .ok_or(invalid("a value names a constant the table does not have"))?;
        if let Some(key) = entry.string(C::VT_NAMED_KEY) {
            return Ok(ConstantRef::Named(key));
        }
        let offset = entry.uint(C::VT_OFFSET, 8);
        let size = entry.uint(C::VT_SIZE, 8);
        let end = offset
            .checked_add(size)
            .filter(|&e| e <= self.constant_data.len() as u64);
        let end = end.ok_or(invalid(
            "a constant lies outside the payload's constant data",
        ))?;
        Ok(ConstantRef::Inline(
            &self.constant_data[offset as usize..end as usize],
        ))
    }
}

fn quant_params(tag: u8, t: Table<'_>) -> Result<QuantParams<'_>, HeaderError> {
    Ok(match tag {
        t_ if t_ == xf::XNNQuantParams::PerTensorQuant.0 => {
            type P<'x> = xf::PerTensorQuant<'x>;
            QuantParams::PerTensor {
                scale: f32::from_bits(t.uint(P::VT_SCALE, 4) as u32),
                zero_point: t.int(P::VT_ZERO_POINT, 4) as i32,
            }
        }
        t_ if t_ == xf::XNNQuantParams::PerChannelQuant.0 => {
            type P<'x> = xf::PerChannelQuant<'x>;
            QuantParams::PerChannel {
                channel_dim: t.int(P::VT_CHANNEL_DIM, 4) as i32,
                scales: t.vector(P::VT_SCALE).unwrap_or(Vector::EMPTY),
                scale_buffer_idx: t.uint(P::VT_SCALE_BUFFER_IDX, 4) as u32,
                num_scales: t.uint(P::VT_NUM_SCALES, 4) as u32,
            }
        }
        t_ if t_ == xf::XNNQuantParams::PerTokenDynamicQuant.0 => {
            type P<'x> = xf::PerTokenDynamicQuant<'x>;
            QuantParams::PerTokenDynamic {
                num_nonbatch_dims: t.int(P::VT_NUM_NONBATCH_DIMS, 4) as i32,
            }
        }
        t_ if t_ == xf::XNNQuantParams::PerChannelGroupQuant.0 => {
            type P<'x> = xf::PerChannelGroupQuant<'x>;
            QuantParams::PerChannelGroup {
                channel_dim: t.int(P::VT_CHANNEL_DIM, 4) as i32,
                group_size: t.int(P::VT_GROUP_SIZE, 4) as i32,
                scales: t.vector(P::VT_SCALE).unwrap_or(Vector::EMPTY),
                scale_buffer_idx: t.uint(P::VT_SCALE_BUFFER_IDX, 4) as u32,
                num_scales: t.uint(P::VT_NUM_SCALES, 4) as u32,
            }
        }
        _ => {
            return Err(invalid(
                "a quantized value has parameters of an unknown kind",
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_follow_the_schema_tags() {
        assert_eq!(NodeKind::all().count(), 47);
        let pairs = [
            (xf::XNodeUnion::XNNAdd, "Add"),
            (xf::XNodeUnion::XNNConv2d, "Conv2d"),
            (xf::XNodeUnion::XNNDepthwiseConv2d, "DepthwiseConv2d"),
            (xf::XNodeUnion::XNNGlobalAvgPooling2d, "GlobalAvgPooling2d"),
            (
                xf::XNodeUnion::XNNBatchMatrixMultiply,
                "BatchMatrixMultiply",
            ),
            (xf::XNodeUnion::XNNConvTranspose2d, "ConvTranspose2d"),
            (xf::XNodeUnion::XNNGelu, "Gelu"),
            (xf::XNodeUnion::XNNCos, "Cos"),
        ];
        for (tag, name) in pairs {
            assert_eq!(NodeKind(tag.0).name(), name);
            assert_eq!(NodeKind::named(name), Some(NodeKind(tag.0)));
        }
        assert_eq!(NodeKind::named("XNNSoftmax").map(|k| k.0), Some(3));
        assert_eq!(NodeKind(0).name(), "unknown");
        assert_eq!(NodeKind(200).name(), "unknown");
    }

    #[test]
    fn datatype_names() {
        assert_eq!(Datatype::FP32.name(), "fp32");
        assert_eq!(
            Datatype(xf::XNNDatatype::xnn_datatype_bf16.0).name(),
            "bf16"
        );
        assert_eq!(Datatype(-1).name(), "unknown");
    }
}
