//! etch's XNNPACK backend: runs the delegate payloads ExecuTorch's XNNPACK partitioner
//! writes (backend id `XnnpackBackend`) on etch's own kernels, in `no_std` Rust, with no
//! C library and no heap.
//!
//! Linking this crate registers the backend (`use et_xnnpack as _;`). At `load_method` it
//! parses each payload ([`et_xnnpack_schema`]), checks every node, value and flag, packs
//! constant weights and lays out the intermediate values in method memory; an unknown node
//! kind, datatype or flag is a load error naming the node, its index and kind. Execute
//! binds the call's tensors and runs the nodes in order, in XNNPACK's layouts (NHWC
//! activations; OHWI convolution filters; `[out, in]` fully connected weights).
//!
//! Supported: graphs with static shapes, on fp32 values and (for the kinds quantized
//! programs use) XNNPACK's quantized datatypes in its integer arithmetic. Node kinds: see
//! [`NODES`] (and the README).
//! Size callers' method memory with `Program::method_memory_estimate`, which asks this
//! backend for its bound.

#![no_std]
#![deny(missing_docs)]

mod backend;
mod builder;
mod compute;
mod dynamic;
mod elem;
mod exec;
mod frame;
mod nodes;
mod plain;
mod plan;
mod values;

pub use backend::XnnpackBackend;
pub use compute::cpu::{int8_kernels, Int8Kernels};
pub use nodes::{NodeSpec, NODES};

/// The node kinds this build runs, in slice order (a kind once per datatype family).
pub fn node_kinds() -> impl Iterator<Item = et_xnnpack_schema::NodeKind> {
    NODES.iter().map(|s| s.kind)
}

/// The (node kind, datatype family) pairs this build runs, in slice order.
pub fn node_variants() -> impl Iterator<Item = et_xnnpack_schema::NodeVariant> {
    NODES.iter().map(|s| et_xnnpack_schema::NodeVariant {
        kind: s.kind,
        datatype: s.datatype,
    })
}
