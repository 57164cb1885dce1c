//! A node's datatype family: which of a node kind's implementations (float, static int8,
//! dynamic int8) a node needs, derived from the datatypes of the values it names.
//!
//! Selection records node kinds with their families (`Conv2d:fp32`), the backend
//! registers each (kind, family) pair separately, and both derive a node's family here,
//! so a build selected from a model holds exactly what the model's nodes run on.
//!
//! The families follow how XNNPACK splits its operators (and how ExecuTorch's
//! quantizers write graphs), named after the activation datatype users see in a
//! payload's values:
//!
//! | family | a node whose values include | examples |
//! |---|---|---|
//! | `fp32` | no quantized datatype | every float graph |
//! | `qint8` | a statically quantized one (`qint8`, `quint8`, `qint32`, `qcint8`, `qcint32`, `qcint4`, `qbint4`, `qpint8`) but no `qdint8` | PT2E static int8: qint8 activations, qcint8 weights, qcint32 biases; Convert fp32 to and from qint8 |
//! | `qdint8` | `qdint8` | dynamically quantized FullyConnected (qdint8 activations with qcint8 or qbint4 weights); Convert fp32 to qdint8 |

use super::fields as xf;
use super::graph::{Datatype, Graph, NodeKind, NodeView, INVALID_ID};
use super::header::HeaderError;
use et_schema::reader::VOffsetT;
use et_schema::Error;

/// A node's datatype family (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeDatatype {
    /// Every value is float (`fp32`; other float datatypes count here too).
    Fp32,
    /// Statically quantized int8 (`qint8`/`quint8` activations, per-channel weights).
    Qint8,
    /// Dynamically quantized int8 activations (`qdint8`).
    Qdint8,
}

impl NodeDatatype {
    /// Every family, in order.
    pub const ALL: [NodeDatatype; 3] = [
        NodeDatatype::Fp32,
        NodeDatatype::Qint8,
        NodeDatatype::Qdint8,
    ];

    /// The family's name in selections and messages (`fp32`, `qint8`, `qdint8`).
    pub const fn name(self) -> &'static str {
        match self {
            NodeDatatype::Fp32 => "fp32",
            NodeDatatype::Qint8 => "qint8",
            NodeDatatype::Qdint8 => "qdint8",
        }
    }

    /// The family named `name`, exactly as [`name`](Self::name) spells it.
    pub fn from_name(name: &str) -> Option<NodeDatatype> {
        NodeDatatype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Every family's name (for messages that list the choices).
    pub fn names() -> impl Iterator<Item = &'static str> {
        NodeDatatype::ALL.into_iter().map(NodeDatatype::name)
    }

    /// The family of a node whose values have `datatypes`.
    pub fn of(datatypes: impl IntoIterator<Item = Datatype>) -> NodeDatatype {
        use xf::XNNDatatype as D;
        let mut family = NodeDatatype::Fp32;
        for d in datatypes {
            let d = xf::XNNDatatype(d.0);
            if d == D::xnn_datatype_qdint8 {
                return NodeDatatype::Qdint8;
            }
            let static_quantized = [
                D::xnn_datatype_qint8,
                D::xnn_datatype_quint8,
                D::xnn_datatype_qint32,
                D::xnn_datatype_qcint8,
                D::xnn_datatype_qcint32,
                D::xnn_datatype_qcint4,
                D::xnn_datatype_qbint4,
                D::xnn_datatype_qpint8,
            ];
            if static_quantized.contains(&d) {
                family = NodeDatatype::Qint8;
            }
        }
        family
    }
}

/// One selectable unit: a node kind with one of its datatype families, written
/// `Conv2d:qint8` in selections and messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeVariant {
    /// The node kind.
    pub kind: NodeKind,
    /// The datatype family.
    pub datatype: NodeDatatype,
}

impl core::fmt::Display for NodeVariant {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}:{}", self.kind.name(), self.datatype.name())
    }
}

/// The vtable offsets of the value-id fields of `kind`'s node table (inputs, weights,
/// outputs), by the table the schema's `XNodeUnion` gives the kind.
fn value_id_fields(kind: NodeKind) -> &'static [VOffsetT] {
    use xf::XNodeUnion as U;
    type N2<'x> = xf::_XNNNode2x1<'x>;
    type N1<'x> = xf::_XNNNode1x1<'x>;
    type Cat<'x> = xf::_XNNCat<'x>;
    type Conv<'x> = xf::_XNNNodeConv<'x>;
    type Pool<'x> = xf::_XNNPooling2D<'x>;
    type Fc<'x> = xf::XNNFullyConnected<'x>;
    type Sdpa<'x> = xf::XNNScaledDotProductAttention<'x>;
    type ArgMax<'x> = xf::XNNArgMaxPooling2d<'x>;
    match U(kind.0) {
        U::XNNAdd
        | U::XNNDiv
        | U::XNNMinimum
        | U::XNNMaximum
        | U::XNNMultiply
        | U::XNNSubtract
        | U::XNNPReLU
        | U::XNNBatchMatrixMultiply => &[N2::VT_INPUT1_ID, N2::VT_INPUT2_ID, N2::VT_OUTPUT_ID],
        U::XNNConv2d | U::XNNDepthwiseConv2d | U::XNNConvTranspose2d => &[
            Conv::VT_INPUT1_ID,
            Conv::VT_FILTER_ID,
            Conv::VT_BIAS_ID,
            Conv::VT_OUTPUT_ID,
        ],
        U::XNNFullyConnected => &[
            Fc::VT_INPUT1_ID,
            Fc::VT_FILTER_ID,
            Fc::VT_BIAS_ID,
            Fc::VT_OUTPUT_ID,
        ],
        U::XNNAvgPooling2d | U::XNNMaxPooling2d => &[Pool::VT_INPUT_ID, Pool::VT_OUTPUT_ID],
        U::XNNConcatenate2 | U::XNNConcatenate3 | U::XNNConcatenate4 | U::XNNConcatenate5 => &[
            Cat::VT_INPUT1_ID,
            Cat::VT_INPUT2_ID,
            Cat::VT_INPUT3_ID,
            Cat::VT_INPUT4_ID,
            Cat::VT_INPUT5_ID,
            Cat::VT_OUTPUT_ID,
        ],
        U::XNNStaticTranspose => &[
            xf::XNNStaticTranspose::VT_INPUT_ID,
            xf::XNNStaticTranspose::VT_OUTPUT_ID,
        ],
        U::XNNStaticResizeBilinear2D => &[
            xf::XNNStaticResizeBilinear2D::VT_INPUT_ID,
            xf::XNNStaticResizeBilinear2D::VT_OUTPUT_ID,
        ],
        U::XNNStaticConstantPad => &[
            xf::XNNStaticConstantPad::VT_INPUT_ID,
            xf::XNNStaticConstantPad::VT_OUTPUT_ID,
        ],
        U::XNNStaticReshape => &[
            xf::XNNStaticReshape::VT_INPUT_ID,
            xf::XNNStaticReshape::VT_OUTPUT_ID,
        ],
        U::XNNStaticSlice => &[
            xf::XNNStaticSlice::VT_INPUT_ID,
            xf::XNNStaticSlice::VT_OUTPUT_ID,
        ],
        U::XNNELU => &[xf::XNNELU::VT_INPUT_ID, xf::XNNELU::VT_OUTPUT_ID],
        U::XNNLeakyReLU => &[
            xf::XNNLeakyReLU::VT_INPUT_ID,
            xf::XNNLeakyReLU::VT_OUTPUT_ID,
        ],
        U::XNNScaledDotProductAttention => &[
            Sdpa::VT_QUERY_ID,
            Sdpa::VT_KEY_ID,
            Sdpa::VT_VALUE_ID,
            Sdpa::VT_SCALE_ID,
            Sdpa::VT_MASK_ID,
            Sdpa::VT_OUTPUT_ID,
        ],
        U::XNNArgMaxPooling2d => &[
            ArgMax::VT_INPUT_ID,
            ArgMax::VT_OUTPUT_VALUE_ID,
            ArgMax::VT_OUTPUT_INDEX_ID,
        ],
        // Every other defined kind is a `_XNNNode1x1`; an undefined tag names no values.
        _ if kind.is_defined() => &[N1::VT_INPUT_ID, N1::VT_OUTPUT_ID],
        _ => &[],
    }
}

impl<'a> Graph<'a> {
    /// The datatype family of `node`: from the datatypes of the values its fields name
    /// (absent fields and the invalid id are skipped). A value id past the graph's values
    /// is an error (values are numbered by position).
    pub fn node_datatype(&self, node: &NodeView<'_>) -> Result<NodeDatatype, HeaderError> {
        let mut datatypes = [Datatype::FP32; 6];
        let mut n = 0;
        for &vt in value_id_fields(node.kind) {
            if !node.table.has(vt) {
                continue;
            }
            let id = node.u32(vt);
            if id == INVALID_ID {
                continue;
            }
            let value = self.value(id as usize).map_err(|_| {
                HeaderError::new(
                    Error::InvalidProgram,
                    "a node names a value id past the graph's values",
                )
            })?;
            if let Some(slot) = datatypes.get_mut(n) {
                *slot = value.datatype;
                n += 1;
            }
        }
        Ok(NodeDatatype::of(datatypes[..n].iter().copied()))
    }

    /// Each node's kind and datatype family, in order; a node that cannot be read gives
    /// its index and why.
    pub fn node_variants(
        &self,
    ) -> impl Iterator<Item = Result<NodeVariant, (usize, HeaderError)>> + '_ {
        (0..self.num_nodes()).map(|i| {
            let node = self.node(i).map_err(|e| (i, e))?;
            let datatype = self.node_datatype(&node).map_err(|e| (i, e))?;
            Ok(NodeVariant {
                kind: node.kind,
                datatype,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xf::XNNDatatype as D;

    #[test]
    fn families_follow_the_value_datatypes() {
        let d = |x: D| Datatype(x.0);
        assert_eq!(NodeDatatype::of([]), NodeDatatype::Fp32);
        assert_eq!(
            NodeDatatype::of([d(D::xnn_datatype_fp32), d(D::xnn_datatype_fp32)]),
            NodeDatatype::Fp32
        );
        let conv = [
            d(D::xnn_datatype_qint8),
            d(D::xnn_datatype_qcint8),
            d(D::xnn_datatype_qcint32),
            d(D::xnn_datatype_qint8),
        ];
        assert_eq!(NodeDatatype::of(conv), NodeDatatype::Qint8);
        // Dequantizing Convert: a qint8 input, an fp32 output.
        assert_eq!(
            NodeDatatype::of([d(D::xnn_datatype_quint8), d(D::xnn_datatype_fp32)]),
            NodeDatatype::Qint8
        );
        let dynamic = [
            d(D::xnn_datatype_qdint8),
            d(D::xnn_datatype_qbint4),
            d(D::xnn_datatype_fp32),
        ];
        assert_eq!(NodeDatatype::of(dynamic), NodeDatatype::Qdint8);
        for family in NodeDatatype::ALL {
            assert_eq!(NodeDatatype::from_name(family.name()), Some(family));
        }
        assert_eq!(NodeDatatype::from_name("int8"), None);
        let v = NodeVariant {
            kind: NodeKind(xf::XNodeUnion::XNNConv2d.0),
            datatype: NodeDatatype::Qint8,
        };
        assert_eq!(std::format!("{v}"), "Conv2d:qint8");
    }
}
