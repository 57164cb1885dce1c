//! XNNPACK delegate payloads: the `processed` bytes ExecuTorch's XNNPACK partitioner
//! stores for each DelegateCall to `XnnpackBackend`.
//!
//! A payload is an [`XH00` header](header), a graph flatbuffer ([`xnnpack.fbs`], file
//! identifier `XN01`) and optionally constant data. The graph lists *values* (tensors:
//! element type, sizes, and whether each is a constant, a delegate input or output, or an
//! intermediate) and *nodes* (operations in execution order, naming values by id). Large
//! constants are stored as named data under SHA-256 keys, in the program or a `.ptd`.
//!
//! This module only reads: [`Graph`] gives bounds-checked, typed views of any bytes. The
//! meaning (which node kinds, datatypes and flags a backend runs) is the backend's.
//!
//! [`xnnpack.fbs`]: https://github.com/etch-rs/etch/blob/main/et-schema/schema/xnnpack.fbs

/// Field offsets and enums of xnnpack.fbs, derived from flatc's output.
#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    missing_docs,
    reason = "generated: the names are the serializer's, the docs are xnnpack.fbs's"
)]
#[rustfmt::skip]
#[path = "../xnnpack_fields.rs"]
pub mod fields;
pub mod graph;
pub mod header;
pub mod node_datatype;

pub use graph::{
    ConstantRef, Datatype, Graph, NodeKind, NodeView, QuantParams, ValueView, FLAG_EXTERNAL_INPUT,
    FLAG_EXTERNAL_OUTPUT, INVALID_ID,
};
pub use header::{locate, HeaderError, PayloadLayout};
pub use node_datatype::{NodeDatatype, NodeVariant};
